"""Elementwise kernels at the memory's speed: `add` (a + b) and `scale_shift`
(a * scale[:, None] + shift[None, :], broadcasting a column and a row vector).

A block copies its (block_M, block_N) tile into registers in 16-byte vectors per thread,
computes in float32, and copies the result out the same way; the broadcast vectors are
copied into registers once per block.

Runs on the GPU when there is one, else on the CPU target, and checks against torch.
"""

import torch

import tilec
import tilec.language as T


@tilec.jit
def add(a, b, dtype=T.float16, block_M=8, block_N=1024, threads=256):
    M, N = T.const("M, N")
    a: T.Tensor((M, N), dtype)
    b: T.Tensor((M, N), dtype)
    out = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        a_f = T.alloc_fragment((block_M, block_N), dtype)
        b_f = T.alloc_fragment((block_M, block_N), dtype)
        T.copy(a[by * block_M, bx * block_N], a_f)
        T.copy(b[by * block_M, bx * block_N], b_f)
        for i, j in T.Parallel(block_M, block_N):
            a_f[i, j] = a_f[i, j] + b_f[i, j]
        T.copy(a_f, out[by * block_M, bx * block_N])
    return out


@tilec.jit
def scale_shift(a, scale, shift, dtype=T.float16, block_M=8, block_N=1024, threads=256):
    M, N = T.const("M, N")
    a: T.Tensor((M, N), dtype)
    scale: T.Tensor((M,), dtype)
    shift: T.Tensor((N,), dtype)
    out = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        a_f = T.alloc_fragment((block_M, block_N), dtype)
        scale_f = T.alloc_fragment((block_M,), dtype)
        shift_f = T.alloc_fragment((block_N,), dtype)
        T.copy(a[by * block_M, bx * block_N], a_f)
        T.copy(scale[by * block_M], scale_f)
        T.copy(shift[bx * block_N], shift_f)
        for i, j in T.Parallel(block_M, block_N):
            a_f[i, j] = T.Cast(dtype, T.Cast(T.float32, a_f[i, j]) * T.Cast(
                T.float32, scale_f[i]) + T.Cast(T.float32, shift_f[j]))
        T.copy(a_f, out[by * block_M, bx * block_N])
    return out


def scale_shift_reference(a, scale, shift):
    return a.float() * scale.float()[:, None] + shift.float()[None, :]


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    M, N = (16384, 8192) if device == "cuda" else (37, 1500)
    a, b = torch.randn(M, N, device=device).half(), torch.randn(M, N, device=device).half()
    scale, shift = torch.randn(M, device=device).half(), torch.randn(N, device=device).half()
    error = (add(a, b).float() - (a.float() + b.float())).abs().max().item()
    out = scale_shift(a, scale, shift).float()
    error = max(error, (out - scale_shift_reference(a, scale, shift)).abs().max().item())
    print(f"add, scale_shift {M}x{N} on {device}: max abs error {error:.2e}")
    assert error < 2e-2, "result differs from torch"


if __name__ == "__main__":
    main()
