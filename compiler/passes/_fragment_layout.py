"""Fragment layouts in the IR: the `tile.layout` attribute (#tile.linear, read and written
through tilec.compiler.layouts.linear) and the layouts the SIMT path chooses when nothing
else fixes one.

The choices are blocked layouts (tilec.compiler.layouts.linear.blocked): `default_layout`
puts threads side by side along the last dimension with 16-byte runs per thread, and
`gemm_layout` gives each thread a near-square block of the accumulator. Their sizes are
powers of two (the block's thread count must be one); ragged extents are padded and the
registers that fall outside the tile are masked.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from mlir import ir

from tilec.compiler.layouts.linear import LinearLayout, blocked, is_power_of_two, log2, padded
from tilec.compiler.passes._ir_walk import as_operation

LAYOUT_ATTR = "tile.layout"


def layout_attr(layout: LinearLayout) -> ir.Attribute:
    return ir.Attribute.parse(str(layout))


def read_layout(attr: ir.Attribute) -> LinearLayout:
    return _parsed_layout(str(attr))


@functools.lru_cache(maxsize=4096)
def _parsed_layout(text: str) -> LinearLayout:
    """Layouts are immutable and a kernel's passes read the same few thousands of times (a
    kda kernel: 5250 reads of a few dozen layouts, 1.7 s of its compile spent parsing)."""
    return LinearLayout.parse(text)


def set_layout(holder: ir.Operation, layout: LinearLayout) -> None:
    holder.attributes[LAYOUT_ATTR] = layout_attr(layout)


def op_layout(holder: ir.Operation) -> LinearLayout | None:
    """The layout a tile.alloc or tile.parallel carries, if any."""
    if LAYOUT_ATTR not in holder.attributes:
        return None
    return read_layout(holder.attributes[LAYOUT_ATTR])


def layout_of(value: ir.Value) -> LinearLayout | None:
    """The layout recorded on a fragment's tile.alloc, if any."""
    owner = value.owner
    if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
        owner = owner.operation
    if not isinstance(owner, ir.Operation):
        return None
    return op_layout(owner)


def project(loop: LinearLayout, vector: tuple[int, ...], dims: list[int | None]
            ) -> tuple[int, ...]:
    """A loop coordinate's image in a fragment indexed by loop dimensions `dims` (None: an
    index that does not move with the loop)."""
    return tuple(0 if d is None else vector[d] for d in dims)


def follows(fragment: LinearLayout, loop: LinearLayout, dims: list[int | None]) -> bool:
    """Whether every thread holds, in its own registers, the fragment elements the loop's
    points on that thread index (the thread bases agree once projected)."""
    return len(fragment.lane) == len(loop.lane) and len(fragment.warp) == len(loop.warp) and all(
        project(loop, theirs, dims) == ours
        for theirs, ours in zip(loop.thread_bases, fragment.thread_bases, strict=True))


def depends_on(value: ir.Value, argument: ir.Value, block: ir.Block) -> bool:
    """Whether `value` is computed (by ops of `block`) from block argument `argument`."""
    pending, seen = [value], []
    while pending:
        value = pending.pop()
        if value == argument:
            return True
        owner = value.owner
        if isinstance(owner, ir.Block) or any(owner == known for known in seen):
            continue
        owner = as_operation(owner)
        seen.append(owner)
        if owner.block == block:  # else defined outside the body
            pending += list(owner.operands)
    return False


def unit_stride(value: ir.Value, argument: ir.Value, block: ir.Block) -> bool:
    """Whether `value` is `argument` plus something that does not depend on it."""
    if value == argument:
        return True
    owner = value.owner
    if isinstance(owner, ir.Block) or as_operation(owner).name != "arith.addi":
        return False
    left, right = as_operation(owner).operands
    return (unit_stride(left, argument, block) and not depends_on(right, argument, block)) \
        or (unit_stride(right, argument, block) and not depends_on(left, argument, block))


def row_contiguous_loads(parallel: ir.Operation, is_global: Callable[[ir.Value], bool]
                         ) -> list[tuple[int, ir.Type]]:
    """(position in the body, element type) of each load of a T.Parallel body, directly in
    it, from a global buffer (`is_global`) of elements of a byte or more, whose last index is
    the loop's last variable plus what does not depend on it and whose other indices are free
    of that variable: points side by side along the last dimension read side by side."""
    return row_contiguous_accesses(parallel, "memref.load", is_global)


