"""spirv-signed-operands: the operands of SPIR-V's signed integer instructions as signed types.

MLIR's SPIR-V integers are signless, which the serializer writes as unsigned types
(OpTypeInt 32 0). SPIR-V reads OpConvertSToF, OpConvertFToS, OpShiftRightArithmetic,
OpSDiv, OpSRem, OpSMod and OpSConvert as signed whatever their types' signedness, but naga
(wgpu's shader compiler, which reads the vulkan and webgpu targets' SPIR-V) takes the
signedness from the types: -3 converted to float became 4294967293, -3.0 converted to an
integer 0, -32 >> 1 became 2147483632, -32 // 3 and -32 % 3 were computed on 4294967264
(silently wrong on both targets). Each such integer operand is bitcast to the signed integer
type of its width first (OpTypeInt 32 1) and the op makes a signed integer result, bitcast
back: no bit changes, and naga has no unsigned type to misread.
"""

from __future__ import annotations

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import walk

# the instructions that read their integer operands, or make their integer result, as signed
SIGNED_INSTRUCTIONS = (
    "spirv.ConvertSToF", "spirv.ConvertFToS", "spirv.ShiftRightArithmetic", "spirv.SDiv",
    "spirv.SRem", "spirv.SMod", "spirv.SConvert", "spirv.GL.SAbs", "spirv.GL.SSign",
    "spirv.GL.SMin", "spirv.GL.SMax", "spirv.GL.SClamp", "spirv.GL.FindSMsb")
# operands read as counts rather than signed values
UNSIGNED_OPERANDS = {"spirv.ShiftRightArithmetic": (1,)}


def _signed(type_: ir.Type) -> ir.Type | None:
    """The signed integer type (or vector of them) of `type_`'s shape, or None where `type_`
    is no integer or signed already."""
    element = ir.VectorType(type_).element_type if isinstance(type_, ir.VectorType) else type_
    if not isinstance(element, ir.IntegerType) or ir.IntegerType(element).is_signed:
        return None
    signed = ir.IntegerType.get_signed(ir.IntegerType(element).width)
    if isinstance(type_, ir.VectorType):
        return ir.VectorType.get(ir.VectorType(type_).shape, signed)
    return signed


def _bitcast(value: ir.Value, type_: ir.Type) -> ir.Value:
    return ir.Operation.create("spirv.Bitcast", results=[type_], operands=[value]).results[0]


@register
class SpirvSignedOperands(TilePass):
    """Bitcast the operands and results of spirv's signed integer ops to signed types."""

    name = "spirv-signed-operands"
    summary = ("operands of SPIR-V's signed integer ops as signed types (naga reads the "
               "signedness from the type)")

    def run(self, module: ir.Module) -> None:
        with module.context:
            for op in [op for op in walk(module.operation) if op.name in SIGNED_INSTRUCTIONS]:
                _sign(op)


def _sign(op: ir.Operation) -> None:
    keep = UNSIGNED_OPERANDS.get(op.name, ())
    operands = list(op.operands)
    result = op.results[0]
    if _signed(result.type) is None and all(
            _signed(value.type) is None for n, value in enumerate(operands) if n not in keep):
        return
    with op.location, ir.InsertionPoint(op):
        signed_operands = [
            value if n in keep or _signed(value.type) is None
            else _bitcast(value, _signed(value.type)) for n, value in enumerate(operands)]
        result_type = _signed(result.type) or result.type
        signed_op = ir.Operation.create(
            op.name, results=[result_type], operands=signed_operands,
            attributes={named.name: named.attr for named in op.attributes})
        value = signed_op.results[0]
        if result_type != result.type:
            value = _bitcast(value, result.type)
    result.replace_all_uses_with(value)
    op.erase()
