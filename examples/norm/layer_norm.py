"""LayerNorm over rows, one block per `block_M` whole rows held in registers.

The mean and the variance are two reductions of the registers (the variance of the centred
values, not E[x^2] - E[x]^2, which cancels badly): the row is read once and written once.

Runs on the GPU when there is one, else on the CPU target, and checks against torch.
"""

import torch

import tilec
import tilec.language as T


@tilec.jit
def layer_norm(x, weight, bias, eps=1e-5, dtype=T.float16, block_M=1, threads=256):
    """y = (x - mean) * rsqrt(var + eps) * weight + bias over each row, in float32."""
    M, N = T.const("M, N")
    x: T.Tensor((M, N), dtype)
    weight: T.Tensor((N,), dtype)
    bias: T.Tensor((N,), dtype)
    y = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
        rows = T.alloc_fragment((block_M, N), dtype)
        w = T.alloc_fragment((N,), dtype)
        b = T.alloc_fragment((N,), dtype)
        centred = T.alloc_fragment((block_M, N), T.float32)
        squares = T.alloc_fragment((block_M, N), T.float32)
        mean = T.alloc_fragment((block_M,), T.float32)
        rstd = T.alloc_fragment((block_M,), T.float32)
        T.copy(x[bx * block_M, 0], rows)
        T.copy(weight, w)
        T.copy(bias, b)
        for i, j in T.Parallel(block_M, N):
            centred[i, j] = T.Cast(T.float32, rows[i, j])
        T.reduce_sum(centred, mean, dim=1)
        for i, j in T.Parallel(block_M, N):
            centred[i, j] = centred[i, j] - mean[i] / N
            squares[i, j] = centred[i, j] * centred[i, j]
        T.reduce_sum(squares, rstd, dim=1)
        for i in T.Parallel(block_M):
            rstd[i] = T.rsqrt(rstd[i] / N + eps)
        for i, j in T.Parallel(block_M, N):
            rows[i, j] = T.Cast(dtype, centred[i, j] * rstd[i] * T.Cast(T.float32, w[j])
                                + T.Cast(T.float32, b[j]))
        T.copy(rows, y[bx * block_M, 0])
    return y


def layer_norm_reference(x, weight, bias, eps=1e-5):
    return torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), weight.float(),
                                          bias.float(), eps)


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    M, N = (16384, 4096) if device == "cuda" else (37, 512)
    x = (torch.randn(M, N, device=device) * 3 + 1).half()
    weight = torch.randn(N, device=device).half()
    bias = torch.randn(N, device=device).half()
    y = layer_norm(x, weight, bias)
    error = (y.float() - layer_norm_reference(x, weight, bias)).abs().max().item()
    print(f"layer_norm {M}x{N} on {device}: max abs error {error:.2e}")
    assert error < 2e-2, "result differs from torch"


if __name__ == "__main__":
    main()
