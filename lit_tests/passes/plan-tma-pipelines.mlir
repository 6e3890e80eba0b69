// RUN: tilec-opt --plan-tma-pipelines --split-input-file %s | FileCheck %s

// plan-tma-pipelines (sm_90a): a cp.async loop whose copies fill 128B- or 64B-swizzled wgmma
// operand tiles becomes a TMA ring fed by a producer warpgroup: tile.tma_ring on the loop (the
// user's depth, deeper for a one-gemm loop while shared memory holds it beside the epilogue's
// staging tile, up to 1 KiB of K in flight and the loop's trip count; the kernel's warpgroups
// as consumers; overlap when one gemm is the loop's work; under the module's tile.ring_lag
// opt-in its wgmma groups left in flight for `lag` iterations: 2 for 64-byte K rows) and
// tile.tma_load on each copy (the box of one column
// of the swizzle's span, innermost first, and how many columns the tile has); persistent when
// the grid is known: one block per multiprocessor runs the tiles in turn. The accumulator's
// store after the loop (select-epilogue-store's TMA store) gets tile.tma_store: the box of one
// 128-byte column of one consumer warpgroup's slab of C's rows, the slabs, and the columns
// staged at a time.

// A 128 x 64 f16 (K-major: one 64 x 128 box), B 64 x 256 f16 (MN-major: four 64 x 64 boxes).
// CHECK-LABEL: func.func @bias_relu
// CHECK: tile.pipelined {{.*}} tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = true, stages = 4 : i64}
// CHECK: tile.copy {{.*}} tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}
// CHECK: tile.copy {{.*}} tile.tma_load = {box = array<i64: 64, 64>, boxes = 4 : i64, swizzle = 128 : i64}
// CHECK: tile.copy %{{.*}} to %arg2{{.*}} tile.tma_store = {box = array<i64: 32, 64>, columns = 128 : i64, slabs = 2 : i64, swizzle = 128 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @bias_relu(%A: memref<1000x520xf16>, %B: memref<520x1016xf16>, %C: memref<1000x1016xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c9 = arith.constant 9 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %gx = arith.constant 4 : index
    %gy = arith.constant 8 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x256xf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      %row = arith.muli %by, %c128 : index
      tile.pipelined %c0 to %c9 step %c1 stages 4 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 4 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async"} : memref<1000x520xf16> to memref<128x64xf16, "shared">
        %col = arith.muli %bx, %c256 : index
        tile.copy %B[%k0, %col] [64, 256] to %bs[%c0, %c0] [64, 256] {tile.async = "cp.async"} : memref<520x1016xf16> to memref<64x256xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 256 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<64x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
      %col = arith.muli %bx, %c256 : index
      tile.copy %acc[%c0, %c0] [128, 256] to %C[%row, %col] [128, 256] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x256xf32, "fragment"> to memref<1000x1016xf32>
    }
    return
  }
}

// -----

