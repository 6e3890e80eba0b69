"""check-static-indices: no block-buffer access outside its buffer at an index known when
compiling.

The frontend rejects a literal index outside a buffer; an index computed from the variables of
loops with constant bounds (T.unroll, T.serial, T.Parallel) is just as known, yet it went
through: `f[k, i]` over `for k in T.unroll(8)` on a fragment of 4 rows wrote past the fragment
(the CPU target's stack: a segfault; a GPU target's registers: a silent wrong result).

Each load and store of a shared, fragment, local or T.alloc_var buffer whose indices come from
the variables of the loops around it and constants (the arith index ops, casts, comparisons,
select) is evaluated at every point of those loops (up to MAX_POINTS); where one point the
access runs at (the conditions around it that can be evaluated hold there) indexes outside the
buffer, it is an error at its line naming the point, the index and the shape. An access under a
condition that cannot be evaluated, or whose index depends on anything else (a run-time value,
a loaded index) is left to run time (README: the checked mode, TILEC_BOUNDS_CHECK, guards it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._integer_storage import root_of
from tilec.compiler.passes._ir_walk import (
    LOCATION,
    as_operation,
    constant_index,
    kernels,
    op_error,
    scope,
    walk,
)
from tilec.compiler.passes.check_parallel_updates import PointValues, conditions_around

BLOCK_SCOPES = ("shared", "fragment", "local", "var")
LOOPS = ("tile.parallel", "tile.for", "tile.pipelined", "scf.for")
MAX_POINTS = 1 << 16
WHAT = {"shared": "shared buffer", "fragment": "fragment", "local": "T.alloc_local buffer",
        "var": "T.alloc_var"}


@register
@dataclass
class CheckStaticIndices(TilePass):
    """Reject block-buffer accesses outside their buffer at indices known when compiling."""

    name = "check-static-indices"
    summary = "error: f[k] over `for k in T.unroll(8)` on a fragment of 4 elements"

    def run(self, module: ir.Module) -> None:
        for kernel in kernels(module):
            for op in walk(kernel):
                if op.name == "memref.load":
                    buffer, indices = op.operands[0], list(op.operands[1:])
                elif op.name == "memref.store":
                    buffer, indices = op.operands[1], list(op.operands[2:])
                else:
                    continue
                if scope(buffer) in BLOCK_SCOPES and indices:
                    _check(op, kernel, buffer, indices)


def _loops(op: ir.Operation, kernel: ir.Operation) -> list[tuple[ir.Value, range]] | None:
    """The variables of the loops around `op` inside `kernel` with their values, outermost
    first; None when one has bounds not known when compiling."""
    found = []
    parent = as_operation(op.parent)
    while parent != kernel:
        if parent.name == "tile.parallel":
            block = parent.regions[0].blocks[0]
            extents = list(ir.DenseI64ArrayAttr(parent.attributes["extents"]))
            found[:0] = [(argument, range(extent))
                         for argument, extent in zip(block.arguments, extents, strict=True)]
        elif parent.name in LOOPS:
            bounds = [constant_index(v) for v in list(parent.operands)[:3]]
            if None in bounds or bounds[2] <= 0:
                return None
            found.insert(0, (parent.regions[0].blocks[0].arguments[0], range(*bounds)))
        parent = as_operation(parent.parent)
    return found


def _check(op: ir.Operation, kernel: ir.Operation, buffer: ir.Value,
           indices: list[ir.Value]) -> None:
    shape = list(ir.MemRefType(buffer.type).shape)
    if any(ir.ShapedType.is_dynamic_size(size) for size in shape):
        return
    loops = _loops(op, kernel)
    if loops is None:
        return
    sizes = [len(values) for _, values in loops]
    total = math.prod(sizes)
    if total == 0 or total > MAX_POINTS:
        return
    grid = np.indices(sizes).reshape(len(sizes), total) if loops else np.zeros((0, 1), int)
    points = {argument: np.asarray(values)[grid[k]]
              for k, (argument, values) in enumerate(loops)}
    evaluate = PointValues(points)
    values = [evaluate.of(index) for index in indices]
    if any(value is None for value in values):
        return
    runs = np.ones(max(total, 1), dtype=bool)
    for condition, taken in conditions_around(op, kernel):
        holds = evaluate.of(condition)
        if holds is None:
            return  # it may never run where the index leaves the buffer
        runs &= np.broadcast_to(holds.astype(bool) == taken, runs.shape)
    outside = np.zeros_like(runs)
    for value, size in zip(values, shape, strict=True):
        value = np.broadcast_to(value, runs.shape)
        outside |= (value < 0) | (value >= size)
    bad = np.flatnonzero(outside & runs)
    if not len(bad):
        return
    at = bad[0]
    where = ", ".join(f"{_name(argument)} = {int(points[argument][at])}"
                      for argument, _ in loops) or "every run"
    index = tuple(int(np.broadcast_to(value, runs.shape)[at]) for value in values)
    access = "reads" if op.name == "memref.load" else "writes"
    name = WHAT.get(scope(root_of(buffer)), scope(buffer))
    raise op_error(op, f"this statement {access} element {list(index)} of a {name} of shape "
                       f"{shape} (at {where}): outside the buffer, known when compiling; fix "
                       f"the index or the loop's bounds")


def _name(argument: ir.Value) -> str:
    """A loop variable as the error names it: its loop's kind, position and line."""
    loop = as_operation(argument.owner.owner)
    found = LOCATION.search(str(loop.location))
    line = f" at line {found.group(2)}" if found else ""
    if loop.name == "tile.parallel":
        return f"variable {ir.BlockArgument(argument).arg_number} of the T.Parallel{line}"
    kind = ("T.Pipelined" if loop.name == "tile.pipelined"
            else "T.unroll" if "unroll" in loop.attributes else "T.serial")
    return f"the {kind} variable{line}"
