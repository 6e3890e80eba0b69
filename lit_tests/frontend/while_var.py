# RUN: tilec --emit=tile %s | FileCheck %s
# A mutable T.alloc_var, a while loop (scf.while re-reads the var), augmented assignment.
import tilec.language as T


@T.prim_func
def halvings(A: T.Tensor((16,), "int32"), B: T.Tensor((16,), "int32")):
    with T.Kernel(1, threads=16) as _:
        for i in T.Parallel(16):
            n = T.alloc_var("int32", init=A[i])
            steps = T.alloc_var("int32", init=0)
            while n > 1:
                n = n // 2
                steps += 1
            B[i] = steps

# CHECK-LABEL: func.func @halvings
# CHECK:      %[[N:.*]] = tile.alloc : memref<1xi32, "var">
# CHECK:      %[[S:.*]] = tile.alloc : memref<1xi32, "var">
# CHECK:      scf.while : () -> () {
# CHECK:        %[[CUR:.*]] = memref.load %[[N]]
# CHECK:        %[[GO:.*]] = arith.cmpi sgt, %[[CUR]], %{{.*}} : i32
# CHECK-NEXT:   scf.condition(%[[GO]])
# CHECK-NEXT: } do {
# CHECK:        arith.floordivsi
# CHECK:        memref.store %{{.*}}, %[[N]]
# CHECK:        %[[OLD:.*]] = memref.load %[[S]]
# CHECK:        arith.addi %[[OLD]]
# CHECK:        memref.store %{{.*}}, %[[S]]
