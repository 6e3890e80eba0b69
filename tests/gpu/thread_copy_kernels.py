"""Kernels of one thread's own asynchronous copies, as TileLang's deepseek MLA kernels write
them: T.ptx_cp_async of 16 bytes per thread completed through T.cp_async_barrier_noinc, and a
grid-wide barrier (T.sync_grid) between two phases of a persistent kernel.

The CPU suite (tests/test_thread_copy.py) runs the ones without a thread index on the CPU
target and assembles all of them for sm_90a; tests/gpu/test_thread_copy.py runs them on a GPU.
"""

from __future__ import annotations

import tilec
import tilec.language as T


@tilec.jit
def cp_async_scale(A, scale=2.0, block_M=16, block_K=64):
    """B = A * scale through a shared tile every thread fills with the same 16-byte cp.async
    copies (no thread index: the CPU target runs it too), completed on an mbarrier."""
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B = T.empty((M, K), T.float16)
    with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(K, block_K), threads=128) as (bx, by):
        tile = T.alloc_shared((block_M, block_K), T.float16)
        ready = T.alloc_barrier(arrive_count=128)
        for r in T.serial(block_M):
            for c in T.serial(block_K // 8):
                T.ptx_cp_async(T.access_ptr(tile[r, c * 8], "w", 8),
                               T.access_ptr(A[bx * block_M + r, by * block_K + c * 8], "r", 8), 8)
        T.cp_async_barrier_noinc(ready[0])
        T.barrier_wait(ready[0], 0)
        for i, j in T.Parallel(block_M, block_K):
            B[bx * block_M + i, by * block_K + j] = tile[i, j] * scale
    return B


@tilec.jit
def cp_async_gemm(A, B, block_M=64, block_N=64, block_K=64, num_stages=2):
    """C = A @ B^T, warpgroup 1 filling a ring of wgmma operand tiles (128-byte swizzled rows)
    with per-thread cp.async of 16 bytes (8 threads per row, as TileLang's MLA producer),
    warpgroup 0 multiplying them once their mbarrier says every copy landed."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K), T.float16)
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
        A_ring = T.alloc_shared((num_stages, block_M, block_K), T.float16)
        B_ring = T.alloc_shared((num_stages, block_N, block_K), T.float16)
        acc = T.alloc_fragment((block_M, block_N), T.float32)
        full = T.alloc_barrier(arrive_count=[128] * num_stages)
        empty = T.alloc_barrier(arrive_count=[128] * num_stages)
        tx = T.get_thread_binding()
        with T.ws(0):
            T.clear(acc)
        for k in T.serial(T.ceildiv(K, block_K)):
            slot = k % num_stages
            with T.ws(1):
                T.barrier_wait(empty[slot], ((k // num_stages) & 1) ^ 1)
                for r in T.serial(block_M // 16):
                    row = r * 16 + (tx - 128) // 8
                    col = (tx - 128) % 8 * 8
                    T.ptx_cp_async(T.access_ptr(A_ring[slot, row, col], "w", 8),
                                   T.access_ptr(A[by * block_M + row, k * block_K + col], "r", 8),
                                   8)
                    T.ptx_cp_async(T.access_ptr(B_ring[slot, row, col], "w", 8),
                                   T.access_ptr(B[bx * block_N + row, k * block_K + col], "r", 8),
                                   8)
                T.cp_async_barrier_noinc(full[slot])
            with T.ws(0):
                T.barrier_wait(full[slot], (k // num_stages) & 1)
                T.fence_proxy_async()  # the copies wrote through the generic proxy, wgmma reads
                T.gemm(A_ring[slot, :, :], B_ring[slot, :, :], acc, transpose_B=True)
                T.barrier_arrive(empty[slot])
        with T.ws(0):
            T.copy(acc, C[by * block_M, bx * block_N])
    return C
