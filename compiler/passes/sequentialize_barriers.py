"""sequentialize-barriers: mbarriers and TMA copies for the CPU target, which runs each block as
one thread executing its statements in order.

Without warp specialization every thread of a block runs the same statements, so one thread
running them in order is the block: a tile.tma_copy is a tile.copy that is complete at once
(out-of-bounds elements read as zero in both), and the barrier ops that only order threads
(tile.alloc_barrier, tile.mbarrier_arrive / expect_tx / wait_parity, tile.fence_proxy_async,
nvvm.barrier.arrive, nvvm.setmaxregister, T.ptx_commit_group's and T.ptx_wait_group's
cp.async group ops) are dropped: a wait that would return on a GPU has every arrival and byte
it waits for behind it already.

A tile.warpgroups (T.ws) or a branch on a thread range (`if tx < 64: ... elif 64 <= tx < 160:
... else: ...`, compiler/passes/_thread_range.py with NVIDIA's 32-thread warps, so a kernel
means the same on both targets) splits the block into threads that run different statements.
Where none of the kernel's threads waits for others (no T.mbarrier_wait_parity, no named
barrier: the sides cannot depend on each other's progress), the block's one thread runs the
sides in turn: each T.ws body, and each branch region that holds statements (each is a range
of threads), in program order, the condition gone. Where they may wait on each other one
thread cannot run both sides: a T.ws block is then a CompileError at its line, and a branch
keeps its condition, whose thread index lower-tile-structure-to-scf rejects at its line.
Runs before lower-tile-ops-to-loops.
"""

from __future__ import annotations

from mlir import ir

import tilec.dialect as tile
from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import ops_named
from tilec.compiler.passes._ir_walk import as_operation, defining_op, enclosing, op_error
from tilec.compiler.passes._thread_range import branch_ranges, is_thread_branch

DROPPED = ("tile.mbarrier_arrive", "tile.mbarrier_expect_tx", "tile.mbarrier_wait_parity",
           "tile.fence_proxy_async", "nvvm.barrier.arrive", "nvvm.setmaxregister",
           "nvvm.cp.async.commit.group", "nvvm.cp.async.wait.group")
# the ops through which a thread waits for other threads of its block than its own range's
WAITS = ("tile.mbarrier_wait_parity", "nvvm.barrier")
CUDA_WARP = 32  # the warp thread ranges are counted in (as on the CUDA target)
# what a range's condition is built from (dropped with the branch where nothing else reads it)
CONDITION_OPS = ("arith.andi", "arith.cmpi", "arith.constant", "arith.index_cast",
                 "arith.index_castui", "arith.extsi", "arith.extui", "gpu.thread_id")


@register
class SequentializeBarriers(TilePass):
    """tile.tma_copy -> tile.copy, barrier ops dropped, T.ws bodies and thread-range branches
    run in turn where no thread waits for another, else tile.warpgroups rejected (CPU)."""

    name = "sequentialize-barriers"
    summary = ("mbarrier ops dropped, tma_copy -> copy; T.ws and thread ranges in turn, or "
               "rejected where threads wait on each other")

    def run(self, module: ir.Module) -> None:
        _run_sides_in_turn(module)
        for op in ops_named(module.operation, ("tile.warpgroups",)):
            raise op_error(op.operation, "a warp-specialized block (T.ws, or an if-chain on "
                                         "the thread index over whole warpgroups) needs a GPU "
                                         "target: its warpgroups wait on each other's "
                                         "arrivals, which the CPU target's one thread per "
                                         "block cannot run")
        for op in ops_named(module.operation, ("tile.tma_copy",)):
            with op.location, ir.InsertionPoint(op):
                tile.copy(op.src, list(op.src_offsets), op.src_shape,
                          op.dst, list(op.dst_offsets), op.dst_shape)
            op.operation.erase()
        for op in ops_named(module.operation, DROPPED):
            op.operation.erase()
        for op in ops_named(module.operation, ("tile.alloc_barrier",)):
            if list(op.result.uses):
                raise op_error(op.operation, "a barrier is used where the CPU target cannot "
                                             "follow it (only T.mbarrier_* and T.tma_copy)")
            op.operation.erase()


def _run_sides_in_turn(module: ir.Module) -> None:
    """T.ws bodies and thread-range branches of kernels whose threads never wait for others,
    inlined in program order (see the module's doc); innermost first, each branch's ranges
    taken before any is changed (a nested branch's range depends on the branches around it)."""
    waiting = {enclosing(op.operation, "tile.kernel")
               for op in ops_named(module.operation, WAITS)}
    branches = [op.operation for op in ops_named(module.operation, ("scf.if",))
                if is_thread_branch(op.operation, CUDA_WARP)]
    ranges = {branch: branch_ranges(branch, enclosing(branch, "tile.kernel"), CUDA_WARP)
              for branch in branches}
    sides = [op.operation for op in ops_named(module.operation, ("tile.warpgroups",))]
    for side in sides + branches:
        if enclosing(side, "tile.kernel") in waiting:
            continue
        if side.name == "tile.warpgroups":
            _inline(side, [side.regions[0]])
            continue
        if side.results:
            continue  # a branch yielding values: not one the frontend makes of statements
        condition = side.operands[0]
        _inline(side, [region for region, found in zip(side.regions, ranges[side], strict=True)
                       if found is not None])
        _erase_dead(condition)


def _inline(op: ir.Operation, regions: list[ir.Region]) -> None:
    """The statements of `regions` (their terminators left out) moved before `op`, which goes."""
    for region in regions:
        for block in region.blocks:
            for inner in [as_operation(o) for o in block.operations]:
                if inner.name not in ("scf.yield", "tile.yield"):
                    inner.move_before(op)
    op.erase()


def _erase_dead(value: ir.Value) -> None:
    """The condition's ops that nothing reads any more."""
    op = defining_op(value)
    if op is None or op.name not in CONDITION_OPS or list(op.results[0].uses):
        return
    operands = list(op.operands)
    op.erase()
    for operand in operands:
        _erase_dead(operand)
