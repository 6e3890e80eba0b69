"""TileLang's kda backward state kernel (kda/chunk_delta_bwd.py's
tilelang_chunk_gated_delta_rule_bwd_dhu with use_gk, an initial state and a final-state
gradient), written as the example writes it, with its float64 reference and inputs under which
the recurrence stays finite.

Why the inputs matter: the example's own inputs (W = randn, dv = randn, K rows of norm 1) make
dh grow by about ||W^T K|| ~ 13 per chunk, so at S = 8192 (128 chunks) it passes 1e38 and the
float32 state becomes inf, then NaN (inf - inf), in any implementation: the float64 recurrence
reaches 1e116. `stable_inputs` gives W rows of norm 1/2 so the state contracts.
tests/test_kda_delta_bwd.py runs the kernel on the CPU target, tests/gpu/test_kda_delta_bwd_gpu.py
on the GPU with block_DV 32 (N = 32 gemms: CUDA cores, or mma.sync with
TILEC_MMA_SYNC_FALLBACK=1) and 64."""

from __future__ import annotations

import tilec as tilelang
import tilec.language as T

CHUNK = 64


@tilelang.jit(out_idx=[-3, -2, -1])
def delta_bwd_dhu(B, S, H, DK, DV, scale, block_DV=64, threads=256, num_stages=0):
    """dh per chunk (in reverse), dh0 and dv2 = dv + K dh, as the example's kernel."""
    input_dtype = output_dtype = T.bfloat16
    accum_dtype = gate_dtype = state_dtype = T.float32
    block_S = CHUNK
    BS = S // block_S

    @T.prim_func
    def kernel(
        Q: T.Tensor((B, S, H, DK), dtype=input_dtype),
        K: T.Tensor((B, S, H, DK), dtype=input_dtype),
        W: T.Tensor((B, S, H, DK), dtype=input_dtype),
        GK: T.Tensor((B, S, H, DK), dtype=gate_dtype),
        dht: T.Tensor((B, H, DK, DV), dtype=input_dtype),
        dO: T.Tensor((B, S, H, DV), dtype=input_dtype),
        dv: T.Tensor((B, S, H, DV), dtype=input_dtype),
        dh: T.Tensor((B, BS, H, DK, DV), dtype=output_dtype),
        dh0: T.Tensor((B, H, DK, DV), dtype=state_dtype),
        dv2: T.Tensor((B, S, H, DV), dtype=output_dtype),
    ):
        with T.Kernel(T.ceildiv(DV, block_DV), B * H, threads=threads) as (bv, bbh):
            bb, bh = bbh // H, bbh % H
            b_dh_shared = T.alloc_shared((DK, block_DV), dtype=output_dtype)
            b_dh_fragment = T.alloc_fragment((DK, block_DV), dtype=accum_dtype)
            b_dh_fragment_1 = T.alloc_fragment((DK, block_DV), dtype=accum_dtype)
            b_dh_fragment_2 = T.alloc_fragment((DK, block_DV), dtype=accum_dtype)
            dv_shared = T.alloc_shared((block_S, block_DV), dtype=input_dtype)
            dv_fragment = T.alloc_fragment((block_S, block_DV), dtype=accum_dtype)
            dv_fragment_2 = T.alloc_fragment((block_S, block_DV), dtype=accum_dtype)
            dO_shared = T.alloc_shared((block_S, block_DV), dtype=input_dtype)
            K_shared = T.alloc_shared((block_S, DK), dtype=input_dtype)
            Q_shared = T.alloc_shared((block_S, DK), dtype=input_dtype)
            W_shared = T.alloc_shared((block_S, DK), dtype=input_dtype)
            GK_last_shared = T.alloc_shared((DK,), dtype=gate_dtype)

            T.copy(dht[bb, bh, 0:DK, bv * block_DV : (bv + 1) * block_DV], b_dh_shared)
            T.copy(b_dh_shared, b_dh_fragment)
            for i_s in T.Pipelined(T.ceildiv(S, block_S), num_stages=num_stages):
                i_s_inv = T.ceildiv(S, block_S) - i_s - 1
                T.copy(b_dh_fragment, b_dh_shared)
                T.copy(b_dh_shared, dh[bb, i_s_inv, bh, 0:DK, bv * block_DV : (bv + 1) * block_DV])
                T.copy(K[bb, i_s_inv * block_S : (i_s_inv + 1) * block_S, bh, 0:DK], K_shared)
                T.gemm(K_shared, b_dh_shared, dv_fragment, clear_accum=True)
                T.copy(dv[bb, i_s_inv * block_S : (i_s_inv + 1) * block_S, bh,
                          bv * block_DV : (bv + 1) * block_DV], dv_shared)
                T.copy(dv_shared, dv_fragment_2)
                for i_s2, i_v in T.Parallel(block_S, block_DV):
                    dv_fragment[i_s2, i_v] = dv_fragment[i_s2, i_v] + dv_fragment_2[i_s2, i_v]
                T.copy(dv_fragment, dv_shared)
                T.copy(dv_shared, dv2[bb, i_s_inv * block_S : (i_s_inv + 1) * block_S, bh,
                                      bv * block_DV : (bv + 1) * block_DV])
                T.copy(Q[bb, i_s_inv * block_S : (i_s_inv + 1) * block_S, bh, 0:DK], Q_shared)
                T.copy(W[bb, i_s_inv * block_S : (i_s_inv + 1) * block_S, bh, 0:DK], W_shared)
                T.copy(dO[bb, i_s_inv * block_S : (i_s_inv + 1) * block_S, bh,
                          bv * block_DV : (bv + 1) * block_DV], dO_shared)
                last_idx = T.min((i_s_inv + 1) * block_S, S) - 1
                T.copy(GK[bb, last_idx, bh, :], GK_last_shared)
                for i_k, i_v in T.Parallel(DK, block_DV):
                    b_dh_fragment[i_k, i_v] *= T.exp2(GK_last_shared[i_k])
                T.gemm(Q_shared, dO_shared, b_dh_fragment_1, transpose_A=True, clear_accum=True)
                T.gemm(W_shared, dv_shared, b_dh_fragment_2, transpose_A=True, clear_accum=True)
                for i_k, i_v in T.Parallel(DK, block_DV):
                    b_dh_fragment[i_k, i_v] += (b_dh_fragment_1[i_k, i_v] * scale
                                                - b_dh_fragment_2[i_k, i_v])
            T.copy(b_dh_fragment, dh0[bb, bh, 0:DK, bv * block_DV : (bv + 1) * block_DV])

    return kernel


