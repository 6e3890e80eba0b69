"""check-thread-branches: no tile-wide statement under a condition on the thread index.

A tile-wide statement (T.copy, T.gemm, T.fill / T.clear, T.reduce_*, a T.Parallel loop,
T.tma_copy, T.alloc_barrier) is shared among the threads of the block: each thread computes the
elements its layout gives it (an element's T.atomic_add, and a copy or fill of a T.alloc_local
buffer, by contrast, are each thread's own).
Under `if` on a value that differs between the block's threads, the threads that skip the
branch leave their elements undone, a silent wrong result (or a hang, where an mbarrier waits
for their bytes). Such a statement is an error at its line, naming the condition's line, unless
the branch is a thread range
(compiler/passes/_thread_range.py: `T.get_thread_binding() < c`, `c <= tx < d`, `and`s and
`elif` chains of such, whose threads are one range between multiples of the warp size, on
NVIDIA targets), whose statements are laid out over the threads that run it.

What differs between threads: the thread index (T.get_thread_binding), warp shuffles and votes,
and every value computed from them, through arithmetic, through per-thread buffers (T.alloc_var,
T.alloc_local, fragment elements) written with such a value or under such a condition, and
through loads at an index computed from them. A loop whose bounds differ between threads is
such a condition too (its body runs a different number of times on each thread). Values loaded
from shared or global memory at the same index on every thread are the same on all of them, and
a per-thread buffer written inside a thread range's branch (the same value on each of its
threads) is the same on that range's threads: only its reads outside the branch's region
differ.
Run before infer-fragment-layout (the CUDA, HIP and SPIR-V targets run it first in their tile
stage); the CPU target, which runs a block as one thread, rejects the thread index itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._integer_storage import root_of
from tilec.compiler.passes._ir_walk import (
    LOCATION,
    as_operation,
    is_memref,
    kernels,
    op_error,
    scope,
    walk,
)
from tilec.compiler.passes._scheduling import target_description
from tilec.compiler.passes._thread_range import in_region, is_thread_branch, range_warp
from tilec.compiler.passes._user_sync import CP_ASYNC_ATTR
from tilec.errors import CompileError

# the ops whose result differs between the threads of a block
THREAD_VALUES = ("gpu.thread_id", "gpu.lane_id", "gpu.shuffle", "nvvm.shfl.sync",
                 "nvvm.vote.sync")
# the tile-wide statements, as the user wrote them
TILE_WIDE = {
    "tile.copy": "T.copy",
    "tile.gemm": "T.gemm",
    "tile.fill": "T.fill (T.clear)",
    "tile.reduce": "T.reduce",
    "tile.parallel": "a T.Parallel loop",
    "tile.tma_copy": "T.tma_copy",
    "tile.alloc_barrier": "T.alloc_barrier",
}
PER_THREAD_SCOPES = ("var", "local", "fragment")
LOOPS = ("scf.for", "tile.for", "tile.pipelined")  # lower, upper, step come first


def _location(op: ir.Operation) -> str:
    found = LOCATION.search(str(op.location))
    return f"line {found.group(2)}" if found else "a condition"


class ThreadValues:
    """The values of one kernel that differ between its threads (see the module's doc)."""

    def __init__(self, kernel: ir.Operation, warp: int) -> None:
        self.kernel = kernel
        self.warp = warp
        self.values: set[ir.Value] = set()
        self.buffers: set[ir.Value] = set()  # per-thread buffers that differ everywhere
        # per-thread buffers written (the same on each thread) in a thread range's branch:
        # the same on that range's threads (the innermost range's region), not on the block's
        self.ranged: dict[ir.Value, list[tuple[ir.Operation, int]]] = {}
        changed = True
        while changed:  # stores under a condition can make an earlier load per-thread
            before = self._size()
            for op in walk(kernel):
                self._visit(op)
            changed = self._size() != before

    def _size(self) -> tuple[int, int, int]:
        return (len(self.values), len(self.buffers),
                sum(len(branches) for branches in self.ranged.values()))

    def differs(self, value: ir.Value) -> bool:
        return value in self.values

    def divergent(self, op: ir.Operation) -> bool:
        """Whether the threads of the block may disagree on running `op`'s regions."""
        if op.name == "scf.if":
            return self.differs(op.operands[0])
        if op.name in LOOPS:
            return any(self.differs(bound) for bound in list(op.operands)[:3])
        if op.name == "scf.while":
            condition = list(op.regions[0].blocks[0].operations)[-1]
            return self.differs(as_operation(condition).operands[0])
        if op.name == "scf.index_switch":
            return self.differs(op.operands[0])
        return False

    def conditions(self, op: ir.Operation) -> list[ir.Operation]:
        """The divergent ops around `op`, innermost first."""
        found = []
        parent = as_operation(op.parent)
        while parent != self.kernel:
            if self.divergent(parent):
                found.append(parent)
            parent = as_operation(parent.parent)
        return found

    def _visit(self, op: ir.Operation) -> None:
        operands = list(op.operands)
        if op.name in THREAD_VALUES:
            self._mark(op.results)
        elif op.name == "memref.store":
            value, buffer, indices = operands[0], operands[1], operands[2:]
            if scope(buffer) in PER_THREAD_SCOPES:
                self._store(op, root_of(buffer),
                            self.differs(value) or any(map(self.differs, indices)))
        elif op.name == "memref.load":
            root = root_of(operands[0])
            if (root in self.buffers or any(map(self.differs, operands[1:]))
                    or not all(_inside(op, region) for region in self.ranged.get(root, []))):
                self._mark(op.results)
        elif op.name in ("scf.yield", "scf.condition"):
            parent = as_operation(op.parent)
            if any(map(self.differs, operands)) or self.divergent(parent):
                self._mark(parent.results)
                for region in parent.regions:
                    for block in region.blocks:
                        self._mark(block.arguments)
        elif any(map(self.differs, operands)):
            self._mark(op.results)
            for region in op.regions:
                for block in region.blocks:
                    self._mark(block.arguments)

    def _store(self, op: ir.Operation, root: ir.Value, differs: bool) -> None:
        conditions = self.conditions(op)
        if differs or not all(is_thread_branch(c, self.warp) for c in conditions):
            self.buffers.add(root)
        elif conditions:
            regions = self.ranged.setdefault(root, [])
            region = _region_of(op, conditions[0])
            if region not in regions:
                regions.append(region)

    def _mark(self, values) -> None:
        self.values.update(values)


def _region_of(op: ir.Operation, branch: ir.Operation) -> tuple[ir.Operation, int] | None:
    """`branch` and the number of its region that `op` is nested in, None if it is in none."""
    child, parent = op, op.parent
    while parent is not None:
        parent = as_operation(parent)
        if parent == branch:
            return branch, next(number for number, region in enumerate(branch.regions)
                                if in_region(child, region))
        child, parent = parent, parent.parent
    return None


def _inside(op: ir.Operation, region: tuple[ir.Operation, int]) -> bool:
    """Whether `op` is nested in the region (a branch and its region's number)."""
    return _region_of(op, region[0]) == region


@register
@dataclass
class CheckThreadBranches(TilePass):
    """Reject tile-wide statements under conditions that differ between a block's threads."""

    name = "check-thread-branches"
    summary = "error: T.copy / T.gemm / T.Parallel ... under an `if` on the thread index"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        target = target_description(module, self.arch, self.name)
        warp = range_warp(target)
        for kernel in kernels(module):
            thread_values = ThreadValues(kernel, warp)
            for op in walk(kernel):
                what = TILE_WIDE.get(op.name)
                if what is None or CP_ASYNC_ATTR in op.attributes or _each_thread_own(op):
                    continue
                for condition in thread_values.conditions(op):
                    if not is_thread_branch(condition, warp):
                        raise _error(op, what, condition, target.name, warp)


def _each_thread_own(op: ir.Operation) -> bool:
    """A copy or fill touching a T.alloc_local / T.alloc_var buffer: each thread does all of it
    on its own copy (lower-tile-to-gpu), as T.ptx_cp_async's copy is its thread's own."""
    return op.name in ("tile.copy", "tile.fill") and any(
        is_memref(value) and scope(value) in ("local", "var") for value in op.operands)


def _error(op: ir.Operation, what: str, condition: ir.Operation, target: str,
           warp: int) -> CompileError:
    if condition.name in ("scf.if", "scf.index_switch"):
        around = "an `if` whose condition differs"
    else:
        around = "a loop whose bounds differ"
    if warp:
        ranges = (f"only a branch of an `if` comparing T.get_thread_binding() with "
                  f"constants (`tx < c`, `c <= tx < d`, `and` of such, `elif` chains of them) "
                  f"whose threads are one range from and to multiples of {warp} runs its tile "
                  f"statements on its own threads")
    else:
        ranges = f"{target} has no thread ranges: branch inside a T.Parallel body instead"
    return op_error(op, f"{what} stands under {around} between the block's threads "
                        f"({_location(condition)}): a tile-wide statement is shared by all the "
                        f"block's threads, and those that skip it would leave their part "
                        f"undone; move it out of the branch ({ranges})")
