// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// Round trip of tile.parallel in one and two dimensions.

// CHECK-LABEL: func.func @parallel
// CHECK: tile.parallel [64, 32] {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index):
// CHECK: memref.load
// CHECK: tile.parallel [16] {
func.func @parallel(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<64x32xf32, "fragment">
    %g = tile.alloc : memref<16xf32, "fragment">
    tile.parallel [64, 32] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %f[%i, %j] : memref<64x32xf32, "fragment">
      %r = arith.maximumf %v, %v : f32
      memref.store %r, %f[%i, %j] : memref<64x32xf32, "fragment">
    }
    tile.parallel [16] {
    ^bb0(%i: index):
      %one = arith.constant 1.0 : f32
      memref.store %one, %g[%i] : memref<16xf32, "fragment">
    }
  }
  return
}
