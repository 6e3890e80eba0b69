"""spirv-widen-narrow-integers: 8- and 16-bit integer memory as i32 words, every narrower
integer value as an i32.

wgpu's naga (the shader compiler of the vulkan and webgpu runtimes) has no 8- or 16-bit
integer types and no StorageBuffer8BitAccess, so int8 / uint8 tensors, the bytes
lower-sub-byte-types packs int4 / int2 / float4 into, float8 codes and the i4 / i16 values
of their decodes cannot reach it as they are. After this pass no integer narrower than 32
bits (but i1) is left:
- a tensor or workgroup buffer of i8 / i16 elements is i32 words, four (two) elements each
  (element i in bits (i % n) * width of word i / n: the tensor's own bytes, so the host's
  int8 tensor binds unchanged); a load reads its word and shifts its field down, a store
  clears and sets its field with an atomic `andi` and an atomic `ori`, so threads storing
  neighbouring elements of one word all land;
- a per-thread (Function) array of them is an i32 array, one element a word;
- an iN value (1 < N < 32) is an i32 holding it zero-extended: constants, and, or, xor,
  unsigned shifts, divisions and comparisons act on it as they stand; add, sub, mul and shl
  are masked back to N bits; signed operations (shrsi, divsi, remsi, maxsi, minsi, signed
  comparisons, extsi, sitofp, index_cast) sign-extend their operands from bit N - 1 first;
  truncations and conversions into iN mask; scf results, block arguments, selects and
  subgroup shuffles are retyped.
A bitcast between i16 and f16 (T.reinterpret's halves) is integer code on the f16's f32: the
bits of an f16 are made from its f32's sign, exponent and mantissa, and an f16 from its bits
as the f32 of the same value, truncated (exact: every f16 is an f32). NaNs stay NaNs of the
same sign and quiet bit; the rest of a NaN's payload is not kept.
Run it after flatten-memref (every access on a 1-D buffer, views at offset 0) and
spirv-pack-bfloat16 (whose bf16 bits are i16 values), before convert-gpu-to-spirv. Any other
use of a narrow integer (a vector of them, an atomic on an 8-bit buffer) is an error at its
line.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, memref

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._integer_storage import (
    ROOTS,
    SHAPE_ONLY,
    VIEWS,
    retype_views,
    store_field,
    with_element,
    word_and_shift,
    words_type,
)
from tilec.compiler.passes._ir_walk import as_operation, defining_op, op_error, walk
from tilec.compiler.passes.expand_narrow_float_conversions import (
    FORMATS,
    decode_float8,
    narrow_to_float8,
)

# ops whose narrow results need no arithmetic: their values are canonical already
RETYPED = ("arith.select", "scf.if", "scf.for", "scf.while", "scf.yield", "scf.condition",
           "scf.execute_region", "scf.index_switch", "gpu.shuffle")
# arithmetic on the zero-extended values as they stand: no bit above N can appear
AS_THEY_STAND = {"arith.andi": arith.andi, "arith.ori": arith.ori, "arith.xori": arith.xori,
                 "arith.shrui": arith.shrui, "arith.divui": arith.divui,
                 "arith.remui": arith.remui, "arith.maxui": arith.maxui,
                 "arith.minui": arith.minui, "arith.ceildivui": arith.ceildivui}
# arithmetic whose i32 result carries bits above N: masked back
MASKED = {"arith.addi": arith.addi, "arith.subi": arith.subi, "arith.muli": arith.muli,
          "arith.shli": arith.shli}
# arithmetic reading its operands as signed: sign-extended first, the result masked
SIGNED = {"arith.shrsi": arith.shrsi, "arith.divsi": arith.divsi, "arith.remsi": arith.remsi,
          "arith.maxsi": arith.maxsi, "arith.minsi": arith.minsi,
          "arith.ceildivsi": arith.ceildivsi, "arith.floordivsi": arith.floordivsi}
SIGNED_PREDICATES = {arith.CmpIPredicate.slt, arith.CmpIPredicate.sle, arith.CmpIPredicate.sgt,
                     arith.CmpIPredicate.sge}
F16_EXPONENT_BIAS, F32_EXPONENT_BIAS = 15, 127
# float8 formats held as their bits: (exponent bits, mantissa bits, finite only); e8m0 is
# decoded by lower-sub-byte-types' integer code, which reads its bits
FLOAT8_FORMATS = {**FORMATS, "f8E8M0FNU": (8, 0, True)}
DYNAMIC_SIZE = ir.ShapedType.get_dynamic_size()
DYNAMIC_OFFSET = ir.ShapedType.get_dynamic_stride_or_offset()


def narrow_width(type_: ir.Type) -> int | None:
    """N of an integer type narrower than 32 bits (not i1), 8 for a float8 (held as its
    bits), else None."""
    if isinstance(type_, ir.IntegerType) and 1 < ir.IntegerType(type_).width < 32:
        return ir.IntegerType(type_).width
    if str(type_) in FLOAT8_FORMATS:
        return 8
    return None


def _i32() -> ir.Type:
    return ir.IntegerType.get_signless(32)


def _const(value: int) -> ir.Value:
    return arith.constant(_i32(), value)


def _mask(value: ir.Value, width: int) -> ir.Value:
    return arith.andi(value, _const((1 << width) - 1))


def _sign_extend(value: ir.Value, width: int) -> ir.Value:
    """The i32 of a zero-extended `width`-bit value read as signed: (x ^ m) - m, m its sign
    bit."""
    sign = _const(1 << (width - 1))
    return arith.subi(arith.xori(value, sign), sign)


@register
class SpirvWidenNarrowIntegers(TilePass):
    """8- / 16-bit integer memory as i32 words, narrow integer values as i32 (module doc)."""

    name = "spirv-widen-narrow-integers"
    summary = ("8- and 16-bit integer buffers as i32 words, narrower integer values as i32 "
               "(naga has no 8- or 16-bit integers)")

    def run(self, module: ir.Module) -> None:
        with module.context:
            for function in [op for op in walk(module.operation) if op.name == "gpu.func"]:
                _widen_function(function)


def _widen_function(function: ir.Operation) -> None:
    entry = function.regions[0].blocks[0]
    for argument in entry.arguments:
        if narrow_width(argument.type):
            raise op_error(function, f"a {argument.type} scalar argument: SPIR-V kernels take "
                                     "integers narrower than 32 bits in buffers")
    for op in walk(function):
        if op.name in ("arith.extf", "arith.truncf"):
            _float8_conversion(op)
    buffers = [argument for argument in entry.arguments if _narrow_memref(argument.type)]
    buffers += [op.results[0] for op in walk(function)
                if op.name in ROOTS and _narrow_memref(op.results[0].type)]
    for buffer in buffers:
        _widen_buffer(buffer)
    if buffers:
        signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [argument.type for argument in entry.arguments], list(signature.results)))
    # each op with its operands' widths as they are now: rewriting retypes them
    for op, widths in [(op, [narrow_width(value.type) for value in op.operands])
                       for op in walk(function)]:
        _widen_op(op, widths)


def _narrow_memref(type_: ir.Type) -> bool:
    return isinstance(type_, ir.MemRefType) and narrow_width(
        ir.MemRefType(type_).element_type) is not None


def _widen_buffer(buffer: ir.Value) -> None:
    """A per-thread array as i32 elements; any other as i32 words of packed elements, every
    access through a view of it an access of the words at the element's linear index. Loads
    give and stores take the narrow values still (truncated from and extended to the i32s),
    which _widen_op then widens."""
    memref_type = ir.MemRefType(buffer.type)
    width = narrow_width(memref_type.element_type)
    where = (as_operation(buffer.owner.owner) if isinstance(buffer, ir.BlockArgument)
             else as_operation(buffer.owner))
    if "Function" in str(memref_type.memory_space):
        for user in retype_views(buffer, lambda t: with_element(t, _i32())):
            if user.name in ("memref.load", "memref.store"):
                _access(user, width, None)
            elif user.name not in (*VIEWS, *SHAPE_ONLY):
                raise op_error(user, f"{user.name} uses a per-thread i{width} array, which "
                                     "SPIR-V holds as i32: only loads, stores and views can")
        return
    if width not in (8, 16):
        raise op_error(where, f"a buffer of i{width} elements: only 8- and 16-bit ones can be "
                              "packed into i32 words (lower-sub-byte-types packs narrower ones "
                              "into bytes)")
    shape = list(memref_type.shape)
    if memref_type.rank != 1 and (isinstance(buffer, ir.BlockArgument) or DYNAMIC_SIZE in shape):
        raise op_error(where, f"an i{width} buffer of rank > 1 and no static shape: SPIR-V "
                              "kernels take flat arrays")
    views, accesses = [buffer], []
    for view in views:
        for use in list(view.uses):
            user = as_operation(use.owner)
            if user.name in ("memref.reinterpret_cast", "memref.cast") and (
                    use.operand_number == 0):
                views.append(user.results[0])
            elif user.name in ("memref.load", "memref.store", "memref.atomic_rmw"):
                accesses.append(user)
            elif user.name != "memref.dealloc":
                raise op_error(user, f"{user.name} uses an i{width} buffer, which SPIR-V holds "
                                     "as i32 words: only loads, stores, atomics and "
                                     "reinterpret_cast views can")
    indices = []
    for access in accesses:
        with ir.InsertionPoint(access), access.location:
            indices.append(_linear_index(_memory(access), _indices(access), shape))
    elements = math.prod(shape) if memref_type.rank != 1 else shape[0]
    buffer.set_type(words_type(ir.MemRefType.get(
        [elements], memref_type.element_type, None, memref_type.memory_space), 32 // width))
    for access, index in zip(accesses, indices, strict=True):
        _access(access, width, index, buffer)
    for view in reversed(views[1:]):
        view.owner.erase()


def _memory(access: ir.Operation) -> ir.Value:
    return access.operands[0 if access.name == "memref.load" else 1]


def _indices(access: ir.Operation) -> list[ir.Value]:
    return list(access.operands)[1 if access.name == "memref.load" else 2:]


def _linear_index(memory: ir.Value, indices: list[ir.Value], root_shape: list[int]
                  ) -> ir.Value:
    """The element of the root buffer that `indices` of `memory` (the root or a view of it)
    name: a reinterpret_cast's offset plus each index times its stride (reinterpret_cast
    counts from the root's start), the root's own row-major strides."""
    index_type = ir.IndexType.get()
    while (view := defining_op(memory)) is not None and view.name == "memref.cast":
        memory = view.operands[0]
    view = defining_op(memory)
    if view is None or view.name != "memref.reinterpret_cast":
        offset, dynamic = 0, []
        strides = [math.prod(root_shape[k + 1:]) for k in range(len(root_shape))]
    else:
        dynamic = list(view.operands)[1:]
        offset = list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"]))[0]
        if offset == DYNAMIC_OFFSET:
            offset = dynamic.pop(0)
        sizes = list(ir.DenseI64ArrayAttr(view.attributes["static_sizes"]))
        dynamic = dynamic[sizes.count(DYNAMIC_SIZE):]
        strides = list(ir.DenseI64ArrayAttr(view.attributes["static_strides"]))
    linear = arith.constant(index_type, offset) if isinstance(offset, int) else offset
    for index, stride in zip(indices, strides, strict=True):
        stride = (dynamic.pop(0) if stride == DYNAMIC_OFFSET
                  else arith.constant(index_type, stride))
        linear = arith.addi(linear, arith.muli(index, stride))
    return linear


def _access(access: ir.Operation, width: int, index: ir.Value | None,
            words: ir.Value | None = None) -> None:
    """A load, store or atomic of a narrow element: of an i32 element of a per-thread array
    (`index` None: the access's own indices), else of its field in the packed `words` at
    linear element `index`."""
    with ir.InsertionPoint(access), access.location:
        if access.name == "memref.load":
            if index is None:
                field = memref.load(access.operands[0], _indices(access))
            else:
                word, shift = word_and_shift(index, width)
                field = arith.shrui(memref.load(words, [word]), shift)
            access.results[0].replace_all_uses_with(_from_field(field, access.results[0].type))
        elif access.name == "memref.store":
            field = _to_field(access.operands[0])
            if index is None:
                memref.store(field, access.operands[1], _indices(access))
            else:
                store_field(words, index, field, width)
        else:
            _atomic(access, words, index, width)
    access.erase()


def _atomic(atomic: ir.Operation, words: ir.Value, index: ir.Value, width: int) -> None:
    """An atomic andi / ori of a packed element as the same atomic on its word, the other
    fields' bits ones (andi) or zeros (ori); its result the element's old value."""
    kind = arith.AtomicRMWKind(ir.IntegerAttr(atomic.attributes["kind"]).value)
    if kind not in (arith.AtomicRMWKind.andi, arith.AtomicRMWKind.ori):
        raise op_error(atomic, f"an atomic {kind} on an i{width} buffer, which SPIR-V holds as "
                               "i32 words: only andi and ori can")
    word, shift = word_and_shift(index, width)
    field = arith.shli(_to_field(atomic.operands[0]), shift)
    if kind == arith.AtomicRMWKind.andi:
        others = arith.xori(arith.shli(_const((1 << width) - 1), shift), _const(-1))
        field = arith.ori(field, others)
    old = memref.atomic_rmw(kind, field, words, [word])
    atomic.results[0].replace_all_uses_with(
        _from_field(arith.shrui(old, shift), atomic.results[0].type))


def _from_field(field: ir.Value, narrow: ir.Type) -> ir.Value:
    """The narrow value of the low bits of an i32 (a float8 through the i8 of its bits)."""
    if isinstance(narrow, ir.IntegerType):
        return arith.trunci(narrow, field)
    return arith.bitcast(narrow, arith.trunci(ir.IntegerType.get_signless(8), field))


def _to_field(value: ir.Value) -> ir.Value:
    """A narrow value as an i32 zero above its bits (once _widen_op has widened it)."""
    if not isinstance(value.type, ir.IntegerType):
        value = arith.bitcast(ir.IntegerType.get_signless(8), value)
    return arith.extui(_i32(), value)


def _widen_op(op: ir.Operation, widths: list[int | None]) -> None:
    """One op, its operands widened already (walk order: definitions first); `widths` the
    narrow widths its operands had."""
    results = list(op.results)
    result_width = narrow_width(results[0].type) if len(results) == 1 else None
    rewrite = REWRITES.get(op.name)
    if rewrite is not None and (result_width or any(widths)):
        with ir.InsertionPoint(op), op.location:
            widened = rewrite(op, list(op.operands), widths, result_width)
        results[0].replace_all_uses_with(widened)
        op.erase()
        return
    _check_no_narrow(op)
    touched = [value for value in results if narrow_width(value.type)]
    touched += [argument for region in op.regions for block in region.blocks
                for argument in block.arguments if narrow_width(argument.type)]
    if not touched:
        return
    if op.name not in RETYPED:
        raise op_error(op, f"{op.name} on {touched[0].type} values: the SPIR-V targets hold "
                           "integers narrower than 32 bits as i32 and cannot widen this op")
    for value in touched:
        value.set_type(_i32())


def _check_no_narrow(op: ir.Operation) -> None:
    for value in [*op.results, *op.operands]:
        type_ = value.type
        if isinstance(type_, (ir.VectorType, ir.MemRefType)) and narrow_width(
                ir.ShapedType(type_).element_type):
            raise op_error(op, f"{op.name} has a {type_} value: the SPIR-V targets hold "
                               "integers narrower than 32 bits as i32 scalars only")


Operands = list[ir.Value]
Widths = list[int | None]


def _constant(op: ir.Operation, operands: Operands, widths: Widths, width: int) -> ir.Value:
    attribute = op.attributes["value"]
    if isinstance(attribute, ir.FloatAttr):  # a float8: the code of its value
        exponent_bits, mantissa_bits, finite_only = FLOAT8_FORMATS[str(op.results[0].type)]
        value = ir.FloatAttr(attribute).value
        codes = [code for code in range(256)
                 if _float8_value(code, exponent_bits, mantissa_bits, finite_only) == value]
        if not codes:
            raise op_error(op, f"a {op.results[0].type} constant {value}: not one of its values")
        return _const(codes[0])
    return _const(ir.IntegerAttr(attribute).value & ((1 << width) - 1))


def _as_they_stand(build: Callable) -> Callable:
    return lambda op, operands, widths, width: build(*operands)


def _masked(build: Callable) -> Callable:
    return lambda op, operands, widths, width: _mask(build(*operands), width)


def _signed_operands(operands: Operands, widths: Widths) -> Operands:
    return [_sign_extend(value, width) if width else value
            for value, width in zip(operands, widths, strict=True)]


def _signed(build: Callable) -> Callable:
    return lambda op, operands, widths, width: _mask(
        build(*_signed_operands(operands, widths)), width)


def _compare(op: ir.Operation, operands: Operands, widths: Widths, width: None) -> ir.Value:
    predicate = arith.CmpIPredicate(ir.IntegerAttr(op.attributes["predicate"]).value)
    if predicate in SIGNED_PREDICATES:
        operands = _signed_operands(operands, widths)
    return arith.cmpi(predicate, *operands)


def _to_wide(op: ir.Operation, value: ir.Value, build: Callable) -> ir.Value:
    """`value` (an i32) as the op's result type where that is 32 bits or wider."""
    result = op.results[0].type
    if result == _i32():
        return value
    return build(result, value)


def _extend(op: ir.Operation, operands: Operands, widths: Widths, width: int | None
            ) -> ir.Value:
    """extui / extsi: from a narrow value (or i1) to a narrow or wide one."""
    signed = op.name == "arith.extsi"
    source, source_width = operands[0], widths[0]
    if source_width is None:  # from i1
        value = (arith.extsi if signed else arith.extui)(_i32(), source)
    else:
        value = _sign_extend(source, source_width) if signed else source
    if width is not None:
        return _mask(value, width) if signed else value
    return _to_wide(op, value, arith.extsi if signed else arith.extui)


def _truncate(op: ir.Operation, operands: Operands, widths: Widths, width: int | None
              ) -> ir.Value:
    source = operands[0]
    if width is None:  # a narrow value to i1
        return arith.trunci(op.results[0].type, source)
    if source.type != _i32():
        source = arith.trunci(_i32(), source)
    return _mask(source, width)


def _index_cast(op: ir.Operation, operands: Operands, widths: Widths, width: int | None
                ) -> ir.Value:
    signed = op.name == "arith.index_cast"
    build = arith.index_cast if signed else arith.index_castui
    if width is not None:  # index -> narrow
        return _mask(build(_i32(), operands[0]), width)
    source = _sign_extend(operands[0], widths[0]) if signed else operands[0]
    return build(op.results[0].type, source)


def _to_float(op: ir.Operation, operands: Operands, widths: Widths, width: None) -> ir.Value:
    if op.name == "arith.sitofp":
        return arith.sitofp(op.results[0].type, _sign_extend(operands[0], widths[0]))
    return arith.uitofp(op.results[0].type, operands[0])


def _from_float(op: ir.Operation, operands: Operands, widths: Widths, width: int) -> ir.Value:
    build = arith.fptosi if op.name == "arith.fptosi" else arith.fptoui
    return _mask(build(_i32(), operands[0]), width)


def _bitcast(op: ir.Operation, operands: Operands, widths: Widths, width: int | None
             ) -> ir.Value:
    """i16 <-> f16 through the f16's f32 (SPIR-V's i16 is what naga lacks)."""
    f16 = ir.F16Type.get()
    if width == 8 and widths[0] == 8:  # float8 <-> i8: the same bits
        return operands[0]
    if width == 16 and operands[0].type == f16:
        return half_bits(operands[0])
    if widths[0] == 16 and op.results[0].type == f16:
        return half_of_bits(operands[0])
    source = operands[0].type if widths[0] is None else f"i{widths[0]}"
    raise op_error(op, f"a bitcast from {source} to {op.results[0].type}: the SPIR-V targets "
                       "hold integers narrower than 32 bits as i32")


def half_bits(value: ir.Value) -> ir.Value:
    """The bits of an f16 value as an i32 (zero above bit 15), from its f32: sign, then
    exponent and the mantissa's top 10 bits rebiased (normal f16s), the value times 2^24
    (subnormal f16s and zeros: an integer below 1024), or infinity / NaN (a NaN's payload
    keeps its top 10 bits, quiet bit set where they are all zero)."""
    f32 = ir.F32Type.get()
    bits = arith.bitcast(_i32(), arith.extf(f32, value))
    sign = arith.andi(arith.shrui(bits, _const(16)), _const(0x8000))
    magnitude = arith.andi(bits, _const(0x7FFFFFFF))
    exponent = arith.shrui(magnitude, _const(23))
    normal = arith.subi(arith.shrui(magnitude, _const(13)),
                        _const((F32_EXPONENT_BIAS - F16_EXPONENT_BIAS) << 10))
    scaled = arith.mulf(arith.bitcast(f32, magnitude), arith.constant(f32, 2.0 ** 24))
    subnormal = arith.fptoui(_i32(), scaled)
    mantissa = arith.andi(magnitude, _const(0x7FFFFF))
    payload = arith.shrui(mantissa, _const(13))
    lost = arith.andi(arith.cmpi(arith.CmpIPredicate.ne, mantissa, _const(0)),
                      arith.cmpi(arith.CmpIPredicate.eq, payload, _const(0)))
    special = arith.ori(arith.ori(payload, _const(0x7C00)),
                        arith.select(lost, _const(0x200), _const(0)))
    smallest_normal = F32_EXPONENT_BIAS - F16_EXPONENT_BIAS + 1
    finite = arith.select(arith.cmpi(arith.CmpIPredicate.uge, exponent, _const(smallest_normal)),
                          normal, subnormal)
    is_special = arith.cmpi(arith.CmpIPredicate.eq, exponent, _const(0xFF))
    return arith.ori(sign, arith.select(is_special, special, finite))


def half_of_bits(bits: ir.Value) -> ir.Value:
    """The f16 whose bits are `bits` (an i32, zero above bit 15), through the f32 of the same
    value: rebiased exponent and mantissa (normal), the mantissa times 2^-24 (subnormal and
    zero), exponent 255 with the mantissa on top (infinity, NaN); then truncated to f16,
    which is exact."""
    f32, f16 = ir.F32Type.get(), ir.F16Type.get()
    sign = arith.shli(arith.andi(bits, _const(0x8000)), _const(16))
    exponent = arith.andi(arith.shrui(bits, _const(10)), _const(0x1F))
    mantissa = arith.andi(bits, _const(0x3FF))
    rebias = (F32_EXPONENT_BIAS - F16_EXPONENT_BIAS) << 23
    normal = arith.addi(arith.shli(arith.andi(bits, _const(0x7FFF)), _const(13)),
                        _const(rebias))
    special = arith.ori(_const(0x7F800000), arith.shli(mantissa, _const(13)))
    subnormal = arith.bitcast(_i32(), arith.mulf(arith.uitofp(f32, mantissa),
                                                 arith.constant(f32, 2.0 ** -24)))
    magnitude = arith.select(
        arith.cmpi(arith.CmpIPredicate.eq, exponent, _const(0)), subnormal,
        arith.select(arith.cmpi(arith.CmpIPredicate.eq, exponent, _const(0x1F)), special,
                     normal))
    return arith.truncf(f16, arith.bitcast(f32, arith.ori(sign, magnitude)))


def _float8_value(code: int, exponent_bits: int, mantissa_bits: int, finite_only: bool
                  ) -> float:
    """The value of a float8 code (e8m0: 2 ** (code - 127), 255 NaN)."""
    if mantissa_bits == 0:
        return math.nan if code == 255 else 2.0 ** (code - 127)
    return decode_float8(code, exponent_bits, mantissa_bits, finite_only)


def _float8_conversion(op: ir.Operation) -> None:
    """extf from E4M3FN / E5M2 as the f32 built from the code's fields, truncf to them as
    expand-narrow-float-conversions rounds (both through f32); the codes as i8 bitcasts,
    which _widen_op then makes the i32s themselves."""
    source, result = op.operands[0], op.results[0]
    name = str(source.type if op.name == "arith.extf" else result.type)
    if name not in FLOAT8_FORMATS:
        return
    if name not in FORMATS:
        raise op_error(op, f"{op.name} of {name}: the SPIR-V targets convert e8m0 scales "
                           "through their bits only (T.Cast of them is)")
    f32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(8)
    with ir.InsertionPoint(op), op.location:
        if op.name == "arith.extf":
            code = arith.extui(_i32(), arith.bitcast(i8, source))
            value = _float8_to_float32(code, *FORMATS[name])
            if result.type != f32:
                value = arith.extf(result.type, value)
        else:
            value = source if source.type == f32 else arith.truncf(f32, source)
            value = narrow_to_float8(value, name, result.type)
    result.replace_all_uses_with(value)
    op.erase()


def _float8_to_float32(code: ir.Value, exponent_bits: int, mantissa_bits: int,
                       finite_only: bool) -> ir.Value:
    """The f32 of a float8 code (an i32 below 256): sign, rebiased exponent and mantissa
    (normal), the mantissa times its subnormal scale, infinity / NaN (E5M2's top exponent,
    E4M3FN's top code)."""
    f32 = ir.F32Type.get()
    bias = (1 << (exponent_bits - 1)) - 1
    top = (1 << exponent_bits) - 1
    sign = arith.shli(arith.andi(code, _const(0x80)), _const(24))
    exponent = arith.andi(arith.shrui(code, _const(mantissa_bits)), _const(top))
    mantissa = arith.andi(code, _const((1 << mantissa_bits) - 1))
    normal = arith.ori(arith.shli(arith.addi(exponent, _const(F32_EXPONENT_BIAS - bias)),
                                  _const(23)),
                       arith.shli(mantissa, _const(23 - mantissa_bits)))
    subnormal = arith.bitcast(_i32(), arith.mulf(
        arith.uitofp(f32, mantissa),
        arith.constant(f32, 2.0 ** (1 - bias - mantissa_bits))))
    magnitude = arith.select(arith.cmpi(arith.CmpIPredicate.eq, exponent, _const(0)),
                             subnormal, normal)
    if finite_only:  # the top code of each sign is NaN
        special = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(code, _const(0x7F)),
                             _const(0x7F))
        magnitude = arith.select(special, _const(0x7FC00000), magnitude)
    else:  # the top exponent: infinity, or NaN with a mantissa
        special = arith.cmpi(arith.CmpIPredicate.eq, exponent, _const(top))
        infinity_or_nan = arith.ori(_const(0x7F800000),
                                    arith.shli(mantissa, _const(23 - mantissa_bits)))
        magnitude = arith.select(special, infinity_or_nan, magnitude)
    return arith.bitcast(f32, arith.ori(sign, magnitude))


REWRITES: dict[str, Callable] = {
    "arith.constant": _constant,
    **{name: _as_they_stand(build) for name, build in AS_THEY_STAND.items()},
    **{name: _masked(build) for name, build in MASKED.items()},
    **{name: _signed(build) for name, build in SIGNED.items()},
    "arith.cmpi": _compare,
    "arith.extui": _extend,
    "arith.extsi": _extend,
    "arith.trunci": _truncate,
    "arith.index_cast": _index_cast,
    "arith.index_castui": _index_cast,
    "arith.sitofp": _to_float,
    "arith.uitofp": _to_float,
    "arith.fptosi": _from_float,
    "arith.fptoui": _from_float,
    "arith.bitcast": _bitcast,
}
