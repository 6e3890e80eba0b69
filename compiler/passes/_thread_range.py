"""Thread ranges: the threads that run the branches of `if` on the thread index.

A kernel may give a branch to part of its block (`if tx < 32: ... else: ...`,
`if tx >= 128 and tx < 256:`, `elif 128 <= tx < 160:`, as TileLang's examples do). Fragments
and T.Parallel loops inside such a branch are laid out over the threads that run it, their
thread index counted from the range's first thread, as a T.ws block's are: a layout over the
whole block would give elements to threads that never reach the branch, and those elements
would never be computed.

A condition selects a range when it compares the block's x thread index (of a block that is
one-dimensional along x) with constants: `<`, `<=`, `>`, `>=`, `==` with the index on either
side, Python's chains (`lo <= tx < hi`) and conjunctions (`and`) of them (`condition_span`).
The then region runs on the condition's span within the range of the region around the `if`
(the whole block at the top), the else region on the rest of that range where the rest is
one range, so `if ... elif ... else` chains nest into ranges. A region that holds statements
is a range when its threads are one non-empty range whose ends are multiples of the warp size
(or the block's end); other conditions on the thread index keep today's meaning (the whole
block's layouts). Only NVIDIA targets have ranges (`range_warp`): a branch's barriers become
named barriers, which AMD and SPIR-V lack. The CPU target, one thread per block, runs the
ranges' regions in turn where no thread waits for another (sequentialize-barriers).

A range of a count that is not a power of two (96 threads, or the 64 of `else` in a block of
96) is laid out over the largest power of two it holds (`layout_threads`); its threads past
that run as copies of the first ones (the layout's thread bits ignore the higher bits of
their index), and only the first ones store (lower-tile-to-gpu's `canonical_owner`).
"""

from __future__ import annotations

import math

from mlir import ir

from tilec.compiler.passes._ir_walk import as_operation, constant_index, defining_op, enclosing
from tilec.compiler.passes._wgmma import WARPGROUP_THREADS
from tilec.compiler.targets.description import TargetDescription

ThreadRange = tuple[int, int]  # [first, end) of the block's thread index

# arith.CmpIPredicate's numbering: its name, and the predicate with the operands swapped
_PREDICATES = {0: "eq", 2: "slt", 3: "sle", 4: "sgt", 5: "sge",
               6: "ult", 7: "ule", 8: "ugt", 9: "uge"}
_MIRRORED = {"eq": "eq", "slt": "sgt", "sle": "sge", "sgt": "slt", "sge": "sle",
             "ult": "ugt", "ule": "uge", "ugt": "ult", "uge": "ule"}
# what a kernel's statements stand in: the tile.kernel, or the gpu.func lowering moves them to
KERNEL_BODIES = ("tile.kernel", "gpu.func")
_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui")


def range_warp(description: TargetDescription) -> int:
    """The warp size ranges are counted in on this target, 0 where it has none."""
    return description.warp_size if description.family == "nvidia" else 0


def layout_threads(count: int) -> int:
    """The threads a layout over `count` threads spans: the largest power of two <= count."""
    return 1 << (max(count, 1).bit_length() - 1)


def block_threads(kernel: ir.Operation) -> int:
    return math.prod(ir.DenseI64ArrayAttr(kernel.attributes["threads"]))


def condition_span(condition: ir.Value, threads: int) -> ThreadRange | None:
    """[low, high) of the x thread indices in [0, threads) for which `condition` holds (low ==
    high when none does), when it compares the thread index with constants or is a
    conjunction of such comparisons; None for any other condition."""
    op = defining_op(condition)
    if op is None:
        return None
    if op.name == "arith.andi":
        low, high = 0, threads
        for operand in op.operands:
            span = condition_span(operand, threads)
            if span is None:
                return None
            low, high = max(low, span[0]), min(high, span[1])
        return low, max(low, high)
    if op.name != "arith.cmpi":
        return None
    predicate = _PREDICATES.get(ir.IntegerAttr(op.attributes["predicate"]).value)
    left, right = op.operands
    if _is_thread_x(left) and constant_index(right) is not None:
        bound = constant_index(right)
    elif _is_thread_x(right) and constant_index(left) is not None:
        bound, predicate = constant_index(left), _MIRRORED.get(predicate)
    else:
        return None
    if predicate is None or (predicate[0] == "u" and bound < 0):
        return None  # an unsigned comparison with a negative constant: not written as a range
    kind = predicate.removeprefix("s").removeprefix("u")
    low, high = {"lt": (0, bound), "le": (0, bound + 1), "gt": (bound + 1, threads),
                 "ge": (bound, threads), "eq": (bound, bound + 1)}[kind]
    low, high = min(max(low, 0), threads), min(max(high, 0), threads)
    return low, max(low, high)


def _is_thread_x(value: ir.Value) -> bool:
    """Whether `value` is the block's x thread index (through integer casts that keep it)."""
    op = defining_op(value)
    while op is not None and op.name in _CASTS:
        op = defining_op(op.operands[0])
    return (op is not None and op.name == "gpu.thread_id"
            and "x" in str(op.attributes["dimension"]))


