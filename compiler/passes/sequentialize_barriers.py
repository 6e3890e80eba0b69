"""sequentialize-barriers: mbarriers and TMA copies for the CPU target, which runs each block as
one thread executing its statements in order.

Without warp specialization every thread of a block runs the same statements, so one thread
running them in order is the block: a tile.tma_copy is a tile.copy that is complete at once
(out-of-bounds elements read as zero in both), and the barrier ops that only order threads
(tile.alloc_barrier, tile.mbarrier_arrive / expect_tx / wait_parity, tile.fence_proxy_async,
nvvm.barrier.arrive, nvvm.setmaxregister, T.ptx_commit_group's and T.ptx_wait_group's
cp.async group ops) are dropped: a wait that would return on a GPU has every arrival and byte
it waits for behind it already. A tile.warpgroups (T.ws) splits the
block into threads that run different statements and wait on each other's arrivals; one
thread cannot run both sides, so it is a CompileError at its line. Runs before
lower-tile-ops-to-loops.
"""

from __future__ import annotations

from mlir import ir

import tilec.dialect as tile
from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import ops_named
from tilec.compiler.passes._ir_walk import op_error

DROPPED = ("tile.mbarrier_arrive", "tile.mbarrier_expect_tx", "tile.mbarrier_wait_parity",
           "tile.fence_proxy_async", "nvvm.barrier.arrive", "nvvm.setmaxregister",
           "nvvm.cp.async.commit.group", "nvvm.cp.async.wait.group")


@register
class SequentializeBarriers(TilePass):
    """tile.tma_copy -> tile.copy, barrier ops dropped, tile.warpgroups rejected (CPU)."""

    name = "sequentialize-barriers"
    summary = "mbarrier ops dropped, tma_copy -> copy; warp-specialized blocks rejected"

    def run(self, module: ir.Module) -> None:
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
