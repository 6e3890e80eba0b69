# RUN: tilec --emit=tile %s | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# T.Pipelined with num_stages and an explicit schedule (order, stage, group), as TileLang.
import tilec.language as T


@T.prim_func
def staged(A: T.Tensor((256, 32), "float16"), B: T.Tensor((32, 32), "float32")):
    with T.Kernel(1, threads=128) as _:
        a = T.alloc_shared((32, 32), "float16")
        c = T.alloc_fragment((32, 32), "float32")
        T.clear(c)
        for k in T.Pipelined(8, num_stages=2, order=[0, 1], stage=[0, 1], group=[[0], [1]]):
            T.copy(A[k * 32, 0], a)
            T.gemm(a, a, c)
        for k in T.Pipelined(2, 6, num_stages=1):
            T.copy(A[k * 32, 0], a)
        T.copy(c, B)

# CHECK-LABEL: func.func @staged
# CHECK:      %[[LO:.*]] = arith.constant 0 : index
# CHECK-NEXT: %[[HI:.*]] = arith.constant 8 : index
# CHECK-NEXT: %[[ST:.*]] = arith.constant 1 : index
# CHECK-NEXT: tile.pipelined %[[LO]] to %[[HI]] step %[[ST]] stages 2 attributes {group = [array<i64: 0>, array<i64: 1>], order = array<i64: 0, 1>, stage = array<i64: 0, 1>} {
# CHECK:        tile.copy
# CHECK:        tile.gemm
# CHECK:      %[[LO2:.*]] = arith.constant 2 : index
# CHECK-NEXT: %[[HI2:.*]] = arith.constant 6 : index
# CHECK:      tile.pipelined %[[LO2]] to %[[HI2]] step %{{.*}} stages 1 {
