// RUN: tilec-opt --lower-gemm-to-tensorcore --split-input-file --verify-diagnostics %s | FileCheck %s

// lower-gemm-to-tensorcore builds the tensor-core kernel from the scheduling passes'
// annotations alone (here written by hand): a kernel they leave incomplete stays on the SIMT
// path, an annotation the generator cannot follow is an error at its op.

// Every decision given: the wgmma kernel follows them (3 stages, not the 4 to 6
// pipeline-async-copies would choose; group_m 8; persistent).
// CHECK: module attributes {gpu.container_module, tile.tensorcore
// CHECK-SAME: \22stages\22: 3
// CHECK-LABEL: func.func @annotated
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
module {
  func.func @annotated(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// The same on sm_80 (mma.sync, 2 x 2 warps, cp.async, 3 stages).
// CHECK: module attributes {gpu.container_module, tile.arch = "sm_80", tile.tensorcore
// CHECK-SAME: \22warps_m\22: 2, \22warps_n\22: 2
// CHECK-LABEL: func.func @annotated_sm80
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
module attributes {tile.arch = "sm_80"} {
  func.func @annotated_sm80(%A: memref<1000x1000xf16>, %B: memref<1000x1016xf16>, %C: memref<1000x1016xf16>) attributes {tile.entry} {
    %gx = arith.constant 8 : index
    %gy = arith.constant 8 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = false}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 32 : index
      %as = tile.alloc {tile.swizzle = "xor"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "xor"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "cp.async"} : memref<1000x1000xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "cp.async"} : memref<1000x1016xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {kind = "shared-staged", vector_bytes = 16 : i64}} : memref<128x128xf16, "fragment"> to memref<1000x1016xf16>
    }
    return
  }
}

// -----

