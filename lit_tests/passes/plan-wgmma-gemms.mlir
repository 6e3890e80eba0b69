// RUN: tilec-opt --plan-wgmma-gemms --split-input-file %s | FileCheck %s

// plan-wgmma-gemms (sm_90a): a gemm with a wgmma tile.mma that the per-op rule can read gets
// tile.wgmma, its accumulator wgmma's own fragment (lanes: column pairs by 4, rows by 8; warps
// 16 rows apart; registers: the pair, +8 rows, then 8-column groups and 64-row atoms), and its
// operand tiles the layout the descriptors read; the loop's TMA ring (the whole-kernel
// generator's) becomes a cp.async pipeline of the user's depth.

// A 128 x 32 f16 (K rows of 64 bytes: 64B swizzle), B 32 x 128 f16 (MN-major, 128B boxes); an
// epilogue T.Parallel on the accumulator.
// CHECK-LABEL: func.func @bias_relu
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 64 : i64, warpgroups = 0 : i64}, tile.swizzle = "128B"} : memref<128x32xf16, "shared">
// CHECK: tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}, tile.swizzle = "128B"} : memref<32x128xf16, "shared">
// CHECK: tile.alloc {tile.layout = #tile.linear<[128, 128], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}16, 0], [32, 0]]>, tile.mma_layout = "wgmma-accumulator"}
// CHECK: tile.pipelined {{.*}} attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}}
// CHECK: tile.copy {{.*}} {tile.async = "cp.async"}
// CHECK: tile.copy {{.*}} {tile.async = "cp.async"}
// CHECK: tile.gemm {{.*}} tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @bias_relu(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %bias: memref<1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %g = arith.constant 8 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %zero = arith.constant 0.0 : f32
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<128x128xf32, "fragment">
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c32 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 6 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<1024x1024xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<1024x1024xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %cj = arith.addi %col, %j : index
        %b = memref.load %bias[%cj] : memref<1024xf16>
        %bf = arith.extf %b : f16 to f32
        %s = arith.addf %v, %bf : f32
        %r = arith.maximumf %s, %zero : f32
        memref.store %r, %acc[%i, %j] : memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// Two warpgroups of one atom each; B as N x K (transpose_B): K-major, 128-byte rows.
// CHECK-LABEL: func.func @two_warpgroups_kmajor_b
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xbf16, "shared">
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<256x64xbf16, "shared">
// CHECK: tile.layout = #tile.linear<[128, 256], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [0, 128]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}16, 0], [32, 0], [64, 0]]>
// CHECK: tile.gemm {{.*}} tile.wgmma = {a_registers = false, dtype = "bf16", k = 16 : i64, m_atoms = 1 : i64, n = 256 : i64, reordered = false, warpgroups = 2 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @two_warpgroups_kmajor_b(%A: memref<4x512x512xbf16>, %B: memref<4x512x512xbf16>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g, %g) threads [256] {
    ^bb0(%bx: index, %by: index, %bz: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x64xbf16, "shared">
      %bs = tile.alloc : memref<256x64xbf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      tile.copy %A[%bz, %c0, %c0] [1, 128, 64] to %as[%c0, %c0] [128, 64] : memref<4x512x512xbf16> to memref<128x64xbf16, "shared">
      tile.copy %B[%bz, %c0, %c0] [1, 256, 64] to %bs[%c0, %c0] [256, 64] : memref<4x512x512xbf16> to memref<256x64xbf16, "shared">
      tile.gemm %as, %bs, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 256, 16>, kind = "wgmma", warpgroups = 2 : i64}} : memref<128x64xbf16, "shared">, memref<256x64xbf16, "shared">, memref<128x256xf32, "fragment">
    }
    return
  }
}

// -----

// A from registers: the fragment the loop fills from A's shared tile gets wgmma's A-operand
// layout (for f16 the accumulator's, K steps of 16 where the accumulator has 8-column
// groups); the shared tile itself is an ordinary one.
// CHECK-LABEL: func.func @register_a
// CHECK: %[[AS:.*]] = tile.alloc : memref<128x32xf16, "shared">
// CHECK: tile.alloc {tile.layout = #tile.linear<[128, 32], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [64, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}16, 0], [32, 0]]>} : memref<128x32xf16, "fragment">
// CHECK: tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<32x128xf16, "shared">
// CHECK: tile.gemm {{.*}} tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @register_a(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>) attributes {tile.entry} {
    %g = arith.constant 8 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c32 step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%c0, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<1024x1024xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %c0] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<1024x1024xf16> to memref<32x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
        tile.gemm %af, %bs, %acc {tile.mma = {a_source = "registers", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// N = 96 (B as N x K) is no power of two: wgmma's fragment does not cover the tile, so the accumulator is
// blocked (rows 32 per warpgroup by 4 threads, column pairs by 4 threads, padded to 128
// columns) and A's rows are stored in the order that gives the instruction's rows to it.
// CHECK-LABEL: func.func @ragged_n
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 2 : i64, span = 64 : i64, warpgroups = 1 : i64}} : memref<128x32xf16, "shared">
// CHECK: tile.alloc {tile.layout = #tile.linear<[128, 96], register = {{\[\[}}0, 1], [0, 8], [0, 16], [0, 32], [0, 64], [32, 0], [64, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}8, 0], [16, 0]]>} : memref<128x96xf32, "fragment">
// CHECK: tile.gemm {{.*}} tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 96 : i64, reordered = true, warpgroups = 1 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @ragged_n(%A: memref<256x256xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<96x32xf16, "shared">
      %acc = tile.alloc : memref<128x96xf32, "fragment">
      tile.gemm %as, %bs, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 96, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<96x32xf16, "shared">, memref<128x96xf32, "fragment">
    }
    return
  }
}

