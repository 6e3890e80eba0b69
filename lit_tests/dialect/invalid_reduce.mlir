// RUN: tilec-opt %s --split-input-file --verify-diagnostics
// Every verifier error of tile.reduce.

func.func @unknown_kind(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<8x4xf32, "fragment">
    %d = tile.alloc : memref<8xf32, "fragment">
    // expected-error @+1 {{unknown reduction 'prod'}}
    tile.reduce "prod" %s to %d dim 1 : memref<8x4xf32, "fragment"> to memref<8xf32, "fragment">
  }
  return
}

// -----

func.func @dim_range(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<8x4xf32, "fragment">
    %d = tile.alloc : memref<8xf32, "fragment">
    // expected-error @+1 {{dim 2 is out of range for a 2-d source}}
    tile.reduce "sum" %s to %d dim 2 : memref<8x4xf32, "fragment"> to memref<8xf32, "fragment">
  }
  return
}

// -----

func.func @wrong_shape(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<8x4xf32, "fragment">
    %d = tile.alloc : memref<8xf32, "fragment">
    // expected-error @+1 {{reducing (8, 4) along dim 0 gives (4), not (8)}}
    tile.reduce "max" %s to %d dim 0 : memref<8x4xf32, "fragment"> to memref<8xf32, "fragment">
  }
  return
}

// -----

func.func @dtypes(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<8x4xf16, "fragment">
    %d = tile.alloc : memref<8xf32, "fragment">
    // expected-error @+1 {{source and destination element types differ}}
    tile.reduce "sum" %s to %d dim 1 : memref<8x4xf16, "fragment"> to memref<8xf32, "fragment">
  }
  return
}

// -----

func.func @outside_kernel(%s: memref<8x4xf32, "fragment">, %d: memref<8xf32, "fragment">) {
  // expected-error @+1 {{must be inside a tile.kernel}}
  tile.reduce "sum" %s to %d dim 1 : memref<8x4xf32, "fragment"> to memref<8xf32, "fragment">
  return
}
