"""Scalar building blocks for the lowering passes: constants, casts, reduction algebra.

Every helper builds at the current insertion point and location (callers open both).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math


def index(value: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), value).result


def constant(type_: ir.Type, value: float | int) -> ir.Value:
    if is_float(type_):
        return arith.ConstantOp(type_, ir.FloatAttr.get(type_, float(value))).result
    return arith.ConstantOp(type_, ir.IntegerAttr.get(type_, int(value))).result


def is_float(type_: ir.Type) -> bool:
    return isinstance(type_, ir.FloatType)


def bit_width(type_: ir.Type) -> int:
    return getattr(type_, "width", 64)


def cast(value: ir.Value, to: ir.Type) -> ir.Value:
    """Numeric conversion as T.cast does it (floats round, ints sign-extend or truncate)."""
    source = value.type
    if source == to:
        return value
    if isinstance(source, ir.VectorType):
        element_source, element_to = source.element_type, ir.VectorType(to).element_type
    else:
        element_source, element_to = source, to
    if is_float(element_source) and is_float(element_to):
        if bit_width(element_source) < bit_width(element_to):
            return arith.extf(to, value)
        if bit_width(element_source) > bit_width(element_to):
            return arith.truncf(to, value)
        return arith.truncf(to, arith.extf(_wider(source), value))
    if is_float(element_source):
        return float_to_integer(value, to, unsigned=False)
    if is_float(element_to):
        return arith.sitofp(to, value)
    if bit_width(element_source) < bit_width(element_to):
        return arith.extsi(to, value)
    return arith.trunci(to, value)


_EXACT_BOUNDS = (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)  # hold 2**k up to their range


def float_to_integer(value: ir.Value, to: ir.Type, unsigned: bool) -> ir.Value:
    """A float (scalar or vector) to an integer type as PTX's cvt.rzi gives it, on every
    target: toward zero, saturated at the type's bounds, NaN to 0. A bare fptosi / fptoui
    leaves those undefined: x86 gives the most negative value (1e10 -> int32 is -2**31, NaN
    too), NVPTX converts 8-bit results through 16 bits and wraps (300.0 -> int8 is 44)."""
    vector = value.type if isinstance(value.type, ir.VectorType) else None
    element = vector.element_type if vector else value.type
    if not any(isinstance(element, kind) for kind in _EXACT_BOUNDS):  # float8: through f32
        f32 = ir.F32Type.get()
        value = arith.extf(ir.VectorType.get(vector.shape, f32) if vector else f32, value)
    bits = bit_width(ir.VectorType(to).element_type if vector else to)
    low, high = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)

    def splat(type_: ir.Type, number: float | int) -> ir.Value:
        scalar = type_.element_type if isinstance(type_, ir.VectorType) else type_
        attribute = (ir.FloatAttr.get(scalar, float(number)) if is_float(scalar)
                     else ir.IntegerAttr.get(scalar, int(number)))
        if isinstance(type_, ir.VectorType):
            attribute = ir.DenseElementsAttr.get_splat(type_, attribute)
        return arith.ConstantOp(type_, attribute).result

    def as_bits(number: int) -> int:  # the signless pattern of an unsigned bound
        return number - 2**bits if number >= 2 ** (bits - 1) else number

    converted = (arith.fptoui if unsigned else arith.fptosi)(to, value)
    # the bounds past the range are powers of two: exact in the float (or its infinity)
    above = arith.cmpf(arith.CmpFPredicate.OGE, value, splat(value.type, float(high + 1)))
    below = arith.cmpf(arith.CmpFPredicate.OLE, value, splat(value.type, float(low)))
    # x != x (SPIR-V's OpFUnordNotEqual: an isnan would need a bitcast WGSL's types lack)
    nan = arith.cmpf(arith.CmpFPredicate.UNE, value, value)
    result = arith.select(above, splat(to, as_bits(high)), converted)
    result = arith.select(below, splat(to, as_bits(low)), result)
    return arith.select(nan, splat(to, 0), result)


def _wider(type_: ir.Type) -> ir.Type:
    """f32 (of the same vector shape) to convert between two floats of one width (f16, bf16)."""
    if isinstance(type_, ir.VectorType):
        return ir.VectorType.get(type_.shape, ir.F32Type.get())
    return ir.F32Type.get()


def zero(type_: ir.Type) -> ir.Value:
    return constant(type_, 0)


def reduce_init(kind: str, type_: ir.Type) -> ir.Value:
    """The neutral element of `kind` (abs kinds start at 0: every term is >= 0)."""
    if kind in ("sum", "abssum", "absmax"):
        return zero(type_)
    if is_float(type_):
        return constant(type_, float("-inf") if kind == "max" else float("inf"))
    if kind in ("umax", "umin"):  # unsigned: 0 and all ones
        return constant(type_, 0 if kind == "umax" else -1)
    bits = bit_width(type_)
    return constant(type_, -(1 << (bits - 1)) if kind == "max" else (1 << (bits - 1)) - 1)


def reduce_term(kind: str, value: ir.Value) -> ir.Value:
    """What one element contributes: itself, or its absolute value for the abs kinds."""
    if kind not in ("abssum", "absmax"):
        return value
    return math.absf(value) if is_float(value.type) else math.absi(value)


def combine(kind: str, left: ir.Value, right: ir.Value) -> ir.Value:
    """Combine two partial results (already absolute for the abs kinds)."""
    floating = is_float(left.type)
    if kind in ("sum", "abssum"):
        return arith.addf(left, right) if floating else arith.addi(left, right)
    if kind in ("max", "absmax"):
        return arith.maximumf(left, right) if floating else arith.maxsi(left, right)
    if kind == "umax":
        return arith.maxui(left, right)
    if kind == "umin":
        return arith.minui(left, right)
    return arith.minimumf(left, right) if floating else arith.minsi(left, right)


def combine_pairwise(kind: str, values: list[ir.Value]) -> ir.Value:
    """Combine partial results as a balanced tree: a chain of log2(n) dependent operations
    instead of n (a thread's 32 registers of an accumulator row in 5 steps, not 31)."""
    while len(values) > 1:
        values = [combine(kind, values[i], values[i + 1]) if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]
