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

With the module's `tile.epilogue_preload = n` (TILEC_EPILOGUE_PRELOAD=n, n >= 1), a read whose
box is the T.Parallel's whole extent, variable d along index d (the residual tile), of a
tensor the function only reads (nothing after the loop may write what the preload read), is
also loaded into registers early: a fragment of the T.Parallel's shape, allocated before the
loop, is filled by one `tile.copy` of the box in the loop's iteration max(lower, upper - n),
after its statements (the gemm's wgmma group may still run, overlap = true), or after a loop
of no iteration (a K of 0 still adds the residual), and the epilogue reads the fragment
(its layout the accumulator's, from infer-fragment-layout: 64 32-bit loads a consumer thread
of the 128 x 256 f16 tile, 64 registers held from there on). n = 1 issues the loads under
the last K tile's wgmmas only (one K tile, ~0.8 us at 8192^3 f16 on an H100, while 132 SMs
asking for 64 KiB each at once need ~3 us of DRAM time); a larger n has them in flight
under the last n K tiles' wgmmas, so they land before the loop ends: the loads' scoreboard
is waited on only by the epilogue's first use, and the fragment's registers stay in place
through the remaining iterations (no moves: a predicated load into them).

The CUDA target preloads with n = 1 by default on chips with prefetch.global.L2 (the H200 ran
fused_gemm.py's scale + residual at 0.950x of the plain GEMM with it, 0.895x without; n = 2,
4, 8 measured 0.936-0.944x; TILEC_EPILOGUE_PRELOAD=0 turns it off). The distance d is the
module's `tile.epilogue_prefetch_distance` (the CUDA target sets it from
TILEC_EPILOGUE_PREFETCH=d, on those chips; preloading alone prefetches at d = 0, and only in
loops where it preloads a tile; with neither the pass does nothing): opt-in, not faster on the
H100 or the H200.
lower-tile-to-gpu turns each `memref.prefetch` of a global tensor into
`prefetch.global.L2` of the element's address; the CPU target lowers it to LLVM's prefetch
hint, which changes no result.
"""

from __future__ import annotations

import os
from collections.abc import Callable
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
from tilec.dialect import AllocOp, CopyOp, ParallelOp, YieldOp

DISTANCE_ATTR = "tile.epilogue_prefetch_distance"  # on the module: iterations before the last
VARIABLE = "TILEC_EPILOGUE_PREFETCH"  # the distance (0: off), where a target reads it
PREFETCH_ATTR = "tile.epilogue_prefetch"  # on the T.Parallel the pass adds
# on the module: whole-tile boxes into registers too, loaded this many iterations before the end
PRELOAD_ATTR = "tile.epilogue_preload"
PRELOAD_VARIABLE = "TILEC_EPILOGUE_PRELOAD"
LINE_BYTES = 128


@dataclass(frozen=True)
class Box:
    """The part of `tensor` one epilogue read covers: per index, the corner (a value free of
    the T.Parallel's variables) and the extent (the variable's, or 1)."""

    tensor: ir.Value
    corners: tuple[ir.Value | int, ...]
    extents: tuple[int, ...]
    variables: tuple[int, ...]  # per index, the T.Parallel variable added to it, or -1

    def whole_tile(self, rank: int) -> bool:
        """Whether the box is the T.Parallel's own extent, variable d along index d (a
        residual tile `R[by * 128 + i, bx * 256 + j]`): a fragment of its shape holds it."""
        return self.variables == tuple(range(rank))


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


def epilogue_reads(parallel: ir.Operation) -> list[tuple[ir.Operation, Box]]:
    """The loads of global tensors (function arguments) in `parallel` at a corner plus its
    variables, each with its box."""
    body = parallel.regions[0].blocks[0]
    variables = list(body.arguments)
    extents = list(ir.DenseI64ArrayAttr(parallel.attributes["extents"]))
    reads = []
    for load in walk(parallel):
        if load.name != "memref.load" or scope(load.operands[0]) != "global" or not isinstance(
                load.operands[0].owner, ir.Block) or \
                as_operation(load.operands[0].owner.owner).name != "func.func":
            continue
        parts = [_split(value, variables) for value in list(load.operands)[1:]]
        if any(part is None for part in parts):
            continue
        used = [part[1] for part in parts if part[1] >= 0]
        if len(used) != len(set(used)) or not used:
            continue
        reads.append((load, Box(load.operands[0], tuple(part[0] for part in parts),
                                tuple(extents[part[1]] if part[1] >= 0 else 1
                                      for part in parts),
                                tuple(part[1] for part in parts))))
    return reads


def epilogue_boxes(parallel: ir.Operation) -> list[Box]:
    """The distinct boxes of `parallel`'s epilogue_reads."""
    boxes: list[Box] = []
    for _, box in epilogue_reads(parallel):
        if not any(_same(box, known) for known in boxes):
            boxes.append(box)
    return boxes


