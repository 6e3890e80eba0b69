# RUN: tilec --emit=tile %s | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# T.reduce_max/min/sum/abssum/absmax with dim (negative dims count from the end) and clear.
import tilec.language as T


@T.prim_func
def reductions(A: T.Tensor((8, 16), "float32")):
    with T.Kernel(1, threads=128) as _:
        x = T.alloc_fragment((8, 16), "float32")
        rows = T.alloc_fragment((8,), "float32")
        cols = T.alloc_fragment((16,), "float32")
        T.copy(A, x)
        T.reduce_max(x, rows, dim=1)
        T.reduce_min(x, rows, dim=-1, clear=False)
        T.reduce_sum(x, cols, dim=0)
        T.reduce_abssum(x, rows, 1)
        T.reduce_absmax(x, cols, dim=0, clear=True)

# CHECK-LABEL: func.func @reductions
# CHECK: tile.reduce "max" %[[X:.*]] to %[[R:.*]] dim 1 : memref<8x16xf32, "fragment"> to memref<8xf32, "fragment">
# CHECK: tile.reduce "min" %[[X]] to %[[R]] dim 1 {clear = false}
# CHECK: tile.reduce "sum" %[[X]] to %[[C:.*]] dim 0 :
# CHECK: tile.reduce "abssum" %[[X]] to %[[R]] dim 1 :
# CHECK: tile.reduce "absmax" %[[X]] to %[[C]] dim 0 :
