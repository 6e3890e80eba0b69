# RUN: tilec --emit=tile %s | FileCheck %s
# if/elif/else on run-time values become nested scf.if; compile-time conditions fold away.
import tilec.language as T

CLAMP = True


@T.prim_func
def clamp(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as _:
        for i in T.Parallel(64):
            if CLAMP:
                if A[i] > 1.0:
                    A[i] = 1.0
                elif A[i] < -1.0:
                    A[i] = -1.0
                else:
                    A[i] = A[i] * 0.5
            else:
                A[i] = 0.0

# CHECK-LABEL: func.func @clamp
# CHECK:      arith.cmpf ogt
# CHECK-NEXT: scf.if %{{.*}} {
# CHECK:      } else {
# CHECK:        arith.cmpf olt
# CHECK-NEXT:   scf.if %{{.*}} {
# CHECK:        } else {
# CHECK:          arith.mulf
# CHECK-NOT:  arith.constant 0.000000e+00
