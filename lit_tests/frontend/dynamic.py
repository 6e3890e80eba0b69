# RUN: tilec --emit=tile %s | FileCheck %s
# T.dynamic sizes: `?` dims, measured once by memref.dim; the grid depends on them.
import tilec.language as T

M = T.dynamic("M")


@T.prim_func
def scale(X: T.Tensor((M, 64), "float32"), Y: T.Tensor((M, 64), "float32")):
    with T.Kernel(T.ceildiv(M, 16), threads=128) as bx:
        for i, j in T.Parallel(16, 64):
            if bx * 16 + i < M:
                Y[bx * 16 + i, j] = X[bx * 16 + i, j] * 2.0

# CHECK-LABEL: func.func @scale(%arg0: memref<?x64xf32>, %arg1: memref<?x64xf32>)
# CHECK:      %[[ZERO:.*]] = arith.constant 0 : index
# CHECK-NEXT: %[[M:.*]] = memref.dim %arg0, %[[ZERO]] : memref<?x64xf32>
# CHECK-NOT:  memref.dim
# CHECK:      %[[G:.*]] = arith.ceildivsi %[[M]], %{{.*}} : index
# CHECK:      tile.kernel grid(%[[G]]) threads [128]
# CHECK:        arith.cmpi slt, %{{.*}}, %[[M]] : index
