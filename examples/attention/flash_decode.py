"""Flash-decoding: one new query token per sequence attending to a KV cache, the cache split
along its length so that enough blocks stream it, then the splits combined.

Q [batch, heads, dim]; K, V [batch, seqlen_kv, heads_kv, dim]; cache_seqlens [batch] (int32)
the valid length of each sequence's cache (ragged: positions at or past it are masked).
Grouped heads: a block takes the `heads / heads_kv` query heads of one KV head as the rows of
its tiles (padded to `block_H` rows for the tensor cores), so each cached K/V tile is read
once for all of them. The first kernel writes, per split, the normalized partial output and
its log-sum-exp (base 2); the second weights the splits by exp2(lse - lse_total)
(split_kv.py's combine_splits). A split with no valid key writes lse = -inf and a zero
partial, so it weighs nothing.

Runs on the GPU when there is one, else on the CPU target, and checks against torch.
"""

import math
import sys
from pathlib import Path

import torch

import tilec as tilelang
import tilec.language as T

sys.path.insert(0, str(Path(__file__).parent))  # the examples' shared split-KV combine
from split_kv import combine_splits  # noqa: E402

LOG2E = 1.4426950408889634


@tilelang.jit(out_idx=[4], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def flash_decode(batch, heads, heads_kv, seqlen_kv, dim, num_split=8, dtype="float16",
                 block_N=64, block_H=64, num_stages=2, threads=128):
    groups = heads // heads_kv
    scale = LOG2E / math.sqrt(dim)
    split_len = T.ceildiv(seqlen_kv, num_split)
    accum = "float32"

    @T.prim_func
    def main(Q: T.Tensor([batch, heads, dim], dtype),
             K: T.Tensor([batch, seqlen_kv, heads_kv, dim], dtype),
             V: T.Tensor([batch, seqlen_kv, heads_kv, dim], dtype),
             cache_seqlens: T.Tensor([batch], "int32"),
             Output: T.Tensor([batch, heads, dim], dtype)):
        partial_lse = T.alloc_global([batch, heads, num_split], accum)
        partial_out = T.alloc_global([batch, heads, num_split, dim], accum)
        with T.Kernel(batch, heads_kv, num_split, threads=threads) as (bid, kv_head, sid):
            Q_shared = T.alloc_shared([block_H, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            scores = T.alloc_fragment([block_H, block_N], accum)
            probs = T.alloc_fragment([block_H, block_N], dtype)
            acc_o = T.alloc_fragment([block_H, dim], accum)
            row_max = T.alloc_fragment([block_H], accum)
            row_max_prev = T.alloc_fragment([block_H], accum)
            rescale = T.alloc_fragment([block_H], accum)
            tile_sum = T.alloc_fragment([block_H], accum)
            row_sum = T.alloc_fragment([block_H], accum)

            length = cache_seqlens[bid]
            start = sid * split_len
            stop = T.min(start + split_len, length)
            T.copy(Q[bid, kv_head * groups:kv_head * groups + block_H, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(row_sum, 0)
            T.fill(row_max, -T.infinity(accum))
            for k in T.Pipelined(T.ceildiv(T.max(stop - start, 0), block_N),
                                 num_stages=num_stages):
                T.copy(K[bid, start + k * block_N:start + (k + 1) * block_N, kv_head, :],
                       K_shared)
                for i, j in T.Parallel(block_H, block_N):
                    scores[i, j] = T.if_then_else(start + k * block_N + j < stop, 0,
                                                  -T.infinity(accum))
                T.gemm(Q_shared, K_shared, scores, transpose_B=True,
                       policy=T.GemmWarpPolicy.FullRow)
                T.copy(row_max, row_max_prev)
                T.reduce_max(scores, row_max, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    rescale[i] = T.exp2((row_max_prev[i] - row_max[i]) * scale)
                for i, j in T.Parallel(block_H, block_N):
                    scores[i, j] = T.exp2(scores[i, j] * scale - row_max[i] * scale)
                T.reduce_sum(scores, tile_sum, dim=1)
                for i in T.Parallel(block_H):
                    row_sum[i] = row_sum[i] * rescale[i] + tile_sum[i]
                T.copy(scores, probs)
                for i, j in T.Parallel(block_H, dim):
                    acc_o[i, j] *= rescale[i]
                T.copy(V[bid, start + k * block_N:start + (k + 1) * block_N, kv_head, :],
                       V_shared)
                T.gemm(probs, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_H, dim):
                if i < groups:
                    partial_out[bid, kv_head * groups + i, sid, j] = T.if_then_else(
                        row_sum[i] > 0, acc_o[i, j] / row_sum[i], 0)
            for i in T.Parallel(block_H):
                if i < groups:
                    partial_lse[bid, kv_head * groups + i, sid] = T.if_then_else(
                        row_sum[i] > 0, T.log2(row_sum[i]) + row_max[i] * scale,
                        -T.infinity(accum))

        with T.Kernel(heads, batch, threads=128) as (head, bid):
            combine_splits(partial_lse, partial_out, Output, bid, head)

    return main


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              cache_seqlens: torch.Tensor) -> torch.Tensor:
    """Decoding attention in float32: each sequence's query heads over its valid cache."""
    groups = q.shape[1] // k.shape[2]
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    for b in range(q.shape[0]):
        length = int(cache_seqlens[b])
        keys = k[b, :length].float().repeat_interleave(groups, dim=1)  # [len, heads, dim]
        values = v[b, :length].float().repeat_interleave(groups, dim=1)
        scores = torch.einsum("hd,lhd->hl", q[b].float(), keys) / math.sqrt(q.shape[-1])
        out[b] = torch.einsum("hl,lhd->hd", scores.softmax(-1), values)
    return out


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    batch, heads, heads_kv, seqlen_kv, dim = (8, 32, 8, 8192, 128) if device == "cuda" else \
        (3, 8, 2, 200, 64)
    tiles = {} if device == "cuda" else {"num_split": 3, "block_N": 32}
    q = torch.randn(batch, heads, dim, device=device, dtype=torch.float16)
    k = torch.randn(batch, seqlen_kv, heads_kv, dim, device=device, dtype=torch.float16)
    v = torch.randn(batch, seqlen_kv, heads_kv, dim, device=device, dtype=torch.float16)
    lengths = torch.randint(1, seqlen_kv + 1, (batch,), dtype=torch.int32, device=device)
    out = flash_decode(batch, heads, heads_kv, seqlen_kv, dim, **tiles)(q, k, v, lengths)
    error = (out.float() - reference(q, k, v, lengths)).abs().max().item()
    print(f"flash_decode {batch}x{heads}/{heads_kv}x{seqlen_kv}x{dim} on {device}: "
          f"max abs error {error:.2e}")
    assert error < 1e-2, "result differs from torch"


if __name__ == "__main__":
    main()
