// RUN: not tilec-opt --lower-tile-to-gpu %s --split-input-file 2>&1 | FileCheck %s
// Fragments live in registers spread over threads: outside T.Parallel (or a copy, reduce,
// gemm) only a fragment every thread holds whole can be read (infer-fragment-layout lays
// those out so), and a T.Parallel must index them by its own variables (infer-fragment-layout
// gives it a shared copy otherwise).

// CHECK: lower-tile-to-gpu-invalid.mlir:13: error: a fragment element is accessed outside T.Parallel, but its layout spreads it over the threads
func.func @outside(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc {tile.layout = #tile.linear<[128], register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64]]>} : memref<128xf32, "fragment">
    %x = memref.load %f[%c0] : memref<128xf32, "fragment">
  }
  return
}

// -----

// CHECK: lower-tile-to-gpu-invalid.mlir:28: error: this fragment index does not follow the T.Parallel loop's thread layout
func.func @transposed(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %f = tile.alloc {tile.layout = #tile.linear<[64, 64], register = [[0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]]>} : memref<64x64xf32, "fragment">
    tile.parallel [64, 64] attributes {tile.layout = #tile.linear<[64, 64], register = [[0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]]>} {
    ^bb0(%i: index, %j: index):
      %x = memref.load %f[%i, %j] : memref<64x64xf32, "fragment">
      memref.store %x, %f[%j, %i] : memref<64x64xf32, "fragment">
    }
  }
  return
}

// -----

// A fragment needs the constant register indices unrolling gives: a T.unroll over one that
// would copy out more than 4096 ops is an error, not minutes of compiling.
// CHECK: lower-tile-to-gpu-invalid.mlir:[[# @LINE + 8]]: error: T.unroll(8192) over fragments would copy its body 8192 times
func.func @long_unroll_over_fragment(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %trips = arith.constant 8192 : index
    %f = tile.alloc {tile.layout = #tile.linear<[128], register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64]]>} : memref<128xf32, "fragment">
    tile.for %c0 to %trips step %c1 attributes {unroll} {
    ^bb0(%k: index):
      tile.parallel [128] attributes {tile.layout = #tile.linear<[128], register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64]]>} {
      ^bb0(%i: index):
        %x = memref.load %f[%i] : memref<128xf32, "fragment">
        %y = arith.addf %x, %x : f32
        memref.store %y, %f[%i] : memref<128xf32, "fragment">
      }
    }
  }
  return
}

// -----

// CHECK: lower-tile-to-gpu-invalid.mlir:65: error: the fragment holds 8192 elements per thread; a fragment lives in registers (at most 255 per thread) and tilec builds at most 4096
func.func @too_many_registers(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc {tile.layout = #tile.linear<[262144], register = [[32], [64], [128], [256], [512], [1024], [2048], [4096], [8192], [16384], [32768], [65536], [131072]], lane = [[1], [2], [4], [8], [16]], warp = []>} : memref<262144xf32, "fragment">
  }
  return
}

// -----

// A "transpose" swizzle needs rows of a power-of-two count of 16-byte chunks (24 f16: 3).
// CHECK: lower-tile-to-gpu-invalid.mlir:77: error: tile.swizzle = "transpose" on a tile whose rows are not a power-of-two count of 16-byte chunks
func.func @odd_transposed_tile(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %t = tile.alloc {tile.swizzle = "transpose"} : memref<64x24xf16, "shared">
  }
  return
}