def row_contiguous_accesses(parallel: ir.Operation, name: str,
                            accepts: Callable[[ir.Value], bool]) -> list[tuple[int, ir.Type]]:
    """row_contiguous_loads for the body's `name` ops (memref.load or memref.store) on the
    buffers `accepts` takes."""
    body = parallel.regions[0].blocks[0]
    last = body.arguments[len(body.arguments) - 1]
    first_index = 1 if name == "memref.load" else 2
    found = []
    for position, inner in enumerate(body.operations):
        inner = as_operation(inner)
        if inner.name != name or not accepts(inner.operands[first_index - 1]):
            continue
        indices = list(inner.operands)[first_index:]
        element = ir.MemRefType(inner.operands[first_index - 1].type).element_type
        if getattr(element, "width", 64) < 8 or not indices or not unit_stride(
                indices[-1], last, body) or any(depends_on(value, last, body)
                                                for value in indices[:-1]):
            continue
        found.append((position, element))
    return found


def default_layout(shape: tuple[int, ...], threads: int, elem_bytes: int,
                   warp_size: int = 32) -> LinearLayout:
    """Threads side by side along the last dimension, each owning up to 16 bytes there (a
    run that divides the extent, so no vector straddles the tile's edge). Threads are spread
    over the padded extents: a ragged row (3000 of 4096) keeps every thread on its own part of
    it, the registers past the edge masked, instead of every thread holding the whole row."""
    rank = len(shape)
    spt = [1] * rank
    if rank:
        vec = max(1, min(16 // max(elem_bytes, 1), shape[-1]))
        while shape[-1] % vec or not is_power_of_two(vec):
            vec -= 1
        spt[-1] = vec
    tpb = [1] * rank
    tstride = [1] * rank
    remaining, stride = threads, 1
    for d in reversed(range(rank)):
        used = math.gcd(remaining, padded(shape[d]) // spt[d])
        tpb[d], tstride[d] = used, stride
        stride *= used
        remaining //= used
    return blocked(tuple(shape), tuple(spt), tuple(tpb), tuple(tstride), threads, warp_size)


def gemm_layout(m: int, n: int, threads: int, warp_size: int = 32) -> LinearLayout:
    """An accumulator layout for the SIMT gemm: each thread owns a near-square block of C."""
    best = None
    for tpb_n in range(1, threads + 1):
        if threads % tpb_n or n % tpb_n or m % (threads // tpb_n):
            continue
        tpb_m = threads // tpb_n
        skew = abs(math.log((m / tpb_m) / (n / tpb_n)))
        key = (round(skew, 6), -tpb_n)
        if best is None or key < best[0]:
            best = (key, tpb_m, tpb_n)
    if best is None:
        return default_layout((m, n), threads, 4, warp_size)
    _, tpb_m, tpb_n = best
    spt_m = next(s for s in (4, 2, 1) if (m // tpb_m) % s == 0)
    spt_n = next(s for s in (4, 2, 1) if (n // tpb_n) % s == 0)
    return blocked((m, n), (spt_m, spt_n), (tpb_m, tpb_n), (tpb_n, 1), threads, warp_size)


def vector_loads(parallel: ir.Operation, layout: LinearLayout,
                 is_global: Callable[[ir.Value], bool]) -> list[tuple[int, int]]:
    """(position in the body, vector width) of each global load of a T.Parallel body whose
    consecutive registers read consecutive elements: a load directly in the body, its last
    index the last loop variable plus what does not depend on it, its other indices free of
    that variable; the width the layout's run of registers along the last dimension, at most
    16 bytes, starting where no thread's or later register's column breaks a vector."""
    runs = register_runs(layout)
    if runs < 2:
        return []
    return [(position, math.gcd(runs, 16 // max(1, getattr(element, "width", 8) // 8)))
            for position, element in row_contiguous_loads(parallel, is_global)]


def register_runs(layout: LinearLayout) -> int:
    """How many consecutive registers of the layout hold consecutive columns (the last
    dimension) with every run starting at a multiple of its length, in every thread and at
    every later register: the widest vector access along a row; 1 when there is none."""
    runs = layout.contiguous_registers()
    if runs < 2 or any(basis[-1] % runs for basis in layout.register[log2(runs):]) or \
            layout.thread_span()[-1] & (runs - 1):
        return 1
    return runs
