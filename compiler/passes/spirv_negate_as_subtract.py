"""spirv-negate-as-subtract: spirv.SNegate of an integer as spirv.ISub from zero.

MLIR's SPIR-V integers are signless, which the serializer writes as unsigned types
(OpTypeInt 32 0), so an OpSNegate from Python's floor division or modulo negates a `u32`.
SPIR-V allows it; naga (wgpu's shader compiler) rejects it ("Operation Negate" is invalid on
unsigned integers). 0 - x is the same two's-complement value and passes both.
"""

from __future__ import annotations

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import walk


def _zero(type_: ir.Type) -> ir.Attribute:
    """0 of an integer or integer-vector type."""
    if isinstance(type_, ir.VectorType):
        element = ir.VectorType(type_).element_type
        return ir.DenseElementsAttr.get_splat(type_, ir.IntegerAttr.get(element, 0))
    return ir.IntegerAttr.get(type_, 0)


@register
class SpirvNegateAsSubtract(TilePass):
    """Rewrite spirv.SNegate x as spirv.ISub (0, x)."""

    name = "spirv-negate-as-subtract"
    summary = "spirv.SNegate -> spirv.ISub from zero (naga rejects negating unsigned ints)"

    def run(self, module: ir.Module) -> None:
        with module.context:
            for op in [op for op in walk(module.operation) if op.name == "spirv.SNegate"]:
                value = op.operands[0]
                with op.location, ir.InsertionPoint(op):
                    zero = ir.Operation.create("spirv.Constant", results=[value.type],
                                               attributes={"value": _zero(value.type)})
                    difference = ir.Operation.create("spirv.ISub", results=[value.type],
                                                     operands=[zero.results[0], value])
                op.results[0].replace_all_uses_with(difference.results[0])
                op.erase()
