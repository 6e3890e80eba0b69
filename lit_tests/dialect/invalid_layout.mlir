// RUN: tilec-opt %s --split-input-file --verify-diagnostics
// Every verifier error of the layout attributes and of tile.convert_layout.

func.func @wrong_rank(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    // expected-error @+1 {{register basis has 1 coordinates for a rank-2 tile}}
    %f = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[1]], lane = [], warp = []>} : memref<16x8xf32, "fragment">
  }
  return
}

// -----

func.func @leaves_the_tile(%n: index) {
  tile.kernel grid(%n) threads [1] {
  ^bb0(%bx: index):
    // expected-error @+1 {{basis coordinate 64 of dimension 0 leaves the tile (extent 48, padded to 64)}}
    %f = tile.alloc {tile.layout = #tile.linear<[48], register = [[1], [2], [4], [8], [16], [64]], lane = [], warp = []>} : memref<48xf32, "fragment">
  }
  return
}

// -----

func.func @register_repeats(%n: index) {
  tile.kernel grid(%n) threads [1] {
  ^bb0(%bx: index):
    // expected-error @+1 {{register 4 repeats an element another register of the thread holds}}
    %f = tile.alloc {tile.layout = #tile.linear<[4], register = [[1], [2], [3]], lane = [], warp = []>} : memref<4xf32, "fragment">
  }
  return
}

// -----

func.func @no_holder(%n: index) {
  tile.kernel grid(%n) threads [2] {
  ^bb0(%bx: index):
    // expected-error @+1 {{leaves elements of the tile without a holder (its bases span 2 of 3 coordinate bits)}}
    %f = tile.alloc {tile.layout = #tile.linear<[8], register = [[1]], lane = [[2]], warp = []>} : memref<8xf32, "fragment">
  }
  return
}

// -----

func.func @wrong_shape(%n: index) {
  tile.kernel grid(%n) threads [2] {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout over (4) for a tile of shape (8)}}
    %f = tile.alloc {tile.layout = #tile.linear<[4], register = [[1]], lane = [[2]], warp = []>} : memref<8xf32, "fragment">
  }
  return
}

// -----

// A layout may span fewer threads than the kernel's (a branch on the thread index, 96 threads
// laid out over 64), never more.
func.func @wrong_threads(%n: index) {
  tile.kernel grid(%n) threads [2] {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout spans 4 threads but the kernel has 2}}
    %f = tile.alloc {tile.layout = #tile.linear<[4], register = [], lane = [[1], [2]], warp = []>} : memref<4xf32, "fragment">
  }
  return
}

// -----

// A fragment laid out over one warpgroup's threads must be used by T.ws blocks of that size
// only; a T.Parallel in a T.ws block is laid out over its threads.
func.func @warpgroup_layout_used_by_the_block(%n: index) {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %zero = arith.constant 0.0 : f32
    // expected-error @+1 {{layout spans 128 threads but the kernel has 256}}
    %f = tile.alloc {tile.layout = #tile.linear<[128], register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64]]>} : memref<128xf32, "fragment">
    tile.warpgroups [1] {
      tile.fill %f, %zero : memref<128xf32, "fragment">, f32
    }
    tile.fill %f, %zero : memref<128xf32, "fragment">, f32
  }
  return
}

// -----

func.func @parallel_in_warpgroup_over_the_block(%n: index) {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    tile.warpgroups [0] {
      // expected-error @+1 {{layout spans 256 threads but the T.ws block running it has 128}}
      tile.parallel [256] attributes {tile.layout = #tile.linear<[256], register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64], [128]]>} {
      ^bb0(%i: index):
      }
    }
  }
  return
}

// -----

func.func @not_linear(%n: index) {
  tile.kernel grid(%n) threads [2] {
  ^bb0(%bx: index):
    // expected-error @+1 {{tile.layout must be a #tile.linear layout, not {spt = 1 : i64}}}
    %f = tile.alloc {tile.layout = {spt = 1}} : memref<4xf32, "fragment">
  }
  return
}

// -----

func.func @shared_with_thread_layout(%n: index) {
  tile.kernel grid(%n) threads [2] {
  ^bb0(%bx: index):
    // expected-error @+1 {{only a fragment has a thread layout}}
    %f = tile.alloc {tile.layout = #tile.linear<[4], register = [[1]], lane = [[2]], warp = []>} : memref<4xf32, "shared">
  }
  return
}

// -----

func.func @parallel_layout_shape(%n: index) {
  tile.kernel grid(%n) threads [2] {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout over (4) for a tile of shape (8)}}
    tile.parallel [8] attributes {tile.layout = #tile.linear<[4], register = [[1]], lane = [[2]], warp = []>} {
    ^bb0(%i: index):
    }
  }
  return
}

// -----

func.func @bad_swizzle(%n: index) {
  tile.kernel grid(%n) threads [2] {
  ^bb0(%bx: index):
    // expected-error @+1 {{a swizzle spans 32, 64 or 128 bytes, not 16}}
    %s = tile.alloc {tile.swizzle = #tile.swizzle<16B>} : memref<4x64xf16, "shared">
  }
  return
}

// -----

func.func @swizzle_and_pad(%n: index) {
  tile.kernel grid(%n) threads [2] {
  ^bb0(%bx: index):
    // expected-error @+1 {{a swizzled tile is not padded}}
    %s = tile.alloc {tile.swizzle = #tile.swizzle<64B, pad = 8>} : memref<4x64xf16, "shared">
  }
  return
}

// -----

func.func @convert_shared(%n: index) {
  tile.kernel grid(%n) threads [2] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<4xf32, "shared">
    %f = tile.alloc : memref<4xf32, "fragment">
    // expected-error @+1 {{converts a fragment into a fragment, not shared into fragment}}
    tile.convert_layout %s to %f : memref<4xf32, "shared"> to memref<4xf32, "fragment">
  }
  return
}

// -----

func.func @convert_shape(%n: index) {
  tile.kernel grid(%n) threads [2] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<4xf32, "fragment">
    %b = tile.alloc : memref<8xf32, "fragment">
    // expected-error @+1 {{source and destination differ in shape or element type}}
    tile.convert_layout %a to %b : memref<4xf32, "fragment"> to memref<8xf32, "fragment">
  }
  return
}
