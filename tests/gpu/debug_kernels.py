"""Kernels of the debugging features, for the GPU suite: T.print (lines vprintf prints), the
checked mode (tilec.bounds_check: a bad index reported and trapped) and T.device_assert (the
device's __assertfail).
tests/gpu/precompile_frontend.py compiles them into the cache; tests/gpu/test_debug_features.py
runs them on the GPU, each in a process of its own (a trap ends the CUDA context)."""

from __future__ import annotations

import tilec
import tilec.language as T

CHECKED = {tilec.PassConfigKey.TILEC_BOUNDS_CHECK: True}
PRINT_BLOCKS, PRINT_THREADS, PRINT_ROWS, PRINT_COLUMNS = 2, 64, 2, 3
TABLE, LOOKUPS = 8, 16
ASSERT_LIMIT, ASSERT_BLOCKS = 100.0, 4


def printing():
    """Every kind of T.print line: a scalar from each thread, a message, a shared buffer from
    thread 0 and a fragment (after a T.Parallel) from thread 32."""
    rows, columns = PRINT_ROWS, PRINT_COLUMNS

    @T.prim_func
    def main(A: T.Tensor((rows, columns), T.float32),
             B: T.Tensor((PRINT_BLOCKS * rows, columns), T.float32)):
        with T.Kernel(PRINT_BLOCKS, threads=PRINT_THREADS) as bx:
            tile = T.alloc_shared((rows, columns), T.float32)
            acc = T.alloc_fragment((rows, columns), T.float32)
            T.copy(A, tile)
            T.copy(tile, acc)
            for i, j in T.Parallel(rows, columns):
                acc[i, j] = acc[i, j] * 2.0 + bx
            T.print(bx * 10 + 1)
            T.print(msg="hello")
            T.print(tile, msg="tile")
            T.print(acc, warp_id=1)
            T.copy(acc, B[bx * rows, 0])

    return main


def gather():
    """B[i] = table[Index[i]] through a shared table: the read at a loaded index is checked."""

    @T.prim_func
    def main(A: T.Tensor((TABLE,), T.float32), Index: T.Tensor((LOOKUPS,), T.int32),
             B: T.Tensor((LOOKUPS,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            table = T.alloc_shared((TABLE,), T.float32)
            T.copy(A, table)
            for i in T.Parallel(LOOKUPS):
                B[i] = table[Index[i]]

    return main


def bounded():
    """B = 2 * A where every element of A is below ASSERT_LIMIT, else T.device_assert stops
    the kernel."""
    size = ASSERT_BLOCKS * 64

    @T.prim_func
    def main(A: T.Tensor((size,), T.float32), B: T.Tensor((size,), T.float32)):
        with T.Kernel(ASSERT_BLOCKS, threads=64) as bx:
            for i in T.Parallel(64):
                T.device_assert(A[bx * 64 + i] < ASSERT_LIMIT, "A past the limit")  # the-assert
                B[bx * 64 + i] = A[bx * 64 + i] * 2.0

    return main


def compile_all(target: str) -> None:
    """What the GPU machine loads from the cache."""
    tilec.compile(printing(), out_idx=[1], target=target)
    tilec.compile(gather(), target=target, pass_configs=CHECKED)
    tilec.compile(bounded(), out_idx=[1], target=target)
