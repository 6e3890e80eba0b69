# RUN: tilec --emit=tile %s --const M=256 --const N=256 --const K=64 | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# The eager quickstart: T.const sizes bound from how A and B are indexed, T.empty output last.
import tilec as tilelang
import tilec.language as T


@tilelang.jit
def matmul(A, B, block_M=128, block_N=128, block_K=32):
    M, N, K = T.const("M, N, K")
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_K, block_N), T.float16)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C

# CHECK-LABEL: func.func @matmul(%arg0: memref<256x64xf16>, %arg1: memref<64x256xf16>, %arg2: memref<256x256xf16>) attributes {tile.entry}
# CHECK-DAG:     %[[GX:.*]] = arith.constant 2 : index
# CHECK:         tile.kernel grid(%[[GX]], %{{.*}}) threads [128] {
# CHECK-NEXT:    ^bb0(%[[BX:.*]]: index, %[[BY:.*]]: index):
# CHECK:           %[[AS:.*]] = tile.alloc : memref<128x32xf16, "shared">
# CHECK:           %[[BS:.*]] = tile.alloc : memref<32x128xf16, "shared">
# CHECK:           %[[CL:.*]] = tile.alloc : memref<128x128xf32, "fragment">
# CHECK:           tile.fill %[[CL]], %{{.*}} : memref<128x128xf32, "fragment">, f32
# CHECK:           tile.pipelined %{{.*}} to %{{.*}} step %{{.*}} stages 3 {
# CHECK-NEXT:      ^bb0(%[[K:.*]]: index):
# CHECK:             %[[ROW:.*]] = arith.muli %[[BY]], %{{.*}} : index
# CHECK:             %[[COL:.*]] = arith.muli %[[K]], %{{.*}} : index
# CHECK:             tile.copy %arg0[%[[ROW]], %[[COL]]] [128, 32] to %[[AS]][%{{.*}}, %{{.*}}] [128, 32]
# CHECK:             tile.copy %arg1[%{{.*}}, %{{.*}}] [32, 128] to %[[BS]]
# CHECK:             tile.gemm %[[AS]], %[[BS]], %[[CL]] :
# CHECK:           %[[C16:.*]] = tile.alloc : memref<128x128xf16, "fragment">
# CHECK:           tile.parallel [128, 128] {
# CHECK:             arith.truncf %{{.*}} : f32 to f16
# CHECK:           tile.copy %[[C16]][%{{.*}}, %{{.*}}] [128, 128] to %arg2[%{{.*}}, %{{.*}}] [128, 128]
# CHECK:         return
