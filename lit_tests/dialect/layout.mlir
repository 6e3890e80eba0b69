// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// Round trip of the layout attributes (#tile.linear on fragments and T.Parallel, #tile.swizzle
// on shared buffers) and of tile.convert_layout.

// CHECK-LABEL: func.func @mma_accumulator
// CHECK: tile.alloc {tile.layout = #tile.linear<[16, 8], register = {{\[\[}}0, 1], [8, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} : memref<16x8xf32, "fragment">
// CHECK: tile.alloc {tile.layout = #tile.linear<[16, 8], register = {{\[\[}}0, 1], [0, 2], [0, 4], [8, 0]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [0, 0], [0, 0]], warp = []>} : memref<16x8xf32, "fragment">
// CHECK: tile.convert_layout %{{.*}} to %{{.*}} : memref<16x8xf32, "fragment"> to memref<16x8xf32, "fragment">
// CHECK: tile.parallel [16, 8] attributes {tile.layout = #tile.linear<[16, 8], register = {{\[\[}}0, 1], [8, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>}
func.func @mma_accumulator(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %c = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} : memref<16x8xf32, "fragment">
    // a row layout with copies over lanes 8..31 (zero bases)
    %r = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [0, 2], [0, 4], [8, 0]], lane = [[1, 0], [2, 0], [4, 0], [0, 0], [0, 0]], warp = []>} : memref<16x8xf32, "fragment">
    tile.convert_layout %c to %r : memref<16x8xf32, "fragment"> to memref<16x8xf32, "fragment">
    tile.parallel [16, 8] attributes {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} {
    ^bb0(%i: index, %j: index):
    }
  }
  return
}

// CHECK-LABEL: func.func @ragged_and_warps
// CHECK: #tile.linear<[48], register = {{\[\[}}16], [32]], lane = {{\[\[}}1], [2], [4], [8], [0]], warp = {{\[\[}}0]]>
func.func @ragged_and_warps(%n: index) {
  tile.kernel grid(%n) threads [64] {
  ^bb0(%bx: index):
    %f = tile.alloc {tile.layout = #tile.linear<[48], register = [[16], [32]], lane = [[1], [2], [4], [8], [0]], warp = [[0]]>} : memref<48xf16, "fragment">
  }
  return
}

// CHECK-LABEL: func.func @swizzles
// CHECK: tile.alloc {tile.swizzle = #tile.swizzle<128B>} : memref<64x64xf16, "shared">
// CHECK: tile.alloc {tile.swizzle = #tile.swizzle<32B>} : memref<64x16xf16, "shared">
// CHECK: tile.alloc {tile.swizzle = #tile.swizzle<none, pad = 8>} : memref<64x64xf16, "shared">
func.func @swizzles(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc {tile.swizzle = #tile.swizzle<128B>} : memref<64x64xf16, "shared">
    %b = tile.alloc {tile.swizzle = #tile.swizzle<32B>} : memref<64x16xf16, "shared">
    %c = tile.alloc {tile.swizzle = #tile.swizzle<none, pad = 8>} : memref<64x64xf16, "shared">
  }
  return
}

// A fragment used only inside T.ws blocks over one warpgroup of a 256-thread block is laid out
// over that warpgroup's 128 threads, as a T.Parallel there is.
// CHECK-LABEL: func.func @warpgroup_layouts
// CHECK: tile.alloc {tile.layout = #tile.linear<[128], register = [], lane = {{\[\[}}1], [2], [4], [8], [16]], warp = {{\[\[}}32], [64]]>}
// CHECK: tile.warpgroups [1]
// CHECK: tile.parallel [128] attributes {tile.layout = #tile.linear<[128], register = [], lane = {{\[\[}}1], [2], [4], [8], [16]], warp = {{\[\[}}32], [64]]>}
func.func @warpgroup_layouts(%n: index) {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %zero = arith.constant 0.0 : f32
    %f = tile.alloc {tile.layout = #tile.linear<[128], register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64]]>} : memref<128xf32, "fragment">
    tile.warpgroups [1] {
      tile.fill %f, %zero : memref<128xf32, "fragment">, f32
      tile.parallel [128] attributes {tile.layout = #tile.linear<[128], register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64]]>} {
      ^bb0(%i: index):
        memref.store %zero, %f[%i] : memref<128xf32, "fragment">
      }
    }
  }
  return
}
