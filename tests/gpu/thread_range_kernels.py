"""Kernels of blocks whose thread count is not a power of two (96 threads) and of branches on
the thread index (`if T.get_thread_binding() < 32: ... else: ...`), written as TileLang's
deepseek_mhc example writes them: the whole block computes per-row norms into shared memory,
then warp 0 turns the row's scores into a softmax while warps 1 and 2 stream the row's
features through a pipelined loop and mix them. tests/test_thread_ranges.py runs them on the
CPU target (the branch-free one) and checks their CUDA code; tests/gpu/test_thread_ranges_gpu.py
runs them on the GPU, both against `reference`.
"""

from __future__ import annotations

import torch

import tilec
import tilec.language as T

MIXES = 4


@tilec.jit
def mix_rows_split(X, S, hidden: int, block: int = 128, threads: int = 96):
    """Warp 0 writes P, the other warps Out (see the module's doc)."""
    rows = T.dynamic("rows")
    X: T.Tensor[[rows, MIXES, hidden], T.float32]
    S: T.Tensor[[rows, MIXES], T.float32]
    P = T.empty((rows, MIXES), T.float32)
    Out = T.empty((rows, hidden), T.float32)

    with T.Kernel(rows, threads=threads) as i:
        xs = T.alloc_fragment((MIXES, hidden), T.float32)
        norms = T.alloc_fragment(MIXES, T.float32)
        T.copy(X[i, 0, 0], xs)
        for j, k in T.Parallel(MIXES, hidden):
            xs[j, k] = xs[j, k] * xs[j, k]
        T.reduce_sum(xs, norms, dim=1)
        norms_shared = T.alloc_shared(MIXES, T.float32)
        T.copy(norms, norms_shared)

        if T.get_thread_binding() < 32:
            scores = T.alloc_fragment(MIXES, T.float32)
            top = T.alloc_fragment(1, T.float32)
            total = T.alloc_fragment(1, T.float32)
            for j in T.Parallel(MIXES):
                scores[j] = S[i, j]
            T.reduce_max(scores, top, dim=0)
            for j in T.Parallel(MIXES):
                scores[j] = T.exp(scores[j] - top[0])
            T.reduce_sum(scores, total, dim=0)
            for j in T.Parallel(MIXES):
                P[i, j] = scores[j] / total[0] * norms_shared[j]
        else:
            weights = T.alloc_shared(MIXES, T.float32)
            for j in T.Parallel(MIXES):
                weights[j] = T.sigmoid(S[i, j]) + norms_shared[j] / hidden
            for h in T.Pipelined(hidden // block, num_stages=2):
                tile = T.alloc_shared((MIXES, block), T.float32)
                tile_local = T.alloc_fragment((MIXES, block), T.float32)
                mixed = T.alloc_fragment(block, T.float32)
                T.copy(X[i, 0, h * block], tile)
                T.copy(tile, tile_local)
                T.clear(mixed)
                for j in T.serial(MIXES):
                    for k in T.Parallel(block):
                        mixed[k] += weights[j] * tile_local[j, k]
                T.copy(mixed, Out[i, h * block])
    return P, Out


@tilec.jit
def mix_rows_whole(X, S, hidden: int, block: int = 128, threads: int = 96):
    """mix_rows_split's results from the whole block (no branch: the CPU target runs it)."""
    rows = T.dynamic("rows")
    X: T.Tensor[[rows, MIXES, hidden], T.float32]
    S: T.Tensor[[rows, MIXES], T.float32]
    P = T.empty((rows, MIXES), T.float32)
    Out = T.empty((rows, hidden), T.float32)

    with T.Kernel(rows, threads=threads) as i:
        xs = T.alloc_fragment((MIXES, hidden), T.float32)
        norms = T.alloc_fragment(MIXES, T.float32)
        T.copy(X[i, 0, 0], xs)
        for j, k in T.Parallel(MIXES, hidden):
            xs[j, k] = xs[j, k] * xs[j, k]
        T.reduce_sum(xs, norms, dim=1)
        norms_shared = T.alloc_shared(MIXES, T.float32)
        T.copy(norms, norms_shared)

        scores = T.alloc_fragment(MIXES, T.float32)
        top = T.alloc_fragment(1, T.float32)
        total = T.alloc_fragment(1, T.float32)
        for j in T.Parallel(MIXES):
            scores[j] = S[i, j]
        T.reduce_max(scores, top, dim=0)
        for j in T.Parallel(MIXES):
            scores[j] = T.exp(scores[j] - top[0])
        T.reduce_sum(scores, total, dim=0)
        for j in T.Parallel(MIXES):
            P[i, j] = scores[j] / total[0] * norms_shared[j]

        weights = T.alloc_shared(MIXES, T.float32)
        for j in T.Parallel(MIXES):
            weights[j] = T.sigmoid(S[i, j]) + norms_shared[j] / hidden
        for h in T.Pipelined(hidden // block, num_stages=2):
            tile = T.alloc_shared((MIXES, block), T.float32)
            tile_local = T.alloc_fragment((MIXES, block), T.float32)
            mixed = T.alloc_fragment(block, T.float32)
            T.copy(X[i, 0, h * block], tile)
            T.copy(tile, tile_local)
            T.clear(mixed)
            for j in T.serial(MIXES):
                for k in T.Parallel(block):
                    mixed[k] += weights[j] * tile_local[j, k]
            T.copy(mixed, Out[i, h * block])
    return P, Out


def reference(x: torch.Tensor, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """P and Out of the kernels above, in x's dtype (float64 for a check)."""
    norms = (x * x).sum(dim=2)
    p = torch.softmax(s, dim=1) * norms
    weights = torch.sigmoid(s) + norms / x.shape[2]
    o = torch.einsum("rj,rjk->rk", weights, x)
    return p, o
