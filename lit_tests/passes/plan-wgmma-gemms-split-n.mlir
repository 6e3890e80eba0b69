// RUN: tilec-opt --plan-wgmma-gemms --split-input-file %s | FileCheck %s

// plan-wgmma-gemms on infer-mma-layout's split = "n" decisions (opt-in TILEC_SPLIT_WGMMA_N=1):
// a 64-row gemm on all of a block's warpgroups, each a wgmma of its share of N: tile.wgmma's
// split_n, the accumulator's warpgroup bits along N, a register A held whole by each
// warpgroup; declined where B's tile lets no descriptor start at a warpgroup's share.

// 64 x 64 on two warpgroups, B as N x K (K-major, 128-byte rows): each warpgroup an m64n32
// (n = 32, split_n); the accumulator's last warp bit is column 32 (warpgroup 1 holds columns
// 32..63 of every row); A and B keep their plain layouts (B's second warpgroup's descriptors
// start 32 rows in).
// CHECK-LABEL: func.func @split_k_major_b
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x64xf16, "shared">
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x64xf16, "shared">
// CHECK: tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}16, 0], [32, 0], [0, 32]]>, tile.mma_layout = "wgmma-accumulator"}
// CHECK: tile.gemm {{.*}}tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 32 : i64, reordered = false, split_n = true, warpgroups = 2 : i64}

module attributes {tile.arch = "sm_90a"} {
  func.func @split_k_major_b(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x64xf16, "shared">
      %bs = tile.alloc : memref<64x64xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x64xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 64] to %as[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.copy %B[%c0, %c0] [64, 64] to %bs[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 32, 16>, kind = "wgmma", split = "n", warpgroups = 2 : i64}, transpose_b = true} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}

// -----

// B as K x N (MN-major, 64-column boxes of 128 bytes), N = 128 over two warpgroups: each
// warpgroup's 64 columns are one box.
// CHECK-LABEL: func.func @split_mn_major_b
// CHECK: tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
// CHECK: tile.alloc {tile.layout = #tile.linear<[64, 128], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}16, 0], [32, 0], [0, 64]]>
// CHECK: tile.gemm {{.*}}tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, reordered = false, split_n = true, warpgroups = 2 : i64}

module attributes {tile.arch = "sm_90a"} {
  func.func @split_mn_major_b(%A: memref<64x64xf16>, %B: memref<64x128xf16>, %C: memref<64x128xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x64xf16, "shared">
      %bs = tile.alloc : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x128xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 64] to %as[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.copy %B[%c0, %c0] [64, 128] to %bs[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, "shared">
      tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", split = "n", warpgroups = 2 : i64}} : memref<64x64xf16, "shared">, memref<64x128xf16, "shared">, memref<64x128xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 128] to %C[%c0, %c0] [64, 128] : memref<64x128xf32, "fragment"> to memref<64x128xf32>
    }
    return
  }
}

// -----

// A from registers (P V): every warpgroup holds all of A (its fragment's last warp bit is a
// copy, [0, 0]), each an m64n128 over its half of N = 256.
// CHECK-LABEL: func.func @split_register_a
// CHECK: tile.alloc {tile.layout = #tile.linear<[64, 64], {{.*}}warp = {{\[\[}}16, 0], [32, 0], [0, 0]]>} : memref<64x64xf16, "fragment">
// CHECK: tile.alloc {tile.layout = #tile.linear<[64, 256], {{.*}}warp = {{\[\[}}16, 0], [32, 0], [0, 128]]>
// CHECK: tile.gemm {{.*}}tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, split_n = true, warpgroups = 2 : i64}

module attributes {tile.arch = "sm_90a"} {
  func.func @split_register_a(%A: memref<64x64xf16>, %B: memref<64x256xf16>, %C: memref<64x256xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x64xf16, "shared">
      %af = tile.alloc : memref<64x64xf16, "fragment">
      %bs = tile.alloc : memref<64x256xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x256xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 64] to %as[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.copy %B[%c0, %c0] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<64x256xf16> to memref<64x256xf16, "shared">
      tile.copy %as[%c0, %c0] [64, 64] to %af[%c0, %c0] [64, 64] : memref<64x64xf16, "shared"> to memref<64x64xf16, "fragment">
      tile.gemm %af, %bs, %acc {tile.mma = {a_source = "registers", instr = array<i64: 64, 128, 16>, kind = "wgmma", split = "n", warpgroups = 2 : i64}} : memref<64x64xf16, "fragment">, memref<64x256xf16, "shared">, memref<64x256xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 256] to %C[%c0, %c0] [64, 256] : memref<64x256xf32, "fragment"> to memref<64x256xf32>
    }
    return
  }
}

// -----

// Declined: B as K x N with N = 64 over two warpgroups: the second warpgroup's 32 columns
// start inside a 64-column box, where no descriptor starts. No tile.wgmma: the CUDA cores.
// CHECK-LABEL: func.func @split_inside_a_box
// CHECK-NOT: tile.wgmma
// CHECK-NOT: tile.shared_layout
// CHECK: return

module attributes {tile.arch = "sm_90a"} {
  func.func @split_inside_a_box(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x64xf16, "shared">
      %bs = tile.alloc : memref<64x64xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x64xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 64] to %as[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.copy %B[%c0, %c0] [64, 64] to %bs[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 32, 16>, kind = "wgmma", split = "n", warpgroups = 2 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}
