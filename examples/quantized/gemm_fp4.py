"""MXFP4 weights times fp16 activations on tensor cores: C = A @ dequant(B).T.

B holds T.float4_e2m1fn weights packed two to a byte along K (torch uint8, shape (N, K / 2)), one
T.float8_e8m0fnu scale per row and block of 32 (MXFP4): w = fp4 * 2 ** (e - 127). As gemm_int4
does, a block decodes a (block_N, block_K) tile of weights into a fp16 shared tile and computes
C^T = W A^T with it as the gemm's M (wgmma on sm_90a) and block_M rows of A as N, accumulating
in fp32. Every e2m1 value times a power of two from 2 ** -7 to 2 ** 3 is exact in fp16.
Tile style: it runs on every target.
"""

from gemm_int4 import check_examples, store_transposed
from gemv import FAST_MATH

import tilec as tilelang
import tilec.language as T


@tilelang.jit(pass_configs=FAST_MATH)
def gemm_mxfp4(A, B, scales, block_M=64, block_N=128, block_K=128, block=32, threads=128,
               num_stages=2):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K), T.float4_e2m1fn)
    scales: T.Tensor((N, K // block), T.float8_e8m0fnu)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_N, block_K), T.float4_e2m1fn)
        B_decoded = T.alloc_shared((block_N, block_K), T.float16)
        C_local = T.alloc_fragment((block_N, block_M), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[bx * block_N, k * block_K], B_shared)
            for i, j in T.Parallel(block_N, block_K):
                scale = scales[bx * block_N + i, (k * block_K + j) // block]
                B_decoded[i, j] = T.Cast(T.float16, T.Cast(T.float32, B_shared[i, j])
                                         * T.Cast(T.float32, scale))
            T.gemm(B_decoded, A_shared, C_local, transpose_B=True)
        store_transposed(C_local, C, bx, by)
    return C


def main() -> None:
    check_examples("mxfp4", (64, 512, 1024), {"gemm_mxfp4": lambda a, args: gemm_mxfp4(a, *args)})


if __name__ == "__main__":
    main()
