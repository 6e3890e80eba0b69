"""One tile.gemm as ldmatrix + mma.sync instructions (sm_80), wherever it stands in a
SIMT-lowered kernel.

plan-mma-sync-gemms decides which gemms go this way and records, as attributes, what the ops
around the gemm must agree on; lower-tile-to-gpu then calls `lower_mma_sync` for each such gemm
(and `SharedOperandLayout.element_index` for every access of an operand tile):

- `tile.mma_sync = {warps_m, warps_n, k, dtype, a_registers}` on the gemm: the block's warps
  as a warps_m x warps_n grid over the accumulator tile (warp w owns warp tile
  (w / warps_n, w % warps_n)), one `mma.sync m16n8kK` per 16 x 8 piece of its warp tile and
  32-byte K step (K = 16 for 16-bit operands, 32 for s8, 8 for tf32).
- `tile.layout` on the accumulator: mma.sync's C fragment over the warp grid
  (compiler/layouts/nvidia.py's `mma_accumulator`), which T.Parallel epilogues, reductions and
  copies follow as any linear layout; on a fragment A (`a_registers`) mma.sync's A fragment
  (`mma_operand_a`), so the cast accumulator of attention's first gemm, laid out over a
  warps x 1 grid, is the second's A as it stands.
- `tile.shared_layout = {k_major, span}` on each shared operand's tile.alloc
  (compiler/passes/_wgmma.py's `SharedOperandLayout`, the layout wgmma's tiles use): rows in
  column boxes of `span` bytes, 16-byte chunks XOR-ed with the row's place in the 1 KiB swizzle
  atom, so the 8 rows one ldmatrix matrix reads (16 bytes each) fall into 8 different bank
  groups. K-major tiles (A as M x K, B as N x K) are read with ldmatrix, MN-major 16-bit ones
  (A as K x M, B as K x N) with ldmatrix.trans.

- `tile.mma_sync_load` (the gemm's plan) on a copy of a whole shared tile into a fragment A
  (`a_registers`): the tile gets the K-major A layout, and the copy is the same x4
  ldmatrix loads a shared A takes (`lower_mma_sync_load`), each register unpacked into the
  fragment's elements, instead of every lane reading its elements one by one.

The rule (`lower_mma_sync`): per 32-byte K step, each warp loads its A pieces (one x4
ldmatrix per 16 rows) and B pieces (one x4 per 16 columns: two 8-column fragments) at
addresses its lanes compute through the tile's layout, then issues mma.sync over the
accumulator's registers (the fragment registers the layout gives each piece's elements). The
instructions are warp-synchronous and read shared memory straight into registers, so the
accumulator is final after the gemm; the ops around it need no fence (the generic proxy wrote
the tiles), only the block barriers insert-shared-barriers and the cp.async pipeline place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlir import ir
from mlir.dialects import arith, llvm, memref, vector

from tilec.compiler.layouts.linear import LinearLayout
from tilec.compiler.layouts.nvidia import mma_accumulator, mma_operand_a
from tilec.compiler.passes._ir_walk import copy_parts, op_error
from tilec.compiler.passes._scalar import constant, index
from tilec.compiler.passes._scheduling import decision_attr, read_decision
from tilec.compiler.passes._wgmma import SharedOperandLayout
from tilec.compiler.tensorcore.dtypes import K_STEP_BYTES, OPERAND_BYTES, accumulator
from tilec.compiler.tensorcore.mma_sync_ptx import ldmatrix_asm, mma_sync_asm

if TYPE_CHECKING:
    from tilec.compiler.passes.lower_tile_to_gpu import Fragment, KernelLowering

MMA_SYNC_ATTR = "tile.mma_sync"
MMA_SYNC_LOAD_ATTR = "tile.mma_sync_load"
WARP_THREADS = 32
PIECE_M, PIECE_N = 16, 8  # one mma.sync's accumulator tile
CHUNK_BYTES = 16  # one ldmatrix row
SPANS = (128, 64, 32)


@dataclass(frozen=True)
class MmaSyncPlan:
    """What tile.mma_sync records: the warp grid and the instruction."""

    warps_m: int
    warps_n: int
    k: int  # K elements of one instruction (32 bytes)
    dtype: str  # dtypes' operand type name
    a_registers: bool = False  # A is a fragment in mma.sync's A-operand layout

    @property
    def element_bytes(self) -> int:
        return OPERAND_BYTES[self.dtype]

    def to_attr(self, context: ir.Context) -> ir.Attribute:
        return decision_attr({"warps_m": self.warps_m, "warps_n": self.warps_n, "k": self.k,
                              "dtype": self.dtype, "a_registers": self.a_registers}, context)

    @classmethod
    def of(cls, op: ir.Operation, name: str = MMA_SYNC_ATTR) -> MmaSyncPlan:
        fields = read_decision(op, name) or {}
        needed = ("warps_m", "warps_n", "k", "dtype")
        if any(field not in fields for field in needed) or fields["dtype"] not in OPERAND_BYTES:
            raise op_error(op, f"{name} needs {', '.join(needed)} (plan-mma-sync-gemms writes "
                               "it)")
        return cls(int(fields["warps_m"]), int(fields["warps_n"]), int(fields["k"]),
                   str(fields["dtype"]), bool(fields.get("a_registers")))


def accumulator_layout(block_m: int, block_n: int, plan: MmaSyncPlan) -> LinearLayout:
    """mma.sync's C fragment over the plan's warp grid (LayoutError where it does not fit)."""
    return mma_accumulator(block_m, block_n, plan.warps_m, plan.warps_n)


def operand_a_layout(block_m: int, block_k: int, plan: MmaSyncPlan) -> LinearLayout:
    """mma.sync's A fragment over the warp grid's rows, copies along its columns."""
    return mma_operand_a(block_m, block_k, 8 * plan.element_bytes, plan.warps_m, plan.warps_n)


def shared_operand_layout(shape: tuple[int, int], element_bytes: int, k_major: bool
                          ) -> SharedOperandLayout | None:
    """The swizzled layout of an operand tile whose rows span a multiple of 32 bytes (the
    widest of 128, 64, 32 dividing them), None for narrower rows."""
    row_bytes = shape[1] * element_bytes
    span = next((span for span in SPANS if row_bytes % span == 0), None)
    return None if span is None else SharedOperandLayout(shape, element_bytes, k_major, span)


def _register(fragment: Fragment, coordinate: tuple[int, int], op: ir.Operation) -> int:
    """The register of a fragment holding `coordinate` of warp 0, lane 0's pieces."""
    register = fragment.register_of(coordinate)
    if register is None:
        raise op_error(op, f"a {MMA_SYNC_ATTR} gemm's fragment is not laid out for mma.sync "
                           "(plan-mma-sync-gemms gives it its layout)")
    return register


