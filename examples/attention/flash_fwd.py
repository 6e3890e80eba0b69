"""FlashAttention forward as a tile program: O = softmax(Q K^T / sqrt(d)) V, one block per
`block_M` query rows of one head, K and V streamed in `block_N`-row tiles.

Layout [batch, seq, heads, dim] (bshd). `heads_kv` below `heads` is grouped-query attention
(each K/V head serves heads / heads_kv query heads; 1 is multi-query). `is_causal` masks key
j > query i and stops each block's loop at its diagonal, so the blocks above it are never
loaded. The softmax is online and in base 2: the running row maximum and sum live beside the
output accumulator, and the 1/sqrt(d) scale is folded into the exp2's argument with log2(e).
Beside O it writes each row's log-sum-exp in base 2 of the scaled scores, LSE [batch, heads,
seq] (float32): the backward (flash_bwd.py) rebuilds P as exp2(S * scale - LSE) from it.

Runs on the GPU when there is one, else on the CPU target, and checks against torch.
"""

import math

import torch

import tilec as tilelang
import tilec.language as T

LOG2E = 1.4426950408889634


@tilelang.jit(out_idx=[3, 4], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def flash_fwd(batch, heads, seq_len, dim, is_causal, heads_kv=None, dtype="float16",
              block_M=128, block_N=128, num_stages=2, threads=256):
    heads_kv = heads_kv or heads
    groups = heads // heads_kv
    scale = LOG2E / math.sqrt(dim)
    q_shape = [batch, seq_len, heads, dim]
    kv_shape = [batch, seq_len, heads_kv, dim]
    accum = "float32"
    ragged = seq_len % block_N != 0  # the last key tile runs past the sequence

    @T.prim_func
    def main(Q: T.Tensor(q_shape, dtype), K: T.Tensor(kv_shape, dtype),
             V: T.Tensor(kv_shape, dtype), Output: T.Tensor(q_shape, dtype),
             LSE: T.Tensor([batch, heads, seq_len], accum)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            O_shared = T.alloc_shared([block_M, dim], dtype)
            scores = T.alloc_fragment([block_M, block_N], accum)
            probs = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum)
            row_max = T.alloc_fragment([block_M], accum)
            row_max_prev = T.alloc_fragment([block_M], accum)
            rescale = T.alloc_fragment([block_M], accum)
            tile_sum = T.alloc_fragment([block_M], accum)
            row_sum = T.alloc_fragment([block_M], accum)
            kv_head = by // groups

            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(row_sum, 0)
            T.fill(row_max, -T.infinity(accum))
            key_tiles = T.ceildiv(seq_len, block_N)
            if is_causal:
                key_tiles = T.min(key_tiles, T.ceildiv((bx + 1) * block_M, block_N))

            for k in T.Pipelined(key_tiles, num_stages=num_stages):
                T.copy(K[bz, k * block_N:(k + 1) * block_N, kv_head, :], K_shared)
                T.gemm(Q_shared, K_shared, scores, transpose_B=True, clear_accum=True,
                       policy=T.GemmWarpPolicy.FullRow)
                # only the tiles crossing the diagonal (causal) or the sequence's end are masked
                if is_causal:
                    if (k + 1) * block_N > bx * block_M:
                        for i, j in T.Parallel(block_M, block_N):
                            scores[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j,
                                                          scores[i, j], -T.infinity(accum))
                if ragged:
                    if (k + 1) * block_N > seq_len:
                        for i, j in T.Parallel(block_M, block_N):
                            scores[i, j] = T.if_then_else(k * block_N + j < seq_len,
                                                          scores[i, j], -T.infinity(accum))

                T.copy(row_max, row_max_prev)
                T.reduce_max(scores, row_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    rescale[i] = T.exp2((row_max_prev[i] - row_max[i]) * scale)
                for i, j in T.Parallel(block_M, block_N):
                    scores[i, j] = T.exp2(scores[i, j] * scale - row_max[i] * scale)
                T.reduce_sum(scores, tile_sum, dim=1)
                for i in T.Parallel(block_M):
                    row_sum[i] = row_sum[i] * rescale[i] + tile_sum[i]
                T.copy(scores, probs)
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= rescale[i]

                T.copy(V[bz, k * block_N:(k + 1) * block_N, kv_head, :], V_shared)
                T.gemm(probs, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= row_sum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])
            for i in T.Parallel(block_M):
                row_sum[i] = T.log2(row_sum[i]) + row_max[i] * scale
            T.copy(row_sum, LSE[bz, by, bx * block_M:(bx + 1) * block_M])

    return main


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, is_causal: bool) -> torch.Tensor:
    """Attention in float32 (bshd), K/V heads repeated for grouped queries."""
    groups = q.shape[2] // k.shape[2]
    q, k, v = (t.float().transpose(1, 2) for t in (q, k, v))
    k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if is_causal:
        seq = q.shape[2]
        mask = torch.ones(seq, seq, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    return (scores.softmax(-1) @ v).transpose(1, 2)


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    batch, heads, heads_kv, seq, dim = (4, 16, 4, 2048, 128) if device == "cuda" else \
        (1, 2, 1, 80, 64)
    tiles = {} if device == "cuda" else {"block_M": 64, "block_N": 32, "threads": 128}
    for is_causal in (False, True):
        q = torch.randn(batch, seq, heads, dim, device=device, dtype=torch.float16)
        k = torch.randn(batch, seq, heads_kv, dim, device=device, dtype=torch.float16)
        v = torch.randn(batch, seq, heads_kv, dim, device=device, dtype=torch.float16)
        kernel = flash_fwd(batch, heads, seq, dim, is_causal, heads_kv, **tiles)
        out, _ = kernel(q, k, v)
        error = (out.float() - reference(q, k, v, is_causal)).abs().max().item()
        print(f"flash_fwd causal={is_causal} {batch}x{seq}x{heads}/{heads_kv}x{dim} on {device}: "
              f"max abs error {error:.2e}")
        assert error < 1e-2, "result differs from torch"


if __name__ == "__main__":
    main()