// A batched GEMM on a 3-d grid, B as N x K (K-major): boxes over the tensors' three dimensions;
// the ring twice the user's 3 stages deep (6 x 32 KiB beside the 16 KiB staging tile), as
// bias_relu's could not be (4 x 48 KiB and 32 KiB of staging fill the 227 KiB).
// CHECK-LABEL: func.func @batched
// CHECK: tile.pipelined {{.*}} tile.tma_ring = {consumers = 1 : i64, overlap = true, persistent = true, stages = 6 : i64}
// CHECK: tile.copy {{.*}} tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}
// CHECK: tile.copy {{.*}} tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}
// CHECK: tile.copy %{{.*}} to %arg2{{.*}} tile.tma_store = {box = array<i64: 32, 128, 1>, columns = 64 : i64, slabs = 1 : i64, swizzle = 128 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @batched(%A: memref<4x256x512xbf16>, %B: memref<4x256x512xbf16>, %C: memref<4x256x256xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %g = arith.constant 2 : index
    %b = arith.constant 4 : index
    tile.kernel grid(%g, %g, %b) threads [128] {
    ^bb0(%bx: index, %by: index, %bz: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xbf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xbf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c8 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        %m0 = arith.muli %by, %c128 : index
        %n0 = arith.muli %bx, %c128 : index
        tile.copy %A[%bz, %m0, %k0] [1, 128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async"} : memref<4x256x512xbf16> to memref<128x64xbf16, "shared">
        tile.copy %B[%bz, %n0, %k0] [1, 128, 64] to %bs[%c0, %c0] [128, 64] {tile.async = "cp.async"} : memref<4x256x512xbf16> to memref<128x64xbf16, "shared">
        tile.gemm %as, %bs, %acc {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "bf16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xbf16, "shared">, memref<128x64xbf16, "shared">, memref<128x128xf32, "fragment">
      }
      %m1 = arith.muli %by, %c128 : index
      %n1 = arith.muli %bx, %c128 : index
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%bz, %m1, %n1] [1, 128, 128] {tile.store = {columns = 64 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf32, "fragment"> to memref<4x256x256xf32>
    }
    return
  }
}

// -----

// The quickstart's config: A's 32-element K rows span 64 bytes, a 64B swizzle that TMA writes
// as wgmma reads it: one 32 x 128 box of 64 bytes per row; B's 64-element boxes as before. The
// ring grows from the user's 3 stages to 14 of the 16 iterations (227 KiB: 14 x 16 KiB).
// CHECK-LABEL: func.func @quickstart
// CHECK: tile.pipelined {{.*}} tile.tma_ring = {consumers = 1 : i64, overlap = true, persistent = true, stages = 14 : i64}
// CHECK: tile.copy {{.*}} tile.tma_load = {box = array<i64: 32, 128>, boxes = 1 : i64, swizzle = 64 : i64}
// CHECK: tile.copy {{.*}} tile.tma_load = {box = array<i64: 64, 32>, boxes = 2 : i64, swizzle = 128 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @quickstart(%A: memref<512x512xf16>, %B: memref<512x512xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c4, %c4) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 64 : i64, warpgroups = 0 : i64}} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c16 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "cp.async"} : memref<512x512xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "cp.async"} : memref<512x512xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// With tile.ring_lag (TILEC_TMA_RING_LAG=1) the quickstart's ring keeps two wgmma groups of
// its 64-byte K rows in flight.
// CHECK-LABEL: func.func @quickstart_lag
// CHECK: tile.pipelined {{.*}} tile.tma_ring = {consumers = 1 : i64, lag = 2 : i64, overlap = true, persistent = true, stages = 14 : i64}
module attributes {tile.arch = "sm_90a", tile.ring_lag} {
  func.func @quickstart_lag(%A: memref<512x512xf16>, %B: memref<512x512xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c4, %c4) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 64 : i64, warpgroups = 0 : i64}} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c16 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "cp.async"} : memref<512x512xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "cp.async"} : memref<512x512xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// Declined (the cp.async pipeline stays): A's rows span 32 bytes (a 32B swizzle, which the