class _Warp:
    """The lane and warp-tile origin of the running thread, as index values."""

    def __init__(self, tid: ir.Value, plan: MmaSyncPlan, warp_m: int, warp_n: int):
        self.lane = arith.remui(tid, index(WARP_THREADS))
        warp = arith.divui(tid, index(WARP_THREADS))
        self.row = arith.muli(arith.divui(warp, index(plan.warps_n)), index(warp_m))
        self.column = arith.muli(arith.remui(warp, index(plan.warps_n)), index(warp_n))


def _ldmatrix(address: ir.Value, transpose: bool, offset: int = 0) -> list[ir.Value]:
    """The four 32-bit registers one x4 ldmatrix loads from `offset` bytes past `address`
    (side effects keep it after the barrier that publishes the tile)."""
    i32 = ir.IntegerType.get_signless(32)
    text, constraints = ldmatrix_asm(transpose, offset)
    result = llvm.InlineAsmOp(llvm.StructType.get_literal([i32] * 4), [address], text,
                              constraints, has_side_effects=True).result
    return [llvm.extractvalue(i32, result, [i]) for i in range(4)]


def _ldmatrix_lane(layout: SharedOperandLayout, is_a: bool, lane: ir.Value, origin: ir.Value
                   ) -> tuple[ir.Value, ir.Value]:
    """(row, column) of the tile whose 16-byte row lane `lane` addresses in the x4 ldmatrix
    of piece 0 at K step 0 (ldmatrix_row); other pieces and steps are moves from it by
    constants (_ldmatrix_move)."""
    chunk = CHUNK_BYTES // layout.element_bytes  # elements of one ldmatrix row
    if layout.k_major == is_a:  # lanes 0-15: rows 0-15, lanes 16-31: the next chunk
        lane_row = arith.remui(lane, index(16))
        lane_chunk = arith.divui(lane, index(16))
    else:  # lanes 0-7, 16-23: rows 0-7, 8-15; lanes 8-15, 24-31: the next chunk
        lane_row = arith.addi(arith.muli(arith.divui(lane, index(16)), index(8)),
                              arith.remui(lane, index(8)))
        lane_chunk = arith.remui(arith.divui(lane, index(8)), index(2))
    if layout.k_major:
        return arith.addi(origin, lane_row), arith.muli(lane_chunk, index(chunk))
    return lane_row, arith.addi(origin, arith.muli(lane_chunk, index(chunk)))


