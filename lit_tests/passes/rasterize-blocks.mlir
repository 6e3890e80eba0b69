// RUN: tilec-opt --rasterize-blocks --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: not tilec-opt --rasterize-blocks --split-input-file %s 2>&1 | FileCheck --check-prefix=ERR %s

// rasterize-blocks: every 2-d grid gets tile.raster = {group_m, persistent}: group_m from
// T.use_swizzle (tile.swizzle_panel) else 8; persistent on sm_90a for a static grid with a TMA +
// mbarrier loop (tile.pipeline, as pipeline-async-copies writes it).

// The quickstart on sm_90a: static 32 x 32 grid, TMA pipeline: persistent, groups of 8.
// CHECK-LABEL: func.func @quickstart
// CHECK: tile.kernel grid(%{{.*}}, %{{.*}}) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}}
module {
  func.func @quickstart(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 4 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// T.use_swizzle(4) sets the group size.
// CHECK-LABEL: func.func @panel
// CHECK: tile.kernel grid(%{{.*}}, %{{.*}}) threads [128] attributes {tile.raster = {group_m = 4 : i64, persistent = true}, tile.swizzle_panel = 4 : i64}
module {
  func.func @panel(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.swizzle_panel = 4 : i64} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 4 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// M known only at run time (grid from memref.dim): the tile count is unknown, not persistent.
// CHECK-LABEL: func.func @dynamic_m
// CHECK: tile.kernel grid(%{{.*}}, %{{.*}}) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = false}}
module {
  func.func @dynamic_m(%A: memref<?x256xf16>, %B: memref<256x256xf16>, %C: memref<?x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %c0e = arith.constant 0 : index
    %m = memref.dim %A, %c0e : memref<?x256xf16>
    %bme = arith.constant 128 : index
    %gy = arith.ceildivui %m, %bme : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 4 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<?x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<?x256xf16>
    }
    return
  }
}

// -----

// sm_80: grouped order only.
// CHECK-LABEL: func.func @ampere
// CHECK: tile.kernel grid(%{{.*}}, %{{.*}}) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = false}}
module attributes {tile.arch = "sm_80"} {
  func.func @ampere(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// sm_90a with a cp.async loop (or a SIMT kernel): grouped order only.
// CHECK-LABEL: func.func @cp_async
// CHECK: tile.kernel grid(%{{.*}}, %{{.*}}) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = false}}
module {
  func.func @cp_async(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// Left alone: attention's 3-d grid (z is the batch).
// CHECK-LABEL: func.func @attention
// CHECK-NOT: tile.raster
// CHECK: return
module {
  func.func @attention(%Q: memref<1x256x4x64xf16>, %K: memref<1x256x4x64xf16>, %V: memref<1x256x4x64xf16>, %Out: memref<1x256x4x64xf16>) attributes {tile.entry} {
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    tile.kernel grid(%c4, %c4, %c1) threads [128] {
    ^bb0(%bx: index, %by: index, %bz: index):
      %c0 = arith.constant 0 : index
      %bm = arith.constant 64 : index
      %bn = arith.constant 64 : index
      %q_s = tile.alloc : memref<64x64xf16, "shared">
      %k_s = tile.alloc : memref<64x64xf16, "shared">
      %v_s = tile.alloc : memref<64x64xf16, "shared">
      %acc_s = tile.alloc : memref<64x64xf32, "fragment">
      %p = tile.alloc : memref<64x64xf16, "fragment">
      %acc_o = tile.alloc : memref<64x64xf32, "fragment">
      %row = arith.muli %bx, %bm : index
      tile.copy %Q[%bz, %row, %by, %c0] [1, 64, 1, 64] to %q_s[%c0, %c0] [64, 64] : memref<1x256x4x64xf16> to memref<64x64xf16, "shared">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc_o, %zero : memref<64x64xf32, "fragment">, f32
      %kt = arith.constant 4 : index
      tile.pipelined %c0 to %kt step %c1 stages 2 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 4 : i64}} {
      ^bb0(%k: index):
        %kv = arith.muli %k, %bn : index
        tile.copy %K[%bz, %kv, %by, %c0] [1, 64, 1, 64] to %k_s[%c0, %c0] [64, 64] : memref<1x256x4x64xf16> to memref<64x64xf16, "shared">
        tile.gemm %q_s, %k_s, %acc_s {clear_accum = true, policy = "full_row", tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}, transpose_b = true} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
        tile.parallel [64, 64] {
        ^bb0(%i: index, %j: index):
          %s = memref.load %acc_s[%i, %j] : memref<64x64xf32, "fragment">
          %e = math.exp2 %s : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<64x64xf16, "fragment">
        }
        tile.copy %V[%bz, %kv, %by, %c0] [1, 64, 1, 64] to %v_s[%c0, %c0] [64, 64] : memref<1x256x4x64xf16> to memref<64x64xf16, "shared">
        tile.gemm %p, %v_s, %acc_o {policy = "full_row", tile.mma = {a_source = "registers", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "fragment">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      %o_h = tile.alloc : memref<64x64xf16, "fragment">
      tile.parallel [64, 64] {
      ^bb0(%i: index, %j: index):
        %o = memref.load %acc_o[%i, %j] : memref<64x64xf32, "fragment">
        %h = arith.truncf %o : f32 to f16
        memref.store %h, %o_h[%i, %j] : memref<64x64xf16, "fragment">
      }
      tile.copy %o_h[%c0, %c0] [64, 64] to %Out[%bz, %row, %by, %c0] [1, 64, 1, 64] : memref<64x64xf16, "fragment"> to memref<1x256x4x64xf16>
    }
    return
  }
}

// -----

// ... and a 1-d grid.
// CHECK-LABEL: func.func @one_dim
// CHECK-NOT: tile.raster
// CHECK: return
module {
  func.func @one_dim(%n: index) attributes {tile.entry} {
    tile.kernel grid(%n) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %a = tile.alloc : memref<128x64xf16, "shared">
      %b = tile.alloc : memref<64x128xf16, "shared">
      %a2 = tile.alloc : memref<64x64xf16, "shared">
      %b2 = tile.alloc : memref<64x128xf16, "shared">
      %c = tile.alloc : memref<128x128xf32, "fragment">
      %c2 = tile.alloc : memref<64x128xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 4 : i64}} {
      ^bb0(%k: index):
        tile.gemm %a, %b, %c {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.gemm %a2, %b2, %c2 {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x128xf16, "shared">, memref<64x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// Rejected: an arch the tensor-core schedules do not serve.
// expected-error @unknown {{rasterize-blocks: unsupported CUDA arch 'sm_75'}}
// ERR: error: rasterize-blocks: unsupported CUDA arch 'sm_75' (supported: sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100a, sm_120a)
module attributes {tile.arch = "sm_75"} {
  func.func @old_arch(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}
