// RUN: tilec-opt %s --split-input-file --verify-diagnostics
// Every verifier error of the mbarrier, bulk-copy and warpgroup ops.

func.func @count_mismatch(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    // expected-error @+1 {{has 1 arrive counts for 2 barriers}}
    %b = tile.alloc_barrier [128] : memref<2xi64, "barrier">
  }
  return
}

// -----

func.func @zero_count(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    // expected-error @+1 {{an arrive count is 1 to 1048575, got 0}}
    %b = tile.alloc_barrier [0] : memref<1xi64, "barrier">
  }
  return
}

// -----

func.func @not_barrier_scope(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    // expected-error @+1 {{allocates in the barrier scope, not 'shared'}}
    %b = tile.alloc_barrier [1] : memref<1xi64, "shared">
  }
  return
}

// -----

func.func @alloc_in_loop(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    tile.for %c0 to %c4 step %c1 {
    ^bb0(%k: index):
      // expected-error @+1 {{stands directly in a tile.kernel's body}}
      %b = tile.alloc_barrier [1] : memref<1xi64, "barrier">
    }
  }
  return
}

// -----

func.func @arrive_on_shared(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %s = tile.alloc : memref<1xi64, "shared">
    // expected-error @+1 {{takes a barrier buffer (tile.alloc_barrier), not a shared buffer}}
    tile.mbarrier_arrive %s[%c0] : memref<1xi64, "shared">
  }
  return
}

// -----

func.func @wait_outside_kernel(%b: memref<1xi64, "barrier">) {
  %c0 = arith.constant 0 : index
  %p = arith.constant 0 : i32
  // expected-error @+1 {{must be inside a tile.kernel}}
  tile.mbarrier_wait_parity %b[%c0], %p : memref<1xi64, "barrier">
  return
}

// -----

func.func @tma_into_fragment(%a: memref<64x32xf16>, %n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %b = tile.alloc_barrier [1] : memref<1xi64, "barrier">
    %f = tile.alloc : memref<64x32xf16, "fragment">
    // expected-error @+1 {{copies from a global buffer into a shared one, not from global into fragment}}
    tile.tma_copy %a[%c0, %c0] [64, 32] to %f[%c0, %c0] [64, 32] barrier %b[%c0]
        : memref<64x32xf16> to memref<64x32xf16, "fragment">, memref<1xi64, "barrier">
  }
  return
}

// -----

func.func @tma_shapes(%a: memref<64x32xf16>, %n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %b = tile.alloc_barrier [1] : memref<1xi64, "barrier">
    %s = tile.alloc : memref<64x32xf16, "shared">
    // expected-error @+1 {{copies a box of shape (64, 16) into a box of shape (64, 32)}}
    tile.tma_copy %a[%c0, %c0] [64, 16] to %s[%c0, %c0] [64, 32] barrier %b[%c0]
        : memref<64x32xf16> to memref<64x32xf16, "shared">, memref<1xi64, "barrier">
  }
  return
}

// -----

func.func @tma_types(%a: memref<64x32xf32>, %n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %b = tile.alloc_barrier [1] : memref<1xi64, "barrier">
    %s = tile.alloc : memref<64x32xf16, "shared">
    // expected-error @+1 {{source element type 'f32' differs from destination element type 'f16'}}
    tile.tma_copy %a[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] barrier %b[%c0]
        : memref<64x32xf32> to memref<64x32xf16, "shared">, memref<1xi64, "barrier">
  }
  return
}

// -----

func.func @group_past_block(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    // expected-error @+1 {{warpgroup 1 is not in a block of 128 threads}}
    tile.warpgroups [1] {
    }
  }
  return
}

// -----

func.func @group_twice(%n: index) {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    // expected-error @+1 {{lists warpgroup 0 twice}}
    tile.warpgroups [0, 0] {
    }
  }
  return
}

// -----

func.func @nested_groups(%n: index) {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    tile.warpgroups [0, 1] {
      // expected-error @+1 {{cannot be nested in another tile.warpgroups}}
      tile.warpgroups [0] {
      }
    }
  }
  return
}
