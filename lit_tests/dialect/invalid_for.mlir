// RUN: tilec-opt %s --split-input-file --verify-diagnostics
// Every verifier error of tile.for.

func.func @no_index(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{body takes 0 loop indices but 1 are needed}}
  tile.for %c0 to %n step %c1 {
  }
  return
}

// -----

func.func @non_index(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{body arguments must be index values}}
  tile.for %c0 to %n step %c1 {
  ^bb0(%i: i32):
  }
  return
}
