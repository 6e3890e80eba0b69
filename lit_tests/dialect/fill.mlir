// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// Round trip of tile.fill (T.fill / T.clear) on each block scope.

// CHECK-LABEL: func.func @fills
// CHECK: tile.fill %{{.*}}, %{{.*}} : memref<64x64xf32, "fragment">, f32
// CHECK: tile.fill %{{.*}}, %{{.*}} : memref<8xi32, "local">, i32
// CHECK: tile.fill %{{.*}}, %{{.*}} : memref<16x16xf16, "shared">, f16
func.func @fills(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<64x64xf32, "fragment">
    %l = tile.alloc : memref<8xi32, "local">
    %s = tile.alloc : memref<16x16xf16, "shared">
    %zero = arith.constant 0.0 : f32
    %seven = arith.constant 7 : i32
    %half = arith.constant 0.5 : f16
    tile.fill %f, %zero : memref<64x64xf32, "fragment">, f32
    tile.fill %l, %seven : memref<8xi32, "local">, i32
    tile.fill %s, %half : memref<16x16xf16, "shared">, f16
  }
  return
}
