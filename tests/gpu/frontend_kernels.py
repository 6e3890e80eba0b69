"""TileLang-style kernels (Python, through tilec's frontend) for the CUDA suite.

`cases()` lists (name, kernel factory, out_idx, inputs builder, reference). The compiler machine
compiles them into a cache directory (tests/gpu/precompile_frontend.py); the GPU machine calls
them with the same TILEC_CACHE_DIR and gets cache hits, so it needs no MLIR.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tilec
import tilec.language as T

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from quickstart import matmul  # noqa: E402, F401 - the suite runs the quickstart as written

# 256x512x64: one K tile, so no TMA ring: the SIMT kernel with a cp.async pipeline
QUICKSTART_SHAPES = [
    (1024, 1024, 1024), (512, 384, 256), (256, 512, 64), (200, 136, 100), (77, 45, 33)
]
QUICKSTART_DTYPES = ["float16", "float32"]


def gemm_bias_relu(M: int, N: int, K: int, dtype: str = "float16", block_M: int = 64,
                   block_N: int = 64, block_K: int = 32):
    """relu(A @ B^T + bias) with B stored N x K, the epilogue in T.Parallel."""

    @T.prim_func
    def kernel(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype),
               bias: T.Tensor((N,), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            a_tile = T.alloc_shared((block_M, block_K), dtype)
            b_tile = T.alloc_shared((block_N, block_K), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], a_tile)
                T.copy(B[bx * block_N, k * block_K], b_tile)
                T.gemm(a_tile, b_tile, acc, transpose_B=True)
            for i, j in T.Parallel(block_M, block_N):
                acc[i, j] = T.max(acc[i, j] + bias[bx * block_N + j], 0)
            T.copy(acc, C[by * block_M, bx * block_N])

    return kernel


def scale_shift(M: int, N: int, block_M: int = 32, block_N: int = 64):
    """C = A * row_scale[:, None] + col_shift[None, :]: broadcasting from both sides."""

    @T.prim_func
    def kernel(A: T.Tensor((M, N), "float32"), row_scale: T.Tensor((M,), "float32"),
               col_shift: T.Tensor((N,), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                row = by * block_M + i
                col = bx * block_N + j
                if row < M:
                    if col < N:
                        C[row, col] = A[row, col] * row_scale[row] + col_shift[col]

    return kernel


def row_softmax(M: int, N: int, dtype: str = "float32", block_M: int = 4):
    """Softmax of each row: reduce_max, exp, reduce_sum, divide, all on one fragment."""

    @T.prim_func
    def kernel(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            rows = T.alloc_fragment((block_M, N), "float32")
            row_max = T.alloc_fragment((block_M,), "float32")
            row_sum = T.alloc_fragment((block_M,), "float32")
            T.copy(X[bx * block_M, 0], rows)
            T.reduce_max(rows, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                rows[i, j] = T.exp(rows[i, j] - row_max[i])
            T.reduce_sum(rows, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                rows[i, j] = rows[i, j] / row_sum[i]
            T.copy(rows, Y[bx * block_M, 0])

    return kernel


def column_sum(M: int, N: int, block_M: int = 32, block_N: int = 64):
    """out[j] = sum_i A[i, j]: per-tile column sums combined with atomic adds."""

    @T.prim_func
    def kernel(A: T.Tensor((M, N), "float32"), out: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            tile = T.alloc_fragment((block_M, block_N), "float32")
            sums = T.alloc_fragment((block_N,), "float32")
            T.copy(A[by * block_M, bx * block_N], tile)
            T.reduce_sum(tile, sums, dim=0)
            for j in T.Parallel(block_N):
                T.atomic_add(out[bx * block_N + j], sums[j])

    return kernel


def replicated_updates(M: int, block_M: int = 16, threads: int = 256):
    """T.Parallel over fewer points than threads, so several threads (of different warps) hold
    each point: a read-modify-write of shared and of global memory, then a read back of the
    element just stored. Each update happens once (replicas that each updated would add twice
    or more)."""

    @T.prim_func
    def kernel(A: T.Tensor((M,), "float32"), out: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_shared((block_M,), "float32")
            T.copy(A[bx * block_M], tile)
            for i in T.Parallel(block_M):
                tile[i] = tile[i] + 1.0
            for i in T.Parallel(block_M):
                out[bx * block_M + i] = out[bx * block_M + i] + tile[i] * 2.0
                out[bx * block_M + i] = out[bx * block_M + i] - A[bx * block_M + i]

    return kernel


def shared_row_sum(M: int, N: int, block_M: int = 16):
    """out[i] = sum(X[i, :]) reduced from a shared tile into a shared buffer, as TileLang's
    kda examples reduce (stage-reduce-operands routes both through fragments on CUDA)."""

    @T.prim_func
    def kernel(X: T.Tensor((M, N), "float32"), out: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_shared((block_M, N), "float32")
            sums = T.alloc_shared((block_M,), "float32")
            T.copy(X[bx * block_M, 0], tile)
            T.reduce_sum(tile, sums, dim=1)
            T.copy(sums, out[bx * block_M])

    return kernel


def row_reduce(M: int, N: int, kind: str, block_M: int = 16):
    """out[i] = reduce(X[i, :]) with one of T.reduce_sum/max/min/abssum/absmax."""
    reducer = getattr(T, f"reduce_{kind}")

    @T.prim_func
    def kernel(X: T.Tensor((M, N), "float32"), out: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), "float32")
            result = T.alloc_fragment((block_M,), "float32")
            T.copy(X[bx * block_M, 0], tile)
            reducer(tile, result, dim=1)
            T.copy(result, out[bx * block_M])

    return kernel


def scaled_copy(block: int = 256):
    """Y = X * alpha + shift over a dynamic length M: scalar parameters (f32, i32) and a size
    symbol reach the kernel."""
    M = T.dynamic("M")

    @T.prim_func
    def kernel(X: T.Tensor((M,), "float32"), Y: T.Tensor((M,), "float32"),
               alpha: T.float32, shift: T.int32):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            for i in T.Parallel(block):
                index = bx * block + i
                if index < M:
                    Y[index] = X[index] * alpha + T.cast(shift, "float32")

    return kernel


def wide_row_sum(M: int, N: int, block_M: int = 8, block_N: int = 128):
    """out[i] = sum_j X[i, j] over column tiles: reduce_sum(clear=False) in a T.serial loop,
    then a region T.atomic_add of the block's sums."""

    @T.prim_func
    def kernel(X: T.Tensor((M, N), "float32"), out: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, block_N), "float32")
            sums = T.alloc_fragment((block_M,), "float32")
            T.clear(sums)
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, k * block_N], tile)
                T.reduce_sum(tile, sums, dim=1, clear=False)
            T.atomic_add(out[bx * block_M:(bx + 1) * block_M], sums[0:block_M])

    return kernel


