// RUN: tilec-opt %s --split-input-file --verify-diagnostics
// Every verifier error of tile.fill.

func.func @value_type(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<16xf32, "fragment">
    %h = arith.constant 1.0 : f16
    // expected-error @+1 {{fills a buffer of 'f32' with a 'f16'}}
    tile.fill %f, %h : memref<16xf32, "fragment">, f16
  }
  return
}

// -----

func.func @global(%g: memref<16xf32>, %n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %z = arith.constant 0.0 : f32
    // expected-error @+1 {{fills shared, fragment, local or var buffers, not global}}
    tile.fill %g, %z : memref<16xf32>, f32
  }
  return
}

// -----

func.func @outside_kernel(%g: memref<16xf32, "shared">) {
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{must be inside a tile.kernel}}
  tile.fill %g, %z : memref<16xf32, "shared">, f32
  return
}
