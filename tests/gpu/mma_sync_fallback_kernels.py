"""Gemms wgmma cannot take on sm_90a, as TileLang's examples write them: sparse MLA backward's
64 x 32 scores over K = 512 on 256 threads, read from a column slice of a wider Q tile
(deepseek_v32/sparse_mla_bwd.py), and 32 x 32 products on one warp (the kda kernels'
threads=32). With TILEC_MMA_SYNC_FALLBACK=1 they run on ldmatrix + mma.sync.
tests/test_mma_sync_fallback.py checks their sm_90a code, tests/gpu/test_mma_sync_fallback_gpu.py
runs them against float64."""

from __future__ import annotations

import tilec
import tilec.language as T


@tilec.jit
def sliced_scores(Q, KV, S, H=64, D=512, tail=64, BS=32, threads=256):
    """S = Q[:, :D] KV^T for one block of H heads and BS keys, Q's tile holding D + tail
    columns (the gemm reads a column slice of it)."""
    Q: T.Tensor((H, D + tail), T.bfloat16)
    KV: T.Tensor((BS, D), T.bfloat16)
    S: T.Tensor((H, BS), T.float32)
    with T.Kernel(1, threads=threads) as _:
        Q_shared = T.alloc_shared((H, D + tail), T.bfloat16)
        KV_shared = T.alloc_shared((BS, D), T.bfloat16)
        acc = T.alloc_fragment((H, BS), T.float32)
        T.copy(Q, Q_shared)
        T.copy(KV, KV_shared)
        T.gemm(Q_shared[:, :D], KV_shared, acc, transpose_B=True,
               policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
        T.copy(acc, S)


@tilec.jit
def one_warp_product(A, B, C, block=32):
    """C = A B, 32 x 32 tiles on one warp (kda's threads=32)."""
    M = T.const("M")
    A: T.Tensor((M, block), T.float16)
    B: T.Tensor((block, block), T.float16)
    C: T.Tensor((M, block), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
        A_shared = T.alloc_shared((block, block), T.float16)
        B_shared = T.alloc_shared((block, block), T.float16)
        acc = T.alloc_fragment((block, block), T.float32)
        T.copy(A[bx * block, 0], A_shared)
        T.copy(B, B_shared)
        T.gemm(A_shared, B_shared, acc, clear_accum=True)
        T.copy(acc, C[bx * block, 0])
