"""plan-mfma-gemms: which tile.gemm ops lower-tile-to-gpu computes with MFMA, one op at a time.

On AMD CDNA chips (the description's `mma` is "mfma"), every gemm of any kernel (an epilogue
in T.Parallel, a batched grid, several gemms, a reduction over the accumulator) runs on the
matrix cores where it stands when:

- A and B are tiles of their own (tile.alloc) in LDS, or fragments not transposed; C is a
  fragment of f32 (i32 for int8 operands) without a layout yet, or with the one another such
  gemm accumulating into it gave it; a fragment operand has no layout yet or this gemm's;
- the chip has an MFMA for the operand types (compiler/layouts/amd.py's MFMA_INSTRUCTIONS:
  f32, f16, bf16, int8; on gfx942 fp8 in the FNUZ formats its MFMAs read, f8E4M3FNUZ /
  f8E5M2FNUZ. OCP's float8_e4m3fn / float8_e5m2 stay on the SIMT path: read as FNUZ they
  would give half their values, and NaN for a negative zero) and M, N, K and the threads
  running the gemm (whole 64-lane waves) are powers of two that split into whole blocks over a
  wave grid (`wave_grid`: T.gemm's policy, the 32 x 32 block before the 16 x 16 one).

It records the decision (`tile.mfma`: instruction, wave grid, operand layouts;
compiler/passes/_mfma.py) on the gemm and the MFMA accumulator fragment as C's `tile.layout`
(and the operand layout on a fragment A or B), from which infer-fragment-layout lays out the
T.Parallel loops, reductions and copies that touch them. Other gemms are left to
lower-gemm-simt. The pass does nothing on chips without MFMA.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.layouts.amd import WAVE_LANES, WaveGrid, instructions_for, wave_grid
from tilec.compiler.layouts.linear import is_power_of_two
from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._fragment_layout import LAYOUT_ATTR, layout_attr, layout_of
from tilec.compiler.passes._ir_walk import defining_op, kernels, scope, walk
from tilec.compiler.passes._mfma import MFMA_ATTR, MfmaPlan, gemm_shape
from tilec.compiler.passes._scheduling import target_description
from tilec.compiler.passes.infer_fragment_layout import threads_at

# element type -> MFMA operand type (compiler/layouts/amd.py's names); OCP's float8 types
# (tilec's float8_e4m3fn / float8_e5m2) have no CDNA3 MFMA and stay on the SIMT path
OPERAND_TYPES = (
    (ir.F32Type, "f32"), (ir.F16Type, "f16"), (ir.BF16Type, "bf16"),
    (ir.Float8E4M3FNUZType, "e4m3fnuz"), (ir.Float8E5M2FNUZType, "e5m2fnuz"),
)


def _operand_type(type_: ir.Type) -> str | None:
    if isinstance(type_, ir.IntegerType):
        return "s8" if ir.IntegerType(type_).width == 8 else None  # signed, as lower-gemm-simt
    return next((name for type_class, name in OPERAND_TYPES if isinstance(type_, type_class)),
                None)


def _accumulator_type(type_: ir.Type) -> str | None:
    if isinstance(type_, ir.F32Type):
        return "f32"
    return "s32" if isinstance(type_, ir.IntegerType) and ir.IntegerType(type_).width == 32 \
        else None


def _alloc(value: ir.Value) -> ir.Operation | None:
    op = defining_op(value)
    return op if op is not None and op.name == "tile.alloc" else None


def gemm_grid(gemm: ir.Operation, chip: str, threads: int) -> WaveGrid | None:
    """The wave grid (and instruction) of a gemm the rule takes, None when it declines."""
    a, b, c = gemm.operands[0], gemm.operands[1], gemm.operands[2]
    if any(_alloc(v) is None for v in (a, b, c)) or a == b or scope(c) != "fragment":
        return None
    for position, operand in ((0, a), (1, b)):
        transposed = ir.BoolAttr(gemm.attributes[
            "transpose_a" if position == 0 else "transpose_b"]).value
        if scope(operand) not in ("shared", "fragment") or (
                scope(operand) == "fragment" and transposed):
            return None
    operand_type = _operand_type(ir.MemRefType(a.type).element_type)  # B's (the verifier)
    c_type = _accumulator_type(ir.MemRefType(c.type).element_type)
    if operand_type is None or threads % WAVE_LANES or \
            not is_power_of_two(threads // WAVE_LANES):
        return None
    m, n, k = gemm_shape(gemm)
    if not all(map(is_power_of_two, (m, n, k))):
        return None
    policy = ir.StringAttr(gemm.attributes["policy"]).value
    for instr in instructions_for(chip, operand_type):
        if instr.accumulator_type != c_type:
            continue
        grid = wave_grid(instr, m, n, k, threads // WAVE_LANES, policy)
        if grid is not None:
            return grid
    return None


def _fits(value: ir.Value, layout) -> bool:
    """A fragment without a layout yet, or with `layout`; any LDS tile."""
    return scope(value) != "fragment" or layout_of(value) in (None, layout)


@register
@dataclass
class PlanMfmaGemms(TilePass):
    """Mark the gemms lower-tile-to-gpu lowers to MFMA one by one, and their layouts."""

    name = "plan-mfma-gemms"
    summary = "tile.gemm on AMD matrix cores -> tile.mfma + accumulator / operand layouts"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        target = target_description(module, self.arch, self.name)
        if target.mma != "mfma":
            return
        context = module.context
        for kernel in kernels(module):
            for gemm in [op for op in walk(kernel) if op.name == "tile.gemm"]:
                grid = gemm_grid(gemm, target.chip, threads_at(gemm, kernel, 0))
                if grid is None:
                    continue
                plan = MfmaPlan.for_grid(grid)
                operands = ((gemm.operands[0], plan.a), (gemm.operands[1], plan.b),
                            (gemm.operands[2], grid.accumulator()))
                if not all(_fits(value, layout) for value, layout in operands):
                    continue
                for value, layout in operands:
                    if scope(value) == "fragment":
                        _alloc(value).attributes[LAYOUT_ATTR] = layout_attr(layout)
                gemm.attributes[MFMA_ATTR] = plan.to_attr(context)