// ring does not take); a loop that also runs a T.Parallel on shared memory; a loop nested in
// another; A's tile in the blocked accumulator's reordered rows; a kernel of its own mbarriers.
// CHECK-LABEL: func.func @declined
// CHECK-NOT: tile.tma_ring
// CHECK-NOT: tile.tma_load
// CHECK: return
module attributes {tile.arch = "sm_90a"} {
  func.func @declined(%A: memref<512x512xf16>, %B: memref<512x512xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    tile.kernel grid(%c4, %c4) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 32 : i64, warpgroups = 0 : i64}} : memref<128x16xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<16x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 16 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c16 : index
        tile.copy %A[%c0, %k0] [128, 16] to %as[%c0, %c0] [128, 16] {tile.async = "cp.async"} : memref<512x512xf16> to memref<128x16xf16, "shared">
        tile.copy %B[%k0, %c0] [16, 128] to %bs[%c0, %c0] [16, 128] {tile.async = "cp.async"} : memref<512x512xf16> to memref<16x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x16xf16, "shared">, memref<16x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %as2 = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs2 = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %extra = tile.alloc : memref<128xf16, "shared">
      tile.pipelined %c0 to %c4 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%c0, %k0] [128, 64] to %as2[%c0, %c0] [128, 64] {tile.async = "cp.async"} : memref<512x512xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %c0] [64, 128] to %bs2[%c0, %c0] [64, 128] {tile.async = "cp.async"} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.parallel [128] {
        ^bb0(%i: index):
          %zero = arith.constant 0.0 : f16
          memref.store %zero, %extra[%i] : memref<128xf16, "shared">
        }
        tile.gemm %as2, %bs2, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.for %c0 to %c4 step %c1 {
      ^bb0(%outer: index):
        %as3 = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
        %bs3 = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
        tile.pipelined %c0 to %c4 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}} {
        ^bb0(%k: index):
          %k0 = arith.muli %k, %c64 : index
          tile.copy %A[%c0, %k0] [128, 64] to %as3[%c0, %c0] [128, 64] {tile.async = "cp.async"} : memref<512x512xf16> to memref<128x64xf16, "shared">
          tile.copy %B[%k0, %c0] [64, 128] to %bs3[%c0, %c0] [64, 128] {tile.async = "cp.async"} : memref<512x512xf16> to memref<64x128xf16, "shared">
          tile.gemm %as3, %bs3, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
        }
      }
      %as4 = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 2 : i64, span = 128 : i64, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">
      %bs4 = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      tile.pipelined %c0 to %c4 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%c0, %k0] [128, 64] to %as4[%c0, %c0] [128, 64] {tile.async = "cp.async"} : memref<512x512xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %c0] [64, 128] to %bs4[%c0, %c0] [64, 128] {tile.async = "cp.async"} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.gemm %as4, %bs4, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = true, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// A kernel that waits on mbarriers of its own keeps its loops as they are.
