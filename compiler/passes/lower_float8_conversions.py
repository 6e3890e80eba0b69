"""lower-float8-conversions: float8 extf / truncf in a gpu.module as code the NVPTX and AMDGPU
backends compile.

LLVM has no float8 types (MLIR stores them as i8) and convert-arith-to-llvm leaves their
conversions alone, so a kernel converting to or from float8_e4m3fn / float8_e5m2 (a cast in
T.Parallel, a T.copy between fragments or into a float8 tensor) would stop at the LLVM
translation. On chips with float8 conversion instructions (sm_89 and later) each pair of
elements becomes one `cvt`: f32 -> float8 rounds to nearest-even and saturates
(`cvt.rn.satfinite.e4m3x2.f32`), as the CPU target rounds E4M3FN (+-448 at most); E5M2, which
has infinities, overflows to inf there, so what rounds past 57344 is made inf here too.
float8 -> f16 is exact (`cvt.rn.f16x2.e4m3x2`) and wider types follow from f16 exactly.
Older chips (sm_80) and AMD's (gfx942's conversion instructions read the FNUZ formats, not
these OCP ones) get the CPU target's integer code (expand-narrow-float-conversions: a 256-entry
table to widen, integer rounding to narrow), its table placed in the gpu.module.
Vector conversions (vectorized fragment copies) go element by element, in pairs where the
instruction takes two.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, math, nvvm, vector

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import convert, ops_named
from tilec.compiler.passes._scheduling import target_description
from tilec.compiler.passes.expand_narrow_float_conversions import FORMATS, expand_conversion


def float8_format(type_: ir.Type) -> str | None:
    """The float8 format of a scalar or vector element type (None: not float8)."""
    element = ir.VectorType(type_).element_type if isinstance(type_, ir.VectorType) else type_
    return str(element) if str(element) in FORMATS else None


def elements_of(value: ir.Value) -> list[ir.Value]:
    if not isinstance(value.type, ir.VectorType):
        return [value]
    return [vector.extract(value, [], [i]) for i in range(ir.VectorType(value.type).shape[0])]


# E5M2 has infinities: what rounds past its largest finite value (57344) is inf, as on the
# CPU target, where cvt.satfinite would stop at 57344
E5M2_ROUNDS_TO_INF = 61440.0


def overflow_to_inf(value: ir.Value, byte: ir.Value) -> ir.Value:
    """The e5m2 byte of `value` (f32) with magnitudes that round past 57344 made +-inf."""
    i8, i32, f32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32), ir.F32Type.get()
    huge = arith.cmpf(arith.CmpFPredicate.OGE, math.absf(value),
                      arith.constant(f32, E5M2_ROUNDS_TO_INF))
    sign = arith.trunci(i8, arith.shrui(arith.bitcast(i32, value), arith.constant(i32, 24)))
    inf = arith.ori(arith.andi(sign, arith.constant(i8, -128)), arith.constant(i8, 0x7C))
    return arith.select(huge, inf, byte)


def narrow_pairs(values: list[ir.Value], result: ir.Type) -> list[ir.Value]:
    """f32 -> float8 in pairs: cvt.rn.satfinite packs a into the high byte, b into the low."""
    i8, i16, f32 = (ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(16),
                    ir.F32Type.get())
    rounding = ir.Attribute.parse("#nvvm.fp_rnd_mode<rn>")
    saturation = ir.Attribute.parse("#nvvm.sat_mode<satfinite>")
    values = [convert(v, f32) for v in values]
    bytes_ = []
    for low in range(0, len(values), 2):
        b = values[low]
        a = values[low + 1] if low + 1 < len(values) else b
        packed = nvvm.ConvertF32x2ToF8x2Op(i16, a, b, ir.TypeAttr.get(result), rnd=rounding,
                                           sat=saturation).result
        bytes_.append(arith.trunci(i8, packed))
        if low + 1 < len(values):
            bytes_.append(arith.trunci(i8, arith.shrui(packed, arith.constant(i16, 8))))
    if str(result) == "f8E5M2":
        bytes_ = [overflow_to_inf(v, byte) for v, byte in zip(values, bytes_, strict=True)]
    return [arith.bitcast(result, byte) for byte in bytes_]


def widen_pairs(values: list[ir.Value], result: ir.Type) -> list[ir.Value]:
    """float8 -> f16 in pairs (exact), then to `result` (exact for every wider float)."""
    i8, f16, f32 = ir.IntegerType.get_signless(8), ir.F16Type.get(), ir.F32Type.get()
    source = values[0].type
    found = []
    for low in range(0, len(values), 2):
        pair = values[low:low + 2]
        bits = [arith.bitcast(i8, v) for v in pair]
        bits += bits[:1] * (2 - len(bits))
        packed = vector.FromElementsOp(ir.VectorType.get([2], i8), bits).result
        halves = nvvm.ConvertF8x2ToF16x2Op(ir.VectorType.get([2], f16), packed,
                                           ir.TypeAttr.get(source)).result
        for i in range(len(pair)):
            half = vector.extract(halves, [], [i])
            found.append(convert(convert(half, f32), result) if isinstance(result, ir.BF16Type)
                         else convert(half, result))
    return found


@register
@dataclass
class LowerFloat8Conversions(TilePass):
    """float8 conversions in gpu.modules: cvt instructions where the chip has them, else the
    CPU target's integer code."""

    name = "lower-float8-conversions"
    summary = "float8 extf/truncf in gpu.module -> cvt e4m3x2/e5m2x2 (sm_89+) or integer code"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        hardware = target_description(module, self.arch, self.name).has_float8_conversions
        for gpu_module in [op for op in module.body.operations
                           if op.operation.name == "gpu.module"]:
            symbols = gpu_module.operation.regions[0].blocks[0]
            tables: dict[str, str] = {}
            for op in ops_named(gpu_module.operation, ("arith.extf", "arith.truncf")):
                source, result = op.operands[0], op.results[0]
                narrowing = float8_format(result.type) is not None
                if not narrowing and float8_format(source.type) is None:
                    continue
                element = (ir.VectorType(result.type).element_type
                           if isinstance(result.type, ir.VectorType) else result.type)
                with ir.InsertionPoint(op), op.location:
                    values = elements_of(source)
                    if hardware:
                        converted = (narrow_pairs if narrowing else widen_pairs)(values, element)
                    else:
                        converted = [expand_conversion(symbols, v, element, tables)
                                     for v in values]
                    value = converted[0] if not isinstance(result.type, ir.VectorType) else (
                        vector.FromElementsOp(result.type, converted).result)
                result.replace_all_uses_with(value)
                op.operation.erase()
