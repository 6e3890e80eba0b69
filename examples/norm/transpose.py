"""Matrix transpose through a shared-memory tile: y = x^T, contiguous.

A block reads a (block_M, block_N) tile of x along its rows into shared memory, and each
thread gathers its part of the transposed tile from there into registers, which it writes
along y's rows: global reads and writes both move 16-byte vectors of consecutive elements.

Runs on the GPU when there is one, else on the CPU target, and checks against torch.
"""

import torch

import tilec
import tilec.language as T


@tilec.jit
def transpose(x, dtype=T.float16, block_M=64, block_N=64, threads=256):
    M, N = T.const("M, N")
    x: T.Tensor((M, N), dtype)
    y = T.empty((N, M), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        tile = T.alloc_shared((block_M, block_N), dtype)
        flipped = T.alloc_fragment((block_N, block_M), dtype)
        T.copy(x[by * block_M, bx * block_N], tile)
        for j, i in T.Parallel(block_N, block_M):
            flipped[j, i] = tile[i, j]
        T.copy(flipped, y[bx * block_N, by * block_M])
    return y


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    M, N = (16384, 8192) if device == "cuda" else (100, 72)
    x = torch.randn(M, N, device=device).half()
    error = (transpose(x) - x.t()).abs().max().item()
    print(f"transpose {M}x{N} on {device}: max abs error {error:.2e}")
    assert error == 0, "result differs from torch"


if __name__ == "__main__":
    main()
