// RUN: tilec-opt --infer-fragment-layout %s --split-input-file --verify-diagnostics
// What infer-fragment-layout rejects.

// A fragment reduce must drop the reduced dimension (no unit dimension in its place).
func.func @reduce_keeps_dim(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<16x64xf32, "fragment">
    %s = tile.alloc : memref<16x1xf32, "fragment">
    // expected-error @+1 {{a fragment reduce into shape [16, 1] (the source's shape without dim 1 is [16])}}
    tile.reduce "sum" %f to %s dim 1 : memref<16x64xf32, "fragment"> to memref<16x1xf32, "fragment">
  }
  return
}

// -----

// A T.Parallel variable running past the fragment dimension it indexes: those elements do
// not exist (TileLang sizes a fragment by its loop; here it keeps its declared shape).
func.func @loop_past_fragment(%n: index, %v: f32) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<4xf32, "fragment">
    tile.parallel [64] {
    ^bb0(%i: index):
      // expected-error @+1 {{this T.Parallel variable runs over 64 values but indexes dimension 0 of a fragment of shape [4]: the elements past 3 do not exist}}
      memref.store %v, %f[%i] : memref<4xf32, "fragment">
    }
  }
  return
}

// -----

// A fragment's registers belong to the threads that use it: two T.ws blocks over different
// warpgroups cannot share one.
func.func @fragment_of_two_warpgroups(%A: memref<256x64xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [256] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %f = tile.alloc : memref<64x64xf32, "fragment">
    tile.warpgroups [0] {
      tile.fill %f, %zero : memref<64x64xf32, "fragment">, f32
    }
    tile.warpgroups [1] {
      // expected-error @+1 {{a fragment used by T.ws(0) is used here by T.ws(1): its registers belong to the threads of one of them (copy it through shared memory)}}
      tile.copy %f[%c0, %c0] [64, 64] to %A[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<256x64xf32>
    }
  }
  return
}
