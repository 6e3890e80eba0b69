// RUN: tilec-opt --mlir-print-debuginfo %s | FileCheck %s
// Source locations (the frontend's file:line) survive and print on request, also through a pass.
// RUN: tilec-opt --mlir-print-debuginfo --lower-tile-ops-to-loops %s | FileCheck %s --check-prefix=LOWERED

// CHECK: tile.fill {{.*}} loc(#[[LOC:.*]])
// CHECK: #[[LOC]] = loc("kernel.py":7:8)
// LOWERED: memref.store {{.*}} loc(#[[LOC:.*]])
// LOWERED: #[[LOC]] = loc("kernel.py":7:8)
func.func @f(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<4xf32, "fragment">
    %z = arith.constant 0.0 : f32
    tile.fill %f, %z : memref<4xf32, "fragment">, f32 loc("kernel.py":7:8)
  }
  return
}