def _ldmatrix_move(layout: SharedOperandLayout, k: int, piece: int, step: int
                   ) -> tuple[int, int]:
    """(rows, columns) from piece 0 at step 0 to operand piece `piece` (16 rows of A, 16
    columns of B) at K step `step` (`k` elements): K runs along a K-major tile's columns
    and an MN-major tile's rows."""
    return (16 * piece, step * k) if layout.k_major else (step * k, 16 * piece)


def _translation(layout: SharedOperandLayout, rows: int, columns: int) -> int | None:
    """The elements that moving a coordinate by (rows, columns) adds to its element_index,
    the same for every coordinate; None where the swizzle makes it depend on the coordinate.
    The swizzle XORs the bits of a byte offset's row within its 8 x span block into the
    row's chunk bits (SharedOperandLayout.element_index), so moves by whole blocks keep it:
    rows by multiples of 8, columns by whole column boxes of a tile of 8k rows."""
    per_row = layout.span // layout.element_bytes
    if layout.warpgroups or rows % 8 or columns % per_row or layout.rows % 8:
        return None
    return rows * per_row + columns // per_row * layout.rows * per_row


def ldmatrix_row(layout: SharedOperandLayout, is_a: bool, k: int, lane: ir.Value,
                 origin: ir.Value, piece: int, step: int) -> ir.Value:
    """The element (from the tile's start) whose 16-byte row lane `lane` addresses in the x4
    ldmatrix of operand piece `piece` (A: 16 rows, B: 16 columns from the warp's `origin`) at
    K step `step` (`k` elements).

    The four 8 x 8 matrices are (rows 0-7, 8-15) x (K bytes 0-15, 16-31) for A and
    (K bytes 0-15, 16-31) x (columns 0-7, 8-15) for B, in the order of A's a0..a3 and of two
    B fragments' b0, b1; lane l addresses row l % 8 of matrix l / 8. In a K-major A tile and
    an MN-major B tile the 16 lanes of one K half walk 16 consecutive rows, in the other two
    the lanes of one 8-row half walk both K halves."""
    row, column = _ldmatrix_lane(layout, is_a, lane, origin)
    rows, columns = _ldmatrix_move(layout, k, piece, step)
    return layout.element_index(arith.addi(row, index(rows)), arith.addi(column, index(columns)))


