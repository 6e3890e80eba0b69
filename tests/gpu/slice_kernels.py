"""A kernel whose gemms read column slices of shared tiles, as TileLang's MLA kernels write them
(`T.gemm(Q_shared[:, :D // 2], KV_shared[:, :D // 2], acc_s, transpose_B=True)`): scores
Q K^T over a 512-column head and a 64-column rotary tail, three gemms on slices of one Q tile
and one KV tile, then P V with V the KV tile's first 512 columns read transposed, in two
256-column halves of an unrolled loop. On sm_90a each slice on a 64-column boundary is read in
place (plan-wgmma-gemms' tile.read_in_place); `shift` moves the scores' first two slices 32
columns in (off the boundary), where they keep copies of their own. tests/test_wgmma_slices.py
runs it on the CPU target and checks its CUDA code, tests/gpu/test_wgmma_slices_gpu.py runs it on
the GPU, both against `reference`. `sliced_gemm` reads the two 64-column halves of a
T.Pipelined loop's tiles in place: its slices are views of the loop's cp.async slots.
`staged_slices` is MLA decode with its KV blocks in 3-d stage buffers (`KV_shared[stage, :,
:dim // 2]`), each stage's slices read in place; `staged_reference` is its float64 answer.
"""

from __future__ import annotations

import torch

import tilec
import tilec.language as T


@tilec.jit
def mla_slices(Q, KV, heads: int = 64, dim: int = 512, tail: int = 64, block_N: int = 64,
               shift: int = 0):
    """S[:, block] = Q KV[block]^T and Out[block] = half(S[:, block]) KV[block, :dim] per block of
    block_N tokens; the scores' first two gemms span columns [shift, dim // 2) and
    [dim // 2, dim) (the first shift columns are left out of S)."""
    tokens = T.const("tokens")
    Q: T.Tensor[[heads, dim + tail], T.float16]
    KV: T.Tensor[[tokens, dim + tail], T.float16]
    S = T.empty((heads, tokens), T.float32)
    Out = T.empty((T.ceildiv(tokens, block_N), heads, dim), T.float32)
    half = dim // 2

    with T.Kernel(T.ceildiv(tokens, block_N), threads=128) as bx:
        Q_shared = T.alloc_shared((heads, dim + tail), T.float16)
        KV_shared = T.alloc_shared((block_N, dim + tail), T.float16)
        P_shared = T.alloc_shared((heads, block_N), T.float16)
        acc_s = T.alloc_fragment((heads, block_N), T.float32)
        acc_o = T.alloc_fragment((heads, half), T.float32)
        T.copy(Q, Q_shared)
        T.copy(KV[bx * block_N, 0], KV_shared)
        T.clear(acc_s)
        T.gemm(Q_shared[:, shift:shift + half - 2 * shift], KV_shared[:, shift:shift + half - 2 * shift], acc_s, transpose_B=True)  # noqa: E501
        T.gemm(Q_shared[:, half:dim], KV_shared[:, half:dim], acc_s, transpose_B=True)
        T.gemm(Q_shared[:, dim:], KV_shared[:, dim:], acc_s, transpose_B=True)
        T.copy(acc_s, S[0, bx * block_N])
        T.copy(acc_s, P_shared)
        for h in T.unroll(2):
            T.clear(acc_o)
            T.gemm(P_shared, KV_shared[:, h * half:(h + 1) * half], acc_o)
            T.copy(acc_o, Out[bx, 0, h * half])
    return S, Out


