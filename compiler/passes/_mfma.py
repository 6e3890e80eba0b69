"""One tile.gemm as MFMA instructions (AMD CDNA), wherever it stands in a SIMT-lowered kernel.

plan-mfma-gemms decides which gemms go this way and records what the ops around the gemm must
agree on; lower-tile-to-gpu then calls `lower_mfma` for each such gemm:

- `tile.mfma = {instruction = "v_mfma_f32_32x32x8_f16", waves = array<i64: WM, WN>,
  a = #tile.linear<...>, b = #tile.linear<...>}` on the gemm: the block instruction (its
  mnemonic as the chip's disassembly spells it: compiler/layouts/amd.py's MFMA_INSTRUCTIONS),
  the WM x WN grid of 64-lane waves, and which elements of A (M x K) and B (K x N) each lane
  feeds its instructions in which operand register (the layouts' `operand_a` / `operand_b`).
- `tile.layout` on the accumulator: the MFMA fragment (`WaveGrid.accumulator`), which
  T.Parallel epilogues, reductions and copies follow as any linear layout.

The rule (`lower_mfma`): per K step, each lane reads its operand elements from LDS at the
coordinates the operand layouts give it, as one vector where they lie side by side in the
tile's rows (A as M x K, B as N x K; a K x N B element by element), or, for a fragment A or B
laid out so, from its registers; packs them as the instruction takes them (vector<4 x f16>,
vector<4 x i16> for bf16, an i64 of 8 bytes for CDNA3's int8 / fp8, an i32 of 4 for CDNA2's
int8, one f32), and issues one `rocdl.mfma.*` per block of the wave's tile on the block's
accumulator registers (a vector<16 or 4 x f32 / i32>), which are stored back to the fragment
after the last step. insert-shared-barriers has already put a barrier between the copies
filling the operand tiles and the gemm reading them (and before the next fill).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlir import ir
from mlir.dialects import memref, rocdl, vector

from tilec.compiler.layouts.amd import MFMA_INSTRUCTIONS, MfmaInstruction, WaveGrid
from tilec.compiler.layouts.emit import register_coordinates, thread_coordinates
from tilec.compiler.layouts.linear import LayoutError, LinearLayout
from tilec.compiler.passes._fragment_layout import layout_attr, read_layout
from tilec.compiler.passes._ir_walk import op_error
from tilec.compiler.passes._scalar import constant

if TYPE_CHECKING:
    from tilec.compiler.passes.lower_tile_to_gpu import KernelLowering

MFMA_ATTR = "tile.mfma"
_INSTRUCTIONS = {instr.name: instr for table in MFMA_INSTRUCTIONS.values() for instr in table}


def gemm_shape(op: ir.Operation) -> tuple[int, int, int]:
    """(M, N, K) of a tile.gemm (A is K x M when transposed)."""
    a_shape = ir.MemRefType(op.operands[0].type).shape
    m, n = ir.MemRefType(op.operands[2].type).shape
    transposed = ir.BoolAttr(op.attributes["transpose_a"]).value
    return m, n, a_shape[0] if transposed else a_shape[1]


@dataclass(frozen=True)
class MfmaPlan:
    """What tile.mfma records: the wave grid (with its instruction) and the operand layouts."""

    grid: WaveGrid
    a: LinearLayout
    b: LinearLayout

    @classmethod
    def for_grid(cls, grid: WaveGrid) -> MfmaPlan:
        return cls(grid, grid.operand_a(), grid.operand_b())

    def to_attr(self, context: ir.Context) -> ir.Attribute:
        grid = self.grid
        return ir.DictAttr.get({
            "instruction": ir.StringAttr.get(grid.instruction.name, context),
            "waves": ir.DenseI64ArrayAttr.get([grid.waves_m, grid.waves_n], context),
            "a": layout_attr(self.a),
            "b": layout_attr(self.b),
        }, context)

    @classmethod
    def of(cls, op: ir.Operation) -> MfmaPlan:
        """The plan recorded on a gemm; an error at the gemm where it is incomplete, names an
        instruction tilec does not know, or records layouts that are not that grid's."""
        if MFMA_ATTR not in op.attributes or not isinstance(op.attributes[MFMA_ATTR],
                                                               ir.DictAttr):
            raise op_error(op, f"{MFMA_ATTR} must be a dictionary (plan-mfma-gemms)")
        fields = ir.DictAttr(op.attributes[MFMA_ATTR])
        needed = ("instruction", "waves", "a", "b")
        if any(name not in fields for name in needed):
            raise op_error(op, f"{MFMA_ATTR} needs {', '.join(needed)} (plan-mfma-gemms "
                               "records them)")
        name = ir.StringAttr(fields["instruction"]).value
        instr = _INSTRUCTIONS.get(name)
        if instr is None:
            raise op_error(op, f"{MFMA_ATTR}: no MFMA instruction '{name}' (known: "
                               f"{', '.join(sorted(_INSTRUCTIONS))})")
        waves = list(ir.DenseI64ArrayAttr(fields["waves"]))
        try:
            grid = WaveGrid(instr, waves[0], waves[1], *gemm_shape(op))
        except (LayoutError, IndexError) as error:
            raise op_error(op, f"{MFMA_ATTR}: {error}") from None
        plan = cls(grid, read_layout(fields["a"]), read_layout(fields["b"]))
        if plan != cls.for_grid(grid):
            raise op_error(op, f"{MFMA_ATTR}: the operand layouts are not those of {name} "
                               f"over {waves[0]}x{waves[1]} waves")
        return plan


