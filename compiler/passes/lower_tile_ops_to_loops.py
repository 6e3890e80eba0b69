"""lower-tile-ops-to-loops: copy, gemm, fill, reduce and atomic_add as scalar scf.for loop nests.

This is the reference semantics of the block-level ops, as one thread running the whole block
sees them (the CPU target; a SIMT fallback elsewhere):
- copy reads outside a global buffer as zero and skips writes outside it;
- gemm accumulates in C's element type, A and B converted to it first;
- reduce starts from the first element along `dim` (no identity needed, so float8 and
  integers work) and, without `clear`, combines with what dst holds.
Region ops (kernel, parallel, loops) and allocations stay: lower-tile-structure-to-scf
handles them.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, memref, scf

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import (
    BoundsGuard,
    add,
    convert,
    index,
    loop_nest,
    mul,
    ops_named,
    reduction_loop,
    zero,
)
from tilec.compiler.passes._scalar import combine, reduce_term

LOWERED_OPS = ("tile.copy", "tile.gemm", "tile.fill", "tile.reduce", "tile.atomic_add")


@register
class LowerTileOpsToLoops(TilePass):
    """Rewrites the block-level data movement and math ops into loops of loads and stores."""

    name = "lower-tile-ops-to-loops"
    summary = "tile.copy/gemm/fill/reduce/atomic_add -> scf.for + memref.load/store + arith"

    def run(self, module: ir.Module) -> None:
        lowerings = {
            "tile.copy": lower_copy,
            "tile.gemm": lower_gemm,
            "tile.fill": lower_fill,
            "tile.reduce": lower_reduce,
            "tile.atomic_add": lower_atomic_add,
        }
        for op in ops_named(module.operation, LOWERED_OPS):
            with ir.InsertionPoint(op), op.location:
                lowerings[op.operation.name](op)
            op.operation.erase()


def _box_indices(
    offsets: Sequence[ir.Value], box_dims: Sequence[int], ivs: Sequence[ir.Value]
) -> list[ir.Value]:
    """Corner + loop position along the box's non-unit dims; unit dims stay at the corner."""
    indices = list(offsets)
    for dim, iv in zip(box_dims, ivs, strict=True):
        indices[dim] = arith.addi(offsets[dim], iv)
    return indices


def lower_copy(op: ir.OpView) -> None:
    src, dst = op.src, op.dst
    src_box, dst_box = list(op.src_shape), list(op.dst_shape)
    src_offsets, dst_offsets = list(op.src_offsets), list(op.dst_offsets)
    src_dims = [dim for dim, extent in enumerate(src_box) if extent != 1]
    dst_dims = [dim for dim, extent in enumerate(dst_box) if extent != 1]
    element_type = ir.MemRefType(src.type).element_type
    src_guard = BoundsGuard(src, src_offsets, src_box)
    dst_guard = BoundsGuard(dst, dst_offsets, dst_box)

    def body(ivs: list[ir.Value]) -> None:
        src_indices = _box_indices(src_offsets, src_dims, ivs)
        dst_indices = _box_indices(dst_offsets, dst_dims, ivs)
        inside = src_guard.condition(src_indices)
        if inside is None:
            value = memref.load(src, src_indices)
        else:
            branch = scf.IfOp(inside, [element_type], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([memref.load(src, src_indices)])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([zero(element_type)])
            value = branch.results[0]
        writable = dst_guard.condition(dst_indices)
        if writable is None:
            memref.store(value, dst, dst_indices)
        else:
            branch = scf.IfOp(writable)
            with ir.InsertionPoint(branch.then_block):
                memref.store(value, dst, dst_indices)
                scf.YieldOp([])

    loop_nest([src_box[dim] for dim in src_dims], body)


def lower_gemm(op: ir.OpView) -> None:
    """i, k, j order: each C[i, j] still sums its products in k order, and the innermost
    loop runs along rows of B and C, which LLVM vectorizes (conversions included)."""
    a, b, c = op.a, op.b, op.c
    transpose_a = ir.BoolAttr(op.attributes["transpose_a"]).value
    transpose_b = ir.BoolAttr(op.attributes["transpose_b"]).value
    a_shape, c_shape = ir.MemRefType(a.type).shape, ir.MemRefType(c.type).shape
    k_extent = a_shape[0] if transpose_a else a_shape[1]
    acc_type = ir.MemRefType(c.type).element_type
    if ir.BoolAttr(op.attributes["clear_accum"]).value:
        accumulator_zero = zero(acc_type)
        loop_nest(list(c_shape), lambda ivs: memref.store(accumulator_zero, c, ivs))

    def row_update(ivs: list[ir.Value]) -> None:
        i, k = ivs
        lhs = convert(memref.load(a, [k, i] if transpose_a else [i, k]), acc_type)

        def accumulate(j_ivs: list[ir.Value]) -> None:
            (j,) = j_ivs
            rhs = convert(memref.load(b, [j, k] if transpose_b else [k, j]), acc_type)
            memref.store(add(memref.load(c, [i, j]), mul(lhs, rhs)), c, [i, j])

        loop_nest([c_shape[1]], accumulate)

    loop_nest([c_shape[0], k_extent], row_update)


def lower_fill(op: ir.OpView) -> None:
    dst, value = op.dst, op.value
    loop_nest(list(ir.MemRefType(dst.type).shape), lambda ivs: memref.store(value, dst, ivs))


def lower_reduce(op: ir.OpView) -> None:
    src, dst = op.src, op.dst
    kind = ir.StringAttr(op.attributes["kind"]).value
    dim = ir.IntegerAttr(op.attributes["dim"]).value
    clear = ir.BoolAttr(op.attributes["clear"]).value
    src_shape = list(ir.MemRefType(src.type).shape)
    dst_shape = list(ir.MemRefType(dst.type).shape)
    kept_dims = [d for d in range(len(src_shape)) if d != dim]
    kept_nonunit = [d for d in kept_dims if src_shape[d] != 1]
    dst_nonunit = [d for d, extent in enumerate(dst_shape) if extent != 1]

    def body(ivs: list[ir.Value]) -> None:
        position = dict(zip(kept_dims, ivs, strict=True))
        dst_indices = [index(0)] * len(dst_shape)
        for src_dim, dst_dim in zip(kept_nonunit, dst_nonunit, strict=True):
            dst_indices[dst_dim] = position[src_dim]

        def element(k: ir.Value) -> ir.Value:
            indices = [position[d] if d != dim else k for d in range(len(src_shape))]
            return reduce_term(kind, memref.load(src, indices))

        if clear:
            init, start = element(index(0)), 1
        else:
            init, start = memref.load(dst, dst_indices), 0
        result = reduction_loop(
            start, src_shape[dim], init, lambda k, acc: combine(kind, acc, element(k))
        )
        memref.store(result, dst, dst_indices)

    loop_nest([src_shape[d] for d in kept_dims], body)


def lower_atomic_add(op: ir.OpView) -> None:
    # One CPU thread runs every block in turn, so a plain read-modify-write is atomic enough.
    dst, indices, value = op.dst, list(op.indices), op.value
    memref.store(add(memref.load(dst, indices), value), dst, indices)