def _shared_loader(lowering: KernelLowering, tile: ir.Value, warp: _Warp, is_a: bool,
                   plan: MmaSyncPlan) -> Callable[[int, int], list[ir.Value]]:
    """The four registers of operand piece `piece` at K step `step` (ldmatrix_row), loaded
    by one x4 ldmatrix (.trans for an MN-major tile)."""
    layout, _ = lowering.shared_layouts[tile]
    origin = warp.row if is_a else warp.column
    i32 = ir.IntegerType.get_signless(32)
    base = arith.index_cast(i32, memref.ExtractAlignedPointerAsIndexOp(tile).result)

    # the lane's byte offset for each (piece, step) move that is no constant past an
    # earlier one (_translation); the others address an immediate past one of these
    offsets: dict[tuple[int, int], ir.Value] = {}

    def load(piece: int, step: int) -> list[ir.Value]:
        move = _ldmatrix_move(layout, plan.k, piece, step)
        offset, delta = next(((offset, delta) for (rows, columns), offset in offsets.items()
                              if (delta := _translation(layout, move[0] - rows,
                                                        move[1] - columns)) is not None),
                             (None, 0))
        if offset is None:
            element = ldmatrix_row(layout, is_a, plan.k, warp.lane, origin, piece, step)
            offset = offsets[move] = arith.index_cast(
                i32, arith.muli(element, index(plan.element_bytes)))
        return _ldmatrix(arith.addi(base, offset), not layout.k_major,
                         delta * plan.element_bytes)

    return load


