// RUN: tilec-opt --plan-mfma-gemms --split-input-file %s | FileCheck %s
// RUN: tilec-opt --plan-mfma-gemms --infer-fragment-layout --split-input-file %s | FileCheck %s --check-prefix=INFER

// plan-mfma-gemms (AMD CDNA): a gemm whose operands, types, shape and threads an MFMA takes
// gets tile.mfma (instruction, wave grid, A and B operand layouts) and its accumulator the
// MFMA fragment; infer-fragment-layout then lays out what reads the accumulator from it.

// One wave, one v_mfma_f32_32x32x8_f16 block: A's lanes walk its 32 rows, lanes 32..63 the
// second four K elements, each lane's register pair the four it packs; B the same with columns;
// the accumulator's lanes are its columns (lane 32 adds 4 rows), registers rows 1, 2, 8, 16.
// CHECK-LABEL: func.func @f16_one_wave
// CHECK: tile.alloc {tile.layout = #tile.linear<[32, 32], register = {{\[\[}}1, 0], [2, 0], [8, 0], [16, 0]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = []>} : memref<32x32xf32, "fragment">
// CHECK: tile.gemm {{.*}} tile.mfma = {a = #tile.linear<[32, 8], register = {{\[\[}}0, 1], [0, 2]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = []>, b = #tile.linear<[8, 32], register = {{\[\[}}1, 0], [2, 0]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = []>, instruction = "v_mfma_f32_32x32x8_f16", waves = array<i64: 1, 1>}
module attributes {tile.arch = "gfx942"} {
  func.func @f16_one_wave(%C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [64] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<32x8xf16, "shared">
      %bs = tile.alloc : memref<8x32xf16, "shared">
      %acc = tile.alloc : memref<32x32xf32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true} : memref<32x8xf16, "shared">, memref<8x32xf16, "shared">, memref<32x32xf32, "fragment">
      tile.copy %acc[%c0, %c0] [32, 32] to %C[%c0, %c0] [32, 32] : memref<32x32xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// Four waves as 2 x 2 (the squarest wave tile), bf16: each wave repeats the block over its
// 64 x 64 tile (registers: the block's 16, then N and M blocks); A is broadcast over the waves
// along N, B over those along M. infer-fragment-layout slices the accumulator for the row sum.
// CHECK-LABEL: func.func @bf16_four_waves
// INFER-LABEL: func.func @bf16_four_waves
// INFER: tile.alloc {tile.layout = #tile.linear<[128], register = {{\[\[}}1], [2], [8], [16], [32]], lane = {{\[\[}}0], [0], [0], [0], [0], [4]], warp = {{\[\[}}0], [64]]>} : memref<128xf32, "fragment">
// CHECK: tile.alloc {tile.layout = #tile.linear<[128, 128], register = {{\[\[}}1, 0], [2, 0], [8, 0], [16, 0], [0, 32], [32, 0]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = {{\[\[}}0, 64], [64, 0]]>}
// CHECK: tile.gemm {{.*}}a = #tile.linear<[128, 32], register = {{\[\[}}0, 1], [0, 2], [0, 8], [0, 16], [32, 0]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = {{\[\[}}0, 0], [64, 0]]>, b = #tile.linear<[32, 128], register = {{\[\[}}1, 0], [2, 0], [8, 0], [16, 0], [0, 32]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = {{\[\[}}0, 64], [0, 0]]>, instruction = "v_mfma_f32_32x32x8_bf16", waves = array<i64: 2, 2>
module attributes {tile.arch = "gfx942"} {
  func.func @bf16_four_waves(%C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x32xbf16, "shared">
      %bs = tile.alloc : memref<32x128xbf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true} : memref<128x32xbf16, "shared">, memref<32x128xbf16, "shared">, memref<128x128xf32, "fragment">
      %red = tile.alloc : memref<128xf32, "fragment">
      tile.reduce "sum" %acc to %red dim 1 : memref<128x128xf32, "fragment"> to memref<128xf32, "fragment">
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// policy = "full_row": all four waves along M; gfx90a spells the instruction without the
// underscore.
// CHECK-LABEL: func.func @full_row
// CHECK: tile.gemm {{.*}}instruction = "v_mfma_f32_32x32x8f16", waves = array<i64: 4, 1>
module attributes {tile.arch = "gfx90a"} {
  func.func @full_row(%C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x16xf16, "shared">
      %bs = tile.alloc : memref<16x32xf16, "shared">
      %acc = tile.alloc : memref<128x32xf32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true, policy = "full_row"} : memref<128x16xf16, "shared">, memref<16x32xf16, "shared">, memref<128x32xf32, "fragment">
      tile.copy %acc[%c0, %c0] [128, 32] to %C[%c0, %c0] [128, 32] : memref<128x32xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// int8 into i32 on gfx942: 8 bytes per lane (one i64), K steps of 16.
// CHECK-LABEL: func.func @int8_gfx942
// CHECK: tile.gemm {{.*}}a = #tile.linear<[64, 32], register = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 16]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 8]], warp = {{\[\[}}32, 0]]>{{.*}}instruction = "v_mfma_i32_32x32x16_i8", waves = array<i64: 2, 1>
module attributes {tile.arch = "gfx942"} {
  func.func @int8_gfx942(%C: memref<256x256xi32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x32xi8, "shared">
      %bs = tile.alloc : memref<32x64xi8, "shared">
      %acc = tile.alloc : memref<64x64xi32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true} : memref<64x32xi8, "shared">, memref<32x64xi8, "shared">, memref<64x64xi32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xi32, "fragment"> to memref<256x256xi32>
    }
    return
  }
}

// -----

// int8 on gfx90a: 4 bytes per lane (one i32), K steps of 8.
// CHECK-LABEL: func.func @int8_gfx90a
// CHECK: tile.gemm {{.*}}a = #tile.linear<[64, 32], register = {{\[\[}}0, 1], [0, 2], [0, 8], [0, 16]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = {{\[\[}}32, 0]]>{{.*}}instruction = "v_mfma_i32_32x32x8i8", waves = array<i64: 2, 1>
module attributes {tile.arch = "gfx90a"} {
  func.func @int8_gfx90a(%C: memref<256x256xi32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x32xi8, "shared">
      %bs = tile.alloc : memref<32x64xi8, "shared">
      %acc = tile.alloc : memref<64x64xi32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true} : memref<64x32xi8, "shared">, memref<32x64xi8, "shared">, memref<64x64xi32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xi32, "fragment"> to memref<256x256xi32>
    }
    return
  }
}

