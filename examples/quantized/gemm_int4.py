"""Small-batch GEMM with int4 weights: C = A @ dequant(B).T, tile style (runs on every target).

B holds T.uint4 weights packed two to a byte along K (torch uint8, shape (N, K / 2)), scales and
zeros fp16 per row and group of 128. A block copies its packed weight tile into shared memory as
bytes, decodes it into a fp16 shared tile ((q - zero) * scale), then multiplies with T.gemm,
accumulating in fp32.
"""

import torch
from gemv import weights

import tilec as tilelang
import tilec.language as T


@tilelang.jit
def gemm_int4(A, B, scales, zeros, block_M=16, block_N=64, block_K=128, group=128, threads=128,
              num_stages=2):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K), T.uint4)
    scales: T.Tensor((N, K // group), T.float16)
    zeros: T.Tensor((N, K // group), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_N, block_K), T.uint4)
        B_decoded = T.alloc_shared((block_N, block_K), T.float16)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[bx * block_N, k * block_K], B_shared)
            for i, j in T.Parallel(block_N, block_K):
                g = (k * block_K + j) // group
                n = bx * block_N + i
                B_decoded[i, j] = (T.Cast(T.float16, B_shared[i, j]) - zeros[n, g]) * scales[n, g]
            T.gemm(A_shared, B_decoded, C_local, transpose_B=True)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    m, n, k = 16, 512, 1024
    a = torch.randn(m, k, device=device).half()
    args, weight = weights("uint4", n, k, device)
    c = gemm_int4(a, *args)
    reference = a.float() @ weight.t()
    error = ((c.float() - reference).norm() / reference.norm()).item()
    print(f"int4 GEMM {m}x{n}x{k} on {device}: relative error {error:.2e}")
    assert error < 1e-2, "result differs from torch"


if __name__ == "__main__":
    main()