def a_fragment_element(plan: MmaSyncPlan, piece: int, step: int, register: int, element: int
                       ) -> tuple[int, int]:
    """The coordinate, for warp 0's lane 0, of element `element` of mma.sync's A register
    a_`register` (32 bits: 4 // element bytes elements along K) of 16-row piece `piece` at K
    step `step`: a_q holds rows + 8 (q % 2), K + k / 2 (q / 2). The fragment register holding
    it holds the same element of every lane's a_q (mma.sync's A fragment)."""
    return (PIECE_M * piece + 8 * (register % 2),
            step * plan.k + (register // 2) * (plan.k // 2) + element)


def lower_mma_sync_load(lowering: KernelLowering, op: ir.Operation) -> None:
    """A tile.mma_sync_load copy (module docstring): per 32-byte K step and 16 rows of the
    warp's tile, one x4 ldmatrix, whose register a_q's elements go to the fragment registers
    holding them (a_fragment_element)."""
    src, dst = op.operands[0], copy_parts(op)[3]
    plan = MmaSyncPlan.of(op, MMA_SYNC_LOAD_ATTR)
    if src not in lowering.shared_layouts or dst not in lowering.fragments:
        raise op_error(op, f"a {MMA_SYNC_LOAD_ATTR} copy reads a shared tile with "
                           "tile.shared_layout into a fragment (plan-mma-sync-gemms)")
    fragment = lowering.fragments[dst]
    block_m, block_k = ir.MemRefType(dst.type).shape
    element = ir.MemRefType(dst.type).element_type
    pack = 4 // plan.element_bytes
    load = _shared_loader(lowering, src, _Warp(lowering.tid, plan, block_m // plan.warps_m, 0),
                          True, plan)
    for step in range(block_k * plan.element_bytes // K_STEP_BYTES):
        for piece in range(block_m // plan.warps_m // PIECE_M):
            for q, word in enumerate(load(piece, step)):
                if pack == 1:
                    items = [arith.bitcast(element, word)]
                else:
                    words = vector.from_elements(ir.VectorType.get([1], word.type), [word])
                    unpacked = vector.bitcast(ir.VectorType.get([pack], element), words)
                    items = [vector.extract(unpacked, [], [c]) for c in range(pack)]
                for c, item in enumerate(items):
                    fragment.store(item, _register(
                        fragment, a_fragment_element(plan, piece, step, q, c), op))


def _register_a(fragment: Fragment, op: ir.Operation, plan: MmaSyncPlan
                ) -> Callable[[int, int], list[ir.Value]]:
    """A's four 32-bit registers of piece (16 rows) `piece` at K step `step`, packed from its
    fragment (a_fragment_element)."""
    pack = 4 // plan.element_bytes
    element = ir.MemRefType(op.operands[0].type).element_type
    i32 = ir.IntegerType.get_signless(32)

    def registers(piece: int, step: int) -> list[ir.Value]:
        packed = []
        for q in range(4):
            items = [fragment.load(_register(fragment, a_fragment_element(plan, piece, step, q,
                                                                          c), op))
                     for c in range(pack)]
            if pack == 1:
                packed.append(arith.bitcast(i32, items[0]))
                continue
            elements = vector.FromElementsOp(ir.VectorType.get([pack], element), items)
            word = vector.BitCastOp(ir.VectorType.get([1], i32), elements.result).result
            packed.append(vector.extract(word, [], [0]))
        return packed

    return registers


def lower_mma_sync(lowering: KernelLowering, op: ir.Operation) -> None:
    """Emit the gemm at the current insertion point (module docstring)."""
    a, b, c = op.operands[0], op.operands[1], op.operands[2]
    plan = MmaSyncPlan.of(op)
    a_known = a in lowering.fragments if plan.a_registers else a in lowering.shared_layouts
    if not (a_known and b in lowering.shared_layouts and c in lowering.fragments):
        raise op_error(op, f"a {MMA_SYNC_ATTR} gemm needs tile.shared_layout on its shared "
                           "operand tiles and fragments for the others (plan-mma-sync-gemms)")
    accumulators = lowering.fragments[c]
    block_m, block_n = ir.MemRefType(c.type).shape
    warp_m, warp_n = block_m // plan.warps_m, block_n // plan.warps_n
    warp = _Warp(lowering.tid, plan, warp_m, warp_n)
    if plan.a_registers:
        load_a = _register_a(lowering.fragments[a], op, plan)
        block_k = ir.MemRefType(a.type).shape[1]
    else:
        load_a = _shared_loader(lowering, a, warp, True, plan)
        a_layout = lowering.shared_layouts[a][0]
        block_k = a_layout.shape[1] if a_layout.k_major else a_layout.shape[0]
    load_b = _shared_loader(lowering, b, warp, False, plan)
    element = ir.IntegerType.get_signless(32) if accumulator(plan.dtype) == "s32" \
        else ir.F32Type.get()
    pieces = [(m, n) for m in range(warp_m // PIECE_M) for n in range(warp_n // PIECE_N)]
    slots = {(m, n): [_register(accumulators, (PIECE_M * m + 8 * (i // 2), PIECE_N * n + i % 2),
                                op) for i in range(4)] for m, n in pieces}
    if ir.BoolAttr(op.attributes["clear_accum"]).value:
        zero = constant(element, 0)
        values = {piece: [zero] * 4 for piece in pieces}
    else:
        values = {piece: [accumulators.load(slot) for slot in slots[piece]] for piece in pieces}
    text, constraints = mma_sync_asm(plan.dtype)
    result_type = llvm.StructType.get_literal([element] * 4)
    steps = block_k * plan.element_bytes // K_STEP_BYTES
    for step in range(steps):
        a_pieces = [load_a(m, step) for m in range(warp_m // PIECE_M)]
        b_pieces = []
        for pair in range(warp_n // 16):
            registers = load_b(pair, step)
            b_pieces += [registers[0:2], registers[2:4]]
        for m, n in pieces:
            result = llvm.InlineAsmOp(result_type, [*a_pieces[m], *b_pieces[n], *values[m, n]],
                                      text, constraints).result
            values[m, n] = [llvm.extractvalue(element, result, [i]) for i in range(4)]
    for piece in pieces:
        for slot, value in zip(slots[piece], values[piece], strict=True):
            accumulators.store(value, slot)
