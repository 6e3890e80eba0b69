"""Two-sided thread ranges and `elif` chains of them (compiler/passes/_thread_range.py): a block
of 256 threads split four ways as TileLang's warp-specialized MLA kernels split theirs,
`if tx < 64: ... elif tx >= 64 and tx < 160: ... elif 160 <= tx < 192: ... else: ...`, each
range (64, 96, 32 and 64 threads) scaling one part of a row and summing it through a fragment,
a reduction and a shared round trip (a barrier over the range's threads on CUDA). `spelling`
picks how the bounds are written, so every form of comparison is exercised; a bound read one
off (`<=` taken as `<`) would leave a range off the warp grid (a compile error) or give a
part's elements to threads that never run it (NaN in the poisoned outputs).
tests/test_thread_ranges.py runs them on the CPU target (one thread runs the ranges in turn)
and checks their CUDA code; tests/gpu/test_thread_ranges_gpu.py runs them on the GPU.
"""

from __future__ import annotations

import torch

import tilec
import tilec.language as T

PARTS, WIDTH = 4, 128
# each range [first, end) of the block's 256 threads, in the chain's order
RANGES = ((0, 64), (64, 160), (160, 192), (192, 256))
SPELLINGS = ("and", "chained", "inclusive", "mirrored", "thread_binding")


@T.macro
def scale_and_sum(X, Out, Sums, i, part, factor):
    """Out[i, part] = X[i, part] * factor reversed, Sums[i, part] = its sum: the work of one
    range (a fragment, a reduction, a shared tile read back in another order)."""
    row = T.alloc_fragment((WIDTH,), T.float32)
    total = T.alloc_fragment((1,), T.float32)
    staged = T.alloc_shared((WIDTH,), T.float32)
    T.copy(X[i, part, 0], row)
    for k in T.Parallel(WIDTH):
        row[k] = row[k] * factor
    T.reduce_sum(row, total, dim=0)
    T.copy(row, staged)
    for k in T.Parallel(WIDTH):
        Out[i, part, k] = staged[WIDTH - 1 - k]
    Sums[i, part] = total[0]


@tilec.jit
def range_chain(X, Out, Sums, spelling: str = "and"):
    """Writes Out and Sums (the caller's, poisoned first) through four ranges."""
    rows = T.const("rows")
    X: T.Tensor[[rows, PARTS, WIDTH], T.float32]
    Out: T.Tensor[[rows, PARTS, WIDTH], T.float32]
    Sums: T.Tensor[[rows, PARTS], T.float32]
    with T.Kernel(rows, threads=256) as i:
        if spelling == "thread_binding":
            tx = T.thread_binding(0, 256, thread="threadIdx.x")
        else:
            tx = T.get_thread_binding()
        if spelling in ("and", "thread_binding"):
            if tx < 64:
                scale_and_sum(X, Out, Sums, i, 0, 1.0)
            elif tx >= 64 and tx < 160:
                scale_and_sum(X, Out, Sums, i, 1, 2.0)
            elif tx >= 160 and tx < 192:
                scale_and_sum(X, Out, Sums, i, 2, 3.0)
            else:
                scale_and_sum(X, Out, Sums, i, 3, 4.0)
        elif spelling == "chained":
            if 0 <= tx < 64:
                scale_and_sum(X, Out, Sums, i, 0, 1.0)
            elif 64 <= tx < 160:
                scale_and_sum(X, Out, Sums, i, 1, 2.0)
            elif 160 <= tx < 192:
                scale_and_sum(X, Out, Sums, i, 2, 3.0)
            elif 192 <= tx < 256:
                scale_and_sum(X, Out, Sums, i, 3, 4.0)
        elif spelling == "inclusive":
            if tx <= 63:
                scale_and_sum(X, Out, Sums, i, 0, 1.0)
            elif tx > 63 and tx <= 159:
                scale_and_sum(X, Out, Sums, i, 1, 2.0)
            elif tx >= 160 and tx <= 191:
                scale_and_sum(X, Out, Sums, i, 2, 3.0)
            elif tx > 191:
                scale_and_sum(X, Out, Sums, i, 3, 4.0)
        else:  # mirrored: the constant on the left
            if 64 > tx:
                scale_and_sum(X, Out, Sums, i, 0, 1.0)
            elif 63 < tx and 160 > tx:
                scale_and_sum(X, Out, Sums, i, 1, 2.0)
            elif 191 >= tx and 160 <= tx:
                scale_and_sum(X, Out, Sums, i, 2, 3.0)
            elif 192 <= tx:
                scale_and_sum(X, Out, Sums, i, 3, 4.0)


@tilec.jit
def middle_range(X, Out, Sums, first: int = 64, end: int = 192):
    """Only the threads [first, end) of 256 work: one range, no else (its rest is two
    pieces, on both sides)."""
    rows = T.const("rows")
    X: T.Tensor[[rows, PARTS, WIDTH], T.float32]
    Out: T.Tensor[[rows, PARTS, WIDTH], T.float32]
    Sums: T.Tensor[[rows, PARTS], T.float32]
    with T.Kernel(rows, threads=256) as i:
        tx = T.get_thread_binding()
        if tx >= first and tx < end:
            for part in T.serial(PARTS):
                scale_and_sum(X, Out, Sums, i, part, 1.0 + part)


def reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Out and Sums of the kernels above (float64 for a check): part p scaled by p + 1."""
    factors = torch.arange(1, PARTS + 1, dtype=x.dtype).view(1, PARTS, 1)
    scaled = x * factors
    return scaled.flip(2), scaled.sum(dim=2)
