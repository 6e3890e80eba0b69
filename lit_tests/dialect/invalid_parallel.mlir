// RUN: tilec-opt %s --split-input-file --verify-diagnostics
// Every verifier error of tile.parallel.

func.func @no_extent(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    // expected-error @+1 {{needs at least one extent}}
    tile.parallel [] {
    }
  }
  return
}

// -----

func.func @zero_extent(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    // expected-error @+1 {{extents must be positive}}
    tile.parallel [4, 0] {
    ^bb0(%i: index, %j: index):
    }
  }
  return
}

// -----

func.func @index_count(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    // expected-error @+1 {{body takes 1 indices but 2 are needed}}
    tile.parallel [4, 4] {
    ^bb0(%i: index):
    }
  }
  return
}

// -----

func.func @non_index(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    // expected-error @+1 {{body arguments must be index values}}
    tile.parallel [4] {
    ^bb0(%i: i64):
    }
  }
  return
}

// -----

func.func @outside_kernel() {
  // expected-error @+1 {{must be inside a tile.kernel}}
  tile.parallel [4] {
  ^bb0(%i: index):
  }
  return
}
