// RUN: tilec-opt --plan-mma-sync-gemms --split-input-file --verify-diagnostics %s | FileCheck %s

// plan-mma-sync-gemms (sm_80): a gemm with an mma.sync tile.mma that the per-op rule can read
// gets tile.mma_sync, its accumulator mma.sync's C fragment over the warp grid (lanes: column
// pairs by 4, rows by 8; registers: the pair, +8 rows, then 8-column and 16-row pieces; warps:
// N bits low), and its shared operand tiles the swizzled layout ldmatrix reads.

// A 128 x 32 f16 (K-major, rows of 64 bytes: 64-byte span), B 32 x 128 f16 (MN-major,
// ldmatrix.trans, 128-byte boxes), 2 x 2 warps; a bias + ReLU epilogue on the accumulator.
// CHECK-LABEL: func.func @bias_relu
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 64 : i64, warpgroups = 0 : i64}, tile.swizzle = "xor"} : memref<128x32xf16, "shared">
// CHECK: tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}, tile.swizzle = "xor"} : memref<32x128xf16, "shared">
// CHECK: tile.alloc {tile.layout = #tile.linear<[128, 128], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [16, 0], [32, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}0, 64], [64, 0]]>, tile.mma_layout = "mma-accumulator"}
// CHECK: tile.gemm {{.*}} tile.mma_sync = {a_registers = false, dtype = "f16", k = 16 : i64, warps_m = 2 : i64, warps_n = 2 : i64}
module attributes {tile.arch = "sm_80"} {
  func.func @bias_relu(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %bias: memref<1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %g = arith.constant 8 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %zero = arith.constant 0.0 : f32
      %as = tile.alloc {tile.swizzle = "xor"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "xor"} : memref<32x128xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "mma-accumulator"} : memref<128x128xf32, "fragment">
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c32 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "cp.async"} : memref<1024x1024xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "cp.async"} : memref<1024x1024xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
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

// Attention's two gemms over a 4 x 1 warp grid (each warp owns 16 whole rows): the first's
// accumulator, cast to f16, is the second's A from registers, laid out as mma.sync's A
// fragment, which is the accumulator's layout (no conversion between them). K as N x K
// (transpose_B, K-major, 128-byte rows), V as K x N (MN-major).
// CHECK-LABEL: func.func @two_gemms
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x64xf16, "shared">
// CHECK: tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x64xf16, "shared">
// CHECK: tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}16, 0], [32, 0]]>} : memref<64x64xf32, "fragment">
// CHECK: tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}16, 0], [32, 0]]>} : memref<64x64xf16, "fragment">
// CHECK: tile.gemm {{.*}} tile.mma_sync = {a_registers = false, dtype = "f16", k = 16 : i64, warps_m = 4 : i64, warps_n = 1 : i64}
// CHECK: tile.gemm {{.*}} tile.mma_sync = {a_registers = true, dtype = "f16", k = 16 : i64, warps_m = 4 : i64, warps_n = 1 : i64}
module attributes {tile.arch = "sm_80"} {
  func.func @two_gemms(%Q: memref<1024x64xf16>, %O: memref<1024x64xf32>) attributes {tile.entry} {
    %g = arith.constant 16 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %qs = tile.alloc : memref<64x64xf16, "shared">
      %ks = tile.alloc : memref<64x64xf16, "shared">
      %vs = tile.alloc : memref<64x64xf16, "shared">
      %s = tile.alloc : memref<64x64xf32, "fragment">
      %p = tile.alloc : memref<64x64xf16, "fragment">
      %o = tile.alloc : memref<64x64xf32, "fragment">
      tile.gemm %qs, %ks, %s {transpose_b = true, clear_accum = true, tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 4, 1>}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.parallel [64, 64] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %s[%i, %j] : memref<64x64xf32, "fragment">
        %h = arith.truncf %v : f32 to f16
        memref.store %h, %p[%i, %j] : memref<64x64xf16, "fragment">
      }
      tile.gemm %p, %vs, %o {clear_accum = true, tile.mma = {a_source = "registers", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 4, 1>}} : memref<64x64xf16, "fragment">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %o[%c0, %c0] [64, 64] to %O[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<1024x64xf32>
    }
    return
  }
}

// -----

