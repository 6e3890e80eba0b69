"""prefetch-loop-loads-to-l2: a loop's global loads whose addresses follow from the loop variable
are prefetched into L2 some iterations ahead (`prefetch.global.L2`), costing no registers.

A memory-bound step loop (the int4 GEMV's: each step loads a warp's weights and uses them at
once) has DRAM bytes in flight only while its warps wait on their own loads; the bytes an SM
needs in flight to stream at the bandwidth limit (Little's law: ~30 KB per SM on an H200)
then come only from many waiting warps. prefetch-loop-loads issues the next step's loads into
registers, which costs a second register set per thread, hence fewer resident warps, and needs
a register cap or ptxas sinks the loads back. Here each such load of iteration i + d is
instead prefetched into L2 at the start of iteration i: the request is in flight while the
warp computes, nothing is returned to the thread, so registers and occupancy stay as they
were, and the step's own load later finds its line in L2 (a few hundred cycles instead of a
DRAM round trip). The iterations lb + 1 .. lb + d - 1 are prefetched before the loop; the
iteration prefetched from i is min(i + d, last), so no address past the loop's own is formed.

Taken: the loops and loads prefetch-loop-loads takes (`_loop_loads.py`: constant bounds, two
trips or more, no write to memory another thread reads, no wait or call; top-level far loads
and the bounds-checked copies' load-only branches, addressed from the loop variable and values
before the loop), each load of at least 4 bytes (a lane's 2-byte scale read is one line per row
for the whole K, cached after its first step; prefetching it would cost an instruction a step)
read by at most 8 blocks of a known grid (those along the dimensions its address does not
depend on: a batch's few blocks re-reading a GEMV's weights, not the activations every block
reads). A bounds-checked copy's branch is cloned for the prefetched iteration with its loads as
prefetches, so only addresses its own check admits are prefetched. The distance d is the
module's `tile.prefetch_l2_distance` (TILEC_PREFETCH_L2=d on CUDA); without it (=auto), the
iterations that make AHEAD_BYTES of a thread's streamed loads (the int4 GEMV's 64-byte steps: 2;
TileLang's GEMV example, 4 bytes of weights a step: 8, at most MAX_DISTANCE); at most the
loop's trips - 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, nvvm, ub

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import (
    as_operation,
    enclosing,
    walk,
)
from tilec.compiler.passes._loop_loads import (
    clone_ops,
    element_address,
    in_else_branch,
    is_far_load,
    known_grid,
    loaded_bytes,
    read_by_few_blocks,
    take_loop,
)

DISTANCE_ATTR = "tile.prefetch_l2_distance"  # on the module: iterations ahead
MIN_BYTES = 4  # loads narrower than this are not prefetched
AHEAD_BYTES = 128  # without a distance: the bytes of a thread's streamed loads to run ahead by
MAX_DISTANCE = 8


def _as_prefetches(clone: ir.Operation, grid: list[int] | None) -> None:
    """The far loads in `clone` (or `clone` itself) become L2 prefetches of their addresses,
    their values poison. Dropped instead: loads narrower than MIN_BYTES or not streamed, and
    those in an else branch (a bounds-checked copy's element-wise edge: the whole run in
    bounds is prefetched, a run crossing the edge is not)."""
    for load in [clone, *walk(clone)]:
        if not is_far_load(load):
            continue
        with ir.InsertionPoint(load), load.location:
            if loaded_bytes(load) >= MIN_BYTES and read_by_few_blocks(load, grid) \
                    and not in_else_branch(load, clone):
                address = element_address(load.operands[0], list(load.operands[1:]))
                nvvm.prefetch(address, cache_level=nvvm.PrefetchCacheLevel.L2)
            poison = ub.poison(load.results[0].type)
        load.results[0].replace_all_uses_with(poison)
        load.erase()


def _streamed_bytes(roots: list[ir.Operation], grid: list[int] | None) -> int:
    """The bytes an iteration's prefetched loads read (a thread's share)."""
    return sum(loaded_bytes(load) for root in roots for load in [root, *walk(root)]
               if is_far_load(load) and loaded_bytes(load) >= MIN_BYTES
               and read_by_few_blocks(load, grid) and not in_else_branch(load, root))


def _prefetch_ahead(loop: ir.Operation, distance: int | None) -> bool:
    """Prefetches of the loop's loads `distance` iterations ahead (None: as many as keep
    AHEAD_BYTES of a thread's streamed bytes requested, up to MAX_DISTANCE); False if it has
    none."""
    taken = take_loop(loop)
    if taken is None:
        return False
    lower, step, trips, plan = taken.lower, taken.step, taken.trips, taken.loads
    function = enclosing(loop, "gpu.func")
    grid = known_grid(function)
    roots = [root for root in plan.roots
             if any(loaded_bytes(load) >= MIN_BYTES and read_by_few_blocks(load, grid)
                    for load in [root, *walk(root)] if is_far_load(load))]
    if not roots:
        return False
    if distance is None:
        per_iteration = max(_streamed_bytes(roots, grid), 1)
        distance = min(-(-AHEAD_BYTES // per_iteration), MAX_DISTANCE)
    distance = max(1, min(distance, trips - 1))
    last = taken.last
    body = loop.regions[0].blocks[0]
    induction = body.arguments[0]
    index = ir.IndexType.get()

    def emit(iteration: ir.Value, point: ir.InsertionPoint) -> None:
        mapping: dict[ir.Value, ir.Value] = {induction: iteration}
        before = {as_operation(op) for op in point.block.operations}
        clone_ops(plan.slice + roots, mapping, point)
        for op in [as_operation(op) for op in point.block.operations]:
            if op not in before and (is_far_load(op) or op.name == "scf.if"):
                _as_prefetches(op, grid)

    with ir.InsertionPoint(loop), loop.location:
        for ahead in range(1, distance):
            emit(arith.constant(index, lower + ahead * step), ir.InsertionPoint(loop))
    first = ir.InsertionPoint(as_operation(body.operations[0]))
    with first, loop.location:
        target = arith.minsi(arith.addi(induction, arith.constant(index, distance * step)),
                             arith.constant(index, last))
        emit(target, first)
    return True


@register
@dataclass
class PrefetchLoopLoadsToL2(TilePass):
    """A loop's global loads prefetched into L2 some iterations ahead."""

    name = "prefetch-loop-loads-to-l2"
    summary = "scf.for global loads of iteration i + d prefetched into L2 at iteration i"

    def run(self, module: ir.Module) -> None:
        attributes = module.operation.attributes
        distance = (ir.IntegerAttr(attributes[DISTANCE_ATTR]).value
                    if DISTANCE_ATTR in attributes else None)
        for loop in [op for op in walk(module.operation) if op.name == "scf.for"]:
            _prefetch_ahead(loop, distance)