def _as_operand(instr: MfmaInstruction, elements: ir.Value) -> ir.Value:
    """One lane's operand of an instruction from the vector of its elements."""
    vector_type = ir.VectorType(elements.type)
    element, count = vector_type.element_type, vector_type.shape[0]
    if count == 1:
        return vector.extract(elements, [], [0])
    if isinstance(element, ir.F16Type):
        return elements
    if isinstance(element, ir.BF16Type):  # the bf16_1k intrinsics take i16 lanes
        return vector.BitCastOp(ir.VectorType.get([count], ir.IntegerType.get_signless(16)),
                                elements).result
    word = ir.IntegerType.get_signless(instr.packed)
    packed = vector.BitCastOp(ir.VectorType.get([1], word), elements).result
    return vector.extract(packed, [], [0])


class _Operand:
    """Where one operand's lane elements come from: its fragment's registers (laid out by the
    plan's layout) or its LDS tile at the layout's coordinates, one vector load where the
    lane's K elements lie side by side in the tile's rows (A as M x K, B as N x K)."""

    def __init__(self, lowering: KernelLowering, op: ir.Operation, position: int,
                 layout: LinearLayout):
        self.value = op.operands[position]
        self.layout = layout
        self.position_is_a = position == 0
        self.fragment = lowering.fragments.get(self.value)
        if self.fragment is not None:
            if self.fragment.layout != layout:
                raise op_error(op, f"a {MFMA_ATTR} gemm's fragment operand must be laid out "
                                   "as the plan's operand layout (plan-mfma-gemms)")
            return
        self.lowering = lowering
        transposed = ir.BoolAttr(op.attributes[
            "transpose_a" if position == 0 else "transpose_b"]).value
        # the tile's dimension holding K: A (M x K) and a transposed B (N x K) along rows
        self.k_along_rows = transposed == (position == 1)
        self.shift = thread_coordinates(layout, lowering.tid)

    def _where(self, register: int) -> list[ir.Value]:
        """The tile index of the element in `register` (the layout's coordinate is (M, K) for
        A and (K, N) for B)."""
        where = register_coordinates(self.layout, register, self.shift)
        k_dim = 1 if self.position_is_a else 0
        k, other = where[k_dim], where[1 - k_dim]
        return [other, k] if self.k_along_rows else [k, other]

    def elements(self, registers: list[int]) -> ir.Value:
        """The vector of the elements in `registers` (consecutive along K)."""
        element = ir.MemRefType(self.value.type).element_type
        vector_type = ir.VectorType.get([len(registers)], element)
        if self.fragment is not None:
            return vector.FromElementsOp(vector_type, [
                self.fragment.load(register) for register in registers]).result
        if self.k_along_rows and self.value not in self.lowering.shared_layouts:
            return vector.LoadOp(vector_type, self.value, self._where(registers[0])).result
        return vector.FromElementsOp(vector_type, [
            memref.load(self.value, self.lowering.shared_where(self.value, self._where(r)))
            for r in registers]).result


def lower_mfma(lowering: KernelLowering, op: ir.Operation) -> None:
    """Emit the gemm at the current insertion point (module docstring)."""
    plan = MfmaPlan.of(op)
    grid, instr = plan.grid, plan.grid.instruction
    c = op.operands[2]
    accumulator = lowering.fragments.get(c)
    if accumulator is None or accumulator.layout != grid.accumulator():
        raise op_error(op, f"a {MFMA_ATTR} gemm's accumulator must be a fragment in the MFMA "
                           "accumulator layout (plan-mfma-gemms)")
    a = _Operand(lowering, op, 0, plan.a)
    b = _Operand(lowering, op, 1, plan.b)
    element = ir.MemRefType(c.type).element_type
    result_type = ir.VectorType.get([instr.registers], element)
    blocks = [(i, j) for i in range(grid.blocks_m) for j in range(grid.blocks_n)]
    registers = {block: [grid.accumulator_register(*block, r) for r in range(instr.registers)]
                 for block in blocks}
    if ir.BoolAttr(op.attributes["clear_accum"]).value:
        zero = constant(element, 0)
        values = {block: vector.BroadcastOp(result_type, zero).result for block in blocks}
    else:
        values = {block: vector.FromElementsOp(result_type, [
            accumulator.load(register) for register in registers[block]]).result
            for block in blocks}
    i32 = ir.IntegerType.get_signless(32)
    # cbsz, abid, blgp: no broadcast between blocks, no lane swizzle of B
    modifiers = [constant(i32, 0) for _ in range(3)]
    build = getattr(rocdl, instr.op)
    for step in range(grid.steps):
        a_items = [_as_operand(instr, a.elements([grid.operand_register(i, step, e) for e in
                                                  range(instr.per_lane)]))
                   for i in range(grid.blocks_m)]
        b_items = [_as_operand(instr, b.elements([grid.operand_register(j, step, e) for e in
                                                  range(instr.per_lane)]))
                   for j in range(grid.blocks_n)]
        for i, j in blocks:
            values[i, j] = build(result_type, [a_items[i], b_items[j], values[i, j],
                                               *modifiers]).result
    for block in blocks:
        for position, register in enumerate(registers[block]):
            accumulator.store(vector.extract(values[block], [], [position]), register)