// CHECK-LABEL: func.func @own_barriers
// CHECK-NOT: tile.tma_ring
// CHECK: return
module attributes {tile.arch = "sm_90a"} {
  func.func @own_barriers(%A: memref<512x512xf16>, %B: memref<512x512xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    tile.kernel grid(%c4, %c4) threads [128] {
    ^bb0(%bx: index, %by: index):
      %bar = tile.alloc_barrier [1] : memref<1xi64, "barrier">
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%c0, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async"} : memref<512x512xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %c0] [64, 128] to %bs[%c0, %c0] [64, 128] {tile.async = "cp.async"} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// sm_80 has no TMA: nothing changes.
// CHECK-LABEL: func.func @ampere
// CHECK-NOT: tile.tma_ring
// CHECK: return
module attributes {tile.arch = "sm_80"} {
  func.func @ampere(%A: memref<512x512xf16>, %B: memref<512x512xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    tile.kernel grid(%c4, %c4) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%c0, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async"} : memref<512x512xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %c0] [64, 128] to %bs[%c0, %c0] [64, 128] {tile.async = "cp.async"} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// Attention's loop: two wgmma gemms (S = Q K^T, then O += P V with P in registers) and the
// online softmax between them on fragments only (a fill, the diagonal tile's mask under a
// run-time scf.if, a reduction, a T.Parallel): the loop
// touches no shared memory but the ring's tiles and Q's, so a producer warpgroup feeds K and V
// by TMA; two gemms, so neither stays in flight.
// CHECK-LABEL: func.func @attention
// CHECK: tile.pipelined {{.*}} tile.tma_ring = {consumers = 1 : i64, overlap = false, persistent = true, stages = 2 : i64}
// CHECK: tile.copy %arg1{{.*}} tile.tma_load = {box = array<i64: 64, 1, 64, 1>, boxes = 1 : i64, swizzle = 128 : i64}
// CHECK: tile.copy %arg2{{.*}} tile.tma_load = {box = array<i64: 64, 1, 64, 1>, boxes = 1 : i64, swizzle = 128 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @attention(%Q: memref<2x256x4x64xf16>, %K: memref<2x256x4x64xf16>, %V: memref<2x256x4x64xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%c4, %c4, %c2) threads [128] {
    ^bb0(%bx: index, %by: index, %bz: index):
      %qs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x64xf16, "shared">
      %ks = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x64xf16, "shared">
      %vs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x64xf16, "shared">
      %s = tile.alloc : memref<64x64xf32, "fragment">
      %p = tile.alloc : memref<64x64xf16, "fragment">
      %o = tile.alloc : memref<64x64xf32, "fragment">
      %m = tile.alloc : memref<64xf32, "fragment">
      %row = arith.muli %bx, %c64 : index
      tile.copy %Q[%bz, %row, %by, %c0] [1, 64, 1, 64] to %qs[%c0, %c0] [64, 64] : memref<2x256x4x64xf16> to memref<64x64xf16, "shared">
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 2 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %K[%bz, %k0, %by, %c0] [1, 64, 1, 64] to %ks[%c0, %c0] [64, 64] {tile.async = "cp.async"} : memref<2x256x4x64xf16> to memref<64x64xf16, "shared">
        tile.fill %s, %zero : memref<64x64xf32, "fragment">, f32
        tile.gemm %qs, %ks, %s {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, reordered = false, warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
        %diagonal = arith.cmpi eq, %k, %bx : index
        scf.if %diagonal {
          tile.parallel [64, 64] {
          ^bb0(%i: index, %j: index):
            %ninf = arith.constant 0xFF800000 : f32
            %x = memref.load %s[%i, %j] : memref<64x64xf32, "fragment">
            %above = arith.cmpi ugt, %j, %i : index
            %y = arith.select %above, %ninf, %x : f32
            memref.store %y, %s[%i, %j] : memref<64x64xf32, "fragment">
          }
        }
        tile.reduce "max" %s to %m dim 1 {clear = false} : memref<64x64xf32, "fragment"> to memref<64xf32, "fragment">
        tile.parallel [64, 64] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<64x64xf32, "fragment">
          %mi = memref.load %m[%i] : memref<64xf32, "fragment">
          %d = arith.subf %x, %mi : f32
          %e = math.exp2 %d : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<64x64xf16, "fragment">
        }
        tile.copy %V[%bz, %k0, %by, %c0] [1, 64, 1, 64] to %vs[%c0, %c0] [64, 64] {tile.async = "cp.async"} : memref<2x256x4x64xf16> to memref<64x64xf16, "shared">
        tile.gemm %p, %vs, %o {tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, reordered = false, warpgroups = 1 : i64}} : memref<64x64xf16, "fragment">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
    }
    return
  }
}

// -----

// The same loop at 128 x 128 tiles, three stages deep, beside a 32 KiB output tile alive across
// the loop (written before and after it; a tile nothing touches takes no bytes): beside a
// producer warpgroup no tile shares bytes, and three slots of K and V (192 KiB) with Q and O
// pass the 227 KiB of a block, so the ring gets two.
// CHECK-LABEL: func.func @attention_shallower
// CHECK: tile.pipelined {{.*}} tile.tma_ring = {consumers = 1 : i64, overlap = false, persistent = true, stages = 2 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @attention_shallower(%Q: memref<2x512x4x128xf16>, %K: memref<2x512x4x128xf16>, %V: memref<2x512x4x128xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%c4, %c4, %c2) threads [128] {
    ^bb0(%bx: index, %by: index, %bz: index):
      %qs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf16, "shared">
      %ks = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf16, "shared">
      %vs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf16, "shared">
      %os = tile.alloc : memref<128x128xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      %p = tile.alloc : memref<128x128xf16, "fragment">
      %o = tile.alloc : memref<128x128xf32, "fragment">
      %m = tile.alloc : memref<128xf32, "fragment">
      %row = arith.muli %bx, %c128 : index
      tile.copy %Q[%bz, %row, %by, %c0] [1, 128, 1, 128] to %qs[%c0, %c0] [128, 128] : memref<2x512x4x128xf16> to memref<128x128xf16, "shared">
      tile.copy %p[%c0, %c0] [128, 128] to %os[%c0, %c0] [128, 128] : memref<128x128xf16, "fragment"> to memref<128x128xf16, "shared">
      tile.pipelined %c0 to %c4 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 128 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %K[%bz, %k0, %by, %c0] [1, 128, 1, 128] to %ks[%c0, %c0] [128, 128] {tile.async = "cp.async"} : memref<2x512x4x128xf16> to memref<128x128xf16, "shared">
        tile.fill %s, %zero : memref<128x128xf32, "fragment">, f32
        tile.gemm %qs, %ks, %s {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x128xf16, "shared">, memref<128x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.reduce "max" %s to %m dim 1 {clear = false} : memref<128x128xf32, "fragment"> to memref<128xf32, "fragment">
        tile.parallel [128, 128] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<128x128xf32, "fragment">
          %mi = memref.load %m[%i] : memref<128xf32, "fragment">
          %d = arith.subf %x, %mi : f32
          %e = math.exp2 %d : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<128x128xf16, "fragment">
        }
        tile.copy %V[%bz, %k0, %by, %c0] [1, 128, 1, 128] to %vs[%c0, %c0] [128, 128] {tile.async = "cp.async"} : memref<2x512x4x128xf16> to memref<128x128xf16, "shared">
        tile.gemm %p, %vs, %o {tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x128xf16, "fragment">, memref<128x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %p[%c0, %c0] [128, 128] to %os[%c0, %c0] [128, 128] : memref<128x128xf16, "fragment"> to memref<128x128xf16, "shared">
    }
    return
  }
}

