"""Row softmax with T.reduce_max and T.reduce_sum; one block owns `block_M` whole rows.

Runs on the GPU when there is one, else on the CPU target, and checks against torch.
"""

import torch

import tilec as tilelang
import tilec.language as T


@tilelang.jit(out_idx=[1])
def softmax(M, N, block_M=4, dtype="float16"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), "float32")
            row_max = T.alloc_fragment((block_M,), "float32")
            row_sum = T.alloc_fragment((block_M,), "float32")
            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp2((x[i, j] - row_max[i]) * 1.4426950408889634)
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bx * block_M, 0])

    return main


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    M, N = (4096, 1024) if device == "cuda" else (100, 256)
    x = torch.randn(M, N, dtype=torch.float16, device=device) * 4
    y = softmax(M, N)(x)
    error = (y.double() - torch.softmax(x.double(), dim=1)).abs().max().item()
    print(f"softmax {M}x{N} on {device}: max abs error {error:.2e}")
    assert error < 1e-3, "result differs from torch"


if __name__ == "__main__":
    main()
