# RUN: tilec --emit=tile %s | FileCheck %s
# T.serial, Python range and T.unroll become tile.for (unrolled ones carry `unroll`).
import tilec.language as T


@T.prim_func
def loops(A: T.Tensor((64,), "int32")):
    with T.Kernel(1, threads=1) as _:
        for i in T.serial(4, 64, 4):
            A[i] = i
        for i in range(8):
            A[i] = 0
        for i in T.unroll(2):
            A[i] = 1

# CHECK-LABEL: func.func @loops
# CHECK:      %[[C4:.*]] = arith.constant 4 : index
# CHECK-NEXT: %[[C64:.*]] = arith.constant 64 : index
# CHECK-NEXT: %[[S4:.*]] = arith.constant 4 : index
# CHECK-NEXT: tile.for %[[C4]] to %[[C64]] step %[[S4]] {
# CHECK-NEXT: ^bb0(%[[I:.*]]: index):
# CHECK-NEXT:   %[[V:.*]] = arith.index_cast %[[I]] : index to i32
# CHECK-NEXT:   memref.store %[[V]], %arg0[%[[I]]] : memref<64xi32>
# CHECK:      tile.for %{{.*}} to %{{.*}} step %{{.*}} {
# CHECK:      tile.for %{{.*}} to %{{.*}} step %{{.*}} attributes {unroll} {
