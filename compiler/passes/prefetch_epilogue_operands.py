"""prefetch-epilogue-operands: the global tensors a pipelined loop's epilogue reads are
prefetched into L2 a few iterations before the loop ends.

A fused GEMM's epilogue (`C = relu(acc + bias[j])`, `C = alpha * acc + R[i, j]`) reads its
global operands only after the last K tile's wgmmas: with one block per SM nothing else runs
meanwhile, the tensor cores idle for a DRAM round trip, and every SM, finishing its tile at
about the same time, asks for its residual tile in the same burst (8192^3 f16, 128 x 256
tiles: 132 x 64 KB at once). Here each such read gets its box prefetched into L2 at iteration
`last - d` of the loop (the first where the loop runs d times or fewer), by a T.Parallel over
the box's rows and 128-byte lines placed after the loop body's statements under
`if k == max(lower, upper - 1 - d)`: the lines are in flight while the last K tiles' MMAs run,
and the epilogue's loads find them in L2. The prefetch moves no data into registers or shared
memory, so the kernel's registers and arena stay as they were.

Taken: a `tile.pipelined` loop of step 1 followed, in its block (up to the next such loop),
by a `tile.parallel` that loads a global tensor (a function argument) at indices each of which
is a value computed without the T.Parallel's variables (from the kernel's block indices,
constants, values before the loop: recomputed inside the loop) plus at most one of its
variables, each variable in at most one index: a bias per column (`bias[bx * 256 + j]`), per
row, a whole residual tile (`R[by * 128 + i, bx * 256 + j]`). The box is the T.Parallel's
extent along each variable's index, one element along the others; rows and columns are
clamped to the tensor's last element (a ragged tile's prefetch stays inside it), so no
address outside the tensor is formed. Other reads (a gather `x[idx[i], j]`, `R[2 * i, j]`)
are left alone.

The distance d is the module's `tile.epilogue_prefetch_distance` (the CUDA target sets it
from TILEC_EPILOGUE_PREFETCH=d; without it the pass does nothing): opt-in until the H200 has
timed it. lower-tile-to-gpu turns each `memref.prefetch` of a global tensor into
`prefetch.global.L2` of the element's address; the CPU target lowers it to LLVM's prefetch
hint, which changes no result.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, memref, scf

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import index
from tilec.compiler.passes._ir_walk import (
    ancestors,
    as_operation,
    constant_index,
    scope,
    walk,
)
from tilec.compiler.passes._scalar import bit_width
from tilec.compiler.passes._tma_ring import clone_ops, recomputable
from tilec.dialect import ParallelOp, YieldOp

DISTANCE_ATTR = "tile.epilogue_prefetch_distance"  # on the module: iterations before the last
VARIABLE = "TILEC_EPILOGUE_PREFETCH"  # the distance (0: off), where a target reads it
PREFETCH_ATTR = "tile.epilogue_prefetch"  # on the T.Parallel the pass adds
LINE_BYTES = 128


@dataclass(frozen=True)
class Box:
    """The part of `tensor` one epilogue read covers: per index, the corner (a value free of
    the T.Parallel's variables) and the extent (the variable's, or 1)."""

    tensor: ir.Value
    corners: tuple[ir.Value, ...]
    extents: tuple[int, ...]


def _split(value: ir.Value, variables: list[ir.Value]) -> tuple[ir.Value | int, int] | None:
    """`value` as (corner, number of the variable added to it, or -1): `corner` is a value
    free of the variables, or 0; None where `value` is no such sum."""
    for number, variable in enumerate(variables):
        if value == variable:
            return 0, number
    if not _depends(value, variables):
        return value, -1
    owner = value.owner
    if isinstance(owner, ir.Block) or as_operation(owner).name != "arith.addi":
        return None
    lhs, rhs = (_split(operand, variables) for operand in as_operation(owner).operands)
    if lhs is None or rhs is None or (lhs[1] >= 0 and rhs[1] >= 0):
        return None
    if lhs[0] != 0 and rhs[0] != 0:  # both sides have a corner: a new sum (built later)
        return None
    return (rhs[0] if lhs[0] == 0 else lhs[0]), max(lhs[1], rhs[1])


def _depends(value: ir.Value, variables: list[ir.Value]) -> bool:
    """Whether `value` is computed from one of `variables` (inside their T.Parallel)."""
    pending, seen = [value], []
    while pending:
        current = pending.pop()
        if any(current == variable for variable in variables):
            return True
        owner = current.owner
        if isinstance(owner, ir.Block) or any(current == known for known in seen):
            continue
        seen.append(current)
        pending += list(as_operation(owner).operands)
    return False


def epilogue_boxes(parallel: ir.Operation) -> list[Box]:
    """The boxes of the global tensors `parallel` reads at a corner plus its variables."""
    body = parallel.regions[0].blocks[0]
    variables = list(body.arguments)
    extents = list(ir.DenseI64ArrayAttr(parallel.attributes["extents"]))
    boxes: list[Box] = []
    for load in walk(parallel):
        if load.name != "memref.load" or scope(load.operands[0]) != "global" or not isinstance(
                load.operands[0].owner, ir.Block) or \
                as_operation(load.operands[0].owner.owner).name != "func.func":
            continue
        parts = [_split(value, variables) for value in list(load.operands)[1:]]
        used = [number for part in parts if part is not None for number in [part[1]]
                if number >= 0]
        if any(part is None for part in parts) or len(used) != len(set(used)) or not used:
            continue
        box = Box(load.operands[0], tuple(part[0] for part in parts),
                  tuple(extents[part[1]] if part[1] >= 0 else 1 for part in parts))
        if not any(_same(box, known) for known in boxes):
            boxes.append(box)
    return boxes


def _same(box: Box, other: Box) -> bool:
    return box.tensor == other.tensor and box.extents == other.extents and all(
        a == b for a, b in zip(box.corners, other.corners, strict=True))


def _prefetch(box: Box, candidates: list[ir.Operation], mapping: dict) -> None:
    """A T.Parallel over the box's rows and 128-byte lines prefetching each line's first
    element, at the insertion point; the corners' computations cloned into its body."""
    tensor_type = ir.MemRefType(box.tensor.type)
    element_bytes = max(1, bit_width(tensor_type.element_type) // 8)
    per_line = max(1, LINE_BYTES // element_bytes)
    lines = -(-box.extents[-1] // per_line)
    shape = [*box.extents[:-1], lines]
    loop = ParallelOp(ir.DenseI64ArrayAttr.get(shape))
    loop.operation.attributes[PREFETCH_ATTR] = ir.UnitAttr.get()
    body = loop.regions[0].blocks.append(*[ir.IndexType.get()] * len(shape))
    with ir.InsertionPoint(body):
        inner = dict(mapping)
        corners = [corner for corner in box.corners if not isinstance(corner, int)]
        clone_ops(recomputable(corners, candidates) or [], inner)
        where = []
        for dim, corner in enumerate(box.corners):
            offset = body.arguments[dim] if dim < len(shape) - 1 else arith.muli(
                body.arguments[dim], index(per_line))
            if box.extents[dim] == 1 and dim < len(shape) - 1:
                offset = index(0)
            at = offset if isinstance(corner, int) else arith.addi(inner.get(corner, corner),
                                                                   offset)
            last = arith.subi(memref.dim(box.tensor, index(dim)), index(1))
            where.append(arith.minsi(at, last))
        memref.PrefetchOp(box.tensor, where, False, 3, True)
        YieldOp()


def prefetch_epilogue(loop: ir.Operation, distance: int) -> int:
    """Prefetch, inside `loop`, the boxes the T.Parallel statements after it read; the number
    of boxes."""
    step = constant_index(loop.operands[2])
    if step != 1:
        return 0
    after = []  # the statements after the loop, up to the next pipelined loop (which owns
    seen = False  # what follows it)
    for op in map(as_operation, loop.block.operations):
        if seen and op.name == "tile.pipelined":
            break
        if seen:
            after.append(op)
        seen = seen or op == loop
    boxes = []
    for op in after:
        if op.name == "tile.parallel" and PREFETCH_ATTR not in op.attributes:
            boxes += [box for box in epilogue_boxes(op)
                      if not any(_same(box, known) for known in boxes)]
    candidates = [op for op in after if op.name != "tile.parallel"] + [
        inner for op in after if op.name == "tile.parallel" for inner in walk(op)
        if inner != op]
    usable = [box for box in boxes if recomputable(
        [c for c in box.corners if not isinstance(c, int)], candidates) is not None and all(
        isinstance(c, int) or _formed_before(c, loop, candidates) for c in box.corners)]
    if not usable:
        return 0
    body = loop.regions[0].blocks[0]
    terminator = as_operation(list(body.operations)[-1])
    with loop.location, ir.InsertionPoint(terminator):
        lower, upper = loop.operands[0], loop.operands[1]
        trigger = arith.maxsi(lower, arith.subi(upper, index(1 + distance)))
        branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, body.arguments[0], trigger))
        with ir.InsertionPoint(branch.then_block):
            for box in usable:
                _prefetch(box, candidates, {})
            scf.YieldOp([])
    return len(usable)


def _formed_before(value: ir.Value, loop: ir.Operation, candidates: list[ir.Operation]
                  ) -> bool:
    """Whether `value` can be formed inside `loop`: cloning its computation among
    `candidates` reaches only values defined before the loop or outside its block."""
    ops = recomputable([value], candidates)
    if ops is None:
        return False
    made = [result for op in ops for result in op.results]
    leaves = [value] if not ops else [operand for op in ops for operand in op.operands
                                      if not any(operand == result for result in made)]
    order = [as_operation(op) for op in loop.block.operations]
    position = next(n for n, op in enumerate(order) if op == loop)
    for leaf in leaves:
        owner = leaf.owner
        if isinstance(owner, ir.Block):
            continue  # a block argument the corner does not take from the T.Parallel
        defining = as_operation(owner)
        if any(op == top for top in [defining, *ancestors(defining)]
               for op in order[position:]):
            return False
    return True


def opt_in(module: ir.Module) -> None:
    """The module's distance from TILEC_EPILOGUE_PREFETCH=d (d > 0), as the CUDA and CPU
    targets take it (the CPU target runs the pass so its numerics are checked)."""
    distance = os.environ.get(VARIABLE, "")
    if distance.isdigit() and int(distance) > 0:
        module.operation.attributes[DISTANCE_ATTR] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), int(distance))


@register
@dataclass
class PrefetchEpilogueOperands(TilePass):
    """The global tensors a pipelined loop's epilogue reads, prefetched into L2 d iterations
    before the loop's last."""

    name = "prefetch-epilogue-operands"
    summary = "epilogue T.Parallel global reads -> L2 prefetch of their boxes in the loop"

    def run(self, module: ir.Module) -> None:
        attributes = module.operation.attributes
        if DISTANCE_ATTR not in attributes:
            return
        distance = ir.IntegerAttr(attributes[DISTANCE_ATTR]).value
        for loop in [op for op in walk(module.operation) if op.name == "tile.pipelined"]:
            prefetch_epilogue(loop, distance)
