// RUN: tilec-opt --split-input-file --verify-diagnostics --sequentialize-barriers %s | FileCheck %s

// A TMA copy is a synchronous copy for one thread; the barrier ops that order threads go.
// CHECK-LABEL: func.func @staged
// CHECK-NOT: tile.alloc_barrier
// CHECK: tile.copy %{{.*}}[%{{.*}}, %{{.*}}] [64, 32] to %{{.*}}[%{{.*}}, %{{.*}}] [64, 32] : memref<?x?xf32> to memref<64x32xf32, "shared">
// CHECK-NOT: tile.mbarrier
// CHECK-NOT: tile.fence_proxy_async
// CHECK-NOT: nvvm.
// CHECK: return
func.func @staged(%a: memref<?x?xf32>, %n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %p = arith.constant 0 : i32
    %tx = arith.constant 8192 : i32
    %count = arith.constant 128 : i32
    %bars = tile.alloc_barrier [128] : memref<1xi64, "barrier">
    %s = tile.alloc : memref<64x32xf32, "shared">
    tile.tma_copy %a[%bx, %c0] [64, 32] to %s[%c0, %c0] [64, 32] barrier %bars[%c0]
        : memref<?x?xf32> to memref<64x32xf32, "shared">, memref<1xi64, "barrier">
    tile.mbarrier_expect_tx %bars[%c0], %tx : memref<1xi64, "barrier">
    tile.mbarrier_arrive %bars[%c0] : memref<1xi64, "barrier">
    tile.mbarrier_wait_parity %bars[%c0], %p : memref<1xi64, "barrier">
    tile.fence_proxy_async
    nvvm.barrier.arrive id = %p number_of_threads = %count
    nvvm.setmaxregister increase 232
  }
  return
}

// -----

// Warpgroups that wait on each other cannot run on one thread.
func.func @warp_specialized(%n: index) {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    // expected-error @+1 {{a warp-specialized block (T.ws, or an if-chain on the thread index over whole warpgroups) needs a GPU target}}
    tile.warpgroups [1] {
    }
  }
  return
}

// -----

// T.ptx_commit_group / T.ptx_wait_group: the copies they close and wait for are complete at once.
// CHECK-LABEL: func.func @cp_async_groups
// CHECK-NOT: nvvm.cp.async
// CHECK: tile.copy
// CHECK-NOT: nvvm.cp.async
// CHECK: return
func.func @cp_async_groups(%a: memref<?x?xf32>, %n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %s = tile.alloc : memref<64x32xf32, "shared">
    tile.copy %a[%bx, %c0] [64, 32] to %s[%c0, %c0] [64, 32] : memref<?x?xf32> to memref<64x32xf32, "shared">
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
  }
  return
}