def branch_ranges(branch: ir.Operation, kernel: ir.Operation, warp_size: int
                  ) -> tuple[ThreadRange | None, ThreadRange | None] | None:
    """The thread ranges of an scf.if's then and else regions (None for a region whose threads
    are not one range of whole warps), None when the `if` is not a branch on the thread index
    inside a range (the whole block's, or an enclosing branch's region's): its condition is
    not a comparison of the thread index with constants (always None for a warp size of 0: a
    target without ranges)."""
    if branch.name != "scf.if" or warp_size <= 0:
        return None
    sizes = list(ir.DenseI64ArrayAttr(kernel.attributes["threads"]))
    if any(size != 1 for size in sizes[1:]):
        return None
    threads = sizes[0]
    span = condition_span(branch.operands[0], threads)
    if span is None:
        return None
    outer = _range_around(branch, kernel, warp_size)
    if outer is None:
        return None
    first, end = outer
    then_range = (max(span[0], first), min(span[1], end))
    if span[0] <= first:
        else_range = (max(span[1], first), end)
    elif span[1] >= end:
        else_range = (first, min(span[0], end))
    else:
        else_range = None  # the rest of the range is two pieces, on both sides of the span
    return (_whole_warps(then_range, threads, warp_size),
            _whole_warps(else_range, threads, warp_size))


def _whole_warps(found: ThreadRange | None, threads: int, warp_size: int
                 ) -> ThreadRange | None:
    if found is None:
        return None
    first, end = found
    if first >= end or first % warp_size or (end % warp_size and end != threads):
        return None
    return found


def _range_around(op: ir.Operation, kernel: ir.Operation, warp_size: int
                  ) -> ThreadRange | None:
    """The threads running the region `op` stands in, as far as branches on the thread index
    tell: the range of the innermost enclosing range branch's region, the whole block
    outside any; None inside a T.ws block over part of the block (its thread index starts
    at 0 there) or inside an `if` on the thread index that is not a range branch."""
    child, parent = op, as_operation(op.parent)
    while parent.name not in KERNEL_BODIES:
        if _partial_warpgroups(parent, kernel):
            return None
        if parent.name == "scf.if" and condition_span(parent.operands[0],
                                                       block_threads(kernel)) is not None:
            if not is_thread_branch(parent, warp_size, kernel):
                return None  # divergent code on the thread index, not a range
            ranges = branch_ranges(parent, kernel, warp_size)
            return ranges[0] if in_region(child, parent.regions[0]) else ranges[1]
        child, parent = parent, as_operation(parent.parent)
    return 0, block_threads(kernel)


def is_thread_branch(op: ir.Operation, warp_size: int,
                     kernel: ir.Operation | None = None) -> bool:
    """Whether `op` is an scf.if whose branches run on thread ranges: a recognised condition,
    inside the whole block or a range, each region holding statements a range of whole warps
    (one that does not, such as the else of `if 64 <= tx < 128` in a block of 256, makes
    the `if` ordinary divergent code). `kernel`: the tile.kernel it belongs to, where it no
    longer stands in it (lower-tile-to-gpu moves the body into a gpu.func)."""
    if op.name != "scf.if" or warp_size <= 0:
        return False
    kernel = kernel or enclosing(op, "tile.kernel")
    ranges = None if kernel is None else branch_ranges(op, kernel, warp_size)
    if ranges is None:
        return False
    return all(found is not None or not _holds_statements(region)
               for region, found in zip(op.regions, ranges, strict=True))


def _holds_statements(region: ir.Region) -> bool:
    return any(as_operation(inner).name != "scf.yield"
               for block in region.blocks for inner in block.operations)


def thread_range_at(op: ir.Operation, kernel: ir.Operation, warp_size: int
                    ) -> ThreadRange | None:
    """The thread range of the innermost branch around `op` that runs on a range
    (`is_thread_branch`), None where the whole block (or a T.ws block's warpgroups) runs it."""
    child, parent = op, as_operation(op.parent)
    while parent.name not in KERNEL_BODIES:
        if _partial_warpgroups(parent, kernel):
            return None
        if is_thread_branch(parent, warp_size, kernel):
            ranges = branch_ranges(parent, kernel, warp_size)
            return ranges[0] if in_region(child, parent.regions[0]) else ranges[1]
        child, parent = parent, as_operation(parent.parent)
    return None


def _partial_warpgroups(op: ir.Operation, kernel: ir.Operation) -> bool:
    """A T.ws block over part of the block (its body's thread index starts at 0 there)."""
    if op.name != "tile.warpgroups":
        return False
    groups = len(ir.DenseI64ArrayAttr(op.attributes["groups"]))
    return WARPGROUP_THREADS * groups != block_threads(kernel)


def in_region(op: ir.Operation, region: ir.Region) -> bool:
    """Whether `op` stands directly in `region`."""
    return any(as_operation(inner) == op for block in region.blocks
               for inner in block.operations)
