// RUN: tilec-opt --check-static-indices %s --split-input-file --verify-diagnostics
// What check-static-indices rejects: a block-buffer access outside its buffer at an index the
// loops' constant bounds make known when compiling.

// `f[k, i]` over `for k in T.unroll(8)` on a fragment of 4 rows.
func.func @unrolled_rows() attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %one = arith.constant 1.0 : f32
    %f = tile.alloc : memref<4x8xf32, "fragment">
    tile.for %c0 to %c8 step %c1 attributes {unroll} {
    ^bb0(%k: index):
      tile.parallel [8] {
      ^bb0(%i: index):
        // expected-error @+1 {{this statement writes element [4, 0] of a fragment of shape [4, 8] (at the T.unroll variable at}}
        memref.store %one, %f[%k, %i] : memref<4x8xf32, "fragment">
      }
    }
  }
  return
}

// -----

// A T.Parallel over 64 points reading a shared buffer of 32, one past its end at i + 1.
func.func @shared_overread(%Out: memref<64xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [64] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<64xf32, "shared">
    tile.parallel [64] {
    ^bb0(%i: index):
      %next = arith.addi %i, %c1 : index
      // expected-error @+1 {{this statement reads element [64] of a shared buffer of shape [64] (at variable 0 of the T.Parallel}}
      %x = memref.load %s[%next] : memref<64xf32, "shared">
      memref.store %x, %Out[%i] : memref<64xf32>
    }
  }
  return
}
