"""DeepSeek MLA decoding as tile programs: one new query token per sequence attending to a
paged cache of compressed keys, the latent vector doubling as the value.

Q [batch, heads, 576]: per head a 512-wide latent part and a 64-wide rotary part. The cache
KV [pages, page_size, 576] holds, per token, its 512-wide latent c (the value, and the key's
latent part) and its 64-wide rotary key; the one cache head serves every query head.
block_table [batch, max_pages] (int32) maps a sequence's n-th page of `page_size` tokens to a
page of the cache; cache_seqlens [batch] (int32) is each sequence's length. A score is
q_latent . c + q_rope . k_rope; the output [batch, heads, 512] is softmax(scores * scale) @ c.

A block takes `block_H` query heads of one sequence (the rows of its tiles, so each cached
token is read once for all of them) and one of `num_split` runs of that sequence's tokens,
`block_N` (within one page) a tile. With threads=256 (TileLang's and FlashMLA's tiling) it
makes all 512 output columns, its two warpgroups each an m64n256 share of P V and of the
scores' columns (tilec's TILEC_SPLIT_WGMMA_N=1: without it those gemms leave the tensor
cores); with threads=128 (the default) one warpgroup makes half of them (a 64 x 256
accumulator), the two halves of a head group being neighbouring blocks that both compute the
scores (their own latent half, the other half, the rotary part), the second reading the cache
tiles the first brought into L2. P V reads the latent tile the scores read (they as N x K,
it as K x N). With splits, a second kernel combines their normalized partial outputs by their
base-2 log-sum-exps (split_kv.py's combine_splits, as flash_decode.py does); a split with no
tile weighs nothing (the first block of a head group writes the log-sum-exp, which the others'
scores share). A sequence's length is at least 1.
The page copies run ahead (num_stages=2, a TMA ring from a producer warpgroup): tilec may load
the block table again for a later tile (TILEC_PIPELINE_TABLE_LOADS=0 makes them synchronous).

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
LATENT, ROPE = 512, 64


@tilelang.jit(out_idx=[4], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def mla_decode(batch, heads, pages, max_pages, page_size=64, num_split=1, dtype="float16",
               block_H=64, block_N=64, num_stages=2, threads=128, softmax_scale=None):
    if heads % block_H or page_size % block_N:
        raise ValueError(f"mla_decode: heads ({heads}) must be a multiple of block_H "
                         f"({block_H}), page_size ({page_size}) of block_N ({block_N})")
    if threads not in (128, 256):
        raise ValueError(f"mla_decode: threads ({threads}) must be 128 (a block per half of "
                         "the latent columns) or 256 (a block for all of them)")
    dim = LATENT + ROPE
    parts = 256 // threads  # blocks sharing a head group, each its own output columns
    columns = LATENT // parts
    scale = (softmax_scale or 1.0 / math.sqrt(dim)) * LOG2E
    accum = "float32"

    @T.prim_func
    def main(Q: T.Tensor([batch, heads, dim], dtype),  # noqa: N803
             KV: T.Tensor([pages, page_size, dim], dtype),  # noqa: N803
             block_table: T.Tensor([batch, max_pages], "int32"),
             cache_seqlens: T.Tensor([batch], "int32"),
             Output: T.Tensor([batch, heads, LATENT], dtype)):  # noqa: N803
        partial_lse = T.alloc_global([batch, heads, num_split], accum)
        partial_out = T.alloc_global([batch, heads, num_split, LATENT], accum)
        with T.Kernel(parts * (heads // block_H), batch, num_split, threads=threads) as (
                hx, bid, sid):
            Q_mine = T.alloc_shared([block_H, columns], dtype)
            Q_rope = T.alloc_shared([block_H, ROPE], dtype)
            KV_mine = T.alloc_shared([block_N, columns], dtype)
            K_rope = T.alloc_shared([block_N, ROPE], dtype)
            scores = T.alloc_fragment([block_H, block_N], accum)
            probs = T.alloc_fragment([block_H, block_N], dtype)
            acc_o = T.alloc_fragment([block_H, columns], accum)
            row_max = T.alloc_fragment([block_H], accum)
            row_max_prev = T.alloc_fragment([block_H], accum)
            rescale = T.alloc_fragment([block_H], accum)
            tile_sum = T.alloc_fragment([block_H], accum)
            row_sum = T.alloc_fragment([block_H], accum)

            head0 = (hx // parts) * block_H
            mine = (hx % parts) * columns  # the output columns this block makes
            length = cache_seqlens[bid]
            per_split = T.ceildiv(T.ceildiv(length, block_N), num_split)
            first = sid * per_split
            stop = T.min(first + per_split, T.ceildiv(length, block_N))
            T.copy(Q[bid, head0:head0 + block_H, mine:mine + columns], Q_mine)
            T.copy(Q[bid, head0:head0 + block_H, LATENT:dim], Q_rope)
            if parts == 2:  # the scores need the other half's columns too
                other = ((hx + 1) % 2) * columns
                Q_other = T.alloc_shared([block_H, columns], dtype)
                KV_other = T.alloc_shared([block_N, columns], dtype)
                T.copy(Q[bid, head0:head0 + block_H, other:other + columns], Q_other)
            T.fill(acc_o, 0)
            T.fill(row_sum, 0)
            T.fill(row_max, -T.infinity(accum))
            for t in T.Pipelined(T.max(stop - first, 0), num_stages=num_stages):
                token = (first + t) * block_N
                page = block_table[bid, token // page_size]
                row = token % page_size
                T.copy(KV[page, row:row + block_N, mine:mine + columns], KV_mine)
                if parts == 2:
                    T.copy(KV[page, row:row + block_N, other:other + columns], KV_other)
                T.copy(KV[page, row:row + block_N, LATENT:dim], K_rope)
                T.gemm(Q_mine, KV_mine, scores, transpose_B=True, clear_accum=True)
                if parts == 2:
                    T.gemm(Q_other, KV_other, scores, transpose_B=True)
                T.gemm(Q_rope, K_rope, scores, transpose_B=True)
                if token + block_N > length:  # the sequence's last tile
                    for i, j in T.Parallel(block_H, block_N):
                        scores[i, j] = T.if_then_else(token + j < length, scores[i, j],
                                                      -T.infinity(accum))
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
                for i, j in T.Parallel(block_H, columns):
                    acc_o[i, j] *= rescale[i]
                T.gemm(probs, KV_mine, acc_o)  # the latent tile the scores read, as K x N

            if num_split == 1:
                for i, j in T.Parallel(block_H, columns):
                    Output[bid, head0 + i, mine + j] = acc_o[i, j] / row_sum[i]
            else:
                for i, j in T.Parallel(block_H, columns):
                    partial_out[bid, head0 + i, sid, mine + j] = T.if_then_else(
                        row_sum[i] > 0, acc_o[i, j] / row_sum[i], 0)
                if hx % parts == 0:  # the blocks of a head group share their scores
                    for i in T.Parallel(block_H):
                        partial_lse[bid, head0 + i, sid] = T.if_then_else(
                            row_sum[i] > 0, T.log2(row_sum[i]) + row_max[i] * scale,
                            -T.infinity(accum))

        if num_split > 1:
            with T.Kernel(heads, batch, threads=128) as (head, bid):
                combine_splits(partial_lse, partial_out, Output, bid, head)

    return main


def reference(q: torch.Tensor, kv: torch.Tensor, block_table: torch.Tensor,
              cache_seqlens: torch.Tensor, softmax_scale: float | None = None) -> torch.Tensor:
    """MLA decoding in float32: each sequence's pages gathered, scores over all 576 columns,
    the first 512 as values."""
    scale = softmax_scale or 1.0 / math.sqrt(q.shape[-1])
    out = torch.empty(q.shape[0], q.shape[1], LATENT, dtype=torch.float32, device=q.device)
    page_size = kv.shape[1]
    for b in range(q.shape[0]):
        length = int(cache_seqlens[b])
        pages = block_table[b, :math.ceil(length / page_size)].long()
        cache = kv[pages].reshape(-1, kv.shape[-1])[:length].float()  # [length, 576]
        scores = q[b].float() @ cache.T * scale
        out[b] = scores.softmax(-1) @ cache[:, :LATENT]
    return out


def paged_cache(batch: int, max_len: int, page_size: int, device: str,
                dtype: torch.dtype = torch.float16
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """A cache of batch * max_len tokens in pages handed out in a random order, and the block
    table mapping each sequence's pages to them."""
    max_pages = math.ceil(max_len / page_size)
    kv = torch.randn(batch * max_pages, page_size, LATENT + ROPE, device=device, dtype=dtype)
    order = torch.randperm(batch * max_pages, device=device).to(torch.int32)
    return kv, order.reshape(batch, max_pages)


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    batch, heads, max_len = (64, 128, 4096) if device == "cuda" else (3, 64, 200)
    kv, block_table = paged_cache(batch, max_len, 64, device)
    q = torch.randn(batch, heads, LATENT + ROPE, device=device, dtype=torch.float16)
    lengths = torch.randint(1, max_len + 1, (batch,), dtype=torch.int32, device=device)
    for num_split in (1, 2):
        kernel = mla_decode(batch, heads, kv.shape[0], block_table.shape[1],
                            num_split=num_split)
        out = kernel(q, kv, block_table, lengths)
        error = (out.float() - reference(q, kv, block_table, lengths)).abs().max().item()
        print(f"mla_decode {batch}x{heads}x{max_len} split {num_split} on {device}: "
              f"max abs error {error:.2e}")
        assert error < 1e-2, "result differs from torch"


if __name__ == "__main__":
    main()
