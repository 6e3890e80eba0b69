// RUN: tilec-opt %s --split-input-file --verify-diagnostics
// Every verifier error of tile.pipelined.

func.func @negative_stages(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{num_stages must not be negative}}
    tile.pipelined %c0 to %n step %c1 stages -1 {
    ^bb0(%k: index):
    }
  }
  return
}

// -----

func.func @order_length(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s = tile.alloc : memref<4xf32, "shared">
    %z = arith.constant 0.0 : f32
    // expected-error @+1 {{order and stage need one entry per statement of the body (1), got 2}}
    tile.pipelined %c0 to %n step %c1 stages 2 attributes {order = array<i64: 0, 1>} {
    ^bb0(%k: index):
      tile.fill %s, %z : memref<4xf32, "shared">, f32
    }
  }
  return
}

// -----

func.func @stage_length(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{order and stage need one entry per statement of the body (0), got 1}}
    tile.pipelined %c0 to %n step %c1 stages 2 attributes {stage = array<i64: 0>} {
    ^bb0(%k: index):
    }
  }
  return
}

// -----

func.func @two_indices(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{body takes 2 loop indices but 1 are needed}}
    tile.pipelined %c0 to %n step %c1 stages 2 {
    ^bb0(%k: index, %l: index):
    }
  }
  return
}

// -----

func.func @outside_kernel(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{must be inside a tile.kernel}}
  tile.pipelined %c0 to %n step %c1 stages 2 {
  ^bb0(%k: index):
  }
  return
}
