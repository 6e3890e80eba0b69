// RUN: tilec-opt --check-static-indices %s --split-input-file | FileCheck %s
// What check-static-indices accepts: it changes nothing.

// Indices from loops of constant bounds that stay inside; one that leaves the buffer only
// where a condition the pass evaluates keeps it from running; one from a run-time bound.
// CHECK-LABEL: func.func @inside_or_guarded
// CHECK-COUNT-3: memref.store
func.func @inside_or_guarded(%n: index) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %one = arith.constant 1.0 : f32
    %f = tile.alloc : memref<4x8xf32, "fragment">
    tile.for %c0 to %c8 step %c1 attributes {unroll} {
    ^bb0(%k: index):
      tile.parallel [8] {
      ^bb0(%i: index):
        %low = arith.cmpi slt, %k, %c4 : index
        scf.if %low {
          memref.store %one, %f[%k, %i] : memref<4x8xf32, "fragment">
        }
        %row = arith.remsi %k, %c4 : index
        memref.store %one, %f[%row, %i] : memref<4x8xf32, "fragment">
      }
    }
    tile.for %c0 to %n step %c1 {
    ^bb0(%k: index):
      memref.store %one, %f[%k, %c0] : memref<4x8xf32, "fragment">
    }
  }
  return
}
