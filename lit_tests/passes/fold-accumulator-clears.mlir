// RUN: tilec-opt --fold-accumulator-clears --split-input-file %s | FileCheck %s
// fold-accumulator-clears (by default; TILEC_FOLD_ACCUMULATOR_CLEARS=0 leaves it out): a T.clear
// (tile.fill of zero) of an accumulator whose next use is a TMA ring loop of constant bounds that
// runs at least once, whose one gemm (a wgmma one) is the body's first statement touching the
// accumulator, is erased; the gemm gets tile.clear_first_iteration (scale-d = 0 in the ring's
// first iteration). Left alone: a loop that may not run, a non-zero fill, a cp.async pipeline, a
// body reading the accumulator before its gemm, two gemms, a use between fill and loop.

// CHECK-LABEL: func.func @folded
// A batched GEMM's clear and ring loop (16 K tiles): the fill goes, the gemm clears in the
// first iteration.
// CHECK-NOT: tile.fill
// CHECK: tile.pipelined
// CHECK: tile.gemm {{.*}}{tile.clear_first_iteration, tile.wgmma
module attributes {tile.arch = "sm_90a"} {
  func.func @folded(%A: memref<4x256x1024xbf16>, %B: memref<4x256x1024xbf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bz: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xbf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<256x64xbf16, "shared">
      %c = tile.alloc : memref<128x256xf32, "fragment">
      tile.fill %c, %zero : memref<128x256xf32, "fragment">, f32
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = true, stages = 4 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%bz, %c0, %k0] [1, 128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x256x1024xbf16> to memref<128x64xbf16, "shared">
        tile.copy %B[%bz, %c0, %k0] [1, 256, 64] to %bs[%c0, %c0] [256, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 256, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x256x1024xbf16> to memref<256x64xbf16, "shared">
        tile.gemm %as, %bs, %c {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "bf16", k = 16 : i64, m_atoms = 1 : i64, n = 256 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xbf16, "shared">, memref<256x64xbf16, "shared">, memref<128x256xf32, "fragment">
        tile.yield
      }
      tile.yield
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @may_not_run
// K tiles from the arguments: the loop may run no iteration, which would leave the
// accumulator uncleared.
// CHECK: tile.fill
// CHECK-NOT: tile.clear_first_iteration
module attributes {tile.arch = "sm_90a"} {
  func.func @may_not_run(%A: memref<128x?xf16>, %B: memref<256x?xf16>, %tiles: index) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%c1) threads [256] {
    ^bb0(%bx: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<256x64xf16, "shared">
      %c = tile.alloc : memref<128x256xf32, "fragment">
      tile.fill %c, %zero : memref<128x256xf32, "fragment">, f32
      tile.pipelined %c0 to %tiles step %c1 stages 4 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = false, stages = 4 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%c0, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<128x?xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%c0, %k0] [256, 64] to %bs[%c0, %c0] [256, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 256>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<256x?xf16> to memref<256x64xf16, "shared">
        tile.gemm %as, %bs, %c {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 256 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<256x64xf16, "shared">, memref<128x256xf32, "fragment">
        tile.yield
      }
      tile.yield
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @left_alone
// A fill of one, a cp.async pipeline (no tile.tma_ring), a body scaling the accumulator
// before its gemm, two gemms, a T.Parallel on the accumulator between fill and loop, a body
// preloading an epilogue tile in its last iteration (prefetch-epilogue-operands): every fill
// stays, no gemm clears.
// CHECK-COUNT-6: tile.fill
// CHECK-NOT: tile.clear_first_iteration
module attributes {tile.arch = "sm_90a"} {
  func.func @left_alone(%A: memref<128x1024xf16>, %B: memref<256x1024xf16>, %R: memref<128x256xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    tile.kernel grid(%c1) threads [256] {
    ^bb0(%bx: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<256x64xf16, "shared">
      %c = tile.alloc : memref<128x256xf32, "fragment">
      tile.fill %c, %one : memref<128x256xf32, "fragment">, f32
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = false, stages = 4 : i64}} {
      ^bb0(%k: index):
        tile.gemm %as, %bs, %c {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 256 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<256x64xf16, "shared">, memref<128x256xf32, "fragment">
        tile.yield
      }
      tile.fill %c, %zero : memref<128x256xf32, "fragment">, f32
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 4 : i64}} {
      ^bb0(%k: index):
        tile.gemm %as, %bs, %c {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 256 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<256x64xf16, "shared">, memref<128x256xf32, "fragment">
        tile.yield
      }
      tile.fill %c, %zero : memref<128x256xf32, "fragment">, f32
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = false, stages = 4 : i64}} {
      ^bb0(%k: index):
        tile.parallel [128, 256] {
        ^bb0(%i: index, %j: index):
          %v = memref.load %c[%i, %j] : memref<128x256xf32, "fragment">
          %w = arith.mulf %v, %one : f32
          memref.store %w, %c[%i, %j] : memref<128x256xf32, "fragment">
          tile.yield
        }
        tile.gemm %as, %bs, %c {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 256 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<256x64xf16, "shared">, memref<128x256xf32, "fragment">
        tile.yield
      }
      tile.fill %c, %zero : memref<128x256xf32, "fragment">, f32
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = false, stages = 4 : i64}} {
      ^bb0(%k: index):
        tile.gemm %as, %bs, %c {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 256 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<256x64xf16, "shared">, memref<128x256xf32, "fragment">
        tile.gemm %as, %bs, %c {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 256 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<256x64xf16, "shared">, memref<128x256xf32, "fragment">
        tile.yield
      }
      tile.fill %c, %zero : memref<128x256xf32, "fragment">, f32
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        memref.store %one, %c[%i, %j] : memref<128x256xf32, "fragment">
        tile.yield
      }
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = false, stages = 4 : i64}} {
      ^bb0(%k: index):
        tile.gemm %as, %bs, %c {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 256 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<256x64xf16, "shared">, memref<128x256xf32, "fragment">
        tile.yield
      }
      %r = tile.alloc : memref<128x256xf16, "fragment">
      tile.fill %c, %zero : memref<128x256xf32, "fragment">, f32
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = false, stages = 4 : i64}} {
      ^bb0(%k: index):
        tile.gemm %as, %bs, %c {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 256 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<256x64xf16, "shared">, memref<128x256xf32, "fragment">
        %last = arith.cmpi eq, %k, %c16 : index
        scf.if %last {
          tile.copy %R[%c0, %c0] [128, 256] to %r[%c0, %c0] [128, 256] : memref<128x256xf16> to memref<128x256xf16, "fragment">
        }
        tile.yield
      }
      tile.yield
    }
    return
  }
}