// int8 (m16n8k32) and tf32 (m16n8k8): K-major A and B, K steps of 32 bytes.
// CHECK-LABEL: func.func @other_types
// CHECK: tile.gemm {{.*}} tile.mma_sync = {a_registers = false, dtype = "s8", k = 32 : i64, warps_m = 2 : i64, warps_n = 2 : i64}
// CHECK: tile.gemm {{.*}} tile.mma_sync = {a_registers = false, dtype = "tf32", k = 8 : i64, warps_m = 2 : i64, warps_n = 2 : i64}
module attributes {tile.arch = "sm_80"} {
  func.func @other_types(%A: memref<256x256xi8>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<64x64xi8, "shared">
      %bs = tile.alloc : memref<64x64xi8, "shared">
      %acc = tile.alloc : memref<64x64xi32, "fragment">
      tile.gemm %as, %bs, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 32>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<64x64xi8, "shared">, memref<64x64xi8, "shared">, memref<64x64xi32, "fragment">
      %af = tile.alloc : memref<64x32xf32, "shared">
      %bf = tile.alloc : memref<64x32xf32, "shared">
      %accf = tile.alloc : memref<64x64xf32, "fragment">
      tile.gemm %af, %bf, %accf {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 8>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<64x32xf32, "shared">, memref<64x32xf32, "shared">, memref<64x64xf32, "fragment">
    }
    return
  }
}

// -----

// Declined, left to lower-gemm-simt: more threads than the decision's warps; warp tiles 8
// columns wide (4 warps along 32 columns); rows of 16 bytes (an 8-element f16 K); an
// accumulator another layout was given already; a gemm without tile.mma.
// CHECK-LABEL: func.func @declined
// CHECK-NOT: tile.mma_sync
// CHECK-NOT: tile.shared_layout
// CHECK: return
module attributes {tile.arch = "sm_80"} {
  func.func @declined(%A: memref<256x256xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<64x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 1, 2>}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      %bn = tile.alloc : memref<32x32xf16, "shared">
      %acc2 = tile.alloc : memref<64x32xf32, "fragment">
      tile.gemm %as, %bn, %acc2 {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 1, 4>}} : memref<64x32xf16, "shared">, memref<32x32xf16, "shared">, memref<64x32xf32, "fragment">
      %an = tile.alloc : memref<64x8xf16, "shared">
      %bk = tile.alloc : memref<8x64xf16, "shared">
      %acc3 = tile.alloc : memref<64x64xf32, "fragment">
      tile.gemm %an, %bk, %acc3 {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<64x8xf16, "shared">, memref<8x64xf16, "shared">, memref<64x64xf32, "fragment">
      %acc4 = tile.alloc {tile.layout = #tile.linear<[64, 64], register = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], lane = [[0, 32], [1, 0], [2, 0], [4, 0], [8, 0]], warp = [[16, 0], [32, 0]]>} : memref<64x64xf32, "fragment">
      tile.gemm %as, %bs, %acc4 {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      %acc5 = tile.alloc : memref<64x64xf32, "fragment">
      tile.gemm %as, %bs, %acc5 : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    }
    return
  }
}

// -----

// A wgmma decision on sm_90a is plan-wgmma-gemms' part: nothing here.
// CHECK-LABEL: func.func @hopper
// CHECK-NOT: tile.mma_sync
// CHECK: return
module attributes {tile.arch = "sm_90a"} {
  func.func @hopper(%A: memref<256x256xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
    }
    return
  }
}

// -----

// Rejected: an arch tilec does not describe.
// expected-error @unknown {{plan-mma-sync-gemms: unsupported CUDA arch 'sm_75'}}
module attributes {tile.arch = "sm_75"} {
  func.func @old_arch(%A: memref<256x256xf16>) attributes {tile.entry} {
    return
  }
}

// -----

