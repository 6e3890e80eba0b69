// RUN: not tilec-opt --lower-tile-to-gpu %s --split-input-file 2>&1 | FileCheck %s
// A tile.wgmma gemm is lowered from what plan-wgmma-gemms recorded: a plan without its fields,
// or operand tiles without their shared layout, are errors at the gemm.

// CHECK: lower-tile-to-gpu-wgmma-invalid.mlir:12: error: tile.wgmma needs warpgroups, m_atoms, n, k, dtype
func.func @incomplete_plan(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 1 : i64, span = 64 : i64, warpgroups = 1 : i64}} : memref<64x32xf16, "shared">
    %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<32x64xf16, "shared">
    %acc = tile.alloc {tile.layout = #tile.linear<[64, 64], register = [[0, 1], [0, 8], [0, 16], [0, 32], [32, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<64x64xf32, "fragment">
    tile.gemm %as, %bs, %acc {tile.wgmma = {warpgroups = 1 : i64}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}

// -----

// CHECK: lower-tile-to-gpu-wgmma-invalid.mlir:26: error: a tile.wgmma gemm needs tile.shared_layout on its shared operand tiles
func.func @unplanned_operands(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<64x32xf16, "shared">
    %bs = tile.alloc : memref<32x64xf16, "shared">
    %acc = tile.alloc {tile.layout = #tile.linear<[64, 64], register = [[0, 1], [0, 8], [0, 16], [0, 32], [32, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<64x64xf32, "fragment">
    tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, warpgroups = 1 : i64}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}

// -----

// A gemm clearing in its loop's first iteration (fold-accumulator-clears) outside any TMA ring
// loop: nothing tells it which iteration is the first.
// CHECK: lower-tile-to-gpu-wgmma-invalid.mlir:42: error: tile.clear_first_iteration needs its gemm in the body of a TMA ring loop (fold-accumulator-clears checks it)
func.func @clear_first_outside_ring(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 1 : i64, span = 64 : i64, warpgroups = 1 : i64}} : memref<64x32xf16, "shared">
    %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<32x64xf16, "shared">
    %acc = tile.alloc {tile.layout = #tile.linear<[64, 64], register = [[0, 1], [0, 8], [0, 16], [0, 32], [32, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<64x64xf32, "fragment">
    tile.gemm %as, %bs, %acc {tile.clear_first_iteration, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, warpgroups = 1 : i64}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}
