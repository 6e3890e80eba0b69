// RUN: tilec-opt %s --split-input-file --verify-diagnostics
// Every verifier error of tile.atomic_add.

func.func @index_count(%g: memref<8x8xf32>, %n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %one = arith.constant 1.0 : f32
    // expected-error @+1 {{needs 2 indices, got 1}}
    tile.atomic_add %g[%bx], %one : memref<8x8xf32>, f32
  }
  return
}

// -----

func.func @value_type(%g: memref<8xf32>, %n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %one = arith.constant 1.0 : f16
    // expected-error @+1 {{adds a 'f16' to a buffer of 'f32'}}
    tile.atomic_add %g[%bx], %one : memref<8xf32>, f16
  }
  return
}

// -----

func.func @fragment_target(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<8xf32, "fragment">
    %one = arith.constant 1.0 : f32
    // expected-error @+1 {{atomics target global or shared buffers, not fragment}}
    tile.atomic_add %f[%bx], %one : memref<8xf32, "fragment">, f32
  }
  return
}

// -----

func.func @outside_kernel(%g: memref<8xf32>, %i: index) {
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{must be inside a tile.kernel}}
  tile.atomic_add %g[%i], %one : memref<8xf32>, f32
  return
}
