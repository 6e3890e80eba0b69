"""spirv-bitcast-infinities: a ±inf or NaN float constant of a spirv.module as a bitcast integer.

Reductions start from the neutral value, -inf for a maximum. SPIR-V can hold it as an
OpConstant, but WebGPU's compilers cannot: WGSL has no literal for it, and naga (wgpu's shader
compiler, reading SPIR-V or WGSL) rejects the module ("Float literal is infinite"). So each such
`spirv.Constant` becomes `spirv.Bitcast` of the integer constant of the same bits, in the
function that uses it; the value is the same on every device.
"""

from __future__ import annotations

import math
import struct

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import walk

INTEGER_OF = {32: ("<f", "<i"), 16: ("<e", "<h"), 64: ("<d", "<q")}


def _bits(value: float, width: int) -> int:
    """The float's bit pattern as a signed integer of its width."""
    float_format, integer_format = INTEGER_OF[width]
    return struct.unpack(integer_format, struct.pack(float_format, value))[0]


@register
class SpirvBitcastInfinities(TilePass):
    """Rewrite non-finite spirv.Constant floats as bitcasts of integer constants."""

    name = "spirv-bitcast-infinities"
    summary = "±inf / NaN spirv.Constant -> spirv.Bitcast of an integer constant (naga, WGSL)"

    def run(self, module: ir.Module) -> None:
        with module.context:
            for op in [op for op in walk(module.operation) if op.name == "spirv.Constant"]:
                value = op.attributes["value"]
                if not isinstance(value, ir.FloatAttr) or math.isfinite(
                        ir.FloatAttr(value).value):
                    continue
                float_type = ir.FloatAttr(value).type
                width = ir.FloatType(float_type).width
                integer = ir.IntegerType.get_signless(width)
                with op.location, ir.InsertionPoint(op):
                    bits = ir.Operation.create(
                        "spirv.Constant", results=[integer],
                        attributes={"value": ir.IntegerAttr.get(
                            integer, _bits(ir.FloatAttr(value).value, width))})
                    cast = ir.Operation.create("spirv.Bitcast", results=[float_type],
                                               operands=[bits.results[0]])
                op.results[0].replace_all_uses_with(cast.results[0])
                op.erase()
