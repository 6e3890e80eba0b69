// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// Round trip of tile.atomic_add on a global and a shared buffer.

// CHECK-LABEL: func.func @atomics
// CHECK: tile.atomic_add %{{.*}}[%{{.*}}], %{{.*}} : memref<?xf32>, f32
// CHECK: tile.atomic_add %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} : memref<4x4xi32, "shared">, i32
func.func @atomics(%out: memref<?xf32>, %n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %s = tile.alloc : memref<4x4xi32, "shared">
    %k = arith.constant 3 : i32
    tile.atomic_add %out[%bx], %one : memref<?xf32>, f32
    tile.atomic_add %s[%c0, %c0], %k : memref<4x4xi32, "shared">, i32
  }
  return
}