// -----

// A register-A chain: A's tile, which no gemm reads (plan-wgmma-gemms left it no layout), is
// copied into the gemm's A fragment in the loop. TMA fills it in wgmma's K-major layout of
// 128-byte rows (tile.shared_layout written on it here), the consumers read their registers
// from the slot before they hand it back. The gemm's group cannot stay in flight: the next
// iteration rewrites the registers it reads (overlap = false).
// CHECK-LABEL: func.func @register_a
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}, tile.swizzle = "128B"} : memref<128x64xf16, "shared">
// CHECK: tile.pipelined {{.*}} tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 4 : i64}
// CHECK: tile.copy {{.*}} tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}
// CHECK: tile.copy {{.*}} tile.tma_load = {box = array<i64: 64, 64>, boxes = 4 : i64, swizzle = 128 : i64}
// CHECK: tile.copy %{{.*}} to %{{.*}} : memref<128x64xf16, "shared"> to memref<128x64xf16, "fragment">
// CHECK-NEXT: tile.gemm
module attributes {tile.arch = "sm_90a"} {
  func.func @register_a(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    tile.kernel grid(%c4, %c8) threads [256] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x64xf16, "shared">
      %af = tile.alloc : memref<128x64xf16, "fragment">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x256xf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c256 : index
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 4 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async"} : memref<1024x1024xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %col] [64, 256] to %bs[%c0, %c0] [64, 256] {tile.async = "cp.async"} : memref<1024x1024xf16> to memref<64x256xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 64] to %af[%c0, %c0] [128, 64] : memref<128x64xf16, "shared"> to memref<128x64xf16, "fragment">
        tile.gemm %af, %bs, %acc {tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 256 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "fragment">, memref<64x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
    }
    return
  }
}

// -----

