"""spirv-narrow-shift-amounts: the shift amount of a 64-bit shift as a 32-bit integer.

SPIR-V's shifts take an amount of any integer width; convert-arith-to-spirv gives a 64-bit
shift a 64-bit amount (arith's operands share one type). naga reads it so and, making WGSL
for the webgpu target, writes `x >> amount` with a u64 amount, which WGSL rejects (a shift
amount is u32: "automatic conversions cannot convert elements of `u64` to `u32`"): T.rng_init
with a seed past 32 bits ran on vulkan but not on webgpu. The amount (below 64 where the shift
is defined) is converted to 32 bits (a scalar constant made anew, any other value by OpUConvert),
which every API takes.
"""

from __future__ import annotations

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import walk

SHIFTS = ("spirv.ShiftLeftLogical", "spirv.ShiftRightLogical", "spirv.ShiftRightArithmetic")


def _as_32_bits(type_: ir.Type) -> ir.Type | None:
    """The 32-bit integer type of `type_`'s shape where `type_` is 64-bit, else None."""
    vector = isinstance(type_, ir.VectorType)
    element = ir.VectorType(type_).element_type if vector else type_
    if not isinstance(element, ir.IntegerType) or ir.IntegerType(element).width != 64:
        return None
    narrow = ir.IntegerType.get_signless(32)
    return ir.VectorType.get(ir.VectorType(type_).shape, narrow) if vector else narrow


@register
class SpirvNarrowShiftAmounts(TilePass):
    """The 64-bit shift amounts of spirv shifts converted to 32 bits."""

    name = "spirv-narrow-shift-amounts"
    summary = "64-bit shift amounts as 32-bit ones (WGSL's shift amount is u32)"

    def run(self, module: ir.Module) -> None:
        with module.context:
            for op in [op for op in walk(module.operation) if op.name in SHIFTS]:
                amount = op.operands[1]
                narrow = _as_32_bits(amount.type)
                if narrow is None:
                    continue
                with op.location, ir.InsertionPoint(op):
                    op.operands[1] = _narrowed(amount, narrow)


def _narrowed(amount: ir.Value, narrow: ir.Type) -> ir.Value:
    """`amount` as `narrow`: a scalar constant's value as a 32-bit constant (naga cannot
    convert a 64-bit literal: "Cannot cast scalar components of expression
    `Literal(U64(32))`"), any other value through OpUConvert."""
    if (isinstance(amount, ir.OpResult) and amount.owner.name == "spirv.Constant"
            and isinstance(narrow, ir.IntegerType)):
        value = ir.IntegerAttr(amount.owner.attributes["value"]).value
        return ir.Operation.create("spirv.Constant", results=[narrow],
                                   attributes={"value": ir.IntegerAttr.get(narrow, value)}
                                   ).results[0]
    return ir.Operation.create("spirv.UConvert", results=[narrow], operands=[amount]).results[0]
