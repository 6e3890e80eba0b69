// RUN: tilec-opt --lower-tile-to-gpu %s | FileCheck %s
// T.ptx_cp_async, T.cp_async_barrier_noinc and T.sync_grid (compiler/passes/_user_sync.py):
// a tile.copy marked tile.cp_async is this thread's own cp.async of its 1 x 8 box (16 bytes,
// bypassing L1), zero-filled outside the tensor, element by element into one vector store
// where the tensor is misaligned; the marked arrival is cp.async.mbarrier.arrive.noinc; the
// grid barrier is a block barrier, thread 0's release add on the module's counter (block
// (0, 0, 0) adds 2^31 + 1 - blocks) and acquire spin until the top bit flips, fences, and a
// block barrier; the gpu.func is tile.cooperative (launched cooperatively).

// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global internal @tilec_grid_barrier(0 : i32) {addr_space = 1 : i32} : i32
// CHECK-LABEL: gpu.func @thread_copy
// CHECK-SAME: tile.cooperative
// CHECK: %[[ROW:.*]] = arith.divui %[[TID:[a-z_0-9]+]], %c8
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c8
// CHECK: %[[COL:.*]] = arith.muli %[[LANE]], %c8
// CHECK: scf.if
// CHECK: nvgpu.device_async_copy %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}[%[[ROW]], %[[COL]]], 8, %{{.*}} {bypassL1} : memref<64x64xf16, 1> to memref<16x64xf16, #gpu.address_space<workgroup>>
// CHECK: } else {
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[ROW]], %[[COL]]] : memref<16x64xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: nvvm.cp.async.mbarrier.arrive %{{.*}} {noinc = true} : !llvm.ptr<3>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[COUNTER:.*]] = llvm.mlir.addressof @tilec_grid_barrier : !llvm.ptr<1>
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: gpu.grid_dim x
// CHECK: gpu.block_id x
// CHECK: %[[FIRST:.*]] = arith.subi %c-2147483647_i32, %{{.*}} : i32
// CHECK: %[[SHARE:.*]] = arith.select %{{.*}}, %[[FIRST]], %c1_i32{{.*}} : i32
// CHECK: %[[OLD:.*]] = llvm.inline_asm has_side_effects "fence.acq_rel.gpu;\0A\09atom.add.release.gpu.global.u32 $0, [$1], $2;", "=r,l,r,~{memory}" %[[COUNTER]], %[[SHARE]]
// CHECK: scf.while
// CHECK: %[[NOW:.*]] = llvm.inline_asm has_side_effects "ld.acquire.gpu.global.u32 $0, [$1];", "=r,l,~{memory}" %[[COUNTER]]
// CHECK: arith.xori %[[OLD]], %[[NOW]] : i32
// CHECK: arith.andi %{{.*}}, %c-2147483648_i32 : i32
// CHECK: llvm.inline_asm has_side_effects "fence.acq_rel.gpu;", "~{memory}"  : () -> ()
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: nvvm.barrier
func.func @thread_copy(%a: memref<64x64xf16>, %b: memref<64x64xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %p = arith.constant 0 : i32
  tile.kernel grid(%c4) threads [128] attributes {tile.shared_arena = {align = 128 : i64, bytes = 2048 : i64}} {
  ^bb0(%bx: index):
    %s = tile.alloc {tile.shared_offset = 0 : i64} : memref<16x64xf16, "shared">
    %bars = tile.alloc_barrier [128] : memref<1xi64, "barrier">
    %tx = gpu.thread_id x
    %row = arith.divui %tx, %c8 : index
    %lane = arith.remui %tx, %c8 : index
    %col = arith.muli %lane, %c8 : index
    %base = arith.muli %bx, %c16 : index
    %src_row = arith.addi %base, %row : index
    tile.copy %a[%src_row, %col] [1, 8] to %s[%row, %col] [1, 8] {tile.cp_async} : memref<64x64xf16> to memref<16x64xf16, "shared">
    tile.mbarrier_arrive %bars[%c0] {tile.cp_async_noinc} : memref<1xi64, "barrier">
    tile.mbarrier_wait_parity %bars[%c0], %p : memref<1xi64, "barrier">
    "nvvm.barrier"() {tile.sync_grid, operandSegmentSizes = array<i32: 0, 0, 0>} : () -> ()
    tile.copy %s[%c0, %c0] [16, 64] to %b[%base, %c0] [16, 64] : memref<16x64xf16, "shared"> to memref<64x64xf16>
  }
  return
}
