"""expand-narrow-float-conversions: float8 and bf16 conversions the CPU backend can compile.

LLVM has no float8 types (MLIR lowers their storage to i8) and no conversion instructions, so:
- extf from f8E4M3FN / f8E5M2 reads a 256-entry f32 table (a private `memref.global`)
  indexed by the bit pattern, exact for every value, NaN and inf included;
- truncf to them rounds an f32 to nearest-even in integer arithmetic, as torch does:
  E4M3FN (no inf) saturates to +-448 (like PTX's cvt.satfinite), E5M2 overflows to inf.
Other widths go through f32 first. bf16 conversions from or to anything but f32 go through f32
too: arith-expand expands only bf16 <-> f32 into integer code (x86 calls __truncsfbf2 for an
fptrunc to bfloat, which libgcc before GCC 13 lacks). Run it after
arith-emulate-unsupported-floats (which leaves only conversions on these types) and before
arith-expand and convert-arith-to-llvm.
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir
from mlir.dialects import arith, memref

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import convert, ops_named


def decode_float8(bits: int, exponent_bits: int, mantissa_bits: int, finite_only: bool) -> float:
    """The value a float8 bit pattern encodes (E4M3FN: no inf, one NaN per sign)."""
    sign = -1.0 if bits & 0x80 else 1.0
    exponent = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1)
    mantissa = bits & ((1 << mantissa_bits) - 1)
    bias = (1 << (exponent_bits - 1)) - 1
    top = (1 << exponent_bits) - 1
    if finite_only and exponent == top and mantissa == (1 << mantissa_bits) - 1:
        return math.nan
    if not finite_only and exponent == top:
        return sign * math.inf if mantissa == 0 else math.nan
    if exponent == 0:
        return sign * mantissa * 2.0 ** (1 - bias - mantissa_bits)
    return sign * (1 + mantissa / (1 << mantissa_bits)) * 2.0 ** (exponent - bias)


# MLIR type name -> (exponent bits, mantissa bits, finite only)
FORMATS = {"f8E4M3FN": (4, 3, True), "f8E5M2": (5, 2, False)}

# c10's rounding constants per format: (overflow threshold, bits of the smallest normal,
# denormal magic, exponent rebias, rounding bias, mantissa shift)
ROUNDING = {
    "f8E4M3FN": (1087 << 20, 121 << 23, 141 << 23, (7 - 127) << 23, 0x7FFFF, 20),
    "f8E5M2": (143 << 23, 113 << 23, 134 << 23, (15 - 127) << 23, 0xFFFFF, 21),
}


def _bf16_off_f32(source: ir.Type, result: ir.Type) -> bool:
    """A bf16 conversion whose other side is not f32 (f64, say)."""
    f32 = ir.F32Type.get()
    return (isinstance(source, ir.BF16Type) and result != f32) or (
        isinstance(result, ir.BF16Type) and source != f32
    )


def _float8_name(type_: ir.Type) -> str | None:
    name = str(type_)
    return name if name in FORMATS else None


@register
class ExpandNarrowFloatConversions(TilePass):
    """Rewrites float8 extf/truncf into table lookups and integer rounding; bf16 via f32."""

    name = "expand-narrow-float-conversions"
    summary = "float8 extf/truncf -> table lookup / integer rounding; bf16 ones via f32"

    def run(self, module: ir.Module) -> None:
        tables: dict[str, str] = {}
        for op in ops_named(module.operation, ("arith.extf", "arith.truncf")):
            source, result = op.operands[0], op.results[0]
            with ir.InsertionPoint(op), op.location:
                value = expand_conversion(module.body, source, result.type, tables)
            if value is not None:
                result.replace_all_uses_with(value)
                op.operation.erase()


def expand_conversion(
    symbols: ir.Block, source: ir.Value, result_type: ir.Type, tables: dict[str, str]
) -> ir.Value | None:
    """The conversion of `source` to `result_type` in code LLVM compiles; None: leave it.
    Widening tables go at the start of `symbols` (the module body the code runs in)."""
    f32 = ir.F32Type.get()
    source_f8, result_f8 = _float8_name(source.type), _float8_name(result_type)
    if source_f8 is None and result_f8 is None:
        if _bf16_off_f32(source.type, result_type):
            return convert(convert(source, f32), result_type)
        return None
    value = source
    if source_f8 is not None:
        if source_f8 not in tables:
            tables[source_f8] = _add_table(symbols, source_f8)
        value = _widen(value, tables[source_f8])
    if result_f8 is not None:
        return narrow_to_float8(convert(value, f32), result_f8, result_type)
    return convert(value, result_type)


def _add_table(symbols: ir.Block, format_name: str) -> str:
    exponent_bits, mantissa_bits, finite_only = FORMATS[format_name]
    values = [decode_float8(b, exponent_bits, mantissa_bits, finite_only) for b in range(256)]
    symbol = f"__tilec_{format_name.lower()}_to_f32"
    table_type = ir.MemRefType.get([256], ir.F32Type.get())
    data = ir.DenseElementsAttr.get(
        np.array(values, dtype=np.float32), type=ir.RankedTensorType.get([256], ir.F32Type.get())
    )
    with ir.InsertionPoint.at_block_begin(symbols), ir.Location.unknown():
        memref.GlobalOp(
            sym_name=symbol,
            type_=table_type,
            sym_visibility="private",
            initial_value=data,
            constant=True,
            alignment=64,
        )
    return symbol


def _widen(value: ir.Value, symbol: str) -> ir.Value:
    i8 = ir.IntegerType.get_signless(8)
    table = memref.get_global(ir.MemRefType.get([256], ir.F32Type.get()), symbol)
    position = arith.index_castui(ir.IndexType.get(), arith.bitcast(i8, value))
    return memref.load(table, [position])


def narrow_to_float8(value: ir.Value, format_name: str, result_type: ir.Type) -> ir.Value:
    """Round-to-nearest-even f32 -> float8 bits, as c10 does it."""
    i32, i8, f32 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8), ir.F32Type.get()
    overflow, smallest_normal, magic, rebias, round_bias, shift = ROUNDING[format_name]

    def const(number: int) -> ir.Value:
        return arith.constant(i32, number - (1 << 32) if number >= 1 << 31 else number)

    bits = arith.bitcast(i32, value)
    sign = arith.andi(bits, const(0x80000000))
    magnitude = arith.xori(bits, sign)
    # subnormal results: adding a magic float rounds in hardware, the low bits are the answer
    magic_float = arith.bitcast(f32, const(magic))
    shifted = arith.addf(arith.bitcast(f32, magnitude), magic_float)
    subnormal = arith.subi(arith.bitcast(i32, shifted), const(magic))
    # normal results: rebias the exponent and round the dropped mantissa bits to even
    odd = arith.andi(arith.shrui(magnitude, const(shift)), const(1))
    rounded = arith.addi(arith.addi(magnitude, const(rebias + round_bias)), odd)
    normal = arith.shrui(rounded, const(shift))
    small = arith.cmpi(arith.CmpIPredicate.ult, magnitude, const(smallest_normal))
    finite = arith.select(small, subnormal, normal)
    is_nan = arith.cmpi(arith.CmpIPredicate.ugt, magnitude, const(255 << 23))
    if format_name == "f8E4M3FN":
        # no inf: everything beyond the largest finite (448) saturates to it, as torch does
        result = arith.select(is_nan, const(0x7F), arith.minui(finite, const(0x7E)))
    else:
        big = arith.cmpi(arith.CmpIPredicate.uge, magnitude, const(overflow))
        too_big = arith.select(is_nan, const(0x7F), const(0x7C))
        result = arith.select(big, too_big, finite)
    result = arith.ori(result, arith.shrui(sign, const(24)))
    return arith.bitcast(result_type, arith.trunci(i8, result))
