# RUN: tilec --emit=tile %s --const M=64 --const N=32 --const K=48 --const trans_A=True | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# The prologue runs as Python: A's shape comes through a variable chosen by a Python `if`, the
# output's dtype from a local, the grid from a size the prologue computed.
import tilec as tilelang
import tilec.language as T


@tilelang.jit
def matmul(A, B, trans_A=False, block_M=32, block_N=32, block_K=16):
    M, N, K = T.const("M, N, K")
    dtype = T.float16
    A_shape = (K, M) if trans_A else (M, K)
    A_shared_shape = (block_K, block_M) if trans_A else (block_M, block_K)
    A: T.Tensor(A_shape, dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), T.float32)
    blocks = T.ceildiv(M, block_M) * T.ceildiv(N, block_N)
    with T.Kernel(blocks, threads=128) as b:
        bx = b % T.ceildiv(N, block_N)
        by = b // T.ceildiv(N, block_N)
        A_shared = T.alloc_shared(A_shared_shape, dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.serial(T.ceildiv(K, block_K)):
            if trans_A:
                T.copy(A[k * block_K, by * block_M], A_shared)
            else:
                T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local, trans_A)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C

# CHECK-LABEL: func.func @matmul(%arg0: memref<48x64xf16>, %arg1: memref<48x32xf16>, %arg2: memref<64x32xf32>) attributes {tile.entry}
# CHECK:         %[[G:.*]] = arith.constant 2 : index
# CHECK:         tile.kernel grid(%[[G]]) threads [128] {
# CHECK:           tile.alloc : memref<16x32xf16, "shared">
# CHECK:           tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {transpose_a = true}
