// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// Round trip of tile.for (T.serial) and its unrolled form (T.unroll).

// CHECK-LABEL: func.func @loops
// CHECK: tile.for %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: tile.for %{{.*}} to %{{.*}} step %{{.*}} attributes {unroll} {
func.func @loops(%n: index) {
  tile.kernel grid(%n) threads [1] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %v = tile.alloc : memref<1xindex, "var">
    tile.for %c0 to %n step %c1 {
    ^bb0(%i: index):
      memref.store %i, %v[%c0] : memref<1xindex, "var">
    }
    tile.for %c0 to %c4 step %c1 attributes {unroll} {
    ^bb0(%i: index):
      memref.store %i, %v[%c0] : memref<1xindex, "var">
    }
  }
  return
}

// tile.for may also appear outside a kernel (it needs no block).
// CHECK-LABEL: func.func @outside
// CHECK: tile.for
func.func @outside(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.for %c0 to %n step %c1 {
  ^bb0(%i: index):
  }
  return
}