// Register-A chains declined (the cp.async pipeline stays): A's rows span 32 bytes (no TMA
// swizzle writes them as the fragment copy reads them); a fragment loaded from a shared tile
// no ring copy fills.
// CHECK-LABEL: func.func @register_a_declined
// CHECK-NOT: tile.tma_ring
// CHECK-NOT: tile.tma_load
// CHECK-NOT: tile.shared_layout = {k_major = true
// CHECK: return
module attributes {tile.arch = "sm_90a"} {
  func.func @register_a_declined(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c4, %c4) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x16xf16, "shared">
      %af = tile.alloc : memref<128x16xf16, "fragment">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<16x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c16 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 16 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c16 : index
        tile.copy %A[%c0, %k0] [128, 16] to %as[%c0, %c0] [128, 16] {tile.async = "cp.async"} : memref<1024x1024xf16> to memref<128x16xf16, "shared">
        tile.copy %B[%k0, %c0] [16, 128] to %bs[%c0, %c0] [16, 128] {tile.async = "cp.async"} : memref<1024x1024xf16> to memref<16x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 16] to %af[%c0, %c0] [128, 16] : memref<128x16xf16, "shared"> to memref<128x16xf16, "fragment">
        tile.gemm %af, %bs, %acc {tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x16xf16, "fragment">, memref<16x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %fixed = tile.alloc : memref<128x64xf16, "shared">
      %af2 = tile.alloc : memref<128x64xf16, "fragment">
      %bs2 = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      tile.pipelined %c0 to %c16 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %B[%k0, %c0] [64, 128] to %bs2[%c0, %c0] [64, 128] {tile.async = "cp.async"} : memref<1024x1024xf16> to memref<64x128xf16, "shared">
        tile.copy %fixed[%c0, %c0] [128, 64] to %af2[%c0, %c0] [128, 64] : memref<128x64xf16, "shared"> to memref<128x64xf16, "fragment">
        tile.gemm %af2, %bs2, %acc {tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "fragment">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// With tile.register_a_steps (TILEC_REGISTER_A_STEPS=1) the register-A chain's gemm loads A's
// registers one 32-byte K step at a time (the copy gets tile.a_step_loads and emits nothing),
// so its groups, one per K step (groups = 4), stay in flight across iterations (overlap).
// CHECK-LABEL: func.func @register_a_steps
// CHECK: tile.pipelined {{.*}} tile.tma_ring = {consumers = 1 : i64, groups = 4 : i64, overlap = true, persistent = true, stages = 7 : i64}
// CHECK: tile.copy %{{.*}} to %{{.*}} {tile.a_step_loads} : memref<128x64xf16, "shared"> to memref<128x64xf16, "fragment">
module attributes {tile.arch = "sm_90a", tile.register_a_steps} {
  func.func @register_a_steps(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c8, %c8) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x64xf16, "shared">
      %af = tile.alloc : memref<128x64xf16, "fragment">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c16 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async"} : memref<1024x1024xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %col] [64, 128] to %bs[%c0, %c0] [64, 128] {tile.async = "cp.async"} : memref<1024x1024xf16> to memref<64x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 64] to %af[%c0, %c0] [128, 64] : memref<128x64xf16, "shared"> to memref<128x64xf16, "fragment">
        tile.gemm %af, %bs, %acc {tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "fragment">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// With tile.ring_transposes (TILEC_RING_TRANSPOSES=1), transpose-mn-major-operands' copy of an
// fp8 B stored K x N stays on the ring: TMA fills the 128 x 128 K x N tile, which gets
// 128-byte swizzled rows here (no gemm reads it, only the T.Parallel writing the K-major tile
// the gemm reads). The K-major tile gets two slots the iterations take turns in
// (tile.ring_copy_slots), so the gemm's group stays in flight (overlap) while the next
// iteration makes its copy. 6 slots of 32 KiB beside the two 16 KiB copies fit in 227 KiB
// (the loop has 8 iterations, 8 slots would hold its 1 KiB of K).
// CHECK-LABEL: func.func @ring_transpose
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf8E4M3FN, "shared">
// CHECK: tile.alloc {tile.ring_copy_slots = 2 : i64, tile.shared_layout
// CHECK: tile.pipelined {{.*}} tile.tma_ring = {consumers = 1 : i64, overlap = true, persistent = true, stages = 6 : i64}
// CHECK: tile.copy {{.*}} tile.tma_load = {box = array<i64: 128, 128>, boxes = 1 : i64, swizzle = 128 : i64}
// CHECK: tile.copy {{.*}} tile.tma_load = {box = array<i64: 128, 128>, boxes = 1 : i64, swizzle = 128 : i64}
// CHECK: tile.parallel [128, 128]
module attributes {tile.arch = "sm_90a", tile.ring_transposes} {
  func.func @ring_transpose(%A: memref<1024x1024xf8E4M3FN>, %B: memref<1024x1024xf8E4M3FN>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c8, %c8) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf8E4M3FN, "shared">
      %bs = tile.alloc : memref<128x128xf8E4M3FN, "shared">
      %bt = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c8 step %c1 stages 2 attributes {tile.pipeline = {k_tile = 128 : i64, mechanism = "cp.async", stages = 2 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %A[%row, %k0] [128, 128] to %as[%c0, %c0] [128, 128] {tile.async = "cp.async"} : memref<1024x1024xf8E4M3FN> to memref<128x128xf8E4M3FN, "shared">
        tile.copy %B[%k0, %col] [128, 128] to %bs[%c0, %c0] [128, 128] {tile.async = "cp.async"} : memref<1024x1024xf8E4M3FN> to memref<128x128xf8E4M3FN, "shared">
        tile.parallel [128, 128] {
        ^bb0(%n: index, %kk: index):
          %v = memref.load %bs[%kk, %n] : memref<128x128xf8E4M3FN, "shared">
          memref.store %v, %bt[%n, %kk] : memref<128x128xf8E4M3FN, "shared">
        }
        tile.gemm %as, %bt, %acc {tile.wgmma = {a_registers = false, dtype = "e4m3", k = 32 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}, transpose_b = true} : memref<128x128xf8E4M3FN, "shared">, memref<128x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// Without the opt-in such a loop keeps its cp.async pipeline; with it, a T.Parallel that also
// reads another shared tile (not the ring's) declines the ring too.
// CHECK-LABEL: func.func @ring_transpose_declined
// CHECK-NOT: tile.tma_ring
module attributes {tile.arch = "sm_90a"} {
  func.func @ring_transpose_declined(%A: memref<1024x1024xf8E4M3FN>, %B: memref<1024x1024xf8E4M3FN>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c8, %c8) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf8E4M3FN, "shared">
      %bs = tile.alloc : memref<128x128xf8E4M3FN, "shared">
      %bt = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c8 step %c1 stages 2 attributes {tile.pipeline = {k_tile = 128 : i64, mechanism = "cp.async", stages = 2 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %A[%row, %k0] [128, 128] to %as[%c0, %c0] [128, 128] {tile.async = "cp.async"} : memref<1024x1024xf8E4M3FN> to memref<128x128xf8E4M3FN, "shared">
        tile.copy %B[%k0, %col] [128, 128] to %bs[%c0, %c0] [128, 128] {tile.async = "cp.async"} : memref<1024x1024xf8E4M3FN> to memref<128x128xf8E4M3FN, "shared">
        tile.parallel [128, 128] {
        ^bb0(%n: index, %kk: index):
          %v = memref.load %bs[%kk, %n] : memref<128x128xf8E4M3FN, "shared">
          memref.store %v, %bt[%n, %kk] : memref<128x128xf8E4M3FN, "shared">
        }
        tile.gemm %as, %bt, %acc {tile.wgmma = {a_registers = false, dtype = "e4m3", k = 32 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}, transpose_b = true} : memref<128x128xf8E4M3FN, "shared">, memref<128x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @ring_transpose_reading_another_tile
// CHECK-NOT: tile.tma_ring
module attributes {tile.arch = "sm_90a", tile.ring_transposes} {
  func.func @ring_transpose_reading_another_tile(%A: memref<1024x1024xf8E4M3FN>, %B: memref<1024x1024xf8E4M3FN>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c8, %c8) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf8E4M3FN, "shared">
      %bs = tile.alloc : memref<128x128xf8E4M3FN, "shared">
      %other = tile.alloc : memref<128x128xf8E4M3FN, "shared">
      %bt = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c8 step %c1 stages 2 attributes {tile.pipeline = {k_tile = 128 : i64, mechanism = "cp.async", stages = 2 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %A[%row, %k0] [128, 128] to %as[%c0, %c0] [128, 128] {tile.async = "cp.async"} : memref<1024x1024xf8E4M3FN> to memref<128x128xf8E4M3FN, "shared">
        tile.copy %B[%k0, %col] [128, 128] to %bs[%c0, %c0] [128, 128] {tile.async = "cp.async"} : memref<1024x1024xf8E4M3FN> to memref<128x128xf8E4M3FN, "shared">
        tile.parallel [128, 128] {
        ^bb0(%n: index, %kk: index):
          %v = memref.load %bs[%kk, %n] : memref<128x128xf8E4M3FN, "shared">
          %w = memref.load %other[%kk, %n] : memref<128x128xf8E4M3FN, "shared">
          %s = arith.addf %v, %w : f8E4M3FN
          memref.store %s, %bt[%n, %kk] : memref<128x128xf8E4M3FN, "shared">
        }
        tile.gemm %as, %bt, %acc {tile.wgmma = {a_registers = false, dtype = "e4m3", k = 32 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}, transpose_b = true} : memref<128x128xf8E4M3FN, "shared">, memref<128x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// A paged operand: B's rows start at a page a block table names, its load marked
// tile.table_load by pipeline-async-copies (the table is only loaded from), and the loop's
// trip count is a marked load of the sequence's length. The producer loads both again, so the
// loop gets its ring.
// CHECK-LABEL: func.func @paged_ring
// CHECK: tile.pipelined {{.*}} tile.tma_ring = {consumers = 1 : i64
// CHECK: tile.copy {{.*}} tile.tma_load =
// CHECK: tile.copy {{.*}} tile.tma_load =
module attributes {tile.arch = "sm_90a"} {
  func.func @paged_ring(%A: memref<512x512xf16>, %B: memref<512x512xf16>, %table: memref<4x16xi32>, %lengths: memref<4xi32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c4, %c4) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 64 : i64, warpgroups = 0 : i64}} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      %length = memref.load %lengths[%by] {tile.table_load} : memref<4xi32>
      %n = arith.index_cast %length : i32 to index
      tile.pipelined %c0 to %n step %c1 stages 3 attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        %entry = memref.load %table[%by, %k] {tile.table_load} : memref<4x16xi32>
        %page = arith.index_cast %entry : i32 to index
        %b0 = arith.muli %page, %c32 : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "cp.async"} : memref<512x512xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%b0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "cp.async"} : memref<512x512xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// The same loop with its loads unmarked keeps its cp.async pipeline.
// CHECK-LABEL: func.func @paged_unmarked
// CHECK-NOT: tile.tma_ring
// CHECK: return
module attributes {tile.arch = "sm_90a"} {
  func.func @paged_unmarked(%A: memref<512x512xf16>, %B: memref<512x512xf16>, %table: memref<4x16xi32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c4, %c4) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 64 : i64, warpgroups = 0 : i64}} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c16 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        %entry = memref.load %table[%by, %k] : memref<4x16xi32>
        %page = arith.index_cast %entry : i32 to index
        %b0 = arith.muli %page, %c32 : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] {tile.async = "cp.async"} : memref<512x512xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%b0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] {tile.async = "cp.async"} : memref<512x512xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}
