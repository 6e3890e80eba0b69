"""Column sums with T.atomic_add: each block reduces its tile, then adds its partial sums.

A dynamic M (T.dynamic) compiles one kernel for every number of rows.
Runs on the GPU when there is one, else on the CPU target, and checks against torch.
"""

import torch

import tilec as tilelang
import tilec.language as T


@tilelang.jit
def column_sum(N, block_M=64, block_N=64):
    M = T.dynamic("M")

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), out: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            tile_a = T.alloc_fragment((block_M, block_N), "float32")
            partial = T.alloc_fragment((block_N,), "float32")
            T.copy(A[by * block_M, bx * block_N], tile_a)
            T.reduce_sum(tile_a, partial, dim=0)
            for j in T.Parallel(block_N):
                if bx * block_N + j < N:
                    T.atomic_add(out[bx * block_N + j], partial[j])

    return main


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    N = 1000
    kernel = column_sum(N)
    for M in (70, 513):
        a = torch.randn(M, N, device=device)
        out = torch.zeros(N, device=device)
        kernel(a, out)
        error = (out.double() - a.double().sum(dim=0)).abs().max().item()
        print(f"column sum {M}x{N} on {device}: max abs error {error:.2e}")
        assert error < 1e-3, "result differs from torch"


if __name__ == "__main__":
    main()
