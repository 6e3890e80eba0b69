"""The quickstart GEMM: a TileLang kernel that runs on tilec by changing only the import line.

Runs on the GPU when there is one, else on the CPU target, and checks the result against torch.
"""

import torch

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


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    M, N, K = (4096, 4096, 4096) if device == "cuda" else (512, 384, 256)
    a = torch.randn(M, K, dtype=torch.float16, device=device)
    b = torch.randn(K, N, dtype=torch.float16, device=device)
    c = matmul(a, b)
    reference = a.double() @ b.double()
    error = ((c.double() - reference).norm() / reference.norm()).item()
    print(f"quickstart GEMM {M}x{N}x{K} fp16 on {device}: relative error {error:.2e}")
    assert error < 1e-2, "result differs from torch"
    if device == "cuda":
        kernel = matmul.compile(a, b)
        ms = kernel.get_profiler().do_bench()
        print(f"{2 * M * N * K / ms / 1e9:.1f} TFLOP/s ({ms:.3f} ms)")


if __name__ == "__main__":
    main()