// -----

// Two gemms accumulating into one fragment: the second finds the layout the first gave it.
// CHECK-LABEL: func.func @two_gemms_one_accumulator
// CHECK: tile.gemm {{.*}} tile.wgmma =
// CHECK: tile.gemm {{.*}} tile.wgmma =
module attributes {tile.arch = "sm_90a"} {
  func.func @two_gemms_one_accumulator(%A: memref<64x64xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %a1 = tile.alloc : memref<64x32xf16, "shared">
      %b1 = tile.alloc : memref<32x64xf16, "shared">
      %a2 = tile.alloc : memref<64x32xf16, "shared">
      %b2 = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.gemm %a1, %b1, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.gemm %a2, %b2, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    }
    return
  }
}

// -----

// A stored K x M (transpose_A): MN-major from shared memory, as B stored K x N is, its two
// 64-row atoms two 64-column boxes of the tile.
// CHECK-LABEL: func.func @transposed_a
// CHECK: tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
// CHECK: tile.gemm {{.*}}tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @transposed_a(%A: memref<256x256xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %at = tile.alloc : memref<64x128xf16, "shared">
      %bt = tile.alloc : memref<128x64xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.gemm %at, %bt, %acc {transpose_a = true, transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x128xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
    }
    return
  }
}

// -----

// Declined, left to lower-gemm-simt: more threads than the decision's warpgroups (A as M x K,
// and as K x M), a gemm without tile.mma; and nothing on sm_80.
// CHECK-LABEL: func.func @declined
// CHECK-NOT: tile.wgmma
// CHECK-NOT: tile.shared_layout
// CHECK: return
module attributes {tile.arch = "sm_90a"} {
  func.func @declined(%A: memref<256x256xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [256] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<64x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      %at = tile.alloc : memref<32x64xf16, "shared">
      %acc2 = tile.alloc : memref<64x64xf32, "fragment">
      tile.gemm %at, %bs, %acc2 {transpose_a = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<32x64xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      %acc3 = tile.alloc : memref<64x64xf32, "fragment">
      tile.gemm %as, %bs, %acc3 : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @ampere
// CHECK-NOT: tile.wgmma
// CHECK: return
module attributes {tile.arch = "sm_80"} {
  func.func @ampere(%A: memref<256x256xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
    }
    return
  }
}

// -----

// A gemm inside a T.ws block over warpgroup 1 of a 256-thread block (the consumer; warpgroup 0
// fills the tiles): planned for that one warpgroup, its accumulator laid out over its 128
// threads.
// CHECK-LABEL: func.func @consumer_warpgroup
// CHECK: tile.alloc {tile.layout = #tile.linear<[128, 128], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}16, 0], [32, 0]]>, tile.mma_layout = "wgmma-accumulator"}
// CHECK: tile.warpgroups [1]
// CHECK: tile.gemm {{.*}} tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @consumer_warpgroup(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %g = arith.constant 8 : index
    tile.kernel grid(%g, %g) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<128x128xf32, "fragment">
      tile.warpgroups [1] {
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<1024x1024xf32>
      }
    }
    return
  }
}

// -----

// Declined: a wgmma decision for 128 threads of a range that starts at thread 64 (warps 2..5).
// wgmma is issued by warps 4k..4k+3 together; these threads hold no such warpgroup, so the
// count alone (a multiple of 128) does not make them one. No tile.wgmma, no layouts: the
// gemm is left to the CUDA cores (infer-mma-layout gives such a gemm mma.sync instead).
// CHECK-LABEL: func.func @range_off_warpgroups
// CHECK-NOT: tile.wgmma
// CHECK-NOT: tile.layout
// CHECK: return
module attributes {tile.arch = "sm_90a"} {
  func.func @range_off_warpgroups(%A: memref<128x64xf16>, %B: memref<64x128xf16>, %C: memref<128x128xf32>) attributes {tile.entry} {
    %c1 = arith.constant 1 : index
    tile.kernel grid(%c1) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %c192 = arith.constant 192 : index
      %tx = gpu.thread_id x
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x128xf16, "shared">
      %from = arith.cmpi sle, %c64, %tx : index
      %below = arith.cmpi slt, %tx, %c192 : index
      %inside = arith.andi %from, %below : i1
      scf.if %inside {
        %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<128x128xf32, "fragment">
        tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%c0, %c0] [64, 128] to %bs[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<128x128xf32>
      }
    }
    return
  }
}

// -----

// The same gemm in the range from thread 128 (hardware warpgroup 1) is planned.
// CHECK-LABEL: func.func @range_on_a_warpgroup
// CHECK: tile.gemm {{.*}}tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @range_on_a_warpgroup(%A: memref<128x64xf16>, %B: memref<64x128xf16>, %C: memref<128x128xf32>) attributes {tile.entry} {
    %c1 = arith.constant 1 : index
    tile.kernel grid(%c1) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c128 = arith.constant 128 : index
      %tx = gpu.thread_id x
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x128xf16, "shared">
      %inside = arith.cmpi sge, %tx, %c128 : index
      scf.if %inside {
        %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<128x128xf32, "fragment">
        tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%c0, %c0] [64, 128] to %bs[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<128x128xf32>
      }
    }
    return
  }
}
