// RUN: tilec-opt --infer-mma-layout --split-input-file %s | FileCheck %s

// infer-mma-layout with the opt-in tile.split_wgmma_n (TILEC_SPLIT_WGMMA_N=1): a 64-row gemm of
// a block of 2 or 4 warpgroups runs on all of them, each a wgmma over its share of N
// (split = "n"); where N does not split into power-of-two shares, the one-warpgroup decision.

// 64 rows on 256 threads (TileLang's MLA decode scores): each warpgroup an m64n32 wgmma on its
// half of N = 64.
// CHECK-LABEL: func.func @split_two
// CHECK: tile.gemm {{.*}}tile.mma = {a_source = "shared", instr = array<i64: 64, 32, 16>, kind = "wgmma", split = "n", warpgroups = 2 : i64}

module attributes {tile.arch = "sm_90a", tile.split_wgmma_n} {
  func.func @split_two(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x64xf16, "shared">
      %bs = tile.alloc : memref<64x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 64] to %as[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.copy %B[%c0, %c0] [64, 64] to %bs[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.gemm %as, %bs, %acc {transpose_b = true} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}

// -----

// Four warpgroups (512 threads), B stored K x N: m64n64 each over N = 256.
// CHECK-LABEL: func.func @split_four
// CHECK: tile.gemm {{.*}}tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", split = "n", warpgroups = 4 : i64}

module attributes {tile.arch = "sm_90a", tile.split_wgmma_n} {
  func.func @split_four(%A: memref<64x64xf16>, %B: memref<64x256xf16>, %C: memref<64x256xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [512] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x64xf16, "shared">
      %bs = tile.alloc : memref<64x256xf16, "shared">
      %acc = tile.alloc : memref<64x256xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 64] to %as[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.copy %B[%c0, %c0] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<64x256xf16> to memref<64x256xf16, "shared">
      tile.gemm %as, %bs, %acc : memref<64x64xf16, "shared">, memref<64x256xf16, "shared">, memref<64x256xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 256] to %C[%c0, %c0] [64, 256] : memref<64x256xf32, "fragment"> to memref<64x256xf32>
    }
    return
  }
}

// -----

// A from registers (attention's P V): each warpgroup holds A whole, m64n256 over N = 512.
// CHECK-LABEL: func.func @split_register_a
// CHECK: tile.gemm {{.*}}tile.mma = {a_source = "registers", instr = array<i64: 64, 256, 16>, kind = "wgmma", split = "n", warpgroups = 2 : i64}

module attributes {tile.arch = "sm_90a", tile.split_wgmma_n} {
  func.func @split_register_a(%A: memref<64x64xf16>, %B: memref<64x512xf16>, %C: memref<64x512xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x64xf16, "shared">
      %af = tile.alloc : memref<64x64xf16, "fragment">
      %bs = tile.alloc : memref<64x512xf16, "shared">
      %acc = tile.alloc : memref<64x512xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 64] to %as[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.copy %B[%c0, %c0] [64, 512] to %bs[%c0, %c0] [64, 512] : memref<64x512xf16> to memref<64x512xf16, "shared">
      tile.copy %as[%c0, %c0] [64, 64] to %af[%c0, %c0] [64, 64] : memref<64x64xf16, "shared"> to memref<64x64xf16, "fragment">
      tile.gemm %af, %bs, %acc : memref<64x64xf16, "fragment">, memref<64x512xf16, "shared">, memref<64x512xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 512] to %C[%c0, %c0] [64, 512] : memref<64x512xf32, "fragment"> to memref<64x512xf32>
    }
    return
  }
}

// -----

// Declined: N = 192 halves to 96, no power of two: the one-warpgroup decision as without the
// opt-in (plan-wgmma-gemms then leaves the gemm to the CUDA cores).
// CHECK-LABEL: func.func @odd_half
// CHECK: tile.gemm {{.*}}tile.mma = {a_source = "shared", instr = array<i64: 64, 192, 16>, kind = "wgmma", warpgroups = 1 : i64}

module attributes {tile.arch = "sm_90a", tile.split_wgmma_n} {
  func.func @odd_half(%A: memref<64x64xf16>, %B: memref<192x64xf16>, %C: memref<64x192xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x64xf16, "shared">
      %bs = tile.alloc : memref<192x64xf16, "shared">
      %acc = tile.alloc : memref<64x192xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 64] to %as[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.copy %B[%c0, %c0] [192, 64] to %bs[%c0, %c0] [192, 64] : memref<192x64xf16> to memref<192x64xf16, "shared">
      tile.gemm %as, %bs, %acc {transpose_b = true} : memref<64x64xf16, "shared">, memref<192x64xf16, "shared">, memref<64x192xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 192] to %C[%c0, %c0] [64, 192] : memref<64x192xf32, "fragment"> to memref<64x192xf32>
    }
    return
  }
}

// -----

// 384 threads: fragments span 256 (the third warpgroup runs as a copy of the first), so N
// splits over two warpgroups.
// CHECK-LABEL: func.func @three_warpgroups
// CHECK: tile.gemm {{.*}}tile.mma = {a_source = "shared", instr = array<i64: 64, 32, 16>, kind = "wgmma", split = "n", warpgroups = 2 : i64}

module attributes {tile.arch = "sm_90a", tile.split_wgmma_n} {
  func.func @three_warpgroups(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [384] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x64xf16, "shared">
      %bs = tile.alloc : memref<64x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 64] to %as[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.copy %B[%c0, %c0] [64, 64] to %bs[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.gemm %as, %bs, %acc {transpose_b = true} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}

// -----

// Without the opt-in (no tile.split_wgmma_n on the module): today's decision.
// CHECK-LABEL: func.func @not_opted_in
// CHECK: tile.gemm {{.*}}tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}

module attributes {tile.arch = "sm_90a"} {
  func.func @not_opted_in(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x64xf16, "shared">
      %bs = tile.alloc : memref<64x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 64] to %as[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.copy %B[%c0, %c0] [64, 64] to %bs[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
      tile.gemm %as, %bs, %acc {transpose_b = true} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}
