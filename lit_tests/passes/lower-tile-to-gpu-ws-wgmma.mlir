// RUN: tilec-opt --lower-tile-to-gpu %s | FileCheck %s
// A gemm in a T.ws block over part of the block (compiler/passes/_user_sync.py, _wgmma.py):
// warpgroup 0 fills the swizzled wgmma operand tile by T.tma_copy, one bulk copy per 16-byte
// chunk (128 rows x 8 chunks of a 128 x 64 f16 tile, shared out over its 128 threads, then
// its barrier before it arrives) to where its layout puts it; warpgroup 1
// issues the wgmma over its 128 threads, its accumulator laid out over them.

// CHECK-LABEL: gpu.func @producer_consumer
// CHECK: scf.if %{{.*}} {
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1024{{.*}} step %c128
// CHECK: nvvm.mbarrier.expect_tx %{{.*}}, %c16_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %c16_i32{{.*}} :
// CHECK: } else {
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c128_i32
// CHECK: nvvm.mbarrier.arrive
// CHECK: } {tile.warpgroups_guard}
// CHECK: scf.if %{{.*}} {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.barrier id = %c2_i32{{.*}} number_of_threads = %c128_i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: } {tile.warpgroups_guard}
module attributes {tile.arch = "sm_90a"} {
  func.func @producer_consumer(%A: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %g = arith.constant 8 : index
    tile.kernel grid(%g) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %p = arith.constant 0 : i32
      %bars = tile.alloc_barrier [1] : memref<1xi64, "barrier">
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}, tile.swizzle = "128B"} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}, tile.swizzle = "128B"} : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>, tile.mma_layout = "wgmma-accumulator"} : memref<128x128xf32, "fragment">
      tile.warpgroups [0] {
        tile.tma_copy %A[%bx, %c0] [128, 64] to %as[%c0, %c0] [128, 64] barrier %bars[%c0]
            : memref<1024x1024xf16> to memref<128x64xf16, "shared">, memref<1xi64, "barrier">
        tile.mbarrier_arrive %bars[%c0] : memref<1xi64, "barrier">
      }
      tile.warpgroups [1] {
        tile.mbarrier_wait_parity %bars[%c0], %p : memref<1xi64, "barrier">
        tile.gemm %as, %bs, %acc {clear_accum = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<1024x1024xf32>
      }
    }
    return
  }
}
