"""Values of a kernel computed from the thread index and constants, evaluated on every thread.

A condition such as `tid < 16`, `tid % 32 == 0` or a warp index is known at compile time for
each thread of a block of constant size: evaluating it for all of them (check-parallel-updates'
PointValues, with the block's threads as the points) tells which threads run what it guards.
name-live-lanes masks warp-collective ops by it; check-scalar-stores counts the threads that
run a store under such a condition.
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

from tilec.compiler.passes._ir_walk import defining_op
from tilec.compiler.passes.check_parallel_updates import PointValues

AXES = ("x", "y", "z")
WARP = 32  # lanes of an NVIDIA warp


class PerThread(PointValues):
    """The values of one block of `block` (x, y, z) threads, one int64 per thread."""

    def __init__(self, block: list[int]) -> None:
        super().__init__({})
        self.block = (list(block) + [1, 1])[:3]

    @property
    def count(self) -> int:
        return math.prod(self.block)

    def evaluate(self, value: ir.Value) -> np.ndarray | None:
        """`value` on every thread of the block, None where it is not computed from the
        thread index and constants alone."""
        try:
            values = self.of(value)
        except RecursionError:  # a chain of arithmetic deeper than Python's stack: unknown
            return None
        return None if values is None else np.broadcast_to(values, (self.count,))

    def _compute(self, value: ir.Value) -> np.ndarray | None:
        op = defining_op(value)
        if op is None:
            return None
        tid = np.arange(self.count, dtype=np.int64)
        if op.name in ("gpu.thread_id", "gpu.block_dim"):
            axis = AXES.index(str(op.attributes["dimension"]).split()[-1].strip(">"))
            if op.name == "gpu.block_dim":
                return np.int64(self.block[axis])
            return (tid // math.prod(self.block[:axis])) % self.block[axis]
        if op.name == "gpu.lane_id":
            return tid % WARP
        if op.name == "gpu.shuffle":
            return self._read_lane(op, value)
        return super()._compute(value)

    def _read_lane(self, op: ir.Operation, value: ir.Value) -> np.ndarray | None:
        """A gpu.shuffle idx over the whole warp: every lane takes lane `offset`'s value."""
        if value != op.results[0] or "idx" not in str(op.attributes["mode"]):
            return None
        source, lane, width = (self.evaluate(v) for v in op.operands)
        if source is None or lane is None or width is None or (width != WARP).any():
            return None
        tid = np.arange(self.count, dtype=np.int64)
        at = (tid // WARP) * WARP + lane % WARP
        return np.where(at < self.count, source[np.minimum(at, self.count - 1)], 0)
