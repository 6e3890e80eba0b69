# RUN: tilec --emit=tile %s | FileCheck %s
# T.Parallel: an N-d iteration space; element reads and writes are memref.load/store.
import tilec.language as T


@T.prim_func
def axpy(X: T.Tensor((8, 32), "float32"), Y: T.Tensor((8, 32), "float32"), alpha: T.float32):
    with T.Kernel(1, threads=256) as _:
        for i, j in T.Parallel(8, 32):
            Y[i, j] = alpha * X[i, j] + Y[i, j]
        for k in T.Parallel(32):
            Y[0, k] += 1

# CHECK-LABEL: func.func @axpy(%arg0: memref<8x32xf32>, %arg1: memref<8x32xf32>, %arg2: f32)
# CHECK: tile.parallel [8, 32] {
# CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
# CHECK-NEXT:   %[[X:.*]] = memref.load %arg0[%[[I]], %[[J]]] : memref<8x32xf32>
# CHECK-NEXT:   %[[AX:.*]] = arith.mulf %arg2, %[[X]] : f32
# CHECK-NEXT:   %[[Y:.*]] = memref.load %arg1[%[[I]], %[[J]]] : memref<8x32xf32>
# CHECK-NEXT:   %[[S:.*]] = arith.addf %[[AX]], %[[Y]] : f32
# CHECK-NEXT:   memref.store %[[S]], %arg1[%[[I]], %[[J]]] : memref<8x32xf32>
# CHECK-NEXT: }
# CHECK: tile.parallel [32] {
# CHECK:   %[[OLD:.*]] = memref.load %arg1
# CHECK:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
# CHECK:   arith.addf %[[OLD]], %[[ONE]] : f32
