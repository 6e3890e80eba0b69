"""Kernels of one thread's own asynchronous copies, as TileLang's deepseek MLA kernels write
them: T.ptx_cp_async of 16 bytes per thread completed through T.cp_async_barrier_noinc, and a
grid-wide barrier (T.sync_grid) between two phases of a persistent kernel.

The CPU suite (tests/test_thread_copy.py) runs the ones without a thread index on the CPU
target and assembles all of them for sm_90a; tests/gpu/test_thread_copy_gpu.py runs them on a GPU.
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


@tilec.jit
def grid_sum_broadcast(A, blocks=8, block=256):
    """Every element of B is the sum of all of A's, in two phases of one kernel: each of the
    `blocks` blocks sums its share of A into `partial[b]`, T.sync_grid, then each block adds
    the partials up and writes its share of B (run twice: the barrier is reused)."""
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    B = T.empty((N,), T.float32)
    partial = T.alloc_global((2, blocks), T.float32)
    with T.Kernel(blocks, threads=block) as bx:
        shares = T.alloc_fragment((block,), T.float32)
        total = T.alloc_fragment((1,), T.float32)
        for phase in T.serial(2):
            T.clear(shares)
            for i in T.serial(T.ceildiv(N, blocks * block)):
                for t in T.Parallel(block):
                    at = (i * blocks + bx) * block + t
                    shares[t] += T.if_then_else(at < N, A[at] * (phase + 1), 0.0)
            T.reduce_sum(shares, total, dim=0)
            partial[phase, bx] = total[0]
            T.sync_grid()
            for t in T.Parallel(block):
                shares[t] = 0.0
            for b in T.serial(blocks):
                for t in T.Parallel(block):
                    shares[t] += partial[phase, b]
            for i in T.serial(T.ceildiv(N, blocks * block)):
                for t in T.Parallel(block):
                    at = (i * blocks + bx) * block + t
                    if at < N:
                        B[at] = shares[t] if phase == 0 else B[at] + shares[t]
    return B


@tilec.jit
def thread_range_scale(A, block_M=32, block_N=64):
    """B = A * (1, 2, 3 by thread range) in TileLang's warp-specialized form: a 384-thread block
    split by `if tx < 128` / `elif tx >= 128 and tx < 256` / `else`, each branch working on
    its own rows through a fragment laid out over its 128 threads."""
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    B = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, 3 * block_M), T.ceildiv(N, block_N), threads=384) as (bx, by):
        first = T.alloc_fragment((block_M, block_N), T.float32)
        second = T.alloc_fragment((block_M, block_N), T.float32)
        third = T.alloc_fragment((block_M, block_N), T.float32)
        row = bx * 3 * block_M
        tx = T.get_thread_binding()
        if tx < 128:
            T.copy(A[row, by * block_N], first)
            T.copy(first, B[row, by * block_N])
        elif tx >= 128 and tx < 256:
            T.copy(A[row + block_M, by * block_N], second)
            for i, j in T.Parallel(block_M, block_N):
                second[i, j] = second[i, j] * 2.0
            T.copy(second, B[row + block_M, by * block_N])
        else:
            T.copy(A[row + 2 * block_M, by * block_N], third)
            for i, j in T.Parallel(block_M, block_N):
                third[i, j] = third[i, j] * 3.0
            T.copy(third, B[row + 2 * block_M, by * block_N])
    return B
