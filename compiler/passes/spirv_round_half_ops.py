"""spirv-round-half-ops: every float16 add, subtract and multiply computed in float32 and
rounded to float16 once, so no driver can move a term from one float16 op into another.

A SPIR-V driver may reassociate float additions that are not decorated NoContraction, and
Mesa's lavapipe does: the int4 GEMV's pair decode `(pair * f - f * 1024) - zero`, whose
first difference is exact, ran as `(pair * f - zero) - f * 1024`, which rounds q - zero at
1024's ulp (895 of test_float16x2's 1024 halves off, by up to 0.5). The decoration cannot
reach the driver: wgpu hands it the SPIR-V that naga writes from its own reading of tilec's,
without NoContraction, and WGSL has no way to say it. A conversion is a rounding the driver
keeps, so each op here is `truncf(op(extf a, extf b))`: the value IEEE's float16 op gives (a
product of two halves is exact in float32; a sum is rounded twice, which is harmless where
float32 carries 24 >= 2 * 11 + 2 bits), and a chain of them is evaluated in the order written.
Scalars and vectors (T.float16x2 pairs) alike; fast-math flags stay on the float32 op.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import walk

ROUNDED_OPS = ("arith.addf", "arith.subf", "arith.mulf")


def _float32_like(type_: ir.Type) -> ir.Type | None:
    """The float32 scalar or vector type of an f16 one; None for any other type."""
    if isinstance(type_, ir.F16Type):
        return ir.F32Type.get()
    if isinstance(type_, ir.VectorType) and isinstance(ir.VectorType(type_).element_type,
                                                      ir.F16Type):
        return ir.VectorType.get(ir.VectorType(type_).shape, ir.F32Type.get())
    return None


@register
class SpirvRoundHalfOps(TilePass):
    """Rewrite f16 arith.addf / subf / mulf as the f32 op of the widened operands, truncated."""

    name = "spirv-round-half-ops"
    summary = ("float16 add / sub / mul as the float32 op rounded to float16 (drivers "
               "reassociate float16 chains; naga drops NoContraction)")

    def run(self, module: ir.Module) -> None:
        with module.context:
            for op in [op for op in walk(module.operation) if op.name in ROUNDED_OPS]:
                half_type = op.results[0].type
                wide_type = _float32_like(half_type)
                if wide_type is None:
                    continue
                with op.location, ir.InsertionPoint(op):
                    operands = [arith.extf(wide_type, value) for value in op.operands]
                    wide = ir.Operation.create(op.name, results=[wide_type], operands=operands)
                    if "fastmath" in op.attributes:
                        wide.attributes["fastmath"] = op.attributes["fastmath"]
                    rounded = arith.truncf(half_type, wide.results[0])
                op.results[0].replace_all_uses_with(rounded)
                op.erase()
