"""Whether a tile.copy's global rows can move in 16-byte pieces (TMA, cp.async, vector stores).

select-epilogue-store and pipeline-async-copies only choose an asynchronous or vectorized
mechanism for a copy whose global rows are provably 16-byte aligned: the global tensor's row
pitch (TMA's strides must be 16-byte multiples), and for per-thread 16-byte pieces also the box's
row length and its column offset. A row length only known at run time could be anything, so such
a copy keeps its plain lowering.
"""

from __future__ import annotations

from mlir import ir

from tilec.compiler.passes._ir_walk import constant_index, defining_op

PIECE_BYTES = 16


def element_bytes(memref: ir.Value) -> int | None:
    """Bytes of one element of a memref value, None for sub-byte types."""
    width = getattr(ir.MemRefType(memref.type).element_type, "width", None)
    return width // 8 if width and width % 8 == 0 else None


def row_pitch_aligned(memref: ir.Value) -> bool:
    """Is the innermost extent of a (row-major) tensor static, in 16-byte multiples?"""
    shape = ir.MemRefType(memref.type).shape
    size = element_bytes(memref)
    if not shape or size is None or shape[-1] == ir.ShapedType.get_dynamic_size():
        return False
    return shape[-1] * size % PIECE_BYTES == 0


def _multiple_of(value: ir.Value, factor: int) -> bool:
    """Is an index value provably a multiple of `factor` (constants, products, sums, and
    right shifts or divisions by a constant of a multiple of factor << shift or factor *
    divisor: a packed column's byte, lower-sub-byte-types' `(k * 128) >> 1` or TileLang's
    `k * block_K // num_elems_per_byte` on uint8 storage)?"""
    known = constant_index(value)
    if known is not None:
        return known % factor == 0
    op = defining_op(value)
    if op is None:
        return False
    if op.name == "arith.muli":
        return any(_multiple_of(operand, factor) for operand in op.operands)
    if op.name == "arith.addi":
        return all(_multiple_of(operand, factor) for operand in op.operands)
    if op.name == "arith.shrui":
        shift = constant_index(op.operands[1])
        return shift is not None and 0 <= shift < 32 and _multiple_of(op.operands[0],
                                                                      factor << shift)
    if op.name in ("arith.floordivsi", "arith.divsi", "arith.divui"):
        divisor = constant_index(op.operands[1])  # exact on a multiple of factor * divisor
        return divisor is not None and divisor > 0 and _multiple_of(op.operands[0],
                                                                    factor * divisor)
    return False


def box_rows_aligned(memref: ir.Value, offsets: list[ir.Value], box: list[int]) -> bool:
    """Does every row of the box at `offsets` in `memref` start and end on 16-byte boundaries?"""
    size = element_bytes(memref)
    if size is None or not box or not row_pitch_aligned(memref):
        return False
    if box[-1] * size % PIECE_BYTES:
        return False
    return _multiple_of(offsets[-1], PIECE_BYTES // size) if size < PIECE_BYTES else True
