"""A Triton flash-attention forward, the peer of benchmarks/attention.py.

bshd fp16 in and out; one program per 128 query rows of one head, 64-key tiles, online
softmax in base 2 with the scale folded into exp2's argument, and (causal) the tiles below the
diagonal run without a mask, the diagonal's two alone with one, as Triton's fused-attention
tutorial splits them. Sequence lengths are multiples of 128 (the loads are unmasked).
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

BLOCK_M, BLOCK_N = 128, 64


@triton.jit
def _tile_step(acc, row_sum, row_max, q, k_ptrs, v_ptrs, start, offs_m, offs_n, scale,
               MASKED: tl.constexpr):
    k = tl.load(k_ptrs)
    s = tl.dot(q, k) * scale
    if MASKED:
        s = tl.where(offs_m[:, None] >= start + offs_n[None, :], s, float("-inf"))
    new_max = tl.maximum(row_max, tl.max(s, 1))
    p = tl.math.exp2(s - new_max[:, None])
    alpha = tl.math.exp2(row_max - new_max)
    row_sum = row_sum * alpha + tl.sum(p, 1)
    v = tl.load(v_ptrs)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, row_sum, new_max


@triton.jit
def _forward_kernel(Q, K, V, Out, stride_b, stride_s, stride_h, seq_len, scale,
                    HEADS: tl.constexpr, DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    block = tl.program_id(0)
    batch_head = tl.program_id(1)
    base = (batch_head // HEADS) * stride_b + (batch_head % HEADS) * stride_h
    offs_m = block * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_s + offs_d[None, :])
    k_ptrs = K + base + offs_n[None, :] * stride_s + offs_d[:, None]
    v_ptrs = V + base + offs_n[:, None] * stride_s + offs_d[None, :]
    acc = tl.zeros([BLOCK_M, DIM], tl.float32)
    row_sum = tl.zeros([BLOCK_M], tl.float32)
    row_max = tl.full([BLOCK_M], float("-inf"), tl.float32)
    unmasked = block * BLOCK_M if CAUSAL else seq_len
    for start in tl.range(0, unmasked, BLOCK_N, num_stages=3):
        acc, row_sum, row_max = _tile_step(acc, row_sum, row_max, q, k_ptrs + start * stride_s,
                                           v_ptrs + start * stride_s, start, offs_m, offs_n,
                                           scale, False)
    if CAUSAL:
        for start in tl.range(unmasked, unmasked + BLOCK_M, BLOCK_N):
            acc, row_sum, row_max = _tile_step(acc, row_sum, row_max, q,
                                               k_ptrs + start * stride_s,
                                               v_ptrs + start * stride_s, start, offs_m,
                                               offs_n, scale, True)
    out = acc / row_sum[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_s + offs_d[None, :], out.to(tl.float16))


def forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    batch, seq, heads, dim = q.shape
    if seq % BLOCK_M or not q.is_contiguous():
        raise ValueError("the Triton peer takes contiguous bshd with seq a multiple of 128")
    out = torch.empty_like(q)
    grid = (seq // BLOCK_M, batch * heads)
    _forward_kernel[grid](q, k, v, out, q.stride(0), q.stride(1), q.stride(2), seq,
                          1.4426950408889634 / math.sqrt(dim), HEADS=heads, DIM=dim,
                          BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, CAUSAL=causal, num_warps=8,
                          num_stages=3)
    return out
