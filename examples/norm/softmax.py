"""Row softmax and causal-masked softmax over whole rows held in registers.

`softmax` normalizes each row of an (M, N) matrix; `causal_softmax` each row i of a batch of
(S, S) attention-score matrices over the columns j <= i (the others are 0), as attention's
causal mask leaves them. One read and one write per element; max and sum are reductions of
the registers (warp shuffles, shared memory only across warps). Each element is multiplied by
the row's reciprocal sum, computed once per row, instead of divided by the sum (a correctly
rounded division is a sequence of instructions with a slow path, per element).

Runs on the GPU when there is one, else on the CPU target, and checks against torch.
"""

import torch

import tilec
import tilec.language as T

LOG2E = 1.4426950408889634


@tilec.jit
def softmax(x, dtype=T.float16, block_M=1, threads=256):
    M, N = T.const("M, N")
    x: T.Tensor((M, N), dtype)
    y = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
        rows = T.alloc_fragment((block_M, N), dtype)
        scores = T.alloc_fragment((block_M, N), T.float32)
        row_max = T.alloc_fragment((block_M,), T.float32)
        row_sum = T.alloc_fragment((block_M,), T.float32)
        T.copy(x[bx * block_M, 0], rows)
        for i, j in T.Parallel(block_M, N):
            scores[i, j] = T.Cast(T.float32, rows[i, j])
        T.reduce_max(scores, row_max, dim=1)
        for i, j in T.Parallel(block_M, N):
            scores[i, j] = T.exp2((scores[i, j] - row_max[i]) * LOG2E)
        T.reduce_sum(scores, row_sum, dim=1)
        for i in T.Parallel(block_M):
            row_sum[i] = 1.0 / row_sum[i]
        for i, j in T.Parallel(block_M, N):
            rows[i, j] = T.Cast(dtype, scores[i, j] * row_sum[i])
        T.copy(rows, y[bx * block_M, 0])
    return y


@tilec.jit
def causal_softmax(x, dtype=T.float16, block_M=1, threads=256, parts=1):
    """With `parts` > 1 the rows are read in `parts` column blocks, of which a block reads only
    those its last row reaches: the masked upper triangle is not read (about half of it)."""
    batch, S = T.const("batch, S")
    x: T.Tensor((batch, S, S), dtype)
    y = T.empty((batch, S, S), dtype)
    assert S % parts == 0, "the rows split into whole column blocks"
    part = S // parts
    with T.Kernel(T.ceildiv(S, block_M), batch, threads=threads) as (bx, bz):
        rows = T.alloc_fragment((block_M, S), dtype)
        scores = T.alloc_fragment((block_M, S), T.float32)
        row_max = T.alloc_fragment((block_M,), T.float32)
        row_sum = T.alloc_fragment((block_M,), T.float32)
        if parts == 1:
            T.copy(x[bz, bx * block_M, 0], rows)
        else:
            T.fill(rows, 0)
            for p in T.unroll(parts):
                if p * part < (bx + 1) * block_M:
                    T.copy(x[bz, bx * block_M:(bx + 1) * block_M, p * part:(p + 1) * part],
                           rows[:, p * part:(p + 1) * part])
        for i, j in T.Parallel(block_M, S):
            scores[i, j] = T.if_then_else(j <= bx * block_M + i, T.Cast(T.float32, rows[i, j]),
                                          -T.infinity(T.float32))
        T.reduce_max(scores, row_max, dim=1)
        for i, j in T.Parallel(block_M, S):
            scores[i, j] = T.exp2((scores[i, j] - row_max[i]) * LOG2E)
        T.reduce_sum(scores, row_sum, dim=1)
        for i in T.Parallel(block_M):
            row_sum[i] = 1.0 / row_sum[i]
        for i, j in T.Parallel(block_M, S):
            rows[i, j] = T.Cast(dtype, scores[i, j] * row_sum[i])
        T.copy(rows, y[bz, bx * block_M, 0])
    return y


def softmax_reference(x):
    return torch.softmax(x.float(), dim=-1)


def causal_softmax_reference(x):
    size = x.shape[-1]
    future = torch.ones(size, size, dtype=torch.bool, device=x.device).triu(1)
    return torch.softmax(x.float().masked_fill(future, float("-inf")), dim=-1)


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    M, N = (16384, 4096) if device == "cuda" else (37, 512)
    x = (torch.randn(M, N, device=device) * 4).half()
    error = (softmax(x).float() - softmax_reference(x)).abs().max().item()
    batch, S = (4, 4096) if device == "cuda" else (2, 96)
    scores = (torch.randn(batch, S, S, device=device) * 4).half()
    causal = causal_softmax(scores).float() - causal_softmax_reference(scores)
    error = max(error, causal.abs().max().item())
    print(f"softmax {M}x{N}, causal softmax {batch}x{S}x{S} on {device}: max abs error "
          f"{error:.2e}")
    assert error < 2e-3, "result differs from torch"


if __name__ == "__main__":
    main()
