"""C = relu(A @ B^T + bias) in TileLang's classic style: a factory returning a T.prim_func.

Runs on the GPU when there is one, else on the CPU target, and checks against torch.
"""

import torch

import tilec as tilelang
import tilec.language as T


@tilelang.jit(out_idx=[-1])
def matmul_bias_relu(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), bias: T.Tensor((N,), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j] + bias[bx * block_N + j], 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    M, N, K = (2048, 2048, 1024) if device == "cuda" else (256, 192, 128)
    kernel = matmul_bias_relu(M, N, K)
    a = torch.randn(M, K, dtype=torch.float16, device=device)
    b = torch.randn(N, K, dtype=torch.float16, device=device)
    bias = torch.randn(N, dtype=torch.float16, device=device)
    c = kernel(a, b, bias)
    reference = torch.relu(a.double() @ b.double().T + bias.double())
    error = ((c.double() - reference).norm() / reference.norm()).item()
    print(f"gemm + bias + relu {M}x{N}x{K} on {device}: relative error {error:.2e}")
    assert error < 1e-2, "result differs from torch"


if __name__ == "__main__":
    main()
