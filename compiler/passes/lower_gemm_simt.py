"""lower-gemm-simt: T.gemm as CUDA-core code, C[i, j] += A[i, k] * B[k, j] over K.

The portable gemm: each thread updates the accumulator elements its fragment layout gives it,
reading A and B from shared memory (or from fragments laid out along C's rows and columns). It
rewrites tile.gemm into tile ops (a tile.for over K, unrolled when an operand is a fragment,
around a tile.parallel that carries C's layout, one fma per step), so the rest of the lowering
treats it as any other T.Parallel. With the opt-in `tile.simt_slices_in_place`
(TILEC_SIMT_SLICES_IN_PLACE=1, until a GPU has run it), a shared operand that is a tile of its
own, filled whole by one T.copy from a slice of a larger shared tile just before the gemm (the
frontend's copy of an operand written `Q_shared[:, :D]`), is read from the larger tile at the
slice's offsets, and the copy goes, where nothing writes the larger tile between the two and
nothing else reads the copy: TileLang's sparse MLA backward copied 144 KiB of such slices for
its CUDA-core gemms, over a block's shared memory (as plan-wgmma-gemms and plan-mma-sync-gemms
read slices in place for the tensor cores). The tensor-core planning passes run before this one:
the gemms they marked (tile.wgmma, tile.mma_sync) are lower-tile-to-gpu's. A gemm the kernel
asked to run on wgmma (T.wgmma_gemm: `tile.wgmma_required`) that reaches it is an error: it
would fall back silently. Needs infer-fragment-layout first. """

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math, memref

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._fragment_layout import LAYOUT_ATTR
from tilec.compiler.passes._integer_storage import VIEWS
from tilec.compiler.passes._ir_walk import (
    as_operation,
    constant_index,
    copy_parts,
    defining_op,
    kernels,
    op_error,
    scope,
    walk,
)
from tilec.compiler.passes._mfma import MFMA_ATTR
from tilec.compiler.passes._mma_sync import MMA_SYNC_ATTR
from tilec.compiler.passes._scalar import cast, index, is_float, zero
from tilec.compiler.passes._scheduling import SIMT_SLICES_IN_PLACE_ATTR
from tilec.compiler.passes._wgmma import IN_PLACE_ATTR, WGMMA_ATTR
from tilec.compiler.passes.infer_fragment_layout import writes
from tilec.dialect import FillOp, ForOp, ParallelOp, YieldOp

WGMMA_REQUIRED_ATTR = "tile.wgmma_required"  # T.wgmma_gemm: wgmma or an error


def slice_fill(gemm: ir.Operation, operand: ir.Value) -> ir.Operation | None:
    """The T.copy filling `operand` (a shared tile of its own) whole from a slice of a larger
    shared tile just before `gemm`, where the gemm may read that tile in its place (see the
    module docstring); None where it must read the operand."""
    alloc = defining_op(operand)
    if scope(operand) != "shared" or alloc is None or alloc.name != "tile.alloc":
        return None
    users = {as_operation(use.owner) for use in operand.uses}
    fills = [op for op in users if op.name == "tile.copy" and copy_parts(op)[3] == operand]
    if len(fills) != 1 or users != {fills[0], gemm} or IN_PLACE_ATTR in fills[0].attributes:
        return None
    fill = fills[0]
    source, _, shape, _, offsets, dst_shape = copy_parts(fill)
    source_owner = defining_op(source)
    whole = shape == dst_shape == list(ir.MemRefType(operand.type).shape) and \
        all(constant_index(offset) == 0 for offset in offsets)
    if not whole or scope(source) != "shared" or source_owner is None or \
            source_owner.name != "tile.alloc" or \
            ir.MemRefType(source.type).element_type != ir.MemRefType(operand.type).element_type \
            or any(as_operation(use.owner).name in VIEWS for use in source.uses):
        return None
    statements = [as_operation(op) for op in gemm.block.operations]
    if fill.block != gemm.block or not fill.is_before_in_block(gemm):
        return None
    between = statements[statements.index(fill) + 1:statements.index(gemm)]
    return None if any(writes(op, source) for op in between) else fill


