// RUN: tilec-opt --lower-tile-to-gpu --split-input-file %s | FileCheck %s
// A tile.pingpong ring loop (plan-warpgroup-pingpong): the two consumer warpgroups take turns
// on named barriers 4 + g. Before the loop warpgroup 1 arrives on 4 and each waits on its own;
// in the body each hands the turn on (bar.arrive on 5 - g) right after committing S = Q K^T,
// before waiting for it, and waits for its turn again before P V's fence; after the loop
// warpgroup 0 arrives on 5 (warpgroup 1's last P V), ahead of the consumers' drain barrier.

// CHECK-LABEL: gpu.func @attention
// CHECK: nvvm.setmaxregister increase
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK: %[[OWN:.*]] = arith.addi %[[GROUP:.*]], %c4_i32 : i32
// CHECK: %[[OTHER:.*]] = arith.subi %c5_i32, %[[GROUP]] : i32
// CHECK: arith.cmpi eq, %[[GROUP]], %c1_i32{{.*}} : i32
// CHECK-NEXT: scf.if
// CHECK-NEXT: %[[FIRST:.*]] = arith.constant 4 : i32
// CHECK-NEXT: arith.constant 256 : i32
// CHECK-NEXT: nvvm.barrier.arrive id = %[[FIRST]] number_of_threads =
// CHECK: nvvm.barrier id = %[[OWN]] number_of_threads =
// CHECK-NEXT: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: arith.constant 256 : i32
// CHECK-NEXT: nvvm.barrier.arrive id = %[[OTHER]] number_of_threads =
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: math.exp2
// CHECK: nvvm.barrier id = %[[OWN]] number_of_threads =
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK: arith.cmpi eq, %[[GROUP]], %c0_i32{{.*}} : i32
// CHECK-NEXT: scf.if
// CHECK-NEXT: %[[SECOND:.*]] = arith.constant 5 : i32
// CHECK-NEXT: arith.constant 256 : i32
// CHECK-NEXT: nvvm.barrier.arrive id = %[[SECOND]] number_of_threads =
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads =
module attributes {tile.arch = "sm_90a"} {
  func.func @attention(%Q: memref<4x128x64xf16>, %K: memref<4x512x64xf16>, %V: memref<4x512x64xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %ks = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %vs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %s = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0], [64, 0]]>} : memref<128x128xf32, "fragment">
      %p = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0], [64, 0]]>} : memref<128x128xf16, "fragment">
      %o = tile.alloc {tile.layout = #tile.linear<[128, 64], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0], [64, 0]]>} : memref<128x64xf32, "fragment">
      tile.fill %o, %zero : memref<128x64xf32, "fragment">, f32
      tile.copy %Q[%bx, %c0, %c0] [1, 128, 64] to %qs[%c0, %c0] [128, 64] : memref<4x128x64xf16> to memref<128x64xf16, "shared">
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.pingpong = {barrier = 4 : i64, together = false}, tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %K[%bx, %k0, %c0] [1, 128, 64] to %ks[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x512x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
        tile.parallel [128, 128] attributes {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0], [64, 0]]>} {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<128x128xf32, "fragment">
          %e = math.exp2 %x : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<128x128xf16, "fragment">
        }
        tile.copy %V[%bx, %k0, %c0] [1, 128, 64] to %vs[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x512x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %p, %vs, %o {tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x128xf16, "fragment">, memref<128x64xf16, "shared">, memref<128x64xf32, "fragment">
      }
    }
    return
  }
}

// -----

// A rotated loop (rotate-attention-loop: Q K^T of tile k and P V of tile k - 1 issued back to
// back, both waits deferred) with together = true: a turn takes both gemms. Before the loop
// warpgroup 1 arrives on 4 and no one waits; in the body each warpgroup waits for its turn
// before Q K^T's fence and hands it on (bar.arrive on 5 - g) right after P V's commit, before
// the softmax waits for either; after the loop warpgroup 0 waits on 4 for warpgroup 1's last
// hand-on, so each barrier is left with as many arrivals as waits.

// CHECK-LABEL: gpu.func @rotated
// CHECK: %[[OWN:.*]] = arith.addi %[[GROUP:.*]], %c4_i32 : i32
// CHECK: %[[OTHER:.*]] = arith.subi %c5_i32, %[[GROUP]] : i32
// CHECK: arith.cmpi eq, %[[GROUP]], %c1_i32{{.*}} : i32
// CHECK-NEXT: scf.if
// CHECK-NEXT: %[[FIRST:.*]] = arith.constant 4 : i32
// CHECK-NEXT: arith.constant 256 : i32
// CHECK-NEXT: nvvm.barrier.arrive id = %[[FIRST]] number_of_threads =
// CHECK-NEXT: }
// CHECK-NEXT: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.barrier id = %[[OWN]] number_of_threads =
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: arith.constant 256 : i32
// CHECK-NEXT: nvvm.barrier.arrive id = %[[OTHER]] number_of_threads =
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: math.exp2
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.mbarrier.arrive
// CHECK: arith.cmpi eq, %[[GROUP]], %c0_i32{{.*}} : i32
// CHECK-NEXT: scf.if
// CHECK-NEXT: arith.constant 256 : i32
// CHECK-NEXT: nvvm.barrier id = %[[OWN]] number_of_threads =
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads =
module attributes {tile.arch = "sm_90a"} {
  func.func @rotated(%Q: memref<4x128x64xf16>, %K: memref<4x512x64xf16>, %V: memref<4x512x64xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %ks = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %vs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %s = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0], [64, 0]]>} : memref<128x128xf32, "fragment">
      %p = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0], [64, 0]]>} : memref<128x128xf16, "fragment">
      %o = tile.alloc {tile.layout = #tile.linear<[128, 64], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0], [64, 0]]>} : memref<128x64xf32, "fragment">
      tile.fill %o, %zero : memref<128x64xf32, "fragment">, f32
      tile.copy %Q[%bx, %c0, %c0] [1, 128, 64] to %qs[%c0, %c0] [128, 64] : memref<4x128x64xf16> to memref<128x64xf16, "shared">
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.pingpong = {barrier = 4 : i64, together = true}, tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %K[%bx, %k0, %c0] [1, 128, 64] to %ks[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x512x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true, tile.deferred_wait, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
        tile.copy %V[%bx, %k0, %c0] [1, 128, 64] to %vs[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x512x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %p, %vs, %o {tile.deferred_wait, tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x128xf16, "fragment">, memref<128x64xf16, "shared">, memref<128x64xf32, "fragment">
        tile.parallel [128, 128] attributes {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0], [64, 0]]>} {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<128x128xf32, "fragment">
          %e = math.exp2 %x : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<128x128xf16, "fragment">
        }
      }
    }
    return
  }
}
