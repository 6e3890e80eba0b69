// RUN: not tilec-opt --lower-tile-structure-to-scf %s 2>&1 | FileCheck %s
// Block-level ops must be lowered first: the pass says which pass to run.

// CHECK: error: lower-tile-structure-to-scf: run lower-tile-ops-to-loops first ('tile.fill'
func.func @fill_left(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<4xf32, "fragment">
    %z = arith.constant 0.0 : f32
    tile.fill %f, %z : memref<4xf32, "fragment">, f32
  }
  return
}
