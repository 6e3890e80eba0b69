"""A GEMM block of 384 threads whose gemm splits its 128 rows over two warpgroups: layouts span
256 threads, so the third warpgroup runs as a copy of the first (compiler/passes/_wgmma.py's
`gemm_warpgroup`). Its wgmma descriptors must start at the first warpgroup's rows of A: were
they 64 rows further on, the copy would read past A's 128-row tile and store what it computed
over the first warpgroup's rows of C. `register_a` reads A through a fragment
(`T.copy(A_shared, A_frag)`). tests/test_copy_warpgroup.py checks its sm_90a code and CPU
numerics, tests/gpu/test_copy_warpgroup_gpu.py runs it on the GPU, both against `reference`."""

from __future__ import annotations

import torch

import tilec
import tilec.language as T


@tilec.jit
def gemm_384(A, B, block_M: int = 128, block_N: int = 128, block_K: int = 64,
             stages: int = 2, register_a: bool = False, threads: int = 384):
    """C = A @ B in float32."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor[[M, K], T.float16]
    B: T.Tensor[[K, N], T.float16]
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_K, block_N), T.float16)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            if register_a:
                A_frag = T.alloc_fragment((block_M, block_K), T.float16)
                T.copy(A_shared, A_frag)
                T.gemm(A_frag, B_shared, C_local)
            else:
                T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A @ B in float64, on the CPU."""
    return a.double().cpu() @ b.double().cpu()
