"""RMSNorm and fused residual-add + RMSNorm, one block per `block_M` whole rows.

A row is read once into registers (16-byte vectors per thread), reduced there (warp shuffles,
shared memory only across warps) and written once: the kernels move 2 (4 for the fused one)
bytes per element of the row and nothing else, so they run at the memory's speed.

Runs on the GPU when there is one, else on the CPU target, and checks against torch.
"""

import torch

import tilec
import tilec.language as T


@tilec.jit
def rms_norm(x, weight, eps=1e-6, dtype=T.float16, block_M=1, threads=256):
    """y = x * rsqrt(mean(x^2) + eps) * weight over each row, in float32."""
    M, N = T.const("M, N")
    x: T.Tensor((M, N), dtype)
    weight: T.Tensor((N,), dtype)
    y = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
        rows = T.alloc_fragment((block_M, N), dtype)
        w = T.alloc_fragment((N,), dtype)
        squares = T.alloc_fragment((block_M, N), T.float32)
        scale = T.alloc_fragment((block_M,), T.float32)
        T.copy(x[bx * block_M, 0], rows)
        T.copy(weight, w)
        for i, j in T.Parallel(block_M, N):
            value = T.Cast(T.float32, rows[i, j])
            squares[i, j] = value * value
        T.reduce_sum(squares, scale, dim=1)
        for i in T.Parallel(block_M):
            scale[i] = T.rsqrt(scale[i] / N + eps)
        for i, j in T.Parallel(block_M, N):
            rows[i, j] = T.Cast(dtype, T.Cast(T.float32, rows[i, j]) * scale[i]
                                * T.Cast(T.float32, w[j]))
        T.copy(rows, y[bx * block_M, 0])
    return y


@tilec.jit
def add_rms_norm(x, residual, weight, eps=1e-6, dtype=T.float16, block_M=1, threads=256):
    """h = x + residual (returned, the next layer's residual) and rms_norm(h) * weight."""
    M, N = T.const("M, N")
    x: T.Tensor((M, N), dtype)
    residual: T.Tensor((M, N), dtype)
    weight: T.Tensor((N,), dtype)
    y = T.empty((M, N), dtype)
    h = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
        rows = T.alloc_fragment((block_M, N), dtype)
        skip = T.alloc_fragment((block_M, N), dtype)
        w = T.alloc_fragment((N,), dtype)
        squares = T.alloc_fragment((block_M, N), T.float32)
        scale = T.alloc_fragment((block_M,), T.float32)
        T.copy(x[bx * block_M, 0], rows)
        T.copy(residual[bx * block_M, 0], skip)
        T.copy(weight, w)
        for i, j in T.Parallel(block_M, N):
            rows[i, j] = rows[i, j] + skip[i, j]
            value = T.Cast(T.float32, rows[i, j])
            squares[i, j] = value * value
        T.copy(rows, h[bx * block_M, 0])
        T.reduce_sum(squares, scale, dim=1)
        for i in T.Parallel(block_M):
            scale[i] = T.rsqrt(scale[i] / N + eps)
        for i, j in T.Parallel(block_M, N):
            rows[i, j] = T.Cast(dtype, T.Cast(T.float32, rows[i, j]) * scale[i]
                                * T.Cast(T.float32, w[j]))
        T.copy(rows, y[bx * block_M, 0])
    return y, h


def rms_norm_reference(x, weight, eps=1e-6):
    """float32 RMSNorm of the rows of x (rounded inputs taken as they are)."""
    x = x.float()
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight.float()


def add_rms_norm_reference(x, residual, weight, eps=1e-6):
    """(rms_norm(h), h) with h = x + residual rounded to x's dtype, as the kernel stores it."""
    h = (x.float() + residual.float()).to(x.dtype)
    return rms_norm_reference(h, weight, eps), h.float()


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    M, N = (16384, 4096) if device == "cuda" else (37, 512)
    x = torch.randn(M, N, device=device).half()
    residual = torch.randn(M, N, device=device).half()
    weight = torch.randn(N, device=device).half()
    error = (rms_norm(x, weight).float() - rms_norm_reference(x, weight)).abs().max().item()
    y, h = add_rms_norm(x, residual, weight)
    y_ref, h_ref = add_rms_norm_reference(x, residual, weight)
    error = max(error, (y.float() - y_ref).abs().max().item(),
                (h.float() - h_ref).abs().max().item())
    print(f"rms_norm / add_rms_norm {M}x{N} on {device}: max abs error {error:.2e}")
    assert error < 2e-2, "result differs from torch"


if __name__ == "__main__":
    main()
