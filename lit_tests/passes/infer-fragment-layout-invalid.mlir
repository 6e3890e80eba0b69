// RUN: tilec-opt --infer-fragment-layout %s --split-input-file --verify-diagnostics
// What infer-fragment-layout rejects.

// Layouts are linear over the thread id's bits: the block's thread count must be a power of two.
func.func @odd_threads(%n: index) attributes {tile.entry} {
  // expected-error @+1 {{fragments and T.Parallel need a power-of-two thread count on this target, not 96}}
  tile.kernel grid(%n) threads [96] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<64xf32, "fragment">
  }
  return
}

// -----

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

// A fragment indexed by an expression of the loop variables: no thread can tell statically
// which of its registers holds the element.
func.func @shifted_index(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<64x64xf32, "fragment">
    %g = tile.alloc : memref<64x64xf32, "fragment">
    %c1 = arith.constant 1 : index
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %f[%i, %j] : memref<64x64xf32, "fragment">
      %k = arith.addi %j, %c1 : index
      // expected-error @+1 {{this fragment index does not follow the T.Parallel loop's thread layout}}
      %y = memref.load %g[%i, %k] : memref<64x64xf32, "fragment">
      %z = arith.addf %x, %y : f32
      memref.store %z, %f[%i, %j] : memref<64x64xf32, "fragment">
    }
  }
  return
}
