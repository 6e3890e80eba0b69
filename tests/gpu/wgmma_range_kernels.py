"""A GEMM run by a thread range of the block, `if first <= tx < end:`, the threads before it
scaling a vector (`if tx < first:`), as a hand-written warp
specialization splits a block. wgmma is issued by the hardware's warpgroups, warps 4k..4k+3
together: a range from thread 32 or 64 holds a multiple of 128 threads but no such
warpgroup, so its gemm runs on mma.sync (infer-mma-layout); before, it was planned on wgmma
and its result undefined. A range from thread 128 keeps wgmma. tests/test_wgmma_ranges.py
checks their sm_90a code and CPU numerics, tests/gpu/test_wgmma_ranges_gpu.py runs them on
the GPU, both against `reference`."""

from __future__ import annotations

import torch

import tilec
import tilec.language as T

VECTOR = 256
# (first, end, threads): the range of the block's threads running the gemm
RANGES = {
    "warps_1_to_8": (32, 288, 288),  # 256 threads from warp 1; warp 0 scales the vector
    "warps_2_to_5": (64, 192, 256),  # 128 threads from warp 2, two-sided
    "warpgroups_1_2": (128, 384, 384),  # the hardware's warpgroups 1 and 2: wgmma
}


@tilec.jit
def gemm_in_a_range(A, B, X, C, Y, first: int, end: int, threads: int, block_M: int = 128,
                    block_N: int = 128, block_K: int = 64, stages: int = 2,
                    wgmma_required: bool = False):
    """C = A @ B in float32 by threads [first, end); Y = 2 X by the threads before them."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor[[M, K], T.float16]
    B: T.Tensor[[K, N], T.float16]
    X: T.Tensor[[VECTOR], T.float32]
    C: T.Tensor[[M, N], T.float32]
    Y: T.Tensor[[T.ceildiv(M, block_M), T.ceildiv(N, block_N), VECTOR], T.float32]
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        tx = T.get_thread_binding()
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_K, block_N), T.float16)
        if first <= tx < end:
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                if wgmma_required:
                    T.wgmma_gemm(A_shared, B_shared, C_local)
                else:
                    T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
        if tx < first:
            scaled = T.alloc_fragment((VECTOR,), T.float32)
            T.copy(X[0], scaled)
            for i in T.Parallel(VECTOR):
                scaled[i] = scaled[i] * 2.0
            T.copy(scaled, Y[by, bx, 0])


def reference(a: torch.Tensor, b: torch.Tensor, x: torch.Tensor, blocks: tuple[int, int]
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """A @ B and 2 X for every block, in float64, on the CPU."""
    y = (2 * x.double().cpu()).expand(*blocks, VECTOR)
    return a.double().cpu() @ b.double().cpu(), y