def stable_inputs(B: int, S: int, H: int, DK: int, DV: int, seed: int) -> tuple:
    """Fresh random inputs (CPU, the kernel's dtypes) as the example makes them, but W's rows
    of norm 1/2 (||W^T K|| < 1: the state stays bounded over any number of chunks) and Q, dO
    not scaled down, so the scale * Q^T dO term weighs as much as the others."""
    import torch
    import torch.nn.functional as F

    generator = torch.Generator().manual_seed(seed)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(shape, generator=generator)

    q = randn(B, S, H, DK).bfloat16()
    k = F.normalize(randn(B, S, H, DK), dim=-1).bfloat16()
    w = (F.normalize(randn(B, S, H, DK), dim=-1) * 0.5).bfloat16()
    g = F.logsigmoid(randn(B, S, H, DK)).view(B, S // CHUNK, CHUNK, H, DK).cumsum(2)
    dht = randn(B, H, DK, DV).bfloat16()
    do = randn(B, S, H, DV).bfloat16()
    dv = randn(B, S, H, DV).bfloat16()
    return q, k, w, g.reshape(B, S, H, DK), dht, do, dv


def reference(q, k, w, g, dht, do, dv, scale: float) -> tuple:
    """(dh, dh0, dv2) in float64, rounding to bfloat16 where the kernel stores a bfloat16
    shared tile that a later gemm reads (the state before K dh, dv2 before W^T dv2)."""
    import torch

    def bf16(x: torch.Tensor) -> torch.Tensor:
        return x.bfloat16().double()

    q, k, w, g, dht, do, dv = (x.double() for x in (q, k, w, g, dht, do, dv))
    B, S, H, DK = q.shape
    chunks = S // CHUNK
    dh = torch.empty(B, chunks, H, DK, dht.shape[-1], dtype=torch.float64)
    dv2 = torch.empty_like(dv)
    state = bf16(dht).clone()
    for i in reversed(range(chunks)):
        rows = slice(i * CHUNK, (i + 1) * CHUNK)
        stored = bf16(state)  # b_dh_shared
        dh[:, i] = stored
        new_dv = bf16(torch.einsum("bshk,bhkv->bshv", k[:, rows], stored) + dv[:, rows])
        dv2[:, rows] = new_dv
        decay = torch.exp2(g[:, (i + 1) * CHUNK - 1])  # B, H, DK
        state = state * decay[..., None]
        state = state + torch.einsum("bshk,bshv->bhkv", q[:, rows], do[:, rows]) * scale \
            - torch.einsum("bshk,bshv->bhkv", w[:, rows], new_dv)
    return dh, state, dv2