def reference(q: torch.Tensor, kv: torch.Tensor, dim: int = 512, block_N: int = 64,
              shift: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """S and O in float64 from float16 inputs; P is S rounded to float16, as the kernel
    stores it."""
    q, kv = q.double(), kv.double()
    half = dim // 2
    kept = torch.cat([torch.arange(shift, half - shift), torch.arange(half, q.shape[1])])
    s = q[:, kept] @ kv[:, kept].T
    blocks = -(-kv.shape[0] // block_N)
    o = torch.zeros((blocks, q.shape[0], dim), dtype=torch.float64)
    for b in range(blocks):
        rows = slice(b * block_N, min((b + 1) * block_N, kv.shape[0]))
        o[b] = s[:, rows].half().double() @ kv[rows, :dim]
    return s, o


@tilec.jit
def sliced_gemm(A, B, block_M: int = 128, block_N: int = 128, stages: int = 3):
    """C = A B^T, each 128-column K tile as two gemms on its halves."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor[[M, K], T.float16]
    B: T.Tensor[[N, K], T.float16]
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, 128), T.float16)
        B_shared = T.alloc_shared((block_N, 128), T.float16)
        acc = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, 128), num_stages=stages):
            T.copy(A[by * block_M, k * 128], A_shared)
            T.copy(B[bx * block_N, k * 128], B_shared)
            T.gemm(A_shared[:, 0:64], B_shared[:, 0:64], acc, transpose_B=True)
            T.gemm(A_shared[:, 64:128], B_shared[:, 64:128], acc, transpose_B=True)
        T.copy(acc, C[by * block_M, bx * block_N])
    return C


@tilec.jit
def staged_slices(Q, KV, heads: int = 64, dim: int = 256, tail: int = 64, block_N: int = 64,
                  stages: int = 2):
    """TileLang's MLA decode with its KV blocks in a 3-d stage buffer, gemms on the stages'
    column slices (`KV_shared[stage, :, :dim // 2]`): per block of block_N tokens,
    S[:, block] = Q KV[block]^T and Out[block] = half(S[:, block]) KV[block, :dim], two blocks
    at a time (stage 0 and 1 of an unrolled loop, which allocates P's float16 fragment: each
    copy of the body uses the same registers)."""
    tokens = T.const("tokens")
    Q: T.Tensor[[heads, dim + tail], T.float16]
    KV: T.Tensor[[tokens, dim + tail], T.float16]
    S = T.empty((heads, tokens), T.float32)
    Out = T.empty((T.ceildiv(tokens, block_N) * heads, dim), T.float32)
    half = dim // 2

    with T.Kernel(T.ceildiv(tokens, block_N * stages), threads=128) as bx:
        Q_shared = T.alloc_shared((heads, dim), T.float16)
        Q_tail_shared = T.alloc_shared((heads, tail), T.float16)
        KV_shared = T.alloc_shared((stages, block_N, dim), T.float16)
        K_tail_shared = T.alloc_shared((stages, block_N, tail), T.float16)
        P_shared = T.alloc_shared((heads, block_N), T.float16)
        acc_s = T.alloc_fragment((heads, block_N), T.float32)
        acc_o = T.alloc_fragment((heads, dim), T.float32)
        T.copy(Q[0, 0], Q_shared)
        T.copy(Q[0, dim], Q_tail_shared)
        for stage in T.unroll(stages):
            T.copy(KV[(bx * stages + stage) * block_N, 0], KV_shared[stage, :, :])
            T.copy(KV[(bx * stages + stage) * block_N, dim], K_tail_shared[stage, :, :])
        for stage in T.unroll(stages):
            T.clear(acc_s)
            T.gemm(Q_shared[:, :half], KV_shared[stage, :, :half], acc_s, transpose_B=True)
            T.gemm(Q_shared[:, half:], KV_shared[stage, :, half:], acc_s, transpose_B=True)
            T.gemm(Q_tail_shared, K_tail_shared[stage, :, :], acc_s, transpose_B=True)
            T.copy(acc_s, S[0, (bx * stages + stage) * block_N])
            T.copy(acc_s, P_shared)
            T.clear(acc_o)
            T.gemm(P_shared, KV_shared[stage, :, :], acc_o)
            T.copy(acc_o, Out[(bx * stages + stage) * heads, 0])
    return S, Out


def staged_reference(q: torch.Tensor, kv: torch.Tensor, dim: int = 256, block_N: int = 64
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """staged_slices' S and Out (the blocks' outputs stacked by rows) in float64."""
    s, o = reference(q, kv, dim, block_N)
    return s, o.reshape(-1, dim)
