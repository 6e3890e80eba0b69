"""Values of a kernel computed from the thread index and constants, evaluated on every thread.

A condition such as `tid < 16`, `tid % 32 == 0` or a warp index is known at compile time for
each thread of a block of constant size: evaluating it for all of them (numpy, one int64 per
thread) tells which threads run what it guards. name-live-lanes masks warp-collective ops by
it; check-scalar-stores counts the threads that run a store under such a condition.
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

from tilec.compiler.passes._ir_walk import defining_op

AXES = ("x", "y", "z")
WARP = 32  # lanes of an NVIDIA warp
_BINARY = {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
    "arith.maxsi": np.maximum, "arith.minsi": np.minimum, "arith.maxui": np.maximum,
    "arith.minui": np.minimum,
}
_DIVISIONS = {"arith.divui", "arith.divsi", "arith.floordivsi", "arith.remui", "arith.remsi",
              "arith.ceildivui", "arith.ceildivsi"}
_CASTS = {"arith.index_cast", "arith.index_castui", "arith.extui", "arith.extsi",
          "arith.trunci"}
_SHIFTS = {"arith.shli", "arith.shrui", "arith.shrsi"}
_EVALUATED = {*_BINARY, *_DIVISIONS, *_CASTS, *_SHIFTS, "arith.cmpi", "arith.select"}
# arith.cmpi's predicates by number: eq ne slt sle sgt sge ult ule ugt uge
_COMPARE = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
            np.less, np.less_equal, np.greater, np.greater_equal]


class PerThread:
    """The per-thread values of one block of `block` (x, y, z) threads, evaluated on demand."""

    def __init__(self, block: list[int]) -> None:
        self.block = (list(block) + [1, 1])[:3]
        self.values: dict[ir.Value, np.ndarray | None] = {}

    @property
    def count(self) -> int:
        return math.prod(self.block)

    def evaluate(self, value: ir.Value) -> np.ndarray | None:
        """`value` on every thread of the block (int64), None where it is not computed from
        the thread index and constants alone."""
        if value not in self.values:
            self.values[value] = None  # a cycle through a region's results reads as unknown
            self.values[value] = self._evaluate(value)
        return self.values[value]

    def _evaluate(self, value: ir.Value) -> np.ndarray | None:
        op = defining_op(value)
        if op is None:
            return None
        name = op.name
        tid = np.arange(self.count, dtype=np.int64)
        if name == "arith.constant":
            attr = op.attributes["value"]
            if not isinstance(attr, ir.IntegerAttr):
                return None
            return np.full(self.count, ir.IntegerAttr(attr).value, dtype=np.int64)
        if name == "gpu.thread_id":
            axis = AXES.index(str(op.attributes["dimension"]).split()[-1].strip(">"))
            inner = math.prod(self.block[:axis])
            return (tid // inner) % self.block[axis]
        if name == "gpu.lane_id":
            return tid % WARP
        if name == "gpu.block_dim":
            axis = AXES.index(str(op.attributes["dimension"]).split()[-1].strip(">"))
            return np.full(self.count, self.block[axis], dtype=np.int64)
        if name == "gpu.shuffle":  # a value of a lane all take: the warp's lane `offset`
            return self._read_lane(op, value)
        if name not in _EVALUATED:
            return None
        operands = [self.evaluate(v) for v in op.operands]
        if any(operand is None for operand in operands):
            return None
        if name in _CASTS:
            return operands[0]
        if name in _BINARY:
            return _BINARY[name](operands[0], operands[1])
        if name in _DIVISIONS:
            return _divide(name, operands[0], operands[1])
        if name in _SHIFTS:
            if (operands[1] < 0).any() or (operands[1] > 62).any():
                return None
            return operands[0] << operands[1] if name == "arith.shli" else \
                operands[0] >> operands[1]
        if name == "arith.cmpi":
            predicate = ir.IntegerAttr(op.attributes["predicate"]).value
            if predicate >= 6 and ((operands[0] < 0).any() or (operands[1] < 0).any()):
                return None
            return _COMPARE[predicate](operands[0], operands[1]).astype(np.int64)
        return np.where(operands[0] != 0, operands[1], operands[2])  # arith.select

    def _read_lane(self, op: ir.Operation, value: ir.Value) -> np.ndarray | None:
        if value != op.results[0] or "idx" not in str(op.attributes["mode"]):
            return None
        source, lane, width = (self.evaluate(v) for v in op.operands)
        if source is None or lane is None or width is None or (width != WARP).any():
            return None
        tid = np.arange(self.count, dtype=np.int64)
        at = (tid // WARP) * WARP + lane % WARP
        return np.where(at < self.count, source[np.minimum(at, self.count - 1)], 0)


def _divide(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    if (b == 0).any():
        return None
    if name in ("arith.divui", "arith.floordivsi"):
        return a // b
    if name == "arith.divsi":
        return np.trunc(a / b).astype(np.int64)
    if name in ("arith.ceildivui", "arith.ceildivsi"):
        return -(-a // b)
    if name == "arith.remsi":
        return np.fmod(a, b)
    return a % b
