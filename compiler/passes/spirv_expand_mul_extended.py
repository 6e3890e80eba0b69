"""spirv-expand-mul-extended: arith.mului_extended (the low and high words of an unsigned
product twice their width) as products of half-width limbs, for the SPIR-V targets.

convert-arith-to-spirv makes it OpUMulExtended, valid SPIR-V that wgpu cannot take: naga
rejects it reading SPIR-V (vulkan) and making WGSL (webgpu), so T.rng's Philox rounds, whose
two products per round are such multiplies, ran on neither. With a = ah 2^h + al and
b = bh 2^h + bl (h half the width, each limb below 2^h, so each limb product fits the width):

  low  = a * b (the product's low word is the wrapping multiply)
  mid  = (al bl >> h) + (al bh mod 2^h) + (ah bl mod 2^h)     (below 3 * 2^h: no overflow)
  high = ah bh + (al bh >> h) + (ah bl >> h) + (mid >> h)

exactly the product's high word, in integer ops every API has. Scalars and vectors alike.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import walk


def _splat(type_: ir.Type, value: int) -> ir.Value:
    """`value` as a constant of the integer (or vector of integers) `type_`."""
    if isinstance(type_, ir.VectorType):
        element = ir.VectorType(type_).element_type
        attribute = ir.DenseElementsAttr.get_splat(type_, ir.IntegerAttr.get(element, value))
        return arith.ConstantOp(type_, attribute).result
    return arith.ConstantOp(type_, ir.IntegerAttr.get(type_, value)).result


def _high_word(a: ir.Value, b: ir.Value, width: int) -> ir.Value:
    half = width // 2
    type_ = a.type
    shift, mask = _splat(type_, half), _splat(type_, (1 << half) - 1)
    a_low, a_high = arith.andi(a, mask), arith.shrui(a, shift)
    b_low, b_high = arith.andi(b, mask), arith.shrui(b, shift)
    low_low = arith.muli(a_low, b_low)
    low_high = arith.muli(a_low, b_high)
    high_low = arith.muli(a_high, b_low)
    high_high = arith.muli(a_high, b_high)
    middle = arith.addi(arith.addi(arith.shrui(low_low, shift), arith.andi(low_high, mask)),
                        arith.andi(high_low, mask))
    carries = arith.addi(arith.addi(arith.shrui(low_high, shift), arith.shrui(high_low, shift)),
                         arith.shrui(middle, shift))
    return arith.addi(high_high, carries)


@register
class SpirvExpandMulExtended(TilePass):
    """Rewrite arith.mului_extended as half-width limb products (naga takes no
    OpUMulExtended)."""

    name = "spirv-expand-mul-extended"
    summary = "arith.mului_extended -> limb products (wgpu's naga takes no OpUMulExtended)"

    def run(self, module: ir.Module) -> None:
        with module.context:
            for op in [op for op in walk(module.operation) if op.name == "arith.mului_extended"]:
                a, b = op.operands
                type_ = a.type
                element = ir.VectorType(type_).element_type if isinstance(
                    type_, ir.VectorType) else type_
                with op.location, ir.InsertionPoint(op):
                    low = arith.muli(a, b)
                    high = _high_word(a, b, ir.IntegerType(element).width)
                op.results[0].replace_all_uses_with(low)
                op.results[1].replace_all_uses_with(high)
                op.erase()
