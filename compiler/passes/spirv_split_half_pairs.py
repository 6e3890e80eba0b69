"""spirv-split-half-pairs: a bitcast between a 32-bit word and a pair of f16 as one bitcast
per half.

T.reinterpret of a T.float16x2 (and back) is `vector.bitcast` between vector<2xf16> and
vector<1xi32>, which naga (wgpu's shader compiler) cannot read from SPIR-V ("Unable to
cast"). Each half is taken on its own instead: the word's low 16 bits are the first f16 and
its high 16 bits the second, as on every little-endian target, through `arith.bitcast`
between i16 and f16, which spirv-widen-narrow-integers (run next) makes integer code on the
f16's f32. Other vector bitcasts are left as they are.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, vector

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import walk


def _is_half_pair(type_: ir.Type) -> bool:
    return (isinstance(type_, ir.VectorType) and ir.VectorType(type_).shape == [2]
            and isinstance(ir.VectorType(type_).element_type, ir.F16Type))


def _is_word(type_: ir.Type) -> bool:
    return (isinstance(type_, ir.VectorType) and ir.VectorType(type_).shape == [1]
            and ir.VectorType(type_).element_type == ir.IntegerType.get_signless(32))


@register
class SpirvSplitHalfPairs(TilePass):
    """vector.bitcast between vector<2xf16> and vector<1xi32> as per-half bitcasts."""

    name = "spirv-split-half-pairs"
    summary = ("vector.bitcast between an f16 pair and an i32 word as one i16 <-> f16 bitcast "
               "per half (naga cannot cast the pair)")

    def run(self, module: ir.Module) -> None:
        with module.context:
            for op in [op for op in walk(module.operation) if op.name == "vector.bitcast"]:
                source, result = op.operands[0], op.results[0]
                if _is_half_pair(source.type) and _is_word(result.type):
                    with ir.InsertionPoint(op), op.location:
                        split = _word_of_halves(source)
                elif _is_word(source.type) and _is_half_pair(result.type):
                    with ir.InsertionPoint(op), op.location:
                        split = _halves_of_word(source, result.type)
                else:
                    continue
                result.replace_all_uses_with(split)
                op.erase()


def _word_of_halves(pair: ir.Value) -> ir.Value:
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    low, high = (arith.extui(i32, arith.bitcast(i16, vector.extract(pair, [], [n])))
                 for n in (0, 1))
    word = arith.ori(low, arith.shli(high, arith.constant(i32, 16)))
    return vector.from_elements(ir.VectorType.get([1], i32), [word])


def _halves_of_word(word_vector: ir.Value, pair_type: ir.Type) -> ir.Value:
    i16, i32, f16 = (ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32),
                     ir.F16Type.get())
    word = vector.extract(word_vector, [], [0])
    low = arith.trunci(i16, word)
    high = arith.trunci(i16, arith.shrui(word, arith.constant(i32, 16)))
    return vector.from_elements(pair_type, [arith.bitcast(f16, low), arith.bitcast(f16, high)])