def block_masked_row_sum(M: int, N: int, block_M: int = 32, block_N: int = 64):
    """out[i] = (sum of X[i, :] over the column blocks whose mask is positive) * (how many
    there are), as block-sparse attention skips blocks: the mask row is a fragment read by
    the whole block in an `if` (each thread holds all of it), the count a one-element
    fragment written outside T.Parallel, both also used inside T.Parallel."""
    row_blocks, col_blocks = -(-M // block_M), -(-N // block_N)

    @T.prim_func
    def kernel(X: T.Tensor((M, N), "float32"),
               mask: T.Tensor((row_blocks, col_blocks), "float32"),
               out: T.Tensor((M,), "float32")):
        with T.Kernel(row_blocks, threads=128) as bx:
            flags = T.alloc_fragment((col_blocks,), "float32")
            tile = T.alloc_fragment((block_M, block_N), "float32")
            sums = T.alloc_fragment((block_M,), "float32")
            kept = T.alloc_fragment((1,), "float32")
            T.copy(mask[bx, 0], flags)
            for k in T.Parallel(col_blocks):
                flags[k] = T.max(flags[k], 0)
            T.clear(sums)
            kept[0] = 0
            for k in T.Pipelined(col_blocks, num_stages=2):
                if flags[k] > 0:
                    T.copy(X[bx * block_M, k * block_N], tile)
                    T.reduce_sum(tile, sums, dim=1, clear=False)
                    kept[0] = kept[0] + 1
            for i in T.Parallel(block_M):
                sums[i] = sums[i] * kept[0]
            T.copy(sums, out[bx * block_M])

    return kernel


def block_masked_row_sum_reference(x, mask, block_M: int = 32, block_N: int = 64):
    keep = (mask > 0).repeat_interleave(block_M, 0).repeat_interleave(block_N, 1)
    keep = keep[:x.shape[0], :x.shape[1]]
    count = (mask > 0).sum(dim=1).repeat_interleave(block_M)[:x.shape[0]]
    return (x * keep).sum(dim=1) * count


def mix_rows(tokens: int, hidden: int, hc: int = 4):
    """x[n, i, :] = c[n, i] * d[n, :] + sum_k a[n, k, i] * b[n, k, :], as DeepSeek's mHC post
    block writes it: a read transposed and both a and b indexed by a T.serial variable inside
    T.Parallel (the loop reads them from a shared copy), c and d broadcast along the loop."""

    @T.prim_func
    def kernel(a: T.Tensor((tokens, hc, hc), "float32"), b: T.Tensor((tokens, hc, hidden),
               "float32"), c: T.Tensor((tokens, hc), "float32"),
               d: T.Tensor((tokens, hidden), "float32"),
               x: T.Tensor((tokens, hc, hidden), "float32")):
        with T.Kernel(tokens, threads=128) as n:
            a_local = T.alloc_fragment((hc, hc), "float32")
            b_local = T.alloc_fragment((hc, hidden), "float32")
            c_local = T.alloc_fragment(hc, "float32")
            d_local = T.alloc_fragment(hidden, "float32")
            x_local = T.alloc_fragment((hc, hidden), "float32")
            T.copy(a[n, 0, 0], a_local)
            T.copy(b[n, 0, 0], b_local)
            T.copy(c[n, 0], c_local)
            T.copy(d[n, 0], d_local)
            for i, j in T.Parallel(hc, hidden):
                x_local[i, j] = c_local[i] * d_local[j]
                for k in T.serial(hc):
                    x_local[i, j] += a_local[k, i] * b_local[k, j]
            T.copy(x_local, x[n, 0, 0])

    return kernel


def strided_partial_sums(M: int, W: int, block_M: int = 32, group: int = 4):
    """out[i, j] = sum_jj X[i, jj * group + j]: a fragment indexed at an offset that moves with
    an enclosing T.serial loop (DeepSeek mHC pre's sum of squares)."""

    @T.prim_func
    def kernel(X: T.Tensor((M, W), "float32"), out: T.Tensor((M, group), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x_frag = T.alloc_fragment((block_M, W), "float32")
            part = T.alloc_fragment((block_M, group), "float32")
            T.copy(X[bx * block_M, 0], x_frag)
            T.clear(part)
            for jj in T.serial(W // group):
                for i, j in T.Parallel(block_M, group):
                    part[i, j] += x_frag[i, jj * group + j]
            T.copy(part, out[bx * block_M, 0])

    return kernel


def reduce_into_shared(M: int, N: int = 64, block_M: int = 16):
    """out[i] = max(sum_j X[i, j], max_j X[i, j]): a reduce from a fragment into a shared
    buffer, then one from a shared tile accumulating into it (clear = False), as DeepSeek
    mHC's backward reduces into shared memory."""

    @T.prim_func
    def kernel(X: T.Tensor((M, N), "float32"), out: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), "float32")
            staged = T.alloc_shared((block_M, N), "float32")
            rows = T.alloc_shared((block_M,), "float32")
            T.copy(X[bx * block_M, 0], tile)
            T.copy(X[bx * block_M, 0], staged)
            T.reduce_sum(tile, rows, dim=1)
            T.reduce_max(staged, rows, dim=1, clear=False)
            T.copy(rows, out[bx * block_M])

    return kernel


def reused_shared_tiles(M: int, N: int = 1024, block_M: int = 32):
    """Y = 2 * X + Z through two 128 KiB shared tiles used one after the other: together
    more than a block holds, so the second takes the first's bytes (plan-shared-memory) after
    a barrier (threads may still read the first when others fill the second)."""

    @T.prim_func
    def kernel(X: T.Tensor((M, N), "float32"), Z: T.Tensor((M, N), "float32"),
               Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            first = T.alloc_shared((block_M, N), "float32")
            second = T.alloc_shared((block_M, N), "float32")
            acc = T.alloc_fragment((block_M, N), "float32")
            T.copy(X[bx * block_M, 0], first)
            for i, j in T.Parallel(block_M, N):
                acc[i, j] = first[i, j] * 2
            T.copy(Z[bx * block_M, 0], second)
            for i, j in T.Parallel(block_M, N):
                acc[i, j] += second[i, j]
            T.copy(acc, Y[bx * block_M, 0])

    return kernel


def loop_local_tiles(M: int, steps: int, N: int = 256, block_M: int = 64):
    """`loop_local_reference` through four 64 KiB shared tiles (256 KiB: more than a block
    holds): W's, read in every iteration, and three that each iteration writes whole and reads
    in its own part of the loop's body, at mirrored positions (other threads' elements). Those
    three share bytes (plan-shared-memory's lifetimes inside loops) behind barriers between
    them and across the back edge: one missing lets a thread overwrite what another still
    reads. M a multiple of block_M (the mirrored rows stay in the block)."""

    @T.prim_func
    def kernel(X: T.Tensor((steps, M, N), "float32"), W: T.Tensor((M, N), "float32"),
               Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            w = T.alloc_shared((block_M, N), "float32")
            a = T.alloc_shared((block_M, N), "float32")
            b = T.alloc_shared((block_M, N), "float32")
            c = T.alloc_shared((block_M, N), "float32")
            acc = T.alloc_fragment((block_M, N), "float32")
            T.copy(W[bx * block_M, 0], w)
            T.clear(acc)
            for k in T.serial(steps):
                T.copy(X[k, bx * block_M, 0], a)
                for i, j in T.Parallel(block_M, N):
                    acc[i, j] += a[i, N - 1 - j] * w[i, j]
                for i, j in T.Parallel(block_M, N):
                    b[i, j] = acc[i, j] * 0.5
                for i, j in T.Parallel(block_M, N):
                    acc[i, j] += b[block_M - 1 - i, j]
                for i, j in T.Parallel(block_M, N):
                    c[i, j] = acc[i, j] - 1.0
                for i, j in T.Parallel(block_M, N):
                    acc[i, j] += c[i, N - 1 - j] * 0.25
            T.copy(acc, Y[bx * block_M, 0])

    return kernel


def loop_local_reference(x: Any, w: Any, block_M: int = 64) -> Any:
    steps, M, N = x.shape
    acc = w.new_zeros(M, N)
    for k in range(steps):
        acc = acc + x[k].flip(1) * w
        acc = acc + (acc * 0.5).view(M // block_M, block_M, N).flip(1).reshape(M, N)
        acc = acc + (acc - 1.0).flip(1) * 0.25
    return acc


REDUCE_REFERENCES = {
    "sum": lambda x: x.sum(dim=1), "max": lambda x: x.amax(dim=1),
    "min": lambda x: x.amin(dim=1), "abssum": lambda x: x.abs().sum(dim=1),
    "absmax": lambda x: x.abs().amax(dim=1),
}


def reduce_into_float32(M: int, N: int, block_M: int = 16):
    """out[i] = sum(X[i, :]) of a float16 tile into float32, accumulated in float32."""

    @T.prim_func
    def kernel(X: T.Tensor((M, N), "float16"), out: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), "float16")
            result = T.alloc_fragment((block_M,), "float32")
            T.copy(X[bx * block_M, 0], tile)
            T.reduce_sum(tile, result, dim=1)
            T.copy(result, out[bx * block_M])

    return kernel


def placed_round_trip(batch: int, seq: int, heads: int, dim: int, block: int = 32):
    """out = A + 1 through a tensor whose T.Layout places its elements as FlashAttention's
    backward places dQ (written element by element, read back with T.copy)."""
    shape = (batch, seq, heads, dim)

    def dq_layout(dQ):
        return T.Layout(dQ.shape, lambda b, s, h, d: [b, s // 8, h, d // 8, d % 2,
                                                      4 * (s % 8) + (d % 8) // 2])

    @T.prim_func
    def kernel(A: T.Tensor(shape, "float32"), placed: T.Tensor(shape, "float32"),
               out: T.Tensor(shape, "float32")):
        with T.Kernel(seq // block, heads, batch, threads=128) as (bx, by, bz):
            T.annotate_layout({placed: dq_layout(placed)})
            for i, j in T.Parallel(block, dim):
                placed[bz, bx * block + i, by, j] = A[bz, bx * block + i, by, j] + 1.0
            T.sync_threads()
            T.copy(placed[bz, bx * block:(bx + 1) * block, by, :],
                   out[bz, bx * block:(bx + 1) * block, by, :])

    return kernel


def uniform_draws(count: int, seed: int):
    """cuRAND's curand_uniform stream of one thread (TileLang's rand example's shape)."""

    @T.prim_func
    def kernel(U: T.Tensor((count,), "float32")):
        with T.Kernel(1, threads=1) as _:
            T.rng_init(seed, 3, 5)
            for i in T.Parallel(count):
                U[i] = T.rng_rand_float()

    return kernel


def _curand_uniforms(count: int, seed: int, subsequence: int, offset: int) -> Any:
    """curand_uniform's first `count` floats after curand_init(seed, subsequence, offset)."""
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from curand_reference import curand_stream

    words = torch.tensor(curand_stream(seed, subsequence, offset, count), dtype=torch.float64)
    return words * 2.3283064e-10 + 2.3283064e-10 / 2


# CUDA C device functions for T.call_extern: a template over pointers (instantiated with the
# buffers' element types, as TileLang's dequantizers are) and two by value, a 16-bit float
# crossing the call as its bits
EXTERN_SOURCE = """
template <typename T1, typename T2>
__device__ void affine_run(T1 *x, T2 *y, const int n = 8) {
  for (int i = 0; i < n; ++i) y[i] = static_cast<T2>(static_cast<float>(x[i]) * 3.0f + 1.0f);
}
__device__ float quarter(float v) { return v * 0.25f; }
__device__ half negate(half v) { return __hneg(v); }
"""


def extern_affine(M: int, N: int, threads: int = 128, run: int = 8):
    """C = -(0.25 * (3 A + 1)), each thread a row in runs of `run` through the C functions."""

    @T.prim_func
    def kernel(A: T.Tensor((M, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(M, threads), threads=threads) as bx:
            x = T.alloc_local((run,), "float16")
            y = T.alloc_local((run,), "float32")
            tx = T.get_thread_binding(0)
            row = bx * threads + tx
            T.import_source(EXTERN_SOURCE)
            if row < M:
                for c in T.serial(N // run):
                    for i in T.serial(run):
                        x[i] = A[row, c * run + i]
                    T.call_extern("handle", "affine_run", T.access_ptr(x, "r"),
                                  T.access_ptr(y, "w"), run)
                    for i in T.serial(run):
                        C[row, c * run + i] = T.call_extern(
                            T.float16, "negate", T.call_extern(T.float32, "quarter", y[i]))

    return kernel


def splitk_gemv_allreduce(N: int, K: int, block_N: int = 4, reduce_threads: int = 32,
                          combine: str = "sum"):
    """C[n] = reduce_k A[k] * B[n, k]: each of `reduce_threads` threads (axis y) takes a slice
    of K, then TVM's thread all-reduce (T.attr + T.tvm_thread_allreduce, TileLang's GEMV
    example) combines them; `combine` "max" takes the largest product instead."""
    tile_k = 8
    block_k = reduce_threads * tile_k

    def combiner(x, y):
        return x + y if combine == "sum" else T.max(x, y)

    identity = 0.0 if combine == "sum" else float("-inf")

    @T.prim_func
    def kernel(A: T.Tensor((K,), "float16"), B: T.Tensor((N, K), "float16"),
               C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), threads=(block_N, reduce_threads)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            partial = T.alloc_local((1,), "float32")
            partial[0] = identity
            for bk in T.serial(T.ceildiv(K, block_k)):
                for k in T.serial(tile_k):
                    product = A[bk * block_k + tk * tile_k + k].astype("float32") * \
                        B[bn * block_N + tn, bk * block_k + tk * tile_k + k].astype("float32")
                    partial[0] = combiner(partial[0], product)
            reduced = T.alloc_local((1,), "float32")
            with T.attr(T.comm_reducer(lambda x, y: combiner(x, y), [identity]),
                        "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), partial[0], True, reduced[0], tk,
                                                  dtype="handle"))
            C[bn * block_N + tn] = reduced[0]

    return kernel


def gemv_by_reducer(M: int, N: int, block_M: int = 32, block_N: int = 64,
                    into: bool = False):
    """TileLang's gemv_alloc_reducer: o[i] = sum_j a[i, j] * x[j], every point adding into a
    T.alloc_reducer(..., replication="all"), finalized in place (or `into` a fragment)."""

    @T.prim_func
    def main(a: T.Tensor((M, N), "float16"), x: T.Tensor((N,), "float16"),
             o: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as i0_m:
            o_reducer = T.alloc_reducer(block_M, "float32", replication="all")
            T.clear(o_reducer)
            for i0_n in T.Pipelined(T.ceildiv(N, block_N), num_stages=1):
                a_frag = T.alloc_fragment((block_M, block_N), "float16")
                T.copy(a[i0_m * block_M, i0_n * block_N], a_frag)
                x_frag = T.alloc_fragment(block_N, "float16")
                T.copy(x[i0_n * block_N], x_frag)
                for i1_m, i1_n in T.Parallel(block_M, block_N):
                    o_reducer[i1_m] += a_frag[i1_m, i1_n] * x_frag[i1_n]
            if into:
                sums = T.alloc_fragment((block_M,), "float32")
                T.finalize_reducer(o_reducer, sums)
                T.copy(sums, o[i0_m * block_M])
            else:
                T.finalize_reducer(o_reducer)
                T.copy(o_reducer, o[i0_m * block_M])

    return main


def head_weighted_logits(N: int, Q: int = 4, H: int = 16, D: int = 64, block_N: int = 64):
    """TileLang's DeepSeek indexer pattern: a gemm accumulator s = K_block @ Qm^T of shape
    [block_N, Q * H], seen through T.reshape as [block_N, Q, H], relu times a weight per
    (query, head), summed over each query's heads."""

    @T.prim_func
    def main(K: T.Tensor((N, D), "float16"), Qm: T.Tensor((Q * H, D), "float16"),
             W: T.Tensor((Q, H), "float16"), L: T.Tensor((N, Q), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            k_shared = T.alloc_shared((block_N, D), "float16")
            q_shared = T.alloc_shared((Q * H, D), "float16")
            s = T.alloc_fragment((block_N, Q * H), "float32")
            s_reshaped = T.reshape(s, (block_N, Q, H))
            weights = T.alloc_fragment((Q, H), "float32")
            logits = T.alloc_fragment((block_N, Q), "float32")
            T.copy(K[bx * block_N, 0], k_shared)
            T.copy(Qm, q_shared)
            T.copy(W, weights)
            T.gemm(k_shared, q_shared, s, transpose_B=True, clear_accum=True)
            for n, q, h in T.Parallel(block_N, Q, H):
                s_reshaped[n, q, h] = T.max(s_reshaped[n, q, h], 0) * weights[q, h]
            T.reduce_sum(s_reshaped, logits, dim=-1)
            T.copy(logits, L[bx * block_N, 0])

    return main


def head_weighted_logits_reference(k, qm, w, Q: int = 4, H: int = 16):
    return ((k @ qm.T).clamp_min(0).view(-1, Q, H) * w).sum(-1)


def int4_round_trip(M: int, N: int, dtype: str = "int4", block_M: int = 32, block_N: int = 64):
    """Values rounded into a sub-byte fragment, through a packed shared tile (the halves of a
    byte written by different threads: lower-sub-byte-types' atomic stores) and back."""

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            quantized = T.alloc_fragment((block_M, block_N), dtype)
            packed = T.alloc_shared((block_M, block_N), dtype)
            decoded = T.alloc_fragment((block_M, block_N), "float32")
            for i, j in T.Parallel(block_M, block_N):
                quantized[i, j] = T.Cast(dtype, T.clamp(X[by * block_M + i, bx * block_N + j]
                                                        * 3.0, -8.0, 7.0))
            T.copy(quantized, packed)
            for i, j in T.Parallel(block_M, block_N):
                decoded[i, j] = T.Cast("float32", packed[i, j])
            T.copy(decoded, Y[by * block_M, bx * block_N])

    return main


@dataclass
class Case:
    """One frontend kernel: `factory()` gives the prim_func, inputs are random normals of
    `input_shapes` (dtype `dtype`), `zeros` are outputs passed in zeroed (atomics)."""

    name: str
    factory: Callable[[], Any]
    out_idx: list[int] | None
    input_shapes: list[tuple[int, ...]]
    dtype: str
    reference: Callable[..., Any]
    zero_outputs: list[tuple[int, ...]] | None = None


def cases() -> list[Case]:
    found = []
    for dtype in ("float16", "float32"):
        for M, N, K in [(256, 192, 128), (77, 45, 33)]:
            found.append(Case(
                f"gemm_bias_relu_{dtype}_{M}x{N}x{K}",
                lambda M=M, N=N, K=K, dtype=dtype: gemm_bias_relu(M, N, K, dtype),
                [-1], [(M, K), (N, K), (N,)], dtype,
                lambda a, b, bias: (a @ b.T + bias).clamp_min(0)))
    for M, N in [(512, 1024), (100, 77)]:
        found.append(Case(f"scale_shift_{M}x{N}", lambda M=M, N=N: scale_shift(M, N), [-1],
                          [(M, N), (M,), (N,)], "float32",
                          lambda a, s, b: a * s[:, None] + b[None, :]))
    for dtype in ("float32", "float16"):
        for M, N in [(1000, 256), (37, 512)]:
            found.append(Case(f"row_softmax_{dtype}_{M}x{N}",
                              lambda M=M, N=N, dtype=dtype: row_softmax(M, N, dtype), [-1],
                              [(M, N)], dtype, lambda x: x.softmax(dim=1)))
    for M, N in [(1000, 300), (4096, 256)]:
        found.append(Case(f"column_sum_{M}x{N}", lambda M=M, N=N: column_sum(M, N), None,
                          [(M, N)], "float32", lambda a: a.sum(dim=0), zero_outputs=[(N,)]))
    found.append(Case("replicated_updates_1000", lambda: replicated_updates(1000), None,
                      [(1000,)], "float32", lambda a: (a + 1.0) * 2.0 - a,
                      zero_outputs=[(1000,)]))
    found.append(Case("wide_row_sum_300x1000", lambda: wide_row_sum(300, 1000), None,
                      [(300, 1000)], "float32", lambda x: x.sum(dim=1), zero_outputs=[(300,)]))
    for M, N in [(256, 512), (100, 300)]:
        found.append(Case(f"block_masked_row_sum_{M}x{N}",
                          lambda M=M, N=N: block_masked_row_sum(M, N), [-1],
                          [(M, N), (-(-M // 32), -(-N // 64))], "float32",
                          block_masked_row_sum_reference))
    found.append(Case("mix_rows_3x256", lambda: mix_rows(3, 256), [-1],
                      [(3, 4, 4), (3, 4, 256), (3, 4), (3, 256)], "float32",
                      lambda a, b, c, d: c[:, :, None] * d[:, None, :] + a.mT @ b))
    found.append(Case("strided_partial_sums_100x64", lambda: strided_partial_sums(100, 64),
                      [-1], [(100, 64)], "float32",
                      lambda x: x.view(100, 16, 4).sum(dim=1)))
    for M, N in [(300, 64), (128, 8)]:
        found.append(Case(f"extern_affine_{M}x{N}", lambda M=M, N=N: extern_affine(M, N), [-1],
                          [(M, N)], "float16", lambda a: -(0.25 * (3 * a + 1))))
    found.append(Case("reduce_into_shared_100x64", lambda: reduce_into_shared(100), [-1],
                      [(100, 64)], "float32",
                      lambda x: x.sum(dim=1).maximum(x.amax(dim=1))))
    found.append(Case("reused_shared_tiles_100x1024", lambda: reused_shared_tiles(100), [-1],
                      [(100, 1024), (100, 1024)], "float32", lambda x, z: 2 * x + z))
    found.append(Case("loop_local_tiles_128x256x4", lambda: loop_local_tiles(128, 4), [-1],
                      [(4, 128, 256), (128, 256)], "float32", loop_local_reference))
    for kind, reference in REDUCE_REFERENCES.items():
        found.append(Case(f"row_reduce_{kind}", lambda kind=kind: row_reduce(500, 128, kind),
                          [-1], [(500, 128)], "float32", reference))
    found.append(Case("shared_row_sum_500x128", lambda: shared_row_sum(500, 128), [-1],
                      [(500, 128)], "float32", lambda a: a.sum(1)))
    found.append(Case("reduce_float16_into_float32_500x256",
                      lambda: reduce_into_float32(500, 256), [-1], [(500, 256)], "float16",
                      lambda x: x.sum(dim=1)))
    found.append(Case("placed_round_trip_2x64x3x64", lambda: placed_round_trip(2, 64, 3, 64),
                      [-1], [(2, 64, 3, 64), (2, 64, 3, 64)], "float32",
                      lambda a, placed: a + 1))
    found.append(Case("uniform_draws_1000", lambda: uniform_draws(1000, 1234), [-1], [],
                      "float32", lambda: _curand_uniforms(1000, 1234, 3, 5)))
    for combine, reference in (("sum", lambda a, b: b @ a), ("max", lambda a, b: (b * a).amax(1))):
        found.append(Case(f"splitk_gemv_allreduce_{combine}_256x2048",
                          lambda combine=combine: splitk_gemv_allreduce(256, 2048,
                                                                        combine=combine),
                          [-1], [(2048,), (256, 2048)], "float16", reference))
    found.append(Case("gemv_by_reducer_200x512", lambda: gemv_by_reducer(200, 512), [-1],
                      [(200, 512), (512,)], "float16",
                      lambda a, x: (a * x).half().double().sum(1)))
    found.append(Case("gemm_on_column_parts_64x200x(256+64)",
                      lambda: gemm_on_column_parts(64, 200, 256, 64), [-1],
                      [(64, 320), (200, 320)], "float16", lambda q, k: q @ k.T))
    # the CUDA cores' gemms (N = 32: no wgmma) read Q_shared's two parts in place
    found.append(Case("gemm_on_column_parts_32x64x(64+32)",
                      lambda: gemm_on_column_parts(32, 64, 64, 32, block_N=32), [-1],
                      [(32, 96), (64, 96)], "float16", lambda q, k: q @ k.T))
    found.append(Case("head_weighted_logits_200x64x64", lambda: head_weighted_logits(200),
                      [-1], [(200, 64), (64, 64), (4, 16)], "float16",
                      head_weighted_logits_reference))
    found.append(Case("int4_round_trip_100x192", lambda: int4_round_trip(100, 192), [-1],
                      [(100, 192)], "float32",
                      lambda x: (x.float() * 3).clamp(-8, 7).trunc().double()))
    return found


# A in registers, as TileLang writes it: T.copy(A_shared, A_frag) in the loop, then
# T.gemm(A_frag, B_shared, C)
@tilec.jit
def matmul_register_a(A, B, block_M=128, block_N=128, block_K=32, threads=128, num_stages=3,
                      dtype=T.float16):
    M, N, K = T.const("M, N, K")
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        A_frag = T.alloc_fragment((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.copy(A_shared, A_frag)
            T.gemm(A_frag, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


# TileLang's examples/quickstart.py kernel as it spells it: dtypes as locals of the prologue,
# the tensors annotated with them, a ReLU epilogue
@tilec.jit
def matmul_relu(A, B, block_M: int, block_N: int, block_K: int):
    M, N, K = T.const("M, N, K")
    dtype = T.float16
    accum_dtype = T.float32
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_local)
        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            T.copy(A[by * block_M, ko * block_K], A_shared)
            T.copy(B[ko * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        for i, j in T.Parallel(block_M, block_N):
            C_local[i, j] = T.max(C_local[i, j], 0)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


# two `with T.Kernel` blocks: the second launch reads what the first wrote
@tilec.jit
def normalize_rows(X, block=128):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    norms = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=block) as bx:
        for i in T.Parallel(block):
            if bx * block + i < M:
                total = T.alloc_var(T.float32, 0.0)
                for j in T.serial(N):
                    total += X[bx * block + i, j] * X[bx * block + i, j]
                norms[bx * block + i] = T.sqrt(total)
    Y = T.empty((M, N), T.float32)
    with T.Kernel(M, threads=128) as row:
        for j in T.Parallel(N):
            Y[row, j] = X[row, j] / norms[row] + norms[M - 1 - row]
    return norms, Y


# TMA + mbarriers, warpgroup 1 producing and warpgroup 0 consuming (sm_90a): rows ragged in M
# and K take the element-by-element path of the bulk copy
@tilec.jit
def warp_specialized_scale(A, scale=2.0, block_M=64, block_K=32, num_stages=2):
    """B = A * scale through a ring of shared tiles: warpgroup 1 fills them by TMA, warpgroup 0
    scales each tile in place and stores it."""
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float32)
    B = T.empty((M, K), T.float32)
    with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
        ring = T.alloc_shared((num_stages, block_M, block_K), T.float32)
        full = T.alloc_barrier([128] * num_stages)
        empty = T.alloc_barrier(arrive_count=[128] * num_stages)
        with T.ws(1):
            T.set_max_nreg(40, 0)
        with T.ws(0):
            T.set_max_nreg(232, 1)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            slot = k % num_stages
            with T.ws(1):
                T.mbarrier_wait_parity(empty[slot], ((k // num_stages) & 1) ^ 1)
                T.tma_copy(A[bx * block_M, k * block_K], ring[slot, :, :], barrier=full[slot])
                T.mbarrier_arrive(full[slot])
            with T.ws(0):
                T.barrier_wait(full[slot], (k // num_stages) & 1)
                for i, j in T.Parallel(block_M, block_K):
                    ring[slot, i, j] = ring[slot, i, j] * scale
                T.copy(ring[slot, :, :], B[bx * block_M, k * block_K])
                T.fence_proxy_async()
                T.barrier_arrive(empty[slot])
    return B


# stream-K as TileLang's gemm_streamk example writes it: a while loop over runs of k-steps, a
# T.Pipelined loop of run-time length inside it, atomics for the tiles a run covers in part
@tilec.jit
def matmul_stream_k(A, B, C, programs=12, block_M=16, block_N=64, block_K=32, threads=64,
                    num_stages=2):
    """C = A @ B^T (C passed in zeroed) by stream-K: each of `programs` blocks takes an equal
    share of the (tile, k-step) iterations, one run inside one tile per trip of the while loop;
    a run that covers a whole tile stores it, a part adds into C atomically."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K), T.float16)
    C: T.Tensor((M, N), T.float32)
    tiles_n = (N + block_N - 1) // block_N
    iters_per_tile = (K + block_K - 1) // block_K
    total_iters = (M + block_M - 1) // block_M * tiles_n * iters_per_tile
    per_program, extra = total_iters // programs, total_iters % programs
    with T.Kernel(programs, threads=threads) as pid:
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_N, block_K), T.float16)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        start = T.alloc_local((1,), T.int32)
        end = T.alloc_local((1,), T.int32)
        start[0] = pid * per_program + T.min(pid, extra)
        last = (pid + 1) * per_program + T.min(pid + 1, extra)
        while start[0] < last:
            end[0] = T.min(start[0] + (iters_per_tile - start[0] % iters_per_tile), last)
            tile = start[0] // iters_per_tile
            first_k = start[0] % iters_per_tile
            pid_m = tile // tiles_n
            pid_n = tile % tiles_n
            T.clear(C_local)
            for k in T.Pipelined(end[0] - start[0], num_stages=num_stages):
                T.copy(A[pid_m * block_M, (first_k + k) * block_K], A_shared)
                T.copy(B[pid_n * block_N, (first_k + k) * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            if first_k == 0 and end[0] % iters_per_tile == 0:
                T.copy(C_local, C[pid_m * block_M, pid_n * block_N])
            else:
                for i, j in T.Parallel(block_M, block_N):
                    T.atomic_add(C[pid_m * block_M + i, pid_n * block_N + j], C_local[i, j])
            start[0] = end[0]


# T.gemm inside T.ws blocks, as TileLang's warp_specialize examples write them: warpgroup 1
# fills the tiles by T.tma_copy (bulk copies into the swizzled wgmma operand tiles) and
# mbarriers, warpgroup 0 runs the gemm on its own accumulator (wgmma over its 128 threads)
@tilec.jit
def matmul_producer_consumer(A, B, block_M=128, block_N=128, block_K=64):
    """C = A @ B with a producer and a consumer warpgroup."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_K, block_N), T.float16)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        data_is_ready = T.alloc_barrier(arrive_count=128)
        compute_is_done = T.alloc_barrier(arrive_count=128)
        with T.ws(0):
            T.clear(C_local)
        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
            with T.ws(1):
                T.barrier_wait(compute_is_done, (ko + 1) % 2)
                T.tma_copy(A[by * block_M, ko * block_K], A_shared, barrier=data_is_ready)
                T.tma_copy(B[ko * block_K, bx * block_N], B_shared, barrier=data_is_ready)
                T.barrier_arrive(data_is_ready)
            with T.ws(0):
                T.barrier_wait(data_is_ready, ko % 2)
                T.gemm(A_shared, B_shared, C_local)
                T.barrier_arrive(compute_is_done)
        with T.ws(0):
            T.copy(C_local, C[by * block_M, bx * block_N])
    return C


# each warpgroup copies its half of B's columns and multiplies it into its own accumulator
@tilec.jit
def matmul_split_warpgroups(A, B, block_M=128, block_N=128, block_K=32):
    """C = A @ B, the block's columns split between two warpgroups."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    half = block_N // 2
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_left = T.alloc_shared((block_K, half), T.float16)
        B_right = T.alloc_shared((block_K, half), T.float16)
        C_left = T.alloc_fragment((block_M, half), T.float32)
        C_right = T.alloc_fragment((block_M, half), T.float32)
        with T.ws(0):
            T.clear(C_left)
        with T.ws(1):
            T.clear(C_right)
        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=0):
            T.copy(A[by * block_M, ko * block_K], A_shared)
            with T.ws(0):
                T.copy(B[ko * block_K, bx * block_N], B_left)
                T.gemm(A_shared, B_left, C_left)
            with T.ws(1):
                T.copy(B[ko * block_K, bx * block_N + half], B_right)
                T.gemm(A_shared, B_right, C_right)
        with T.ws(0):
            T.copy(C_left, C[by * block_M, bx * block_N])
        with T.ws(1):
            T.copy(C_right, C[by * block_M, bx * block_N + half])
    return C


MATMUL_RELU_SIZES = (1024, 1024, 1024)
NORMALIZE_ROWS_SHAPE = (1000, 128)
WARP_SPECIALIZED_SHAPES = [(1024, 512), (200, 100)]
# (M, N, K, programs): runs of 42-43 k-steps over 16-step tiles (whole tiles stored, parts
# added), runs of 4-5 (every tile in parts, as TileLang's example on 108 SMs), a ragged last
# k-step with 10 programs
# (M, N, K): whole tiles; ragged rows, columns and a partial last k-step
WS_GEMM_SHAPES = [(1024, 1024, 1024), (200, 136, 100)]
STREAM_K_PROBLEMS = [(128, 256, 512, 12), (128, 256, 512, 108), (96, 192, 200, 10)]


def varlen_rows(total: int, dim: int, batch: int, block_M: int = 64):
    """Out = 2 X + 1 over each sequence's rows CuSeqlens[b] : CuSeqlens[b + 1], as TileLang's
    varlen kernels walk them: the grid's x is ceil(max_seqlen / block_M) for the kernel
    argument max_seqlen, the tile a run-time slice `X[start + bx * block_M : start + (bx + 1)
    * block_M, :]` (past the tensor's end it reads zeros), rows past the sequence not stored."""

    @T.prim_func
    def kernel(X: T.Tensor((total, dim), "float16"), CuSeqlens: T.Tensor((batch + 1,), "int32"),
               max_seqlen: T.int32, Out: T.Tensor((total, dim), "float16")):
        with T.Kernel(T.ceildiv(max_seqlen, block_M), batch, threads=128) as (bx, by):
            start, end = CuSeqlens[by], CuSeqlens[by + 1]
            tile = T.alloc_shared((block_M, dim), "float16")
            T.copy(X[start + bx * block_M : start + (bx + 1) * block_M, :], tile)
            for i, j in T.Parallel(block_M, dim):
                row = start + bx * block_M + i
                if row < end:
                    Out[row, j] = tile[i, j] * 2.0 + 1.0

    return kernel


def gemm_on_column_parts(M: int, N: int, D: int, D_tail: int, block_N: int = 64):
    """S = Q K^T with Q's columns in two parts, as TileLang's sparse MLA kernels split the head
    dimension: T.gemm(Q_shared[:, :D], ...) and T.gemm(Q_shared[:, D:], ...) into one C."""

    @T.prim_func
    def kernel(Q: T.Tensor((M, D + D_tail), "float16"), K: T.Tensor((N, D + D_tail), "float16"),
               S: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            Q_shared = T.alloc_shared((M, D + D_tail), "float16")
            K_shared = T.alloc_shared((block_N, D), "float16")
            K_tail_shared = T.alloc_shared((block_N, D_tail), "float16")
            acc = T.alloc_fragment((M, block_N), "float32")
            T.copy(Q[0:M, :D], Q_shared[:, :D])
            T.copy(Q[0:M, D:], Q_shared[:, D:])
            T.copy(K[bx * block_N:(bx + 1) * block_N, :D], K_shared)
            T.copy(K[bx * block_N:(bx + 1) * block_N, D:], K_tail_shared)
            T.clear(acc)
            T.gemm(Q_shared[:, :D], K_shared, acc, transpose_B=True)
            T.gemm(Q_shared[:, D:], K_tail_shared, acc, transpose_B=True)
            T.copy(acc, S[0:M, bx * block_N:(bx + 1) * block_N])

    return kernel


# (lengths of the sequences, dim): one short, one over three blocks, one ragged, the last
# ending at the tensor's end
VARLEN_ROWS_PROBLEM = ([1, 300, 77, 128], 128)