def _same(box: Box, other: Box) -> bool:
    return box.tensor == other.tensor and box.extents == other.extents and \
        box.variables == other.variables and all(
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


def prefetch_epilogue(loop: ir.Operation, distance: int | None, preload: int = 0) -> int:
    """Prefetch, inside `loop`, the boxes the T.Parallel statements after it read (and with
    `preload` = n > 0, load the whole-tile ones into fragments in its iteration
    max(lower, upper - n)); the number of boxes. `distance` None (preloading alone): the
    prefetches go in the preload's iteration, and only where a tile is preloaded (a bias row
    alone stays as it was: its prefetch did not pay on the H100)."""
    step = constant_index(loop.operands[2])
    if step != 1:
        return 0
    parallels, candidates = epilogue_after(loop)

    def formed(box: Box) -> bool:  # its corners can be computed inside the loop
        return recomputable_before([c for c in box.corners if not isinstance(c, int)], loop,
                                   candidates)

    boxes: list[Box] = []
    for op in parallels:
        boxes += [box for box in epilogue_boxes(op) if formed(box)
                  and not any(_same(box, known) for known in boxes)]
    if not boxes:
        return 0
    if distance is None:
        if not any(_preloadable(box, op) for op in parallels for _, box in epilogue_reads(op)
                   if formed(box)):
            return 0
        distance = max(preload - 1, 0)
    body = loop.regions[0].blocks[0]
    terminator = as_operation(list(body.operations)[-1])
    lower, upper = loop.operands[0], loop.operands[1]
    with loop.location, ir.InsertionPoint(terminator):
        trigger = arith.maxsi(lower, arith.subi(upper, index(1 + distance)))
        branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, body.arguments[0], trigger))
        with ir.InsertionPoint(branch.then_block):
            for box in boxes:
                _prefetch(box, candidates, {})
            scf.YieldOp([])
    if preload:
        _preload(loop, parallels, candidates, formed, preload)
    return len(boxes)


def epilogue_after(loop: ir.Operation) -> tuple[list[ir.Operation], list[ir.Operation]]:
    """The epilogue of `loop`: the T.Parallel statements after it, up to the next pipelined
    loop (which owns what follows it), but for the pass's own; and the operations whose
    arithmetic a box's corner may be cloned from (the other statements after the loop and
    everything inside those T.Parallel statements)."""
    after, seen = [], False
    for op in map(as_operation, loop.block.operations):
        if seen and op.name == "tile.pipelined":
            break
        if seen:
            after.append(op)
        seen = seen or op == loop
    parallels = [op for op in after if op.name == "tile.parallel"
                 and PREFETCH_ATTR not in op.attributes]
    candidates = [op for op in after if op.name != "tile.parallel"] + [
        inner for op in parallels for inner in walk(op) if inner != op]
    return parallels, candidates


def _preload(loop: ir.Operation, parallels: list[ir.Operation],
             candidates: list[ir.Operation], formed, iterations: int) -> None:
    """The whole-tile reads of `parallels` from fragments of their shape, each filled by one
    tile.copy of its box in the loop's iteration max(lower, upper - iterations) (after the
    body's statements: the gemm's group may still run), or right after a loop that ran no
    iteration, and allocated before the loop."""
    body = loop.regions[0].blocks[0]
    terminator = as_operation(list(body.operations)[-1])
    lower, upper = loop.operands[0], loop.operands[1]
    fragments: list[tuple[Box, ir.Value]] = []

    def fill(box: Box, fragment: ir.Value, condition: Callable[[], ir.Value]) -> None:
        """`if condition: fragment = the box`, at the insertion point."""
        branch = scf.IfOp(condition())
        with ir.InsertionPoint(branch.then_block):
            mapping: dict = {}
            corners = [c for c in box.corners if not isinstance(c, int)]
            clone_ops(recomputable(corners, candidates) or [], mapping)
            shape = list(ir.MemRefType(fragment.type).shape)
            CopyOp(box.tensor, [index(0) if isinstance(c, int) else mapping.get(c, c)
                                for c in box.corners], shape, fragment, [index(0)] * len(shape),
                   shape)
            scf.YieldOp([])

    for parallel in parallels:
        extents = list(ir.DenseI64ArrayAttr(parallel.attributes["extents"]))
        for load, box in epilogue_reads(parallel):
            if not formed(box) or not _preloadable(box, parallel):
                continue
            fragment = next((value for known, value in fragments if _same(box, known)), None)
            if fragment is None:
                element = ir.MemRefType(box.tensor.type).element_type
                with loop.location, ir.InsertionPoint(loop):
                    fragment = AllocOp(ir.MemRefType.get(
                        extents, element, memory_space=ir.Attribute.parse('"fragment"'))).result
                with loop.location, ir.InsertionPoint(terminator):
                    fill(box, fragment, lambda: arith.cmpi(
                        arith.CmpIPredicate.eq, body.arguments[0],
                        arith.maxsi(lower, arith.subi(upper, index(iterations)))))
                with loop.location, ir.InsertionPoint.after(loop):
                    fill(box, fragment, lambda: arith.cmpi(arith.CmpIPredicate.sle, upper,
                                                           lower))
                fragments.append((box, fragment))
            with load.location, ir.InsertionPoint(load):
                value = memref.load(fragment, list(parallel.regions[0].blocks[0].arguments))
            load.results[0].replace_all_uses_with(value)
            load.erase()


