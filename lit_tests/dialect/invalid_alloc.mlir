// RUN: tilec-opt %s --split-input-file --verify-diagnostics
// Every verifier error of tile.alloc.

func.func @global_scope(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    // expected-error @+1 {{allocates in the shared, fragment, local or var scope, not 'global'}}
    %g = tile.alloc : memref<16xf32>
  }
  return
}

// -----

func.func @unknown_scope(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    // expected-error @+1 {{not 'texture'}}
    %g = tile.alloc : memref<16xf32, "texture">
  }
  return
}

// -----

func.func @var_of_two(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    // expected-error @+1 {{a var holds one element}}
    %v = tile.alloc : memref<2xf32, "var">
  }
  return
}

// -----

func.func @outside_kernel() {
  // expected-error @+1 {{must be inside a tile.kernel}}
  %s = tile.alloc : memref<16xf32, "shared">
  return
}

// -----

func.func @dynamic_shape(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    // expected-error @+1 {{must be statically shaped memref of any type values}}
    %s = tile.alloc : memref<?xf32, "shared">
  }
  return
}
