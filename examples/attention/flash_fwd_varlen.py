"""FlashAttention forward over a batch of sequences of different lengths, packed without padding.

Q [total_q, heads, dim] and K, V [total_k, heads_kv, dim] hold the batch's sequences one after
another; cu_seqlens_q / cu_seqlens_k [batch + 1] (int32) are where each starts (the last entry:
the total). The grid covers the longest query sequence (`max_seqlen_q`); a block past its
sequence's end does nothing. Causal masking aligns the ends (query i of a sequence of q
queries and k keys sees keys up to i + k - q), as FlashAttention's varlen interface does; a
query that sees no key (k < q) gets zeros.

Runs on the GPU when there is one, else on the CPU target, and checks against torch.
"""

import math

import torch

import tilec as tilelang
import tilec.language as T

LOG2E = 1.4426950408889634


@tilelang.jit(out_idx=[5], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def flash_fwd_varlen(batch, total_q, total_k, max_seqlen_q, heads, dim, is_causal,
                     heads_kv=None, dtype="float16", block_M=128, block_N=128, num_stages=2,
                     threads=256):
    heads_kv = heads_kv or heads
    groups = heads // heads_kv
    scale = LOG2E / math.sqrt(dim)
    accum = "float32"

    @T.prim_func
    def main(Q: T.Tensor([total_q, heads, dim], dtype),
             K: T.Tensor([total_k, heads_kv, dim], dtype),
             V: T.Tensor([total_k, heads_kv, dim], dtype),
             cu_seqlens_q: T.Tensor([batch + 1], "int32"),
             cu_seqlens_k: T.Tensor([batch + 1], "int32"),
             Output: T.Tensor([total_q, heads, dim], dtype)):
        with T.Kernel(T.ceildiv(max_seqlen_q, block_M), heads, batch,
                      threads=threads) as (bx, by, bz):
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

            q_start = cu_seqlens_q[bz]
            k_start = cu_seqlens_k[bz]
            q_len = cu_seqlens_q[bz + 1] - q_start
            k_len = cu_seqlens_k[bz + 1] - k_start
            shift = k_len - q_len  # query i sees keys up to i + shift (causal)
            if bx * block_M < q_len:
                T.copy(Q[q_start + bx * block_M:q_start + (bx + 1) * block_M, by, :], Q_shared)
                T.fill(acc_o, 0)
                T.fill(row_sum, 0)
                T.fill(row_max, -T.infinity(accum))
                key_tiles = T.ceildiv(k_len, block_N)
                if is_causal:
                    key_tiles = T.max(T.min(key_tiles, T.ceildiv(
                        (bx + 1) * block_M + shift, block_N)), 0)
                for k in T.Pipelined(key_tiles, num_stages=num_stages):
                    T.copy(K[k_start + k * block_N:k_start + (k + 1) * block_N, kv_head, :],
                           K_shared)
                    if is_causal:
                        for i, j in T.Parallel(block_M, block_N):
                            scores[i, j] = T.if_then_else(
                                (k * block_N + j < k_len)
                                and (k * block_N + j <= bx * block_M + i + shift),
                                0, -T.infinity(accum))
                    else:
                        for i, j in T.Parallel(block_M, block_N):
                            scores[i, j] = T.if_then_else(k * block_N + j < k_len, 0,
                                                          -T.infinity(accum))
                    T.gemm(Q_shared, K_shared, scores, transpose_B=True,
                           policy=T.GemmWarpPolicy.FullRow)
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
                    T.copy(V[k_start + k * block_N:k_start + (k + 1) * block_N, kv_head, :],
                           V_shared)
                    T.gemm(probs, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] = T.if_then_else(row_sum[i] > 0, acc_o[i, j] / row_sum[i], 0)
                T.copy(acc_o, O_shared)
                for i, j in T.Parallel(block_M, dim):
                    if bx * block_M + i < q_len:
                        Output[q_start + bx * block_M + i, by, j] = O_shared[i, j]

    return main


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_q: torch.Tensor,
              cu_k: torch.Tensor, is_causal: bool) -> torch.Tensor:
    """Each packed sequence's attention in float32, causal aligned at the ends."""
    groups = q.shape[1] // k.shape[1]
    out = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    for b in range(len(cu_q) - 1):
        qs = q[cu_q[b]:cu_q[b + 1]].float().transpose(0, 1)  # [heads, q_len, dim]
        ks = k[cu_k[b]:cu_k[b + 1]].float().repeat_interleave(groups, 1).transpose(0, 1)
        vs = v[cu_k[b]:cu_k[b + 1]].float().repeat_interleave(groups, 1).transpose(0, 1)
        scores = qs @ ks.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if is_causal:
            q_len, k_len = qs.shape[1], ks.shape[1]
            keep = torch.ones(q_len, k_len, dtype=torch.bool, device=q.device).tril(
                k_len - q_len)
            scores = scores.masked_fill(~keep, float("-inf"))
        probs = scores.softmax(-1).nan_to_num(0.0)  # a query seeing no key: zeros
        out[cu_q[b]:cu_q[b + 1]] = (probs @ vs).transpose(0, 1)
    return out


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    q_lens, k_lens = ([1000, 77, 2048, 513], [1000, 300, 2048, 600]) if device == "cuda" \
        else ([50, 7, 81], [50, 30, 90])
    heads, heads_kv, dim = (16, 4, 128) if device == "cuda" else (2, 1, 64)
    tiles = {} if device == "cuda" else {"block_M": 64, "block_N": 32, "threads": 128}
    cu_q = torch.tensor([0, *torch.tensor(q_lens).cumsum(0).tolist()], dtype=torch.int32)
    cu_k = torch.tensor([0, *torch.tensor(k_lens).cumsum(0).tolist()], dtype=torch.int32)
    q = torch.randn(int(cu_q[-1]), heads, dim, device=device, dtype=torch.float16)
    k = torch.randn(int(cu_k[-1]), heads_kv, dim, device=device, dtype=torch.float16)
    v = torch.randn(int(cu_k[-1]), heads_kv, dim, device=device, dtype=torch.float16)
    for is_causal in (False, True):
        kernel = flash_fwd_varlen(len(q_lens), q.shape[0], k.shape[0], max(q_lens), heads, dim,
                                  is_causal, heads_kv, **tiles)
        out = kernel(q, k, v, cu_q.to(device), cu_k.to(device))
        error = (out.float() - reference(q, k, v, cu_q, cu_k, is_causal)).abs().max().item()
        print(f"flash_fwd_varlen causal={is_causal} lengths {q_lens} / {k_lens} on {device}: "
              f"max abs error {error:.2e}")
        assert error < 1e-2, "result differs from torch"


if __name__ == "__main__":
    main()
