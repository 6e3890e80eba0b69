"""spirv-pack-bfloat16: bf16 as storage on SPIR-V, halves of i32 words in memory, f32 in registers.

SPIR-V has no bf16 type (without SPV_KHR_bfloat16) and wgpu's naga no 16-bit integers, so a
bf16 tensor or shared buffer is declared as i32 words, two elements each (element i in the
low half of word i / 2 when i is even, in the high half when odd: the tensor's own bytes), and
every bf16 value as the f32 it is exactly:
- a load reads its word, moves its half to the top 16 bits and bitcasts: the f32 of that bf16;
- a store keeps the other half: an atomic `andi` clears its own half of the word and an atomic
  `ori` sets it to the value's top 16 bits (its bf16: the values are bf16 already), so two
  threads writing the two halves of one word both land;
- a per-thread (Function) bf16 array is an f32 array;
- arith.truncf to bf16 rounds the f32 to the nearest bf16 (ties to even; NaN stays NaN) in
  integer code, arith.extf from bf16 is the value itself, a bf16 constant the f32 of it, a
  bitcast between i16 and bf16 moves the bits to or from the f32's top half, and
  every other value of type bf16 (scf results, shuffles, selects) has type f32.
Run it after arith-emulate-unsupported-floats (bf16 arithmetic in f32, rounded by truncf) and
flatten-memref (every access on a 1-D buffer, views at offset 0), before convert-gpu-to-spirv.
A view at another offset, or any other use of a bf16 buffer, is an error at its line.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._integer_storage import (
    ROOTS,
    SHAPE_ONLY,
    VIEWS,
    check_flat_view,
    retype_views,
    store_field,
    with_element,
    word_and_shift,
    words_type,
)
from tilec.compiler.passes._ir_walk import as_operation, op_error, walk


def _is_bf16(type_: ir.Type) -> bool:
    return isinstance(type_, ir.BF16Type)


def _bf16_memref(type_: ir.Type) -> bool:
    return isinstance(type_, ir.MemRefType) and _is_bf16(ir.MemRefType(type_).element_type)


def _private(type_: ir.Type) -> bool:
    return "Function" in str(ir.MemRefType(type_).memory_space)


@register
class SpirvPackBfloat16(TilePass):
    """bf16 memory as i32 words (two elements each), bf16 values as f32 (see the module doc)."""

    name = "spirv-pack-bfloat16"
    summary = "bf16 buffers as i32 words of two, bf16 values as f32 (SPIR-V has no bf16)"

    def run(self, module: ir.Module) -> None:
        with module.context:
            for function in [op for op in walk(module.operation) if op.name == "gpu.func"]:
                _pack_function(function)


def _pack_function(function: ir.Operation) -> None:
    f32 = ir.F32Type.get()
    entry = function.regions[0].blocks[0]
    if any(_is_bf16(argument.type) for argument in entry.arguments):
        raise op_error(function, "a bfloat16 scalar argument: SPIR-V kernels take it as float32")
    buffers = [argument for argument in entry.arguments if _bf16_memref(argument.type)]
    buffers += [op.results[0] for op in walk(function)
                if op.name in ROOTS and _bf16_memref(op.results[0].type)]
    for buffer in buffers:
        if _private(buffer.type):
            retype_views(buffer, lambda t: with_element(t, f32))
        else:
            _pack(buffer)
    if buffers:
        signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [argument.type for argument in entry.arguments], list(signature.results)))
    for op in list(walk(function)):
        _widen_values(op, f32)


def _pack(buffer: ir.Value) -> None:
    if ir.MemRefType(buffer.type).rank != 1:
        where = as_operation(buffer.owner.owner) if isinstance(
            buffer, ir.BlockArgument) else as_operation(buffer.owner)
        raise op_error(where, "a bf16 buffer of rank > 1: flatten-memref runs first")
    for user in retype_views(buffer, lambda t: words_type(t, 2)):
        if user.name in VIEWS:
            check_flat_view(user, "bf16")
        elif user.name == "memref.load":
            _load(user)
        elif user.name == "memref.store":
            _store(user)
        elif user.name not in SHAPE_ONLY:
            raise op_error(user, f"{user.name} uses a bf16 buffer, which SPIR-V holds as i32 "
                                 "words: only loads, stores and views at offset 0 can")


def _load(load: ir.Operation) -> None:
    i32, f32 = ir.IntegerType.get_signless(32), ir.F32Type.get()
    buffer, index = load.operands[0], load.operands[1]
    with ir.InsertionPoint(load), load.location:
        word, shift = word_and_shift(index, 16)
        bits = memref.load(buffer, [word])
        # the half at the top: the odd element's is there already, the even one's moves up
        top = arith.shli(bits, arith.subi(arith.constant(i32, 16), shift))
        half = arith.andi(top, arith.constant(i32, -65536))
        value = arith.bitcast(f32, half)
    load.results[0].replace_all_uses_with(value)
    load.erase()


def _store(store: ir.Operation) -> None:
    i32 = ir.IntegerType.get_signless(32)
    value, buffer, index = store.operands[0], store.operands[1], store.operands[2]
    with ir.InsertionPoint(store), store.location:
        # the value is a bf16 held as f32: its top 16 bits are the bf16
        half = arith.shrui(arith.bitcast(i32, value), arith.constant(i32, 16))
        store_field(buffer, index, half, 16)
    store.erase()


def _round_to_bf16(value: ir.Value) -> ir.Value:
    """The f32 nearest `value` with a zero low half (ties to even); NaN a quiet NaN."""
    i32, f32 = ir.IntegerType.get_signless(32), ir.F32Type.get()
    bits = arith.bitcast(i32, value)
    lsb = arith.andi(arith.shrui(bits, arith.constant(i32, 16)), arith.constant(i32, 1))
    rounded = arith.addi(bits, arith.addi(arith.constant(i32, 0x7FFF), lsb))
    top = arith.andi(rounded, arith.constant(i32, -65536))
    is_nan = arith.cmpf(arith.CmpFPredicate.UNO, value, value)
    quiet = arith.ori(arith.andi(bits, arith.constant(i32, -65536)),
                      arith.constant(i32, 0x400000))
    return arith.bitcast(f32, arith.select(is_nan, quiet, top))


def _widen_bitcast(op: ir.Operation, f32: ir.Type) -> None:
    """A bitcast between 16 bits and a bf16 value (held as f32): the bits are its f32's top
    half."""
    source, result = op.operands[0], op.results[0]
    i32 = ir.IntegerType.get_signless(32)
    sixteen = lambda: arith.constant(i32, 16)  # noqa: E731
    with ir.InsertionPoint(op), op.location:
        if _is_bf16(result.type):
            widened = arith.bitcast(f32, arith.shli(arith.extui(i32, source), sixteen()))
        else:
            widened = arith.trunci(result.type, arith.shrui(arith.bitcast(i32, source),
                                                            sixteen()))
    result.replace_all_uses_with(widened)
    op.erase()


def _widen_values(op: ir.Operation, f32: ir.Type) -> None:
    """bf16 values as f32: conversions, constants, then every other result and block
    argument."""
    results = list(op.results)
    if op.name == "arith.extf" and op.operands[0].type in (ir.BF16Type.get(), f32) and (
            results[0].type == f32):  # from a bf16, widened already or not yet
        results[0].replace_all_uses_with(op.operands[0])
        op.erase()
        return
    if op.name == "arith.truncf" and _is_bf16(results[0].type):
        with ir.InsertionPoint(op), op.location:
            source = op.operands[0]
            if source.type != f32:
                source = arith.truncf(f32, source)
            rounded = _round_to_bf16(source)
        results[0].replace_all_uses_with(rounded)
        op.erase()
        return
    if op.name == "arith.bitcast" and (_is_bf16(results[0].type) or (
            op.operands[0].type in (ir.BF16Type.get(), f32)  # a bf16, widened or not yet
            and results[0].type == ir.IntegerType.get_signless(16))):
        _widen_bitcast(op, f32)
        return
    if op.name == "arith.constant" and _is_bf16(results[0].type):
        with ir.InsertionPoint(op), op.location:
            value = ir.FloatAttr(op.attributes["value"]).value
            widened = arith.constant(f32, ir.FloatAttr.get(f32, value))
        results[0].replace_all_uses_with(widened)
        op.erase()
        return
    for result in results:
        if _is_bf16(result.type):
            result.set_type(f32)
        elif _bf16_memref(result.type):
            raise op_error(op, f"{op.name} makes a bf16 buffer SPIR-V cannot hold")
    for region in op.regions:
        for block in region.blocks:
            for argument in block.arguments:
                if _is_bf16(argument.type):
                    argument.set_type(f32)
