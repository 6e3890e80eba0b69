"""spirv-expand-erf: math.erf in a gpu.module bound for SPIR-V as exp and polynomials.

GLSL.std.450, the instruction set convert-math-to-spirv targets, has no erf, and upstream's
math-expand-ops leaves it alone: T.erf failed to legalize on vulkan, metal and webgpu. Each
f32 (or f16, computed in f32) erf becomes straight-line code on |x|, both branches computed and
one selected:

  |x| < 0.5   the Maclaurin series of erf to x^11 (the next term is below 2e-8 there), which
              keeps the relative error small near zero, where erf(x) ~ x
  |x| >= 0.5  1 - t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-x^2), t = 1 / (1 + p |x|)
              (Abramowitz and Stegun 7.1.26, absolute error below 1.5e-7)

and the sign of x is copied onto the result (erf is odd). NaN stays NaN. Other element types
(f64, whose precision these do not reach, vectors) are an error at the op's line.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith
from mlir.dialects import math as math_dialect

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import op_error, walk
from tilec.compiler.passes._scalar import cast, constant

TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
# erf(x) = x * sum_k SERIES[k] * x^(2k), to the x^11 term
SERIES = tuple(TWO_OVER_SQRT_PI * (-1) ** k / (math.factorial(k) * (2 * k + 1))
               for k in range(6))
SERIES_LIMIT = 0.5
TAIL_P = 0.3275911
TAIL = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _horner(variable: ir.Value, coefficients: tuple[float, ...]) -> ir.Value:
    """c0 + v (c1 + v (c2 + ...)), built from the last coefficient inward."""
    type_ = variable.type
    result = constant(type_, coefficients[-1])
    for coefficient in reversed(coefficients[:-1]):
        result = arith.addf(arith.mulf(result, variable), constant(type_, coefficient))
    return result


def _erf_f32(x: ir.Value) -> ir.Value:
    f32 = x.type
    magnitude = math_dialect.absf(x)
    square = arith.mulf(magnitude, magnitude)
    series = arith.mulf(magnitude, _horner(square, SERIES))
    one = constant(f32, 1.0)
    t = arith.divf(one, arith.addf(one, arith.mulf(constant(f32, TAIL_P), magnitude)))
    decay = math_dialect.exp(arith.negf(square))
    tail = arith.subf(one, arith.mulf(arith.mulf(t, _horner(t, TAIL)), decay))
    near_zero = arith.cmpf(arith.CmpFPredicate.OLT, magnitude, constant(f32, SERIES_LIMIT))
    return math_dialect.copysign(arith.select(near_zero, series, tail), x)


@register
class SpirvExpandErf(TilePass):
    """Rewrite math.erf of f32 and f16 scalars as exp and polynomials (GLSL.std.450 has no
    erf)."""

    name = "spirv-expand-erf"
    summary = "math.erf -> exp and polynomials (no erf in GLSL.std.450)"

    def run(self, module: ir.Module) -> None:
        with module.context:
            f32 = ir.F32Type.get()
            for op in [op for op in walk(module.operation) if op.name == "math.erf"]:
                value = op.operands[0]
                if not isinstance(value.type, (ir.F32Type, ir.F16Type)):
                    raise op_error(op, f"T.erf of {value.type}: the SPIR-V targets compute erf "
                                       "of f32 and f16 scalars only")
                with op.location, ir.InsertionPoint(op):
                    result = cast(_erf_f32(cast(value, f32)), value.type)
                op.results[0].replace_all_uses_with(result)
                op.erase()
