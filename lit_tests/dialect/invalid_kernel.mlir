// RUN: tilec-opt %s --split-input-file --verify-diagnostics
// Every verifier error of tile.kernel.

func.func @no_grid() {
  // expected-error @+1 {{needs one to three grid dimensions, got 0}}
  tile.kernel grid() threads [32] {
  }
  return
}

// -----

func.func @four_grid_dims(%n: index) {
  // expected-error @+1 {{needs one to three grid dimensions, got 4}}
  tile.kernel grid(%n, %n, %n, %n) threads [32] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
  }
  return
}

// -----

func.func @no_threads(%n: index) {
  // expected-error @+1 {{needs one to three thread dimensions, got 0}}
  tile.kernel grid(%n) threads [] {
  ^bb0(%bx: index):
  }
  return
}

// -----

func.func @zero_threads(%n: index) {
  // expected-error @+1 {{thread counts must be positive}}
  tile.kernel grid(%n) threads [32, 0] {
  ^bb0(%bx: index):
  }
  return
}

// -----

func.func @too_many_threads(%n: index) {
  // expected-error @+1 {{a block has at most 1024 threads, got 2048}}
  tile.kernel grid(%n) threads [64, 32] {
  ^bb0(%bx: index):
  }
  return
}

// -----

func.func @nested(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    // expected-error @+1 {{kernels cannot be nested}}
    tile.kernel grid(%n) threads [32] {
    ^bb0(%by: index):
    }
  }
  return
}

// -----

func.func @wrong_index_count(%n: index) {
  // expected-error @+1 {{body takes 1 block indices but 2 are needed}}
  tile.kernel grid(%n, %n) threads [32] {
  ^bb0(%bx: index):
  }
  return
}

// -----

func.func @non_index_block_argument(%n: index) {
  // expected-error @+1 {{body arguments must be index values}}
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: i32):
  }
  return
}

// -----

func.func @stray_yield() {
  // expected-error @+1 {{expects parent op to be one of}}
  tile.yield
}
