// RUN: tilec-opt --infer-mma-layout --split-input-file %s | FileCheck %s

// infer-mma-layout with the opt-in tile.mma_sync_fallback (TILEC_MMA_SYNC_FALLBACK=1): on sm_90a
// a gemm that wgmma cannot take gets the mma.sync decision (the per-op lowering's rule: 16 x 16
// warp tiles, K any number of 32-byte steps) instead of none (the CUDA cores); one wgmma takes
// keeps wgmma; without the opt-in, nothing changes.

// TileLang's sparse MLA backward scores: 64 x 32 (N = 32, no wgmma) over K = 512 on 256
// threads, FullCol: the 8 warps as 4 x 2 (1 x 8 gives 4-column warp tiles); K = 512 bf16 is
// 1 KiB, past the whole-kernel generator's 256 bytes.
// CHECK-LABEL: func.func @narrow_n
// CHECK: tile.gemm {{.*}}tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 4, 2>}
// CHECK: tile.gemm {{.*}}tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}

module attributes {tile.arch = "sm_90a", tile.mma_sync_fallback} {
  func.func @narrow_n(%A: memref<64x512xbf16>, %B: memref<32x512xbf16>, %D: memref<64x64xbf16>, %C: memref<64x32xf32>, %E: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x512xbf16, "shared">
      %bs = tile.alloc : memref<32x512xbf16, "shared">
      %ds = tile.alloc : memref<64x64xbf16, "shared">
      %acc = tile.alloc : memref<64x32xf32, "fragment">
      %wide = tile.alloc : memref<64x64xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 512] to %as[%c0, %c0] [64, 512] : memref<64x512xbf16> to memref<64x512xbf16, "shared">
      tile.copy %B[%c0, %c0] [32, 512] to %bs[%c0, %c0] [32, 512] : memref<32x512xbf16> to memref<32x512xbf16, "shared">
      tile.copy %D[%c0, %c0] [64, 64] to %ds[%c0, %c0] [64, 64] : memref<64x64xbf16> to memref<64x64xbf16, "shared">
      tile.gemm %as, %bs, %acc {policy = "full_col", transpose_b = true} : memref<64x512xbf16, "shared">, memref<32x512xbf16, "shared">, memref<64x32xf32, "fragment">
      tile.gemm %ds, %ds, %wide {transpose_b = true} : memref<64x64xbf16, "shared">, memref<64x64xbf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 32] to %C[%c0, %c0] [64, 32] : memref<64x32xf32, "fragment"> to memref<64x32xf32>
      tile.copy %wide[%c0, %c0] [64, 64] to %E[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}

// -----

// The same scores without the opt-in: no decision (the CUDA cores).
// CHECK-LABEL: func.func @narrow_n_default
// CHECK: tile.gemm
// CHECK-NOT: tile.mma =
// CHECK-SAME: memref<64x32xf32, "fragment">

module attributes {tile.arch = "sm_90a"} {
  func.func @narrow_n_default(%A: memref<64x512xbf16>, %B: memref<32x512xbf16>, %C: memref<64x32xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x512xbf16, "shared">
      %bs = tile.alloc : memref<32x512xbf16, "shared">
      %acc = tile.alloc : memref<64x32xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 512] to %as[%c0, %c0] [64, 512] : memref<64x512xbf16> to memref<64x512xbf16, "shared">
      tile.copy %B[%c0, %c0] [32, 512] to %bs[%c0, %c0] [32, 512] : memref<32x512xbf16> to memref<32x512xbf16, "shared">
      tile.gemm %as, %bs, %acc {policy = "full_col", transpose_b = true} : memref<64x512xbf16, "shared">, memref<32x512xbf16, "shared">, memref<64x32xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 32] to %C[%c0, %c0] [64, 32] : memref<64x32xf32, "fragment"> to memref<64x32xf32>
    }
    return
  }
}

// -----

// A 32-row gemm on one warp (TileLang's kda kernels: threads=32): mma.sync over the one warp.
// CHECK-LABEL: func.func @one_warp
// CHECK: tile.gemm {{.*}}tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 1, 1>}

module attributes {tile.arch = "sm_90a", tile.mma_sync_fallback} {
  func.func @one_warp(%A: memref<32x32xf16>, %B: memref<32x32xf16>, %C: memref<32x32xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [32] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<32x32xf16, "shared">
      %bs = tile.alloc : memref<32x32xf16, "shared">
      %acc = tile.alloc : memref<32x32xf32, "fragment">
      tile.copy %A[%c0, %c0] [32, 32] to %as[%c0, %c0] [32, 32] : memref<32x32xf16> to memref<32x32xf16, "shared">
      tile.copy %B[%c0, %c0] [32, 32] to %bs[%c0, %c0] [32, 32] : memref<32x32xf16> to memref<32x32xf16, "shared">
      tile.gemm %as, %bs, %acc : memref<32x32xf16, "shared">, memref<32x32xf16, "shared">, memref<32x32xf32, "fragment">
      tile.copy %acc[%c0, %c0] [32, 32] to %C[%c0, %c0] [32, 32] : memref<32x32xf32, "fragment"> to memref<32x32xf32>
    }
    return
  }
}