def read_from(gemm: ir.Operation, operand: ir.Value, in_place: bool
              ) -> tuple[ir.Value, list[ir.Value | None], ir.Operation | None]:
    """(the tile the gemm reads `operand` from, the offsets to add to its indices, the copy
    that is then left to erase)."""
    fill = slice_fill(gemm, operand) if in_place else None
    if fill is None:
        return operand, [None, None], None
    source, offsets, *_ = copy_parts(fill)
    return source, [None if constant_index(offset) == 0 else offset for offset in offsets], fill


def shifted(indices: list[ir.Value], offsets: list[ir.Value | None]) -> list[ir.Value]:
    return [i if offset is None else arith.addi(offset, i)
            for i, offset in zip(indices, offsets, strict=True)]


def lower_gemm(gemm: ir.Operation, in_place: bool = False) -> None:
    a, b, c = gemm.operands[0], gemm.operands[1], gemm.operands[2]
    transpose_a = ir.BoolAttr(gemm.attributes["transpose_a"]).value
    transpose_b = ir.BoolAttr(gemm.attributes["transpose_b"]).value
    m, n = ir.MemRefType(c.type).shape
    a_shape = ir.MemRefType(a.type).shape
    k_extent = a_shape[0] if transpose_a else a_shape[1]
    accumulator = ir.MemRefType(c.type).element_type
    owner = defining_op(c)
    if owner is None or LAYOUT_ATTR not in owner.attributes:
        raise op_error(gemm, "run infer-fragment-layout before lower-gemm-simt")
    (a_tile, a_at, a_fill), (b_tile, b_at, b_fill) = (read_from(gemm, a, in_place),
                                                      read_from(gemm, b, in_place))
    with gemm.location, ir.InsertionPoint(gemm):
        if ir.BoolAttr(gemm.attributes["clear_accum"]).value:
            FillOp(c, zero(accumulator))
        # fragment operands are registers: their K index must be a constant, so unroll then
        unroll = scope(a) == "fragment" or scope(b) == "fragment"
        k_loop = ForOp(index(0), index(k_extent), index(1), unroll=True if unroll else None)
        k_body = k_loop.regions[0].blocks.append(ir.IndexType.get())
        with ir.InsertionPoint(k_body):
            k = k_body.arguments[0]
            parallel = ParallelOp(ir.DenseI64ArrayAttr.get([m, n]))
            parallel.operation.attributes[LAYOUT_ATTR] = owner.attributes[LAYOUT_ATTR]
            body = parallel.regions[0].blocks.append(ir.IndexType.get(), ir.IndexType.get())
            with ir.InsertionPoint(body):
                i, j = body.arguments
                a_value = memref.load(a_tile, shifted([k, i] if transpose_a else [i, k], a_at))
                b_value = memref.load(b_tile, shifted([j, k] if transpose_b else [k, j], b_at))
                a_wide, b_wide = cast(a_value, accumulator), cast(b_value, accumulator)
                old = memref.load(c, [i, j])
                if is_float(accumulator):  # one rounding per step, as tensor cores do
                    total = math.fma(a_wide, b_wide, old)
                else:
                    total = arith.addi(old, arith.muli(a_wide, b_wide))
                memref.store(total, c, [i, j])
                YieldOp()
            YieldOp()
    gemm.erase()
    for fill in {fill for fill in (a_fill, b_fill) if fill is not None}:
        tile = defining_op(copy_parts(fill)[3])  # the copy nothing reads now, and its tile
        fill.erase()
        tile.erase()


@register
class LowerGemmSimt(TilePass):
    """Rewrite each tile.gemm into per-thread multiply-adds over its C fragment layout."""

    name = "lower-gemm-simt"
    summary = "T.gemm on CUDA cores: a K loop around a T.Parallel over C's layout"

    def run(self, module: ir.Module) -> None:
        in_place = SIMT_SLICES_IN_PLACE_ATTR in module.operation.attributes
        for kernel in kernels(module):
            for op in [op for op in walk(kernel)
                       if op.name == "tile.gemm" and WGMMA_ATTR not in op.attributes
                       and MMA_SYNC_ATTR not in op.attributes
                       and MFMA_ATTR not in op.attributes]:
                if WGMMA_REQUIRED_ATTR in op.attributes:
                    raise op_error(op, "T.wgmma_gemm runs on wgmma, which tilec cannot use for "
                                       "this gemm (its operands, dtypes or tile shape: "
                                       "infer-mma-layout's rule); write T.gemm to let it run "
                                       "on CUDA cores")
                lower_gemm(op, in_place)