def _preloadable(box: Box, parallel: ir.Operation) -> bool:
    """Whether a read of `parallel` is one a preload takes: the T.Parallel's whole extent, of
    a tensor the function only reads."""
    rank = len(ir.DenseI64ArrayAttr(parallel.attributes["extents"]))
    return box.whole_tile(rank) and read_only(box.tensor)


def read_only(tensor: ir.Value) -> bool:
    """Whether the function only reads `tensor` (loads, prefetches, sizes, copies from it):
    a preload moves its reads before the statements after the loop, which must not write it
    (`C = acc + C` then a second epilogue reading C)."""
    for use in tensor.uses:
        user = as_operation(use.owner)
        if user.name in ("memref.load", "memref.prefetch", "memref.dim"):
            continue
        if user.name == "tile.copy" and use.operand_number == 0:
            continue
        return False
    return True


def recomputable_before(corners: list[ir.Value], loop: ir.Operation,
                        candidates: list[ir.Operation]) -> bool:
    """Whether `corners` can be computed inside `loop` (or right after it): their computation
    among `candidates` is pure arithmetic reaching only values defined before the loop."""
    return recomputable(corners, candidates) is not None and all(
        _formed_before(corner, loop, candidates) for corner in corners)


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


def opted_in() -> tuple[str, ...]:
    """The pass's name where TILEC_EPILOGUE_PREFETCH or TILEC_EPILOGUE_PRELOAD asks for it,
    for the CPU target's pass list (unchanged without them)."""
    wanted = _setting(VARIABLE) > 0 or _setting(PRELOAD_VARIABLE) > 0
    return ("prefetch-epilogue-operands",) if wanted else ()


def _setting(variable: str, default: int = 0) -> int:
    """The environment's whole number `variable` (`default` where unset or not a number)."""
    value = os.environ.get(variable, "")
    return int(value) if value.isdigit() else default


def opt_in(module: ir.Module, preload_default: int = 0) -> None:
    """The module's distance from TILEC_EPILOGUE_PREFETCH=d (d > 0) and preload iterations
    from TILEC_EPILOGUE_PRELOAD=n (n > 0; `preload_default` where unset, 0 = off), as the
    CUDA and CPU targets take them (the CPU target runs the pass so its numerics are
    checked; the CUDA target preloads one iteration early by default)."""
    settings = ((VARIABLE, DISTANCE_ATTR, 0), (PRELOAD_VARIABLE, PRELOAD_ATTR, preload_default))
    for variable, attribute, default in settings:
        if (value := _setting(variable, default)) > 0:
            module.operation.attributes[attribute] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), value)


@register
@dataclass
class PrefetchEpilogueOperands(TilePass):
    """The global tensors a pipelined loop's epilogue reads, prefetched into L2 d iterations
    before the loop's last."""

    name = "prefetch-epilogue-operands"
    summary = "epilogue T.Parallel global reads -> L2 prefetch of their boxes in the loop"

    def run(self, module: ir.Module) -> None:
        attributes = module.operation.attributes
        preload = ir.IntegerAttr(attributes[PRELOAD_ATTR]).value \
            if PRELOAD_ATTR in attributes else 0
        if DISTANCE_ATTR not in attributes and not preload:
            return
        # None: preloading alone, which prefetches only where it preloads a tile
        distance = ir.IntegerAttr(attributes[DISTANCE_ATTR]).value \
            if DISTANCE_ATTR in attributes else None
        for loop in [op for op in walk(module.operation) if op.name == "tile.pipelined"]:
            prefetch_epilogue(loop, distance, preload)
