"""Thread ranges: the threads that run the branches of `if T.get_thread_binding() < c:`.

A kernel may give a branch to part of its block (`if tx < 32: ... else: ...`, as TileLang's
examples do). Fragments and T.Parallel loops inside such a branch are laid out over the
threads that run it, their thread index counted from the range's first thread, as a T.ws
block's are: a layout over the whole block would give elements to threads that never reach
the branch, and those elements would never be computed.

A range is recognised when the condition compares the block's x thread index (of a block
that is one-dimensional along x) with a constant multiple of the warp size: `tid < c` (then
[0, c), else [c, n)) or `tid >= c` (the other way round). Other conditions on the thread
index keep today's meaning (the whole block's layouts). Only NVIDIA targets have ranges
(`range_warp`): a branch's barriers become named barriers, which AMD and SPIR-V lack.

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

_BELOW = {"slt": True, "ult": True, "sge": False, "uge": False}
# arith.CmpIPredicate's numbering
_PREDICATES = {2: "slt", 6: "ult", 5: "sge", 9: "uge"}


def range_warp(description: TargetDescription) -> int:
    """The warp size ranges are counted in on this target, 0 where it has none."""
    return description.warp_size if description.family == "nvidia" else 0


def layout_threads(count: int) -> int:
    """The threads a layout over `count` threads spans: the largest power of two <= count."""
    return 1 << (max(count, 1).bit_length() - 1)


def block_threads(kernel: ir.Operation) -> int:
    return math.prod(ir.DenseI64ArrayAttr(kernel.attributes["threads"]))


def branch_ranges(branch: ir.Operation, kernel: ir.Operation, warp_size: int
                  ) -> tuple[ThreadRange, ThreadRange] | None:
    """The thread ranges of an scf.if's then and else regions, None when its condition is not
    a comparison of the thread index with a multiple of the warp size (always None for a
    warp size of 0: a target without ranges)."""
    if branch.name != "scf.if" or warp_size <= 0:
        return None
    compare = defining_op(branch.operands[0])
    if compare is None or compare.name != "arith.cmpi":
        return None
    predicate = _PREDICATES.get(ir.IntegerAttr(compare.attributes["predicate"]).value)
    tid = defining_op(compare.operands[0])
    bound = constant_index(compare.operands[1])
    sizes = list(ir.DenseI64ArrayAttr(kernel.attributes["threads"]))
    if (predicate is None or tid is None or tid.name != "gpu.thread_id" or bound is None
            or "x" not in str(tid.attributes["dimension"]) or any(s != 1 for s in sizes[1:])):
        return None
    threads = sizes[0]
    if not 0 < bound < threads or bound % warp_size:
        return None
    low, high = (0, bound), (bound, threads)
    return (low, high) if _BELOW[predicate] else (high, low)


def is_thread_branch(op: ir.Operation, warp_size: int) -> bool:
    """Whether `op` is an scf.if whose branches run on thread ranges: a recognised condition,
    not inside another such branch nor inside a T.ws block over part of the block (nested
    ranges are ordinary divergent code; lower-tile-to-gpu's `tid_is_global` agrees)."""
    if op.name != "scf.if" or warp_size <= 0:
        return False
    kernel = enclosing(op, "tile.kernel")
    if kernel is None or branch_ranges(op, kernel, warp_size) is None:
        return False
    parent = as_operation(op.parent)
    while parent.name != "tile.kernel":
        if _partial_warpgroups(parent, kernel) or (
                branch_ranges(parent, kernel, warp_size) is not None):
            return False
        parent = as_operation(parent.parent)
    return True


def thread_range_at(op: ir.Operation, kernel: ir.Operation, warp_size: int
                    ) -> ThreadRange | None:
    """The thread range of the branch around `op` that runs on a range (`is_thread_branch`),
    None where the whole block (or a T.ws block's warpgroups) runs it."""
    child, parent = op, as_operation(op.parent)
    found = None
    while parent.name != "tile.kernel":
        if _partial_warpgroups(parent, kernel):
            return None
        ranges = branch_ranges(parent, kernel, warp_size)
        if ranges is not None:  # the outermost one counts
            then_range, else_range = ranges
            found = then_range if _in_region(child, parent.regions[0]) else else_range
        child, parent = parent, as_operation(parent.parent)
    return found


def _partial_warpgroups(op: ir.Operation, kernel: ir.Operation) -> bool:
    """A T.ws block over part of the block (its body's thread index starts at 0 there)."""
    if op.name != "tile.warpgroups":
        return False
    groups = len(ir.DenseI64ArrayAttr(op.attributes["groups"]))
    return WARPGROUP_THREADS * groups != block_threads(kernel)


def _in_region(op: ir.Operation, region: ir.Region) -> bool:
    return any(as_operation(inner) == op for block in region.blocks
               for inner in block.operations)