// -----

// fp8 in the FNUZ format gfx942's MFMAs read, B as N x K: a 16 x 16 tile takes the 16 x 16
// block, whose accumulator lanes 16..63 add rows 4 and 8.
// CHECK-LABEL: func.func @fp8_fnuz_16x16
// CHECK: tile.alloc {tile.layout = #tile.linear<[16, 16], register = {{\[\[}}1, 0], [2, 0]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [4, 0], [8, 0]], warp = []>}
// CHECK: tile.gemm {{.*}}instruction = "v_mfma_f32_16x16x32_fp8_fp8", waves = array<i64: 1, 1>
module attributes {tile.arch = "gfx942"} {
  func.func @fp8_fnuz_16x16(%C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [64] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<16x32xf8E4M3FNUZ, "shared">
      %bs = tile.alloc : memref<16x32xf8E4M3FNUZ, "shared">
      %acc = tile.alloc : memref<16x16xf32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true, transpose_b = true} : memref<16x32xf8E4M3FNUZ, "shared">, memref<16x32xf8E4M3FNUZ, "shared">, memref<16x16xf32, "fragment">
      tile.copy %acc[%c0, %c0] [16, 16] to %C[%c0, %c0] [16, 16] : memref<16x16xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// A in registers: its fragment gets the A-operand layout (two K steps: register 4 is K 8).
// CHECK-LABEL: func.func @fragment_a
// CHECK: tile.alloc {tile.layout = #tile.linear<[32, 16], register = {{\[\[}}0, 1], [0, 2], [0, 8]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = []>} : memref<32x16xf16, "fragment">
// CHECK: tile.gemm {{.*}}instruction = "v_mfma_f32_32x32x8_f16"
module attributes {tile.arch = "gfx942"} {
  func.func @fragment_a(%C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [64] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<32x16xf16, "fragment">
      %bs = tile.alloc : memref<16x64xf16, "shared">
      %acc = tile.alloc : memref<32x64xf32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true} : memref<32x16xf16, "fragment">, memref<16x64xf16, "shared">, memref<32x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [32, 64] to %C[%c0, %c0] [32, 64] : memref<32x64xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// Left to lower-gemm-simt: OCP float8 (gfx942's fp8 MFMAs read FNUZ: half the values, NaN for
// -0) ...
// CHECK-LABEL: func.func @ocp_fp8
// CHECK-NOT: tile.mfma
module attributes {tile.arch = "gfx942"} {
  func.func @ocp_fp8(%C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [64] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<32x16xf8E4M3FN, "shared">
      %bs = tile.alloc : memref<16x32xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<32x32xf32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true} : memref<32x16xf8E4M3FN, "shared">, memref<16x32xf8E4M3FN, "shared">, memref<32x32xf32, "fragment">
      tile.copy %acc[%c0, %c0] [32, 32] to %C[%c0, %c0] [32, 32] : memref<32x32xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// ... fp8 on gfx90a (no fp8 MFMA) ...
// CHECK-LABEL: func.func @fp8_gfx90a
// CHECK-NOT: tile.mfma
module attributes {tile.arch = "gfx90a"} {
  func.func @fp8_gfx90a(%C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [64] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<32x16xf8E4M3FNUZ, "shared">
      %bs = tile.alloc : memref<16x32xf8E4M3FNUZ, "shared">
      %acc = tile.alloc : memref<32x32xf32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true} : memref<32x16xf8E4M3FNUZ, "shared">, memref<16x32xf8E4M3FNUZ, "shared">, memref<32x32xf32, "fragment">
      tile.copy %acc[%c0, %c0] [32, 32] to %C[%c0, %c0] [32, 32] : memref<32x32xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// ... a tile that is not a power of two ...
// CHECK-LABEL: func.func @ragged
// CHECK-NOT: tile.mfma
module attributes {tile.arch = "gfx942"} {
  func.func @ragged(%C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<48x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<48x64xf32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true} : memref<48x32xf16, "shared">, memref<32x64xf16, "shared">, memref<48x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [48, 64] to %C[%c0, %c0] [48, 64] : memref<48x64xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// ... fewer threads than a wave ...
// CHECK-LABEL: func.func @half_a_wave
// CHECK-NOT: tile.mfma
module attributes {tile.arch = "gfx942"} {
  func.func @half_a_wave(%C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [32] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<32x8xf16, "shared">
      %bs = tile.alloc : memref<8x32xf16, "shared">
      %acc = tile.alloc : memref<32x32xf32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true} : memref<32x8xf16, "shared">, memref<8x32xf16, "shared">, memref<32x32xf32, "fragment">
      tile.copy %acc[%c0, %c0] [32, 32] to %C[%c0, %c0] [32, 32] : memref<32x32xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// ... an f16 accumulator (MFMAs accumulate in f32) ...
// CHECK-LABEL: func.func @f16_accumulator
// CHECK-NOT: tile.mfma
module attributes {tile.arch = "gfx942"} {
  func.func @f16_accumulator(%C: memref<256x256xf16>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [64] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<32x8xf16, "shared">
      %bs = tile.alloc : memref<8x32xf16, "shared">
      %acc = tile.alloc : memref<32x32xf16, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true} : memref<32x8xf16, "shared">, memref<8x32xf16, "shared">, memref<32x32xf16, "fragment">
      tile.copy %acc[%c0, %c0] [32, 32] to %C[%c0, %c0] [32, 32] : memref<32x32xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// ... an accumulator laid out otherwise already (T.annotate_layout) ...
// CHECK-LABEL: func.func @annotated
// CHECK-NOT: tile.mfma
module attributes {tile.arch = "gfx942"} {
  func.func @annotated(%C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [64] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<32x8xf16, "shared">
      %bs = tile.alloc : memref<8x32xf16, "shared">
      %acc = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 0]], warp = []>} : memref<32x32xf32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true} : memref<32x8xf16, "shared">, memref<8x32xf16, "shared">, memref<32x32xf32, "fragment">
      tile.copy %acc[%c0, %c0] [32, 32] to %C[%c0, %c0] [32, 32] : memref<32x32xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// ... and every gemm on an NVIDIA chip.
// CHECK-LABEL: func.func @nvidia
// CHECK-NOT: tile.mfma
module attributes {tile.arch = "sm_90a"} {
  func.func @nvidia(%C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.gemm %as, %bs, %acc {clear_accum = true} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}