// No tile.mma: not a tensor-core gemm, left alone.
// CHECK-LABEL: func.func @no_mma
// CHECK: tile.kernel
module {
  func.func @no_mma(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// A's copy has no tile.async (pipeline-async-copies found its rows unfit): left alone.
// CHECK-LABEL: func.func @sync_copy
// CHECK: tile.kernel
module {
  func.func @sync_copy(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// mma.sync on sm_90a: the wgmma kernel cannot follow it.
module {
  func.func @wrong_kind(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        // expected-error @+1 {{lower-gemm-to-tensorcore: tile.mma kind = "mma.sync" contradicts the wgmma kernel, which needs "wgmma"}}
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// An instruction as wide as 64 columns for a 128-column tile.
module {
  func.func @narrow_instr(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        // expected-error @+1 {{tile.mma instr = [64, 64, 16] contradicts the wgmma kernel, which needs [64, 128, 16]}}
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// A cp.async pipeline feeding wgmma: pipeline-async-copies found no TMA ring for the loop
// (K known only at run time, one k-tile), so the kernel is left to the SIMT path.
// CHECK-LABEL: func.func @cp_async_ring
// CHECK: tile.kernel
module {
  func.func @cp_async_ring(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// A copy marked cp.async in a TMA ring.
module {
  func.func @cp_async_copy(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        // expected-error @+1 {{tile.async = "cp.async" contradicts the wgmma kernel, which loads its operands by "tma"}}
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "cp.async"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// A K tile of 96 bytes: TMA boxes span one 64- or 128-byte swizzle row.
module {
  func.func @k_tile_96(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 48 : i64, mechanism = "tma-mbarrier", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        // expected-error @+1 {{the scheduling annotations ask for a wgmma kernel it cannot build: block_k must span 64 or 128 bytes}}
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// 9 stages do not fit in shared memory.
module {
  func.func @too_deep(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 9 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        // expected-error @+1 {{shared memory 328704 B exceeds 227 KiB}}
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// 96 staged columns do not divide the 128-column tile.
module {
  func.func @odd_columns(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        // expected-error @+1 {{epilogue_n must be a multiple of 64 dividing block_n}}
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 96 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// A 64B-swizzled TMA store: the kernel stages C in 128B-swizzled rows.
module {
  func.func @store_swizzle(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      // expected-error @+1 {{tile.store swizzle = "64B" contradicts the wgmma kernel, which needs "128B"}}
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "64B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// Two consumer warpgroups in the warp split, one in tile.mma.
module {
  func.func @split_mismatch(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    // expected-error @+1 {{tile.warp_specialize consumer_warpgroups = 2 contradicts the wgmma kernel, which needs 1}}
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 2 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// A producer warpgroup on sm_80, whose kernel has none.
module attributes {tile.arch = "sm_80"} {
  func.func @sm80_producer(%A: memref<1000x1000xf16>, %B: memref<1000x1016xf16>, %C: memref<1000x1016xf16>) attributes {tile.entry} {
    %gx = arith.constant 8 : index
    %gy = arith.constant 8 : index
    // expected-error @+1 {{tile.warp_specialize contradicts the mma.sync kernel, whose warps all load and compute}}
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = false}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 32 : index
      %as = tile.alloc {tile.swizzle = "xor"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "xor"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "cp.async"} : memref<1000x1000xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "cp.async"} : memref<1000x1016xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {kind = "shared-staged", vector_bytes = 16 : i64}} : memref<128x128xf16, "fragment"> to memref<1000x1016xf16>
    }
    return
  }
}

// -----

// A persistent grid on sm_80.
module attributes {tile.arch = "sm_80"} {
  func.func @sm80_persistent(%A: memref<1000x1000xf16>, %B: memref<1000x1016xf16>, %C: memref<1000x1016xf16>) attributes {tile.entry} {
    %gx = arith.constant 8 : index
    %gy = arith.constant 8 : index
    // expected-error @+1 {{tile.raster persistent = true contradicts the mma.sync kernel, which needs false}}
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 32 : index
      %as = tile.alloc {tile.swizzle = "xor"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "xor"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "cp.async"} : memref<1000x1000xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "cp.async"} : memref<1000x1016xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {kind = "shared-staged", vector_bytes = 16 : i64}} : memref<128x128xf16, "fragment"> to memref<1000x1016xf16>
    }
    return
  }
}
// -----

// A 64B-swizzled A tile: the wgmma kernel stages 128-byte K rows under the 128B swizzle.
module {
  func.func @swizzle_64b(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      // expected-error @+1 {{tile.swizzle = "64B" contradicts the wgmma kernel, which swizzles its operand tiles "128B"}}
      %as = tile.alloc {tile.swizzle = "64B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}


// -----

// A in registers (T.copy(A_shared, A_frag) before the gemm) with the annotations the
// scheduling passes write: tile.mma's a_source = "registers" and the 128B swizzle of A's
// shared tile (the TMA slot each warp ldmatrix-reads) build the wgmma kernel with a_registers.
// CHECK-LABEL: func.func @register_a
// CHECK-NEXT: return
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
module {
  func.func @register_a(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 6 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
        tile.gemm %af, %bs, %acc {tile.mma = {a_source = "registers", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// A register-A kernel annotated as if A were read from shared memory.
module {
  func.func @register_a_as_shared(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 6 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
        // expected-error @+1 {{tile.mma a_source = "shared" contradicts the wgmma kernel, which needs "registers"}}
        tile.gemm %af, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// A's shared tile (the TMA slot of the register operand) swizzled otherwise than the kernel.
module {
  func.func @register_a_64b(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      // expected-error @+1 {{tile.swizzle = "64B" contradicts the wgmma kernel, which swizzles its operand tiles "128B"}}
      %as = tile.alloc {tile.swizzle = "64B"} : memref<128x32xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 6 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
        tile.gemm %af, %bs, %acc {tile.mma = {a_source = "registers", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// A's shared tile without tile.swizzle: select-shared-swizzle found nothing for it, so the
// kernel stays on the SIMT path.
// CHECK-LABEL: func.func @register_a_unswizzled
// CHECK: tile.gemm
// CHECK-NOT: gpu.module
module {
  func.func @register_a_unswizzled(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}} {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 6 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
        tile.gemm %af, %bs, %acc {tile.mma = {a_source = "registers", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}
