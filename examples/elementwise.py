"""Broadcasting elementwise kernel in the eager style: out = a * x[:, None] + y[None, :].

The sizes M and N come from the arguments' shapes (T.const), the output from T.empty.
Runs on the GPU when there is one, else on the CPU target, and checks against torch.
"""

import torch

import tilec as tilelang
import tilec.language as T


@tilelang.jit
def scale_shift(a, x, y, block_M=32, block_N=64):
    M, N = T.const("M, N")
    a: T.Tensor((M, N), T.float32)
    x: T.Tensor((M,), T.float32)
    y: T.Tensor((N,), T.float32)
    out = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
        for i, j in T.Parallel(block_M, block_N):
            row, col = by * block_M + i, bx * block_N + j
            if row < M and col < N:
                out[row, col] = a[row, col] * x[row] + y[col]
    return out


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    M, N = (8192, 4096) if device == "cuda" else (300, 200)
    a = torch.randn(M, N, device=device)
    x, y = torch.randn(M, device=device), torch.randn(N, device=device)
    out = scale_shift(a, x, y)
    error = (out - (a * x[:, None] + y[None, :])).abs().max().item()
    print(f"broadcast scale/shift {M}x{N} on {device}: max abs error {error:.2e}")
    assert error < 1e-5, "result differs from torch"


if __name__ == "__main__":
    main()
