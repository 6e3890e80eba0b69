"""A 64-row gemm on a block of 256 threads followed by a row softmax over its accumulator, as
TileLang's MLA decode kernels write their scores (`block_H = 64` heads, `threads=256`): with
TILEC_SPLIT_WGMMA_N=1 infer-mma-layout splits its N over the block's two warpgroups (each an
m64n(block_N / 2) wgmma), and the row max and sum reduce across both. `transpose_K` stores K
as N x D (B K-major) or D x N (MN-major). tests/test_split_wgmma_n.py checks its CPU numerics
and sm_90a code, tests/gpu/test_split_wgmma_n_gpu.py runs it on the GPU, both against
`reference`."""

from __future__ import annotations

import torch

import tilec
import tilec.language as T


@tilec.jit
def scores_softmax(Q, K, block_N: int = 64, dim: int = 128, block_K: int = 64,
                   stages: int = 2, transpose_K: bool = True, threads: int = 256):
    """P[:, block] = softmax(Q K[block]^T * scale) within each block of block_N keys, and the
    block's row maxima of the scaled scores (log2 units)."""
    M, N = T.const("M, N")
    Q: T.Tensor[[M, dim], T.float16]
    K: T.Tensor[[N, dim] if transpose_K else [dim, N], T.float16]
    P = T.empty((M, N), T.float32)
    Max = T.empty((T.ceildiv(N, block_N), M), T.float32)
    scale = 1.44269504 / 8.0  # log2(e) / sqrt(64)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, 64), threads=threads) as (bx, by):
        Q_shared = T.alloc_shared((64, block_K), T.float16)
        K_shared = T.alloc_shared((block_N, block_K) if transpose_K else (block_K, block_N),
                                  T.float16)
        acc_s = T.alloc_fragment((64, block_N), T.float32)
        row_max = T.alloc_fragment((64,), T.float32)
        row_sum = T.alloc_fragment((64,), T.float32)
        T.clear(acc_s)
        for k in T.Pipelined(T.ceildiv(dim, block_K), num_stages=stages):
            T.copy(Q[by * 64, k * block_K], Q_shared)
            if transpose_K:
                T.copy(K[bx * block_N, k * block_K], K_shared)
            else:
                T.copy(K[k * block_K, bx * block_N], K_shared)
            T.gemm(Q_shared, K_shared, acc_s, transpose_B=transpose_K)
        for i, j in T.Parallel(64, block_N):
            acc_s[i, j] = T.if_then_else(bx * block_N + j < N, acc_s[i, j] * scale,
                                         -T.infinity(T.float32))
        T.reduce_max(acc_s, row_max, dim=1)
        for i, j in T.Parallel(64, block_N):
            acc_s[i, j] = T.exp2(acc_s[i, j] - row_max[i])
        T.reduce_sum(acc_s, row_sum, dim=1)
        for i, j in T.Parallel(64, block_N):
            acc_s[i, j] = acc_s[i, j] / row_sum[i]
        T.copy(acc_s, P[by * 64, bx * block_N])
        T.copy(row_max, Max[bx, by * 64])
    return P, Max


def reference(q: torch.Tensor, k: torch.Tensor, block_N: int = 64, transpose_K: bool = True
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """P and the row maxima in float64 (K given as the kernel reads it)."""
    q = q.double()
    k = (k if transpose_K else k.T).double()
    s = q @ k.T * (1.44269504 / 8.0)
    p = torch.empty_like(s)
    blocks = -(-k.shape[0] // block_N)
    maxima = torch.empty((blocks, q.shape[0]), dtype=torch.float64)
    for b in range(blocks):
        part = s[:, b * block_N:(b + 1) * block_N]
        maxima[b] = part.max(dim=1).values
        e = torch.exp2(part - maxima[b][:, None])
        p[:, b * block_N:(b + 1) * block_N] = e / e.sum(dim=1, keepdim=True)
    return p, maxima


@tilec.jit
def decode_step(Q, KV, block_N: int = 64, dim: int = 256, threads: int = 256):
    """Out[block] = softmax(Q KV[block]^T * scale) KV[block] per block of block_N keys (no
    running rescale: each block's output on its own), P rounded to float16 as MLA decode
    casts it."""
    N = T.const("N")
    Q: T.Tensor[[64, dim], T.float16]
    KV: T.Tensor[[N, dim], T.float16]
    Out = T.empty((T.ceildiv(N, block_N), 64, dim), T.float32)
    scale = 1.44269504 / 16.0

    with T.Kernel(T.ceildiv(N, block_N), threads=threads) as bx:
        Q_shared = T.alloc_shared((64, dim), T.float16)
        KV_shared = T.alloc_shared((block_N, dim), T.float16)
        acc_s = T.alloc_fragment((64, block_N), T.float32)
        acc_s_cast = T.alloc_fragment((64, block_N), T.float16)
        acc_o = T.alloc_fragment((64, dim), T.float32)
        row_max = T.alloc_fragment((64,), T.float32)
        row_sum = T.alloc_fragment((64,), T.float32)
        T.copy(Q, Q_shared)
        T.copy(KV[bx * block_N, 0], KV_shared)
        T.clear(acc_s)
        T.gemm(Q_shared, KV_shared, acc_s, transpose_B=True)
        for i, j in T.Parallel(64, block_N):
            acc_s[i, j] = T.if_then_else(bx * block_N + j < N, acc_s[i, j] * scale,
                                         -T.infinity(T.float32))
        T.reduce_max(acc_s, row_max, dim=1)
        for i, j in T.Parallel(64, block_N):
            acc_s[i, j] = T.exp2(acc_s[i, j] - row_max[i])
        T.reduce_sum(acc_s, row_sum, dim=1)
        T.copy(acc_s, acc_s_cast)
        T.clear(acc_o)
        T.gemm(acc_s_cast, KV_shared, acc_o)
        for i, j in T.Parallel(64, dim):
            acc_o[i, j] = acc_o[i, j] / row_sum[i]
        T.copy(acc_o, Out[bx, 0, 0])
    return Out


def decode_reference(q: torch.Tensor, kv: torch.Tensor, block_N: int = 64) -> torch.Tensor:
    """decode_step's Out in float64; P = exp2(s - max) rounded to float16, the sum unrounded."""
    q, kv = q.double(), kv.double()
    s = q @ kv.T * (1.44269504 / 16.0)
    blocks = -(-kv.shape[0] // block_N)
    o = torch.empty((blocks, q.shape[0], kv.shape[1]), dtype=torch.float64)
    for b in range(blocks):
        rows = slice(b * block_N, min((b + 1) * block_N, kv.shape[0]))
        e = torch.exp2(s[:, rows] - s[:, rows].max(dim=1, keepdim=True).values)
        o[b] = e.half().double() @ kv[rows] / e.sum(dim=1, keepdim=True)
    return o
