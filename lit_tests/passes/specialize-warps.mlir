// RUN: tilec-opt --specialize-warps --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: not tilec-opt --specialize-warps --split-input-file %s 2>&1 | FileCheck --check-prefix=ERR %s

// specialize-warps: a kernel whose TMA + mbarrier loop (tile.pipeline, as pipeline-async-copies
// writes it) feeds wgmma gemms (tile.mma, as infer-mma-layout writes it) gets one producer
// warpgroup besides its consumer warpgroups: tile.warp_specialize on the tile.kernel.

// The quickstart: one consumer warpgroup, so 256 threads with the producer.
// CHECK-LABEL: func.func @quickstart
// CHECK: tile.kernel grid(%{{.*}}) threads [128] attributes {tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}}
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

// Two consumer warpgroups (128 x 256 tile, 256 threads): 384 threads with the producer.
// CHECK-LABEL: func.func @tuned
// CHECK: tile.kernel grid(%{{.*}}) threads [256] attributes {tile.warp_specialize = {consumer_warpgroups = 2 : i64, producer_warpgroups = 1 : i64, threads = 384 : i64}}
module {
  func.func @tuned(%A: memref<1000x1000xbf16>, %B: memref<1000x1016xbf16>, %C: memref<1000x1016xbf16>) attributes {tile.entry} {
    %gx = arith.constant 4 : index
    %gy = arith.constant 8 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 256 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 16 : index
      %as = tile.alloc : memref<128x64xbf16, "shared">
      %bs = tile.alloc : memref<64x256xbf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x256xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 4 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<1000x1000xbf16> to memref<128x64xbf16, "shared">
        tile.copy %B[%k0, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<1000x1016xbf16> to memref<64x256xbf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 256, 16>, kind = "wgmma", warpgroups = 2 : i64}} : memref<128x64xbf16, "shared">, memref<64x256xbf16, "shared">, memref<128x256xf32, "fragment">
      }
      %h = tile.alloc : memref<128x256xbf16, "fragment">
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %t = arith.truncf %v : f32 to bf16
        memref.store %t, %h[%i, %j] : memref<128x256xbf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 256] to %C[%row, %col] [128, 256] : memref<128x256xbf16, "fragment"> to memref<1000x1016xbf16>
    }
    return
  }
}

// -----

// Attention: both gemms of the TMA-fed loop are wgmma with one warpgroup (3-d grid).
// CHECK-LABEL: func.func @attention
// CHECK: tile.kernel grid(%{{.*}}) threads [128] attributes {tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}}
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

// Left alone: sm_80 (cp.async feeding mma.sync).
// CHECK-LABEL: func.func @ampere
// CHECK-NOT: tile.warp_specialize
// CHECK: return
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

// A wgmma gemm fed by cp.async (the copies could not use TMA): every warp loads, no producer.
// CHECK-LABEL: func.func @cp_async_wgmma
// CHECK-NOT: tile.warp_specialize
// CHECK: return
module {
  func.func @cp_async_wgmma(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
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

// A TMA loop whose gemm has no tile.mma (it stays on CUDA cores).
// CHECK-LABEL: func.func @simt_gemm
// CHECK-NOT: tile.warp_specialize
// CHECK: return
module {
  func.func @simt_gemm(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
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
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 4 : i64}} {
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

// No pipeline decision on the loop at all.
// CHECK-LABEL: func.func @no_pipeline
// CHECK-NOT: tile.warp_specialize
// CHECK: return
module {
  func.func @no_pipeline(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
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

// Two wgmma gemms of one loop wanting 2 and 1 consumer warpgroups: no one split serves both.
// CHECK-LABEL: func.func @mixed_consumers
// CHECK-NOT: tile.warp_specialize
// CHECK: return
module {
  func.func @mixed_consumers(%n: index) attributes {tile.entry} {
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
// expected-error @unknown {{specialize-warps: unsupported CUDA arch 'sm_75'}}
// ERR: error: specialize-warps: unsupported CUDA arch 'sm_75' (supported: sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100a, sm_120a)
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
