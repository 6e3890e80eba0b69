// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// Round trip of the mbarrier, bulk-copy and warpgroup ops.

// CHECK-LABEL: func.func @producer_consumer
// CHECK: %[[BARS:.*]] = tile.alloc_barrier [128, 128] : memref<2xi64, "barrier">
// CHECK: tile.warpgroups [1] {
// CHECK: tile.mbarrier_wait_parity %[[BARS]][%{{.*}}], %{{.*}} : memref<2xi64, "barrier">
// CHECK: tile.tma_copy %{{.*}}[%{{.*}}, %{{.*}}] [64, 32] to %{{.*}}[%{{.*}}, %{{.*}}] [64, 32] barrier %[[BARS]][%{{.*}}] : memref<?x?xf16> to memref<64x32xf16, "shared">, memref<2xi64, "barrier">
// CHECK: tile.mbarrier_expect_tx %[[BARS]][%{{.*}}], %{{.*}} {arrive} : memref<2xi64, "barrier">
// CHECK: tile.mbarrier_arrive %[[BARS]][%{{.*}}] : memref<2xi64, "barrier">
// CHECK: tile.warpgroups [0] {
// CHECK: tile.fence_proxy_async
func.func @producer_consumer(%a: memref<?x?xf16>, %n: index) {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %p = arith.constant 1 : i32
    %bytes = arith.constant 4096 : i32
    %bars = tile.alloc_barrier [128, 128] : memref<2xi64, "barrier">
    %s = tile.alloc : memref<64x32xf16, "shared">
    tile.warpgroups [1] {
      tile.mbarrier_wait_parity %bars[%c1], %p : memref<2xi64, "barrier">
      tile.tma_copy %a[%bx, %c0] [64, 32] to %s[%c0, %c0] [64, 32] barrier %bars[%c0]
          : memref<?x?xf16> to memref<64x32xf16, "shared">, memref<2xi64, "barrier">
      tile.mbarrier_expect_tx %bars[%c0], %bytes {arrive} : memref<2xi64, "barrier">
      tile.mbarrier_arrive %bars[%c0] : memref<2xi64, "barrier">
    }
    tile.warpgroups [0] {
      tile.fence_proxy_async
    }
  }
  return
}
