// RUN: not tilec-opt --lower-tile-to-gpu %s --split-input-file 2>&1 | FileCheck %s
// A tile.mfma gemm is lowered from what plan-mfma-gemms recorded: a plan without its fields,
// naming an instruction tilec does not know, a wave grid the tile does not split into, operand
// layouts other than the instruction's, or an accumulator laid out otherwise, is an error at
// the gemm, never a wrong product.

// CHECK: lower-tile-to-gpu-mfma-invalid.mlir:14: error: tile.mfma needs instruction, waves, a, b (plan-mfma-gemms records them)
func.func @incomplete(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [64] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<32x8xf16, "shared">
    %bs = tile.alloc : memref<8x32xf16, "shared">
    %acc = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[1, 0], [2, 0], [8, 0], [16, 0]], lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = []>} : memref<32x32xf32, "fragment">
    tile.gemm %as, %bs, %acc {tile.mfma = {instruction = "v_mfma_f32_32x32x8_f16"}} : memref<32x8xf16, "shared">, memref<8x32xf16, "shared">, memref<32x32xf32, "fragment">
  }
  return
}

// -----

// CHECK: lower-tile-to-gpu-mfma-invalid.mlir:28: error: tile.mfma: no MFMA instruction 'v_mfma_f32_64x64x8_f16'
func.func @unknown_instruction(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [64] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<32x8xf16, "shared">
    %bs = tile.alloc : memref<8x32xf16, "shared">
    %acc = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[1, 0], [2, 0], [8, 0], [16, 0]], lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = []>} : memref<32x32xf32, "fragment">
    tile.gemm %as, %bs, %acc {tile.mfma = {a = #tile.linear<[32, 8], register = [[0, 1], [0, 2]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = []>, b = #tile.linear<[8, 32], register = [[1, 0], [2, 0]], lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = []>, instruction = "v_mfma_f32_64x64x8_f16", waves = array<i64: 1, 1>}} : memref<32x8xf16, "shared">, memref<8x32xf16, "shared">, memref<32x32xf32, "fragment">
  }
  return
}

// -----

// CHECK: lower-tile-to-gpu-mfma-invalid.mlir:42: error: tile.mfma: a 32x32x8 tile is not a whole number of v_mfma_f32_32x32x8_f16 blocks over 2x1 waves
func.func @wrong_grid(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [64] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<32x8xf16, "shared">
    %bs = tile.alloc : memref<8x32xf16, "shared">
    %acc = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[1, 0], [2, 0], [8, 0], [16, 0]], lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = []>} : memref<32x32xf32, "fragment">
    tile.gemm %as, %bs, %acc {tile.mfma = {a = #tile.linear<[32, 8], register = [[0, 1], [0, 2]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = []>, b = #tile.linear<[8, 32], register = [[1, 0], [2, 0]], lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = []>, instruction = "v_mfma_f32_32x32x8_f16", waves = array<i64: 2, 1>}} : memref<32x8xf16, "shared">, memref<8x32xf16, "shared">, memref<32x32xf32, "fragment">
  }
  return
}

// -----

// CHECK: lower-tile-to-gpu-mfma-invalid.mlir:56: error: tile.mfma: the operand layouts are not those of v_mfma_f32_32x32x8_f16 over 1x1 waves
func.func @wrong_operand_layout(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [64] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<32x8xf16, "shared">
    %bs = tile.alloc : memref<8x32xf16, "shared">
    %acc = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[1, 0], [2, 0], [8, 0], [16, 0]], lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = []>} : memref<32x32xf32, "fragment">
    tile.gemm %as, %bs, %acc {tile.mfma = {a = #tile.linear<[32, 8], register = [[0, 1], [0, 2]], lane = [[2, 0], [1, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = []>, b = #tile.linear<[8, 32], register = [[1, 0], [2, 0]], lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = []>, instruction = "v_mfma_f32_32x32x8_f16", waves = array<i64: 1, 1>}} : memref<32x8xf16, "shared">, memref<8x32xf16, "shared">, memref<32x32xf32, "fragment">
  }
  return
}

// -----

// CHECK: lower-tile-to-gpu-mfma-invalid.mlir:70: error: a tile.mfma gemm's accumulator must be a fragment in the MFMA accumulator layout (plan-mfma-gemms)
func.func @wrong_accumulator(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [64] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<32x8xf16, "shared">
    %bs = tile.alloc : memref<8x32xf16, "shared">
    %acc = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[0, 1], [0, 2], [0, 4], [0, 8]], lane = [[0, 16], [1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = []>} : memref<32x32xf32, "fragment">
    tile.gemm %as, %bs, %acc {tile.mfma = {a = #tile.linear<[32, 8], register = [[0, 1], [0, 2]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = []>, b = #tile.linear<[8, 32], register = [[1, 0], [2, 0]], lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = []>, instruction = "v_mfma_f32_32x32x8_f16", waves = array<i64: 1, 1>}} : memref<32x8xf16, "shared">, memref<8x32xf16, "shared">, memref<32x32xf32, "fragment">
  }
  return
}
