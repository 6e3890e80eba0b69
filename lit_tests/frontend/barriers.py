# RUN: tilec --emit=tile %s | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# mbarriers, TMA copies and T.ws as TileLang writes them: bars[i] names one barrier, a bare
# barrier buffer its first; a T.Pipelined loop holding them is the kernel's own schedule.
import tilec.language as T


@T.prim_func
def ring(A: T.Tensor((256, 64), T.float16), B: T.Tensor((256, 64), T.float16)):
    with T.Kernel(4, threads=256) as bx:
        s = T.alloc_shared((2, 64, 64), T.float16)
        full = T.alloc_barrier([128, 128])
        empty = T.alloc_barrier(arrive_count=128)
        for k in T.Pipelined(2, num_stages=2):
            with T.ws(1):
                T.mbarrier_wait_parity(empty, (k & 1) ^ 1)
                T.tma_copy(A[bx * 64, 0], s[k, :, :], barrier=full[k])
                T.barrier_arrive(full[k])
            with T.ws(0):
                T.barrier_wait(full[k], 0)
                T.copy(s[k, :, :], B[bx * 64, 0])
                T.fence_proxy_async()
                T.mbarrier_arrive(mbarrier=empty)

# CHECK-LABEL: func.func @ring
# CHECK: %[[FULL:.*]] = tile.alloc_barrier [128, 128] : memref<2xi64, "barrier">
# CHECK: %[[EMPTY:.*]] = tile.alloc_barrier [128] : memref<1xi64, "barrier">
# CHECK: tile.for %{{.*}} to %{{.*}} step %{{.*}} {
# CHECK-NEXT: ^bb0(%[[K:.*]]: index):
# CHECK: tile.warpgroups [1] {
# CHECK: tile.mbarrier_wait_parity %[[EMPTY]][%{{.*}}], %{{.*}} : memref<1xi64, "barrier">
# CHECK: tile.tma_copy %arg0[%{{.*}}, %{{.*}}] [64, 64] to %{{.*}}[%[[K]], %{{.*}}, %{{.*}}] [1, 64, 64] barrier %[[FULL]][%[[K]]] : memref<256x64xf16> to memref<2x64x64xf16, "shared">, memref<2xi64, "barrier">
# CHECK: tile.mbarrier_arrive %[[FULL]][%[[K]]] : memref<2xi64, "barrier">
# CHECK: tile.warpgroups [0] {
# CHECK: tile.mbarrier_wait_parity %[[FULL]][%[[K]]], %{{.*}} : memref<2xi64, "barrier">
# CHECK: tile.copy
# CHECK: tile.fence_proxy_async
# CHECK: tile.mbarrier_arrive %[[EMPTY]][%{{.*}}] : memref<1xi64, "barrier">
# CHECK-NOT: tile.pipelined


@T.prim_func
def branch_chain(A: T.Tensor((128, 64), T.float16), B: T.Tensor((128, 64), T.float16)):
    with T.Kernel(2, threads=384) as bx:
        s = T.alloc_shared((64, 64), T.float16)
        ready = T.alloc_barrier(arrive_count=128)
        tx = T.get_thread_binding()
        if tx < 128:
            T.copy(A[bx * 64, 0], s)
            T.barrier_arrive(ready)
        elif tx >= 128 and tx < 256:
            T.barrier_wait(ready, 0)
            T.copy(s, B[bx * 64, 0])
        else:
            T.barrier_wait(ready, 0)

# An `if tx < 128: ... elif ...: ... else:` chain of whole warpgroups: one tile.warpgroups per
# branch, the later ones marked as else branches of the first (a thread runs one of them).
# CHECK-LABEL: func.func @branch_chain
# CHECK: tile.warpgroups [0] {
# CHECK: tile.mbarrier_arrive
# CHECK: tile.warpgroups [1] attributes {tile.else_branch} {
# CHECK: tile.mbarrier_wait_parity
# CHECK: tile.warpgroups [2] attributes {tile.else_branch} {
