"""GEMMs written with TileLang's hand-written MMA emitter (TensorCoreIntrinEmitter: per-warp
ldmatrix_a / ldmatrix_b / mma / stmatrix over T.alloc_local buffers), in TileLang's syntax as
gemm/example_gemm_intrinsics.py writes them: shared by the CPU tests (tests/test_mma_emitter.py)
and the GPU suite (tests/gpu/test_mma_emitter_gpu.py)."""

from __future__ import annotations

import tilec as tilelang
import tilec.language as T
from tilec.cuda.intrinsics import get_swizzle_layout
from tilec.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter
from tilec.tvm import DataType


def swizzled(shared_buf):
    """The example's swizzle of a tile with 512-bit rows, else the identity."""
    dtype = shared_buf.dtype
    shape = shared_buf.shape
    if shape[-1] * DataType(dtype).bits != 512:
        return T.Layout(shape, lambda *args: args)

    def transform_func(i, j):
        return list(get_swizzle_layout(i, j, shape[-1], dtype))

    return T.Layout(shape, transform_func)


@tilelang.jit
def emitter_gemm(A, B, in_dtype=T.float16, accum_dtype=T.float32, out_dtype=T.float16,
                 block_row_warps=2, block_col_warps=2, warp_row_tiles=32, warp_col_tiles=32,
                 chunk=32, a_transposed=False, b_transposed=True, store="tiled",
                 stages=2):
    """C = A B^T (b_transposed: B is N x K) or A B (B is K x N), A stored M x K or (a_transposed)
    K x M; the accumulator stored
    through a 4-d ("tiled") or 2-d ("plain") shared tile, or straight into C ("global")."""
    M, N, K = T.const("M, N, K")
    emitter = TensorCoreIntrinEmitter(
        a_dtype=in_dtype, b_dtype=in_dtype, accum_dtype=accum_dtype, a_transposed=a_transposed,
        b_transposed=b_transposed, block_row_warps=block_row_warps,
        block_col_warps=block_col_warps, warp_row_tiles=warp_row_tiles,
        warp_col_tiles=warp_col_tiles, chunk=chunk)
    micro_x, micro_y = emitter.micro_size_x, emitter.micro_size_y
    block_M = block_row_warps * warp_row_tiles
    block_N = block_col_warps * warp_col_tiles
    block_K = chunk
    A_shape = (K, M) if a_transposed else (M, K)
    A_shared_shape = (block_K, block_M) if a_transposed else (block_M, block_K)
    B_shape = (N, K) if b_transposed else (K, N)
    B_shared_shape = (block_N, block_K) if b_transposed else (block_K, block_N)
    A: T.Tensor(A_shape, in_dtype)
    B: T.Tensor(B_shape, in_dtype)
    C = T.empty((M, N), out_dtype)
    threads = 32 * block_row_warps * block_col_warps
    warp_rows, warp_cols = emitter.warp_rows, emitter.warp_cols

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared(A_shared_shape, in_dtype)
        B_shared = T.alloc_shared(B_shared_shape, in_dtype)
        C_tiled = T.alloc_shared((block_M // micro_x, block_N // micro_y, micro_x, micro_y),
                                 out_dtype)
        C_plain = T.alloc_shared((block_M, block_N), out_dtype)
        A_local = T.alloc_local((warp_rows * emitter.local_size_a), in_dtype)
        B_local = T.alloc_local((warp_cols * emitter.local_size_b), in_dtype)
        C_local = T.alloc_local((warp_rows * warp_cols * emitter.local_size_out), accum_dtype)
        T.annotate_layout({A_shared: swizzled(A_shared), B_shared: swizzled(B_shared)})
        T.clear(C_local)
        for ko in T.Pipelined(K // block_K, num_stages=stages):
            if a_transposed:
                for k, i in T.Parallel(block_K, block_M):
                    A_shared[k, i] = A[ko * block_K + k, by * block_M + i]
            else:
                for i, k in T.Parallel(block_M, block_K):
                    A_shared[i, k] = A[by * block_M + i, ko * block_K + k]
            if b_transposed:
                for j, k in T.Parallel(block_N, block_K):
                    B_shared[j, k] = B[bx * block_N + j, ko * block_K + k]
            else:
                for k, j in T.Parallel(block_K, block_N):
                    B_shared[k, j] = B[ko * block_K + k, bx * block_N + j]
            for ki in T.serial(block_K // emitter.micro_size_k):
                emitter.ldmatrix_a(A_local, A_shared, ki)
                emitter.ldmatrix_b(B_local, B_shared, ki)
                emitter.mma(A_local, B_local, C_local)
        if store == "global":
            emitter.stmatrix(C_local, C, pid_m=by, pid_n=bx)
        elif store == "plain":
            emitter.stmatrix(C_local, C_plain)
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = C_plain[i, j]
        else:
            emitter.stmatrix(C_local, C_tiled)
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = C_tiled[
                    i // micro_x, j // micro_y, i % micro_x, j % micro_y]
    return C
