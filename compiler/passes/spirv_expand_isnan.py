"""spirv-expand-isnan: spirv.IsNan / spirv.IsInf of a spirv.module as tests of the float's bits.

arith.maximumf and minimumf propagate NaN, which convert-arith-to-spirv spells with OpIsNan.
WGSL has no isNan (and WebGPU lets compilers assume floats are never NaN, so `x != x` may fold
to false): naga cannot write such a module as WGSL. This pass rewrites each scalar test on the
bits, which every device computes exactly: with m the float's bits less its sign,
NaN is m > the exponent mask, infinity m == the exponent mask.
"""

from __future__ import annotations

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import op_error, walk

# float width -> (bits without the sign, the exponent's bits: +inf)
MASKS = {32: (0x7FFFFFFF, 0x7F800000), 16: (0x7FFF, 0x7C00)}


def _constant(type_: ir.Type, value: int) -> ir.Value:
    return ir.Operation.create("spirv.Constant", results=[type_], attributes={
        "value": ir.IntegerAttr.get(type_, value)}).results[0]


@register
class SpirvExpandIsnan(TilePass):
    """Rewrite spirv.IsNan / spirv.IsInf of f32 and f16 scalars as integer tests."""

    name = "spirv-expand-isnan"
    summary = "spirv.IsNan / IsInf -> bit tests (WGSL has no isNan)"

    def run(self, module: ir.Module) -> None:
        with module.context:
            for op in [op for op in walk(module.operation)
                       if op.name in ("spirv.IsNan", "spirv.IsInf")]:
                value = op.operands[0]
                if not isinstance(value.type, ir.FloatType) or \
                        ir.FloatType(value.type).width not in MASKS:
                    raise op_error(op, f"{op.name} of {value.type}: only f32 and f16 scalars "
                                       "are rewritten for WGSL")
                width = ir.FloatType(value.type).width
                magnitude_mask, exponent = MASKS[width]
                integer = ir.IntegerType.get_signless(width)
                with op.location, ir.InsertionPoint(op):
                    bits = ir.Operation.create("spirv.Bitcast", results=[integer],
                                               operands=[value]).results[0]
                    magnitude = ir.Operation.create(
                        "spirv.BitwiseAnd", results=[integer],
                        operands=[bits, _constant(integer, magnitude_mask)]).results[0]
                    compare = "spirv.UGreaterThan" if op.name == "spirv.IsNan" else "spirv.IEqual"
                    test = ir.Operation.create(
                        compare, results=[op.results[0].type],
                        operands=[magnitude, _constant(integer, exponent)])
                op.results[0].replace_all_uses_with(test.results[0])
                op.erase()
