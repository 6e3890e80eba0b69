"""A small warp-specialized MLA decode written as TileLang's deepseek_mla/example_mla_decode_ws.py
writes its kernel: 384 threads in an `if tx < 128: ... elif 128 <= tx < 256: ... elif tx >= 256:`
chain of whole warpgroups. The first computes the scores (three wgmma gemms over slices of the
shared Q and of a two-stage KV ring), the online softmax and the left half of P @ V; the second
the right half, rescaled by the softmax's alpha that the first hands it in shared memory with
P; the third, the producer, fills the ring with per-thread cp.async and arrives on the ring's
mbarriers without counting (`T.cp_async_barrier_noinc`). The output is staged in Q's shared tile.

Unlike the example, the row sums the second warpgroup divides by come through an mbarrier of
their own (`sums_ready`): the example reads them after its loop with nothing ordering that read
after the first warpgroup's write.

tests/test_mla_ws.py checks its CUDA code here; tests/gpu/test_mla_ws_gpu.py runs it against
float64. No compiler imports: the GPU machine's runtime imports this file as it is.
"""

from __future__ import annotations

import torch

import tilec
import tilec.language as T

HEADS, PE_DIM, BLOCK_N, STAGES = 64, 64, 64, 2
LOG2E = 1.44269504


@tilec.jit
def ws_mla_decode(batch: int, keys: int, dim: int = 128):
    """Out[b, h] = softmax(scale * [Q | Q_pe][b, h] . [KV | K_pe][b]^T) @ KV[b], P held in
    float16 as the example holds it; `keys` a multiple of 128 (whole rounds of the ring), `dim`
    of 128 (each half whole 64-column boxes, as the producer's 16-byte chunks cover them)."""
    half = dim // 2
    scale_log2 = (dim + PE_DIM) ** -0.5 * LOG2E
    rounds = keys // (BLOCK_N * STAGES)
    f16, f32 = T.float16, T.float32

    @T.prim_func
    def main(Q: T.Tensor((batch, HEADS, dim), f16), Q_pe: T.Tensor((batch, HEADS, PE_DIM), f16),
             KV: T.Tensor((batch, keys, dim), f16), K_pe: T.Tensor((batch, keys, PE_DIM), f16),
             Out: T.Tensor((batch, HEADS, dim), f16)):
        with T.Kernel(batch, threads=384) as bid:
            q_shared = T.alloc_shared((HEADS, dim), f16)
            q_pe_shared = T.alloc_shared((HEADS, PE_DIM), f16)
            kv_shared = T.alloc_shared((STAGES, BLOCK_N, dim), f16)
            k_pe_shared = T.alloc_shared((STAGES, BLOCK_N, PE_DIM), f16)
            p_shared = T.alloc_shared((HEADS, BLOCK_N), f16)
            alpha_shared = T.alloc_shared((HEADS,), f32)
            sums_shared = T.alloc_shared((HEADS,), f32)
            out_shared = q_shared

            acc_left = T.alloc_fragment((HEADS, half), f32)
            acc_right = T.alloc_fragment((HEADS, half), f32)
            scores = T.alloc_fragment((HEADS, BLOCK_N), f32)
            row_max = T.alloc_fragment((HEADS,), f32)
            row_max_prev = T.alloc_fragment((HEADS,), f32)
            row_sum = T.alloc_fragment((HEADS,), f32)
            block_sum = T.alloc_fragment((HEADS,), f32)
            alpha = T.alloc_fragment((HEADS,), f32)

            q_ready = T.alloc_barrier(arrive_count=384)
            kv_ready = T.alloc_barrier(arrive_count=[128] * STAGES)
            kv_free = T.alloc_barrier(arrive_count=[256] * STAGES)
            p_ready = T.alloc_barrier(arrive_count=256)
            p_free = T.alloc_barrier(arrive_count=256)
            sums_ready = T.alloc_barrier(arrive_count=128)

            tx = T.get_thread_binding()
            T.copy(Q[bid, :, :], q_shared)
            T.copy(Q_pe[bid, :, :], q_pe_shared)
            T.barrier_arrive(q_ready)

            if tx < 128:
                T.fill(row_sum, 0)
                T.fill(row_max, -(2**30))
                T.fill(acc_left, 0)
                T.barrier_wait(q_ready, 0)
                for r in T.serial(rounds):
                    for stage in T.unroll(STAGES):
                        T.barrier_wait(kv_ready[stage], r & 1)
                        T.clear(scores)
                        T.wgmma_gemm(q_shared[:, :half], kv_shared[stage, :, :half], scores,
                                     transpose_B=True)
                        T.wgmma_gemm(q_shared[:, half:], kv_shared[stage, :, half:], scores,
                                     transpose_B=True)
                        T.wgmma_gemm(q_pe_shared, k_pe_shared[stage, :, :], scores,
                                     transpose_B=True)
                        T.wait_wgmma(0)
                        if r != 0 or stage != 0:
                            T.barrier_arrive(p_free)
                            T.barrier_wait(p_free, ((r * STAGES + stage) & 1) ^ 1)
                        T.copy(row_max, row_max_prev)
                        T.reduce_max(scores, row_max, dim=1, clear=False)
                        for h in T.Parallel(HEADS):
                            alpha[h] = T.exp2((row_max_prev[h] - row_max[h]) * scale_log2)
                        for h, n in T.Parallel(HEADS, BLOCK_N):
                            scores[h, n] = T.exp2(scores[h, n] * scale_log2
                                                  - row_max[h] * scale_log2)
                        T.reduce_sum(scores, block_sum, dim=1)
                        for h in T.Parallel(HEADS):
                            row_sum[h] = row_sum[h] * alpha[h] + block_sum[h]
                        for h, d in T.Parallel(HEADS, half):
                            acc_left[h, d] *= alpha[h]
                        T.copy(alpha, alpha_shared)
                        T.copy(scores, p_shared)
                        T.gemm(p_shared, kv_shared[stage, :, :half], acc_left)
                        T.barrier_arrive(p_ready)
                        T.barrier_arrive(kv_free[stage])
                T.copy(row_sum, sums_shared)
                T.barrier_arrive(sums_ready)
                for h, d in T.Parallel(HEADS, half):
                    acc_left[h, d] /= row_sum[h]
                T.copy(acc_left, out_shared[:, :half])
                T.copy(out_shared[:, :half], Out[bid, :, :half])
            elif tx >= 128 and tx < 256:
                T.fill(acc_right, 0)
                for r in T.serial(rounds):
                    for stage in T.unroll(STAGES):
                        T.barrier_arrive(p_ready)
                        T.barrier_wait(p_ready, (r * STAGES + stage) & 1)
                        for h, d in T.Parallel(HEADS, half):
                            acc_right[h, d] *= alpha_shared[h]
                        T.gemm(p_shared, kv_shared[stage, :, half:], acc_right)
                        T.barrier_arrive(kv_free[stage])
                        if stage != STAGES - 1 or r != rounds - 1:
                            T.barrier_arrive(p_free)
                T.barrier_wait(sums_ready, 0)
                for h, d in T.Parallel(HEADS, half):
                    acc_right[h, d] /= sums_shared[h]
                T.copy(acc_right, out_shared[:, half:])
                T.copy(out_shared[:, half:], Out[bid, :, half:])
            elif tx >= 256:
                lane = tx - 256
                for r in T.serial(rounds):
                    for stage in T.unroll(STAGES):
                        T.barrier_wait(kv_free[stage], (r & 1) ^ 1)
                        for part in T.serial(4):
                            row = part * 16 + lane // 8
                            key = (r * STAGES + stage) * BLOCK_N + row
                            for u in T.serial(dim // 64):
                                column = 64 * u + lane % 8 * 8
                                T.ptx_cp_async(
                                    T.access_ptr(kv_shared[stage, row, column], "w", 8),
                                    T.access_ptr(KV[bid, key, column], "r", 8), 8)
                            T.ptx_cp_async(
                                T.access_ptr(k_pe_shared[stage, row, lane % 8 * 8], "w", 8),
                                T.access_ptr(K_pe[bid, key, lane % 8 * 8], "r", 8), 8)
                        T.cp_async_barrier_noinc(kv_ready[stage])

    return main


def reference(q: torch.Tensor, q_pe: torch.Tensor, kv: torch.Tensor,
              k_pe: torch.Tensor) -> torch.Tensor:
    """The kernel's program in float64 on the CPU: the online softmax block by block, each
    block's P rounded to float16 where the program stores it in p_shared."""
    q, q_pe, kv, k_pe = (t.double().cpu() for t in (q, q_pe, kv, k_pe))
    dim, pe_dim = q.shape[-1], q_pe.shape[-1]
    scale_log2 = (dim + pe_dim) ** -0.5 * LOG2E
    scores = torch.einsum("bhd,bnd->bhn", torch.cat([q, q_pe], -1), torch.cat([kv, k_pe], -1))
    row_max = torch.full(q.shape[:2], -(2.0**30), dtype=torch.float64)
    row_sum = torch.zeros(q.shape[:2], dtype=torch.float64)
    acc = torch.zeros(q.shape, dtype=torch.float64)
    for start in range(0, kv.shape[1], BLOCK_N):
        block = scores[..., start:start + BLOCK_N]
        previous, row_max = row_max, torch.maximum(row_max, block.amax(-1))
        alpha = torch.exp2((previous - row_max) * scale_log2)
        p = torch.exp2(block * scale_log2 - (row_max * scale_log2)[..., None])
        row_sum = row_sum * alpha + p.sum(-1)
        acc = acc * alpha[..., None] + torch.einsum(
            "bhn,bnd->bhd", p.half().double(), kv[:, start:start + BLOCK_N])
    return acc / row_sum[..., None]
