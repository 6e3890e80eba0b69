// RUN: tilec-opt --lower-tile-to-gpu %s | FileCheck %s
// The synchronization a kernel writes itself (compiler/passes/_user_sync.py): mbarriers in
// shared memory initialized by thread 0 before use, a TMA copy's rows shared out over its
// warpgroup's threads, each row one cp.async.bulk (element by element where a row leaves the
// tensor or is misaligned), then the warpgroup's barrier before any of them arrives, T.ws
// blocks as a guard on the warpgroup whose body sees those threads as its block (the copy
// spread over 128 threads from index 0, the block barrier a named one). Barrier arrays follow
// the arena on 8-byte boundaries (the second at 2048 + 16, not at the next 128).

// CHECK-LABEL: gpu.func @ring
// CHECK-SAME: tile.shared_bytes = 2072 : i64
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[BARS:.*]] = memref.view %{{.*}}[%c2048][] : {{.*}} to memref<2xi64, #gpu.address_space<workgroup>>
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: nvvm.mbarrier.init %{{.*}}, %c128_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: gpu.barrier
// CHECK: memref.view %{{.*}}[%c2064][] : {{.*}} to memref<1xi64, #gpu.address_space<workgroup>>
// warpgroup 1: threads 128 to 255, its first thread issues the copy
// CHECK: %[[LO:.*]] = arith.cmpi uge, %[[TID]], %c128 : index
// CHECK: %[[HI:.*]] = arith.cmpi ult, %[[TID]], %c256 : index
// CHECK: %[[IN1:.*]] = arith.andi %[[LO]], %[[HI]] : i1
// CHECK-NEXT: scf.if %[[IN1]] {
// CHECK: %[[LOCAL1:.*]] = arith.subi %[[TID]], %{{.*}} : index
// CHECK: scf.for %{{.*}} = %[[LOCAL1]] to %c16{{.*}} step %c128{{.*}} {
// CHECK: nvvm.mbarrier.expect_tx %{{.*}}, %c128_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: llvm.addrspacecast %{{.*}} : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: } else {
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<16x32xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.barrier id = %c2_i32{{.*}} number_of_threads = %c128_i32
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3> -> i64
// CHECK: } {tile.warpgroups_guard}
// warpgroup 0: waits for parity 0, copies with its 128 threads, syncs them alone
// CHECK: scf.if %{{.*}} {
// CHECK: %[[LOCAL0:.*]] = arith.subi %[[TID]], %{{.*}} : index
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %{{.*}}, %c10000000_i32 : !llvm.ptr<3>, i32, i32
// one vector per thread (128 of them), at the thread's index within the warpgroup
// CHECK: arith.remui %[[LOCAL0]], %c8{{.*}} : index
// CHECK: vector.load %{{.*}} : memref<16x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c128_i32
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: } {tile.warpgroups_guard}
func.func @ring(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %p = arith.constant 0 : i32
    %bars = tile.alloc_barrier [128, 1] : memref<2xi64, "barrier">
    %done = tile.alloc_barrier [128] : memref<1xi64, "barrier">
    %s = tile.alloc : memref<16x32xf32, "shared">
    tile.warpgroups [1] {
      tile.tma_copy %a[%bx, %c0] [16, 32] to %s[%c0, %c0] [16, 32] barrier %bars[%c0]
          : memref<?x?xf32> to memref<16x32xf32, "shared">, memref<2xi64, "barrier">
      tile.mbarrier_arrive %bars[%c0] : memref<2xi64, "barrier">
    }
    tile.warpgroups [0] {
      tile.mbarrier_wait_parity %bars[%c0], %p : memref<2xi64, "barrier">
      tile.copy %s[%c0, %c0] [16, 32] to %b[%bx, %c0] [16, 32] : memref<16x32xf32, "shared"> to memref<?x?xf32>
      gpu.barrier
      tile.fence_proxy_async
    }
  }
  return
}
