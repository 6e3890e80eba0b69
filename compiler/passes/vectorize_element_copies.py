"""vectorize-element-copies: a short unrolled loop copying consecutive tensor elements into a
per-thread buffer, one element an iteration, becomes the one `tile.copy` of that run.

TileLang's kernels fill their registers element by element: `for v in T.vectorized(8):
A_local[v] = A[by, k + v]` (TileLang's own GEMV example, its activations and its packed weight
bytes). As a loop of scalar loads it stays one 2-byte load per element after unrolling (the
GEMV's step: 8 LDG.U16 of activations and 4 LDG.S8 of weights a thread where one 16-byte and one
4-byte load are due). A `tile.copy` of the run gets what a T.copy gets: vector loads as wide as
the tensor's alignment allows, checked once around the copy (element by element where it
fails), bounds checks on the box.

Taken: a `tile.for` marked `unroll` (T.vectorized, T.unroll) with constant bounds, step 1 and
at least two trips, whose body is pure index arithmetic, one `memref.load` from a global tensor
and one `memref.store` of that value into a local buffer, the indices of both constant in the
loop but for the last, which is the loop variable plus a value constant in the loop (so the
run is contiguous in both, in order). The copy's boxes start at the indices of the first
iteration, computed before the loop, and span the trips in their last dimension. Any other loop
is left as it is. On by default (TILEC_VECTORIZE_ELEMENT_COPIES=0 leaves it out: TileLang's
GEMV example took 137 us without it and 93 with it on an H100, bit for bit the same): the
CUDA target runs it before lower-sub-byte-types, the CPU target too, so its numerics are
checked there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import as_operation, constant_index, scope, walk
from tilec.compiler.passes._loop_loads import clone_ops
from tilec.dialect import CopyOp

SETTING = "TILEC_VECTORIZE_ELEMENT_COPIES"
PURE_PREFIXES = ("arith.", "index.", "affine.apply")
TERMINATORS = ("tile.yield",)


def passes() -> tuple[str, ...]:
    """The pass's name unless TILEC_VECTORIZE_ELEMENT_COPIES=0, for a stage's pass list."""
    return ("vectorize-element-copies",) if os.environ.get(SETTING) != "0" else ()


def _body_ops(loop: ir.Operation) -> list[ir.Operation]:
    return [as_operation(op) for op in loop.regions[0].blocks[0].operations]


def _depends(value: ir.Value, induction: ir.Value, body: ir.Block) -> bool:
    """Whether `value` is computed from the loop variable (inside the body)."""
    if value == induction:
        return True
    owner = value.owner
    if isinstance(owner, ir.Block):
        return False
    op = as_operation(owner)
    if op.block != body:
        return False
    return any(_depends(operand, induction, body) for operand in op.operands)


def _unit_stride(value: ir.Value, induction: ir.Value, body: ir.Block) -> bool:
    """Whether `value` is the loop variable plus values that do not depend on it: the
    variable itself or an `arith.addi` of such a value and an independent one."""
    if value == induction:
        return True
    owner = value.owner
    if isinstance(owner, ir.Block) or as_operation(owner).name != "arith.addi":
        return False
    first, second = as_operation(owner).operands
    first_varies = _depends(first, induction, body)
    second_varies = _depends(second, induction, body)
    if first_varies == second_varies:
        return False
    return _unit_stride(first if first_varies else second, induction, body)


def _copy_of(loop: ir.Operation) -> tuple[ir.Operation, ir.Operation, int] | None:
    """(load, store, trips) of an element-copy loop this pass takes, else None."""
    if "unroll" not in loop.attributes:
        return None
    lower, upper, step = (constant_index(value) for value in loop.operands[:3])
    if lower is None or upper is None or step != 1 or upper - lower < 2:
        return None
    body = loop.regions[0].blocks[0]
    induction = body.arguments[0]
    loads, stores = [], []
    for op in _body_ops(loop):
        if op.name == "memref.load":
            loads.append(op)
        elif op.name == "memref.store":
            stores.append(op)
        elif not (op.name.startswith(PURE_PREFIXES) or op.name in TERMINATORS) or op.regions:
            return None
    if len(loads) != 1 or len(stores) != 1:
        return None
    load, store = loads[0], stores[0]
    source, target = load.operands[0], store.operands[1]
    if store.operands[0] != load.results[0] or scope(source) != "global" \
            or scope(target) != "local":
        return None
    for indices in (list(load.operands[1:]), list(store.operands[2:])):
        if any(_depends(index, induction, body) for index in indices[:-1]):
            return None
        if not _unit_stride(indices[-1], induction, body):
            return None
    return load, store, upper - lower


def _first_iteration(values: list[ir.Value], loop: ir.Operation) -> list[ir.Value]:
    """`values` (indices of the body) as the first iteration computes them, built before the
    loop: the body's index arithmetic cloned there with the loop variable as its lower bound."""
    body = loop.regions[0].blocks[0]
    mapping: dict[ir.Value, ir.Value] = {body.arguments[0]: loop.operands[0]}
    arithmetic = [op for op in _body_ops(loop)
                  if op.name not in ("memref.load", "memref.store", *TERMINATORS)]
    clone_ops(arithmetic, mapping, ir.InsertionPoint(loop))
    return [mapping.get(value, value) for value in values]


@register
@dataclass
class VectorizeElementCopies(TilePass):
    """Unrolled element-by-element copies from a tensor into registers as one tile.copy."""

    name = "vectorize-element-copies"
    summary = "an unrolled loop copying a contiguous tensor run into a local buffer as a tile.copy"

    def run(self, module: ir.Module) -> None:
        for loop in [op for op in walk(module.operation) if op.name == "tile.for"]:
            found = _copy_of(loop)
            if found is None:
                continue
            load, store, trips = found
            source, target = load.operands[0], store.operands[1]
            with loop.location:
                starts = _first_iteration(list(load.operands[1:]) + list(store.operands[2:]),
                                          loop)
                source_rank = len(load.operands) - 1
                source_box = [1] * (source_rank - 1) + [trips]
                target_box = [1] * (len(store.operands) - 3) + [trips]
                CopyOp(source, starts[:source_rank], source_box, target, starts[source_rank:],
                       target_box, ip=ir.InsertionPoint(loop))
            loop.erase()
