"""stage-reduce-operands: a reduction over or into a shared or T.alloc_local buffer goes
through fragments.

TileLang reduces shared tiles as readily as fragments (T.reduce_sum(A_shared, sums, dim=1)),
and the CPU target reduces into a T.alloc_local buffer too, but the GPU lowering reduces
registers: each thread its own, lanes by shuffles, warps through a scratch buffer. So before
layouts are inferred, a tile.reduce whose source or destination is shared or local is
rewritten: such a source is first copied into a fragment of its shape; such a destination
becomes a fragment of its shape, copied back into the buffer after the reduction (and filled
from it first when the reduction accumulates into it, clear = false). infer-fragment-layout
then lays the new fragments out as any copied tile (a copy into a local buffer gives every
thread the whole result), and insert-shared-barriers orders the copies with the other
threads' accesses. The fragments are allocated at the top of their T.Kernel block, so a
reduction in a loop reuses them.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import ops_named
from tilec.compiler.passes._ir_walk import as_operation, enclosing, scope
from tilec.compiler.passes._scalar import index
from tilec.dialect import AllocOp, CopyOp

STAGED_SCOPES = ("shared", "local")  # reduced through a fragment of their shape


def fragment_like(buffer: ir.Value, kernel: ir.Operation) -> ir.Value:
    """A fragment of `buffer`'s shape and element type, allocated at the top of `kernel`."""
    type_ = ir.MemRefType(buffer.type)
    body = kernel.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(body):
        return AllocOp(ir.MemRefType.get(list(type_.shape), type_.element_type,
                                         memory_space=ir.StringAttr.get("fragment"))).result


def copy_whole(src: ir.Value, dst: ir.Value) -> ir.Operation:
    shape = list(ir.MemRefType(src.type).shape)
    zeros = [index(0)] * len(shape)
    return as_operation(CopyOp(src, zeros, shape, dst, zeros, shape))


@register
@dataclass
class StageReduceOperands(TilePass):
    """Reductions over or into shared or local buffers through fragments (see the module
    docstring)."""

    name = "stage-reduce-operands"
    summary = "tile.reduce over/into shared or local buffers -> copies through fragments"

    def run(self, module: ir.Module) -> None:
        for view in ops_named(module.operation, ("tile.reduce",)):
            op = as_operation(view)
            src, dst = op.operands[0], op.operands[1]
            if scope(src) not in STAGED_SCOPES and scope(dst) not in STAGED_SCOPES:
                continue
            kernel = enclosing(op, "tile.kernel")
            if kernel is None:
                continue  # outside a T.Kernel block: the verifier's and the lowering's case
            with op.location:
                if scope(src) in STAGED_SCOPES:
                    staged = fragment_like(src, kernel)
                    with ir.InsertionPoint(op):
                        copy_whole(src, staged)
                    op.operands[0] = staged
                if scope(dst) in STAGED_SCOPES:
                    staged = fragment_like(dst, kernel)
                    if not ir.BoolAttr(op.attributes["clear"]).value:
                        with ir.InsertionPoint(op):
                            copy_whole(dst, staged)
                    op.operands[1] = staged
                    with ir.InsertionPoint(op):
                        back = copy_whole(staged, dst)
                    back.move_after(op)
