# RUN: tilec --emit=tile %s --const N=40 | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# Two `with T.Kernel` blocks: two tile.kernel ops in one function, in source order (the driver
# compiles each into its own launch); a T.empty between them is one more output parameter.
import tilec as tilelang
import tilec.language as T


@tilelang.jit
def two_steps(A, block=16):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    B = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
        for i in T.Parallel(block):
            B[bx * block + i] = A[bx * block + i] * 2.0
    C = T.empty((N,), T.float32)
    with T.Kernel(1, threads=32) as _:
        for i in T.serial(N):
            C[i] = B[N - 1 - i]
    return B, C

# CHECK-LABEL: func.func @two_steps(%arg0: memref<40xf32>, %arg1: memref<40xf32>, %arg2: memref<40xf32>) attributes {tile.entry}
# CHECK:         tile.kernel grid(%{{.*}}) threads [16] {
# CHECK:           tile.parallel [16]
# CHECK:           memref.store %{{.*}}, %arg1[%{{.*}}] : memref<40xf32>
# CHECK:         tile.kernel grid(%{{.*}}) threads [32] {
# CHECK:           tile.for
# CHECK:             memref.load %arg1[%{{.*}}] : memref<40xf32>
# CHECK:             memref.store %{{.*}}, %arg2[%{{.*}}] : memref<40xf32>
# CHECK-NOT:     tile.kernel