// The register-A chain: a fragment A filled by one copy of a whole shared tile of its shape
// and type is loaded by ldmatrix: the tile gets A's K-major layout (64-byte rows: 64-byte span)
// and the copy tile.mma_sync_load, the gemm's plan. A fragment A filled from a part of a tile
// keeps its copy as it is (the tile gets no layout).
// CHECK-LABEL: func.func @register_a_chain
// CHECK: %[[AS:.*]] = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 64 : i64, warpgroups = 0 : i64}} : memref<128x32xf16, "shared">
// CHECK: %[[PART:.*]] = tile.alloc : memref<128x64xf16, "shared">
// CHECK: tile.copy %[[AS]][%{{.*}}, %{{.*}}] [128, 32] to %{{.*}}[%{{.*}}, %{{.*}}] [128, 32] {tile.mma_sync_load = {a_registers = true, dtype = "f16", k = 16 : i64, warps_m = 2 : i64, warps_n = 2 : i64}}
// CHECK: tile.gemm {{.*}} tile.mma_sync = {a_registers = true, dtype = "f16", k = 16 : i64, warps_m = 2 : i64, warps_n = 2 : i64}
// CHECK: tile.copy %[[PART]]
// CHECK-NOT: tile.mma_sync_load
// CHECK: tile.gemm {{.*}} tile.mma_sync = {a_registers = true
module attributes {tile.arch = "sm_80"} {
  func.func @register_a_chain(%A: memref<1024x1024xf16>, %C: memref<128x128xf32>) attributes {tile.entry} {
    %g = arith.constant 8 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %part = tile.alloc : memref<128x64xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %af2 = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.copy %A[%c0, %c0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<1024x1024xf16> to memref<128x32xf16, "shared">
      tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
      tile.gemm %af, %bs, %acc {clear_accum = true, tile.mma = {a_source = "registers", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      tile.copy %part[%c0, %c32] [128, 32] to %af2[%c0, %c0] [128, 32] : memref<128x64xf16, "shared"> to memref<128x32xf16, "fragment">
      tile.gemm %af2, %bs, %acc {tile.mma = {a_source = "registers", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<128x128xf32>
    }
    return
  }
}

// -----

// With tile.staged_epilogue (TILEC_STAGED_EPILOGUE=1) the accumulator's shared-staged store
// (select-epilogue-store's tile.store) goes through a shared tile of its own whose rows are 16
// bytes longer (128 x 136 f16: 34816 bytes, within the two cp.async rings' 3 x 16 KiB): the
// converted fragment into it, then the tile to global memory; no store of the fragment to
// global is left.
// CHECK-LABEL: func.func @staged_epilogue
// CHECK: tile.parallel
// CHECK: %[[STAGE:.*]] = tile.alloc : memref<128x136xf16, "shared">
// CHECK: tile.copy %[[H:.*]][%{{.*}}, %{{.*}}] [128, 128] to %[[STAGE]][%{{.*}}, %{{.*}}] [128, 128] : memref<128x128xf16, "fragment"> to memref<128x136xf16, "shared">
// CHECK-NEXT: tile.copy %[[STAGE]][%{{.*}}, %{{.*}}] [128, 128] to %{{.*}}[%{{.*}}, %{{.*}}] [128, 128] : memref<128x136xf16, "shared"> to memref<1024x1024xf16>
// CHECK-NOT: tile.copy %[[H]]
// CHECK: return
module attributes {tile.arch = "sm_80", tile.staged_epilogue} {
  func.func @staged_epilogue(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<1024x1024xf16>) attributes {tile.entry} {
    %g = arith.constant 8 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %zero = arith.constant 0.0 : f32
      %as = tile.alloc {tile.swizzle = "xor"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "xor"} : memref<32x128xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "mma-accumulator"} : memref<128x128xf32, "fragment">
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c32 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "cp.async"} : memref<1024x1024xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "cp.async"} : memref<1024x1024xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {kind = "shared-staged", vector_bytes = 16 : i64}} : memref<128x128xf16, "fragment"> to memref<1024x1024xf16>
    }
    return
  }
}

// -----

// On sm_90a, a gemm infer-mma-layout gave mma.sync (a range off the hardware's warpgroups,
// threads 64..191: no wgmma there) is planned as on sm_80: tile.mma_sync, mma.sync's C
// fragment over its 2 x 2 warps (the range's threads counted from its first).
// CHECK-LABEL: func.func @sm90a_range_off_warpgroups
// CHECK: tile.alloc {tile.layout = #tile.linear<[128, 128], {{.*}} warp = {{\[\[}}0, 64], [64, 0]]>
// CHECK: tile.gemm {{.*}}tile.mma_sync = {a_registers = false
module attributes {tile.arch = "sm_90a"} {
  func.func @sm90a_range_off_warpgroups(%A: memref<128x64xf16>, %B: memref<64x128xf16>, %C: memref<128x128xf32>) attributes {tile.entry} {
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
        %acc = tile.alloc {tile.mma_layout = "mma-accumulator"} : memref<128x128xf32, "fragment">
        tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%c0, %c0] [64, 128] to %bs[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<128x128xf32>
      }
    }
    return
  }
}

