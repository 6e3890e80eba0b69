"""spirv-narrow-index-conversions: an index converted to a float through int64, from int32.

The frontend converts an integer expression over loop variables or thread indices to a float
as `sitofp(index_cast(i : index to i64))` (`0.5 ** place`, `T.Cast(T.float32, i)`). On the
SPIR-V targets an index is 32 bits (tensors of 2^31 elements or more are refused at launch),
so the int64 holds an int32 value and the conversion from the int32 is the same float. Taking
it from the int32 leaves the kernel without 64-bit integers where that was their only use: it
then needs no shader-int64 device feature, and the metal target, whose MSL 2.1 has no 64-bit
integers, takes it (check-metal-types refused it). An index_cast with other uses keeps them.
"""

from __future__ import annotations

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import walk

# the float conversion -> the index cast whose result it may read (signed, unsigned)
CONVERSIONS = {"arith.sitofp": "arith.index_cast", "arith.uitofp": "arith.index_castui"}


def _index_cast(conversion: ir.Operation) -> ir.Operation | None:
    """The cast of an index to a wider integer a float conversion reads, if it reads one."""
    owner = conversion.operands[0].owner
    if isinstance(owner, ir.Block):
        return None
    cast = owner.operation if isinstance(owner, ir.OpView) else owner
    if cast.name != CONVERSIONS[conversion.name]:
        return None
    if not isinstance(cast.operands[0].type, ir.IndexType) or \
            ir.IntegerType(cast.results[0].type).width <= 32:
        return None
    return cast


@register
class SpirvNarrowIndexConversions(TilePass):
    """Rewrite sitofp / uitofp of an index cast to i64 as the conversion of an index cast to
    i32."""

    name = "spirv-narrow-index-conversions"
    summary = "float conversions of an index widened to i64 taken from i32 (an index is 32 " \
              "bits on SPIR-V)"

    def run(self, module: ir.Module) -> None:
        with module.context:
            i32 = ir.IntegerType.get_signless(32)
            for op in [op for op in walk(module.operation) if op.name in CONVERSIONS]:
                cast = _index_cast(op)
                if cast is None:
                    continue
                with op.location, ir.InsertionPoint(op):
                    narrow = ir.Operation.create(cast.name, results=[i32],
                                                 operands=[cast.operands[0]])
                    converted = ir.Operation.create(op.name, results=[op.results[0].type],
                                                    operands=[narrow.results[0]])
                op.results[0].replace_all_uses_with(converted.results[0])
                op.erase()
                if not list(cast.results[0].uses):
                    cast.erase()
