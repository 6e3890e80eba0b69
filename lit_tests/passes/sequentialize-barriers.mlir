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
    %c0 = arith.constant 0 : index
    %p = arith.constant 0 : i32
    %bars = tile.alloc_barrier [128] : memref<1xi64, "barrier">
    // expected-error @+1 {{a warp-specialized block (T.ws, or an if-chain on the thread index over whole warpgroups) needs a GPU target}}
    tile.warpgroups [1] {
      tile.mbarrier_wait_parity %bars[%c0], %p : memref<1xi64, "barrier">
    }
  }
  return
}

// -----

// Where no thread waits for another, the sides run in turn: a T.ws body, and the regions of
// an `elif` chain of thread ranges ([0, 64), [64, 160), [160, 256) of 256) in program order,
// the conditions and the thread index gone. An empty else (the rest of [64, 160) inside
// [64, 256) is [160, 256), run by the last region) adds nothing.
// CHECK-LABEL: func.func @ranges_in_turn
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NOT: gpu.thread_id
// CHECK-NOT: scf.if
// CHECK-NOT: tile.warpgroups
// CHECK: tile.fill %{{.*}}, %[[ONE]] :
// CHECK-NEXT: tile.fill %{{.*}}, %[[TWO]] :
// CHECK-NEXT: tile.fill %{{.*}}, %[[THREE]] :
// CHECK-NEXT: tile.fill %{{.*}}, %[[FOUR]] :
// CHECK-NOT: scf.if
func.func @ranges_in_turn(%n: index) {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %c64 = arith.constant 64 : index
    %c160 = arith.constant 160 : index
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %three = arith.constant 3.0 : f32
    %four = arith.constant 4.0 : f32
    %f = tile.alloc : memref<64xf32, "fragment">
    %tx = gpu.thread_id x
    %first = arith.cmpi slt, %tx, %c64 : index
    scf.if %first {
      tile.fill %f, %one : memref<64xf32, "fragment">, f32
    } else {
      %from = arith.cmpi sge, %tx, %c64 : index
      %below = arith.cmpi slt, %tx, %c160 : index
      %second = arith.andi %from, %below : i1
      scf.if %second {
        tile.fill %f, %two : memref<64xf32, "fragment">, f32
      } else {
        tile.fill %f, %three : memref<64xf32, "fragment">, f32
      }
    }
    tile.warpgroups [1] {
      tile.fill %f, %four : memref<64xf32, "fragment">, f32
    }
  }
  return
}

// -----

// A branch whose rest is two ranges ([0, 64) and [128, 256) around [64, 128)) is no range:
// it stays, and so does the thread index (lower-tile-structure-to-scf rejects it).
// CHECK-LABEL: func.func @two_pieces
// CHECK: gpu.thread_id x
// CHECK: scf.if
// CHECK: } else {
func.func @two_pieces(%n: index) {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %f = tile.alloc : memref<64xf32, "fragment">
    %tx = gpu.thread_id x
    %from = arith.cmpi sge, %tx, %c64 : index
    %below = arith.cmpi slt, %tx, %c128 : index
    %middle = arith.andi %from, %below : i1
    scf.if %middle {
      tile.fill %f, %one : memref<64xf32, "fragment">, f32
    } else {
      tile.fill %f, %two : memref<64xf32, "fragment">, f32
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