// -----

// With the opt-in tile.mma_sync_fallback (sm_90a: gemms wgmma cannot take run on mma.sync), a
// shared operand tile filled from a column slice of a larger tile (sparse MLA backward's
// `Q_shared[:, :512]`, 64 x 576 bf16) is read in place, as plan-wgmma-gemms reads wgmma's: the
// copy moves nothing and the larger tile takes the slice's layout over its whole shape.
// CHECK-LABEL: func.func @slice_in_place
// CHECK: %[[Q:.*]] = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x576xbf16, "shared">
// CHECK: tile.copy %[[Q]][%{{.*}}, %{{.*}}] [64, 512] to %{{.*}} {tile.read_in_place = {box_bytes = 8192 : i64, columns = 64 : i64}}
// CHECK: tile.gemm {{.*}} tile.mma_sync = {a_registers = false, dtype = "bf16", k = 16 : i64, warps_m = 4 : i64, warps_n = 2 : i64}
module attributes {tile.arch = "sm_90a", tile.mma_sync_fallback} {
  func.func @slice_in_place(%Q: memref<64x576xbf16>, %KV: memref<32x512xbf16>, %S: memref<64x32xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %qs = tile.alloc : memref<64x576xbf16, "shared">
      %kvs = tile.alloc : memref<32x512xbf16, "shared">
      %slice = tile.alloc : memref<64x512xbf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "mma-accumulator"} : memref<64x32xf32, "fragment">
      tile.copy %Q[%c0, %c0] [64, 576] to %qs[%c0, %c0] [64, 576] : memref<64x576xbf16> to memref<64x576xbf16, "shared">
      tile.copy %KV[%c0, %c0] [32, 512] to %kvs[%c0, %c0] [32, 512] : memref<32x512xbf16> to memref<32x512xbf16, "shared">
      tile.copy %qs[%c0, %c0] [64, 512] to %slice[%c0, %c0] [64, 512] : memref<64x576xbf16, "shared"> to memref<64x512xbf16, "shared">
      tile.gemm %slice, %kvs, %acc {clear_accum = true, transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 4, 2>}} : memref<64x512xbf16, "shared">, memref<32x512xbf16, "shared">, memref<64x32xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 32] to %S[%c0, %c0] [64, 32] : memref<64x32xf32, "fragment"> to memref<64x32xf32>
    }
    return
  }
}

// -----

// Without the opt-in the copy stays (sm_80 kernels keep their code).
// CHECK-LABEL: func.func @slice_copied
// CHECK-NOT: tile.read_in_place
// CHECK: return
module attributes {tile.arch = "sm_80"} {
  func.func @slice_copied(%Q: memref<64x576xbf16>, %KV: memref<32x512xbf16>, %S: memref<64x32xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %qs = tile.alloc : memref<64x576xbf16, "shared">
      %kvs = tile.alloc : memref<32x512xbf16, "shared">
      %slice = tile.alloc : memref<64x512xbf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "mma-accumulator"} : memref<64x32xf32, "fragment">
      tile.copy %Q[%c0, %c0] [64, 576] to %qs[%c0, %c0] [64, 576] : memref<64x576xbf16> to memref<64x576xbf16, "shared">
      tile.copy %KV[%c0, %c0] [32, 512] to %kvs[%c0, %c0] [32, 512] : memref<32x512xbf16> to memref<32x512xbf16, "shared">
      tile.copy %qs[%c0, %c0] [64, 512] to %slice[%c0, %c0] [64, 512] : memref<64x576xbf16, "shared"> to memref<64x512xbf16, "shared">
      tile.gemm %slice, %kvs, %acc {clear_accum = true, transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 4, 2>}} : memref<64x512xbf16, "shared">, memref<32x512xbf16, "shared">, memref<64x32xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 32] to %S[%c0, %c0] [64, 32] : memref<64x32xf32, "fragment"> to memref<64x32xf32>
    }
    return
  }
}
