"""pack-half-pairs: a pair of 16-bit values gathered from a thread's registers, built from the
32-bit words that hold them with one byte permute (PRMT) on NVIDIA GPUs.

A kernel computing on T.float16x2 pairs builds each pair from two elements of a local buffer
(`T.float16x2(a_local[j], a_local[j + 4])`: the activations paired as decoded int4 weights
come out of their words). lower-tile-to-gpu reads the two elements one by one and packs them
(`vector.from_elements`), which the NVPTX backend emits as `mov.b32 %r, {%rs, %rs}` after
unpacking the loaded words into 16-bit halves. ptxas treats such a pack as a free register
move and rebuilds it at every use: in the int4 GEMV, whose pairs each meet four rows'
weights, a PRMT per pair and row instead of one per pair (115 PRMTs a step, 67 here).

Here each element of the pair is read as the 32-bit word holding it (`vector.load` of the
element's aligned pair from the same buffer) and the pair is `nvvm.prmt` of the two words
(selector: the half of the first word as bytes 0-1, the half of the second as bytes 2-3), or
the word itself where the pair is a word's own halves in order. Taken where both elements come
from `memref.load`s of private buffers (memref.alloca aligned to 4 bytes or more, identity
layout, an even static last extent) at a constant last index, the other indices equal, in the
pair's block, with no write to either buffer between the loads and the pair; any other pair is
left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, nvvm, vector

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import ops_named, private_word_element, word_holding
from tilec.compiler.passes._ir_walk import defining_op

HALF_TYPES = ("f16", "bf16", "i16")
READS = ("memref.load", "vector.load")


def _element_read(value: ir.Value, pair: ir.Operation) -> tuple[ir.Value, list, int] | None:
    """(buffer, leading indices, last index) of a 16-bit element `memref.load`ed from a
    private buffer in the pair's block, else None."""
    owner = defining_op(value)
    if owner is None or owner.block != pair.block:
        return None
    read = private_word_element(owner)
    if read is None or str(ir.MemRefType(read[0].type).element_type) not in HALF_TYPES:
        return None
    return read


def _unwritten_since_loads(loads: list[ir.Operation], pair: ir.Operation, buffers: set) -> bool:
    """No op of the pair's block from the first of `loads` up to `pair` writes one of
    `buffers` or holds a region that could."""
    started = False
    for op in pair.block.operations:
        op = op.operation
        if op == pair:
            return started
        started = started or any(op == load for load in loads)
        if not started:
            continue
        if op.name not in READS and any(operand in buffers for operand in op.operands):
            return False
        if len(op.regions):
            return False
    return False


@register
@dataclass
class PackHalfPairs(TilePass):
    """16-bit pairs gathered from private buffers: one PRMT of the words that hold them."""

    name = "pack-half-pairs"
    summary = "vector<2x16-bit> from two private-buffer elements -> nvvm.prmt of their words"

    def run(self, module: ir.Module) -> None:
        i32 = ir.IntegerType.get_signless(32)
        for pair in ops_named(module.operation, ("vector.from_elements",)):
            result = ir.VectorType(pair.result.type)
            if result.shape != [2] or str(result.element_type) not in HALF_TYPES:
                continue
            reads = [_element_read(value, pair.operation) for value in pair.operands]
            if None in reads:
                continue
            (low_buffer, low_leading, low), (high_buffer, high_leading, high) = reads
            if str(ir.MemRefType(low_buffer.type).element_type) != str(result.element_type):
                continue
            loads = [defining_op(value) for value in pair.operands]
            if not _unwritten_since_loads(loads, pair.operation, {low_buffer, high_buffer}):
                continue
            with ir.InsertionPoint(pair.operation), pair.location:
                low_word = word_holding(low_buffer, low_leading, low)
                same_word = (low_buffer == high_buffer and low - low % 2 == high - high % 2
                             and all(a == b for a, b in zip(low_leading, high_leading,
                                                             strict=True)))
                if same_word and low % 2 == 0 and high == low + 1:
                    packed = low_word
                else:
                    high_word = low_word if same_word else word_holding(
                        high_buffer, high_leading, high)
                    selector = (0x7632 if high % 2 else 0x5410) & 0xFF00 | (
                        0x32 if low % 2 else 0x10)
                    packed = nvvm.PermuteOp(i32, low_word, arith.constant(i32, selector),
                                            nvvm.PermuteMode.DEFAULT, hi=high_word).result
                pieces = vector.from_elements(ir.VectorType.get([1], i32), [packed])
                value = vector.bitcast(result, pieces)
            pair.result.replace_all_uses_with(value)
            pair.operation.erase()
