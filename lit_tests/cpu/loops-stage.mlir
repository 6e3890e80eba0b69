// RUN: tilec-opt --run-target=cpu --stop-after=loops %s | FileCheck %s
// The CPU target's "loops" stage: no tile op left, the entry renamed to its C symbol,
// buffers on the stack, the grid a loop nest.

// CHECK-LABEL: func.func @tilec_scale(
// CHECK-SAME: %[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>, %[[S:.*]]: f32)
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32xf32>
// CHECK: %[[N:.*]] = memref.dim %[[X]]
// CHECK: %[[G:.*]] = arith.ceildivsi %[[N]]
// CHECK: scf.for %[[BX:.*]] = %{{.*}} to %[[G]] step
// CHECK: scf.if
// CHECK: memref.load %[[X]]
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: arith.mulf %{{.*}}, %[[S]] : f32
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK-NOT: tile.
func.func @scale(%x: memref<?xf32>, %y: memref<?xf32>, %s: f32) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %g = arith.ceildivsi %n, %c32 : index
  tile.kernel grid(%g) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<32xf32, "fragment">
    %o = arith.muli %bx, %c32 : index
    tile.copy %x[%o] [32] to %f[%c0] [32] : memref<?xf32> to memref<32xf32, "fragment">
    tile.parallel [32] {
    ^bb1(%i: index):
      %v = memref.load %f[%i] : memref<32xf32, "fragment">
      %r = arith.mulf %v, %s : f32
      memref.store %r, %f[%i] : memref<32xf32, "fragment">
    }
    tile.copy %f[%c0] [32] to %y[%o] [32] : memref<32xf32, "fragment"> to memref<?xf32>
  }
  return
}
