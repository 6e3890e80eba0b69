"""lower-sub-byte-types: buffers of 2- and 4-bit elements (T.int4, T.uint4, T.int2, T.uint2,
T.float4_e2m1fn) become byte buffers, their element accesses shifts and masks.

Tensor parameters, shared and local buffers are packed as TileLang packs them: 8 / bits elements
to a byte along the last dimension, element j of a row in bits (j % per_byte) * bits of byte
j // per_byte (the low bits first, as torch code packs them): `memref<N x K x i4>` becomes
`memref<N x K/2 x i8>`. A load reads the byte and shifts its element down. A store into a
tensor or shared buffer clears and sets its bits with two atomic read-modify-writes of the
byte, so threads writing the halves of one byte cannot lose each other's half (a store outside
a tensor is skipped, as element stores are); into a local buffer (one thread's) it is a plain
read-modify-write. Fragments hold one element per byte: a fragment's elements are spread over
threads by a layout chosen later, so they cannot share bytes; a load is a truncation, a store
an extension.

A T.copy between two packed buffers whose boxes start and end on whole bytes along the last
dimension copies bytes (and stays a copy the targets vectorize, cp.async included); any other
copy touching a sub-byte buffer becomes a T.Parallel loop over its elements, decoded and encoded
one by one. T.clear / T.fill of a packed buffer fills its bytes with the value repeated. Values
keep their sub-byte type (`i4`, `f4E2M1FN`): arithmetic on them is the frontend's. A conversion
of a 2- or 4-bit integer to f32, f16 or bf16 becomes integer code: the value OR-ed into the
mantissa of 2 ** 23 (2 ** 10, 2 ** 7), minus that power. A f4E2M1FN value widens by placing its
fields in the wider float's bits, an e8m0 scale (T.float8_e8m0fnu, MXFP4's) by moving its byte
into f32's exponent (upstream's arith-expand does both, but expands every max and min with
them). A conversion to f4E2M1FN becomes comparisons with the midpoints between its values
(round to nearest, ties to the even code, saturating at +-6; upstream's expansion loses the
sign of values rounding to +-0.5).

A gemm, reduction, atomic or view of a sub-byte buffer is an error at the op (the frontend
widens T.gemm's 4- and 2-bit integer operands into int8 tiles before the gemm), and so is a
packed buffer whose last extent is not a static whole number of bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, math, memref, scf

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import index
from tilec.compiler.passes._ir_walk import (
    constant_index,
    copy_parts,
    defining_op,
    op_error,
    scope,
    walk,
)
from tilec.dialect import ParallelOp, YieldOp

PACKED_SCOPES = ("global", "shared", "local")  # packed into bytes; fragments are not
_SHARED_BY_THREADS = ("global", "shared")  # stores there are atomic


def sub_byte_bits(type_: ir.Type) -> int | None:
    """The width of a 2- or 4-bit element type (integer or f4E2M1FN), None for other types."""
    if isinstance(type_, ir.IntegerType) and ir.IntegerType(type_).width in (2, 4):
        return ir.IntegerType(type_).width
    if str(type_) == "f4E2M1FN":
        return 4
    return None


def multiple_of(value: ir.Value, factor: int) -> bool:
    """Whether an index value is provably a multiple of `factor` (constants, products with a
    multiple, sums and differences of multiples)."""
    constant = constant_index(value)
    if constant is not None:
        return constant % factor == 0
    op = defining_op(value)
    if op is None:
        return False
    operands = list(op.operands)
    if op.name == "arith.muli":
        return any(multiple_of(operand, factor) for operand in operands)
    if op.name in ("arith.addi", "arith.subi"):
        return all(multiple_of(operand, factor) for operand in operands)
    return False


def _sub_byte_element(value: ir.Value) -> ir.Type | None:
    if not isinstance(value.type, ir.MemRefType):
        return None
    element = ir.MemRefType(value.type).element_type
    return element if sub_byte_bits(element) is not None else None


def _i8() -> ir.Type:
    return ir.IntegerType.get_signless(8)


def _bits_type(element: ir.Type) -> ir.Type:
    """The integer type holding an element's bits."""
    return ir.IntegerType.get_signless(sub_byte_bits(element))


def _to_bits(value: ir.Value) -> ir.Value:
    bits = _bits_type(value.type)
    return value if value.type == bits else arith.bitcast(bits, value)


def _from_bits(value: ir.Value, element: ir.Type) -> ir.Value:
    return value if value.type == element else arith.bitcast(element, value)


def _log2(power: int) -> int:
    return power.bit_length() - 1


# |x| past each midpoint between two float4 e2m1 values adds one to the code; `>=` where the
# upper neighbour has the even code (ties to even)
_FLOAT4_MIDPOINTS = ((0.25, "ogt"), (0.75, "oge"), (1.25, "ogt"), (1.75, "oge"), (2.5, "ogt"),
                     (3.5, "oge"), (5.0, "ogt"))


def _round_to_float4(value: ir.Value) -> ir.Value:
    """A float rounded to f4E2M1FN (nearest, ties to even, saturating; NaN gives zero)."""
    f32 = ir.F32Type.get()
    if value.type != f32:
        value = arith.extf(f32, value)
    magnitude = math.absf(value)
    i4 = ir.IntegerType.get_signless(4)
    code = arith.constant(i4, 0)
    for midpoint, predicate in _FLOAT4_MIDPOINTS:
        past = arith.cmpf(getattr(arith.CmpFPredicate, predicate.upper()), magnitude,
                          arith.constant(f32, midpoint))
        code = arith.addi(code, arith.extui(i4, past))
    bits = arith.bitcast(ir.IntegerType.get_signless(32), value)
    negative = arith.cmpi(arith.CmpIPredicate.slt, bits, arith.constant(bits.type, 0))
    code = arith.ori(code, arith.select(negative, arith.constant(i4, 8), arith.constant(i4, 0)))
    return arith.bitcast(ir.Type.parse("f4E2M1FN"), code)


_INT_TO_FLOAT = ("arith.uitofp", "arith.sitofp")
# float type -> (its integer type, the bits of 2 ** mantissa bits): the integers below that
# power sit in its mantissa's low bits, so OR-ing one in and subtracting the power converts it
_MAGIC = {"f32": (32, 0x4B000000, 2.0 ** 23), "f16": (16, 0x6400, 2.0 ** 10),
          "bf16": (16, 0x4300, 2.0 ** 7)}


def _small_int_to_float(value: ir.Value, float_type: ir.Type, signed: bool) -> ir.Value:
    """A 2- or 4-bit integer converted to a float with integer ops and one subtraction (no
    conversion instruction, which the GPUs issue at a quarter of the rate of arithmetic): a
    signed value is first biased to unsigned, the bias folded into the subtrahend."""
    width, magic, power = _MAGIC[str(float_type)]
    bits = sub_byte_bits(value.type)
    integer = ir.IntegerType.get_signless(width)
    bias = 1 << (bits - 1) if signed else 0
    if bias:
        value = arith.xori(value, arith.constant(value.type, -bias))  # + bias, mod 2 ** bits
    word = arith.ori(arith.extui(integer, value), arith.constant(integer, magic))
    return arith.subf(arith.bitcast(float_type, word),
                      arith.constant(float_type, ir.FloatAttr.get(float_type, power + bias)))


def _widen_e8m0(value: ir.Value, float_type: ir.Type) -> ir.Value:
    """An e8m0 scale (2 ** (e - 127), e = 255 NaN) as a float: e moved into f32's exponent,
    e = 0 the subnormal 2 ** -127 (upstream's expansion gives 0 there)."""
    i32, f32 = ir.IntegerType.get_signless(32), ir.F32Type.get()
    exponent = arith.extui(i32, arith.bitcast(_i8(), value))
    bits = arith.shli(exponent, arith.constant(i32, 23))
    bits = arith.select(arith.cmpi(arith.CmpIPredicate.eq, exponent, arith.constant(i32, 0)),
                        arith.constant(i32, 1 << 22), bits)
    bits = arith.select(arith.cmpi(arith.CmpIPredicate.eq, exponent, arith.constant(i32, 255)),
                        arith.constant(i32, 0x7FC00000), bits)
    widened = arith.bitcast(f32, bits)
    if float_type == f32:
        return widened
    wider = ir.FloatType(float_type).width > 32
    return (arith.extf if wider else arith.truncf)(float_type, widened)


# float type -> (mantissa bits, exponent bias)
_FLOAT_FIELDS = {"f16": (10, 15), "bf16": (7, 127), "f32": (23, 127)}


def _widen_float4(value: ir.Value, float_type: ir.Type) -> ir.Value:
    """An f4E2M1FN value (sign, 2 exponent bits, 1 mantissa bit) as a float16/bfloat16/float32,
    built in the target's bits: exponent e > 0 is the value 2 ** (e - 1) * (1 + m / 2), whose
    fields are the code's shifted plus the bias less one; e = 0 is 0 or 0.5."""
    name = str(float_type) if str(float_type) in _FLOAT_FIELDS else "f32"
    mantissa, bias = _FLOAT_FIELDS[name]
    width = 32 if name == "f32" else 16
    integer = ir.IntegerType.get_signless(width)

    def const(number: int) -> ir.Value:
        return arith.constant(integer, number)

    code = arith.extui(integer, arith.bitcast(ir.IntegerType.get_signless(4), value))
    magnitude = arith.andi(code, const(7))
    half = (bias - 1) << mantissa  # 0.5, and the exponent field of e = 1 less one
    normal = arith.addi(arith.shli(magnitude, const(mantissa - 1)), const(half))
    small = arith.select(arith.cmpi(arith.CmpIPredicate.eq, magnitude, const(1)), const(half),
                         const(0))
    is_small = arith.cmpi(arith.CmpIPredicate.ult, magnitude, const(2))
    sign = arith.shli(arith.andi(code, const(8)), const(width - 4))
    bits = arith.ori(arith.select(is_small, small, normal), sign)
    widened = arith.bitcast(ir.Type.parse(name), bits)
    return widened if name == str(float_type) else arith.extf(float_type, widened)


_WIDEN = {"f4E2M1FN": _widen_float4, "f8E8M0FNU": _widen_e8m0}


def _byte_start(offset: ir.Value, per_byte: int) -> ir.Value:
    """The byte column of a packed element column: a constant where the column is one (a
    shared tile's corner, which the cp.async pipeline needs as a constant), else a shift."""
    known = constant_index(offset)
    if known is not None:
        return index(known // per_byte)
    return arith.shrui(offset, index(_log2(per_byte)))


@dataclass
class _Buffer:
    """A byte buffer standing for a sub-byte one."""

    element: ir.Type
    scope: str
    packed: bool

    @property
    def per_byte(self) -> int:
        return 8 // sub_byte_bits(self.element)


def _byte_type(type_: ir.MemRefType, packed: bool, op: ir.Operation) -> ir.MemRefType:
    """The byte buffer holding a sub-byte buffer (packed along the last dimension or not)."""
    shape = list(type_.shape)
    if packed:
        per_byte = 8 // sub_byte_bits(type_.element_type)
        last = shape[-1]
        if last == ir.ShapedType.get_dynamic_size() or last % per_byte:
            raise op_error(op, f"a buffer of {type_.element_type} elements packs {per_byte} to "
                               f"a byte along its last dimension, whose size must be a static "
                               f"multiple of {per_byte}; it is {type_}")
        shape[-1] = last // per_byte
    return ir.MemRefType.get(shape, _i8(), memory_space=type_.memory_space)


@register
@dataclass
class LowerSubByteTypes(TilePass):
    """Sub-byte element buffers -> i8 buffers (packed but for fragments), accesses -> shifts
    and masks."""

    name = "lower-sub-byte-types"
    summary = "i4/i2/f4E2M1FN memrefs -> i8 memrefs; loads and stores -> shifts and masks"

    def run(self, module: ir.Module) -> None:
        for function in module.body.operations:
            if function.operation.name == "func.func" and function.operation.regions[0].blocks:
                self._lower_function(function.operation)

    def _lower_function(self, function: ir.Operation) -> None:
        self.buffers: dict[ir.Value, _Buffer] = {}
        entry = function.regions[0].blocks[0]
        for argument in entry.arguments:
            element = _sub_byte_element(argument)
            if element is not None:
                argument.set_type(_byte_type(ir.MemRefType(argument.type), True, function))
                self.buffers[argument] = _Buffer(element, "global", True)
        users = []
        for op in walk(function):
            if op.name == "tile.alloc" and _sub_byte_element(op.results[0]) is not None:
                result = op.results[0]
                space = scope(result)
                buffer = _Buffer(ir.MemRefType(result.type).element_type, space,
                                 space in PACKED_SCOPES)
                result.set_type(_byte_type(ir.MemRefType(result.type), buffer.packed, op))
                self.buffers[result] = buffer
            elif any(_sub_byte_element(operand) is not None or operand in self.buffers
                     for operand in op.operands):
                users.append(op)
        for op in users:
            self._rewrite(op)
        for op in [op for op in walk(function) if op.name.startswith("arith.")]:
            if op.name == "arith.truncf" and str(op.results[0].type) == "f4E2M1FN":
                with ir.InsertionPoint(op), op.location:
                    op.results[0].replace_all_uses_with(_round_to_float4(op.operands[0]))
            elif op.name == "arith.extf" and str(op.operands[0].type) in _WIDEN:
                widen = _WIDEN[str(op.operands[0].type)]
                with ir.InsertionPoint(op), op.location:
                    op.results[0].replace_all_uses_with(widen(op.operands[0],
                                                              op.results[0].type))
            elif (op.name in _INT_TO_FLOAT and sub_byte_bits(op.operands[0].type) is not None
                  and str(op.results[0].type) in _MAGIC):
                with ir.InsertionPoint(op), op.location:
                    op.results[0].replace_all_uses_with(_small_int_to_float(
                        op.operands[0], op.results[0].type, op.name == "arith.sitofp"))
            else:
                continue
            op.erase()
        if any(argument in self.buffers for argument in entry.arguments):
            signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
            function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                [argument.type for argument in entry.arguments], signature.results))

    def _rewrite(self, op: ir.Operation) -> None:
        operands = list(op.operands)
        touched = [operand for operand in operands if operand in self.buffers]
        if not touched:  # a sub-byte memref this pass did not make: a view or a cast
            raise op_error(op, f"'{op.name}' takes a buffer of sub-byte elements that is not a "
                               "tensor parameter or a block-level allocation; tilec packs only "
                               "those")
        with ir.InsertionPoint(op), op.location:
            if op.name == "memref.load":
                value = self._load(operands[0], operands[1:])
                op.results[0].replace_all_uses_with(value)
            elif op.name == "memref.store":
                self._store(operands[0], operands[1], operands[2:])
            elif op.name == "tile.copy":
                self._copy(op)
            elif op.name == "tile.fill":
                self._fill(op)
                return
            elif op.name == "memref.dim" and constant_index(operands[1]) != len(
                    ir.MemRefType(operands[0].type).shape) - 1:
                return  # the extent of an unpacked dimension
            else:
                buffer = self.buffers[touched[0]]
                raise op_error(op, f"'{op.name}' on a buffer of {buffer.element} elements is not "
                                   "supported by tilec: read and write its elements (T.Parallel, "
                                   "T.copy), which decodes and encodes them")
        op.erase()

    # ------------------------------------------------------------------ elements

    def _byte_position(self, buffer: _Buffer, indices: list[ir.Value]
                       ) -> tuple[list[ir.Value], ir.Value]:
        """The indices of an element's byte in a packed buffer and its bit offset (an i8)."""
        last = indices[-1]
        byte = arith.shrui(last, index(_log2(buffer.per_byte)))
        within = arith.andi(last, index(buffer.per_byte - 1))
        shift = arith.muli(within, index(sub_byte_bits(buffer.element)))
        return [*indices[:-1], byte], arith.index_castui(_i8(), shift)

    def _load(self, value: ir.Value, indices: list[ir.Value]) -> ir.Value:
        buffer = self.buffers[value]
        bits = _bits_type(buffer.element)
        if not buffer.packed:
            return _from_bits(arith.trunci(bits, memref.load(value, indices)), buffer.element)
        where, shift = self._byte_position(buffer, indices)
        byte = memref.load(value, where)
        return _from_bits(arith.trunci(bits, arith.shrui(byte, shift)), buffer.element)

    def _store(self, element: ir.Value, value: ir.Value, indices: list[ir.Value]) -> None:
        buffer = self.buffers[value]
        byte_value = arith.extui(_i8(), _to_bits(element))
        if not buffer.packed:
            memref.store(byte_value, value, indices)
            return
        where, shift = self._byte_position(buffer, indices)
        field = arith.constant(_i8(), (1 << sub_byte_bits(buffer.element)) - 1)
        keep = arith.xori(arith.shli(field, shift), arith.constant(_i8(), -1))
        bits = arith.shli(byte_value, shift)
        if buffer.scope not in _SHARED_BY_THREADS:
            kept = arith.andi(memref.load(value, where), keep)
            memref.store(arith.ori(kept, bits), value, where)
            return
        if buffer.scope == "global":  # skipped outside the tensor, as element stores are
            guard = scf.IfOp(self._inside(value, where))
            with ir.InsertionPoint(guard.then_block):
                self._atomic_store(keep, bits, value, where)
                scf.YieldOp([])
            return
        self._atomic_store(keep, bits, value, where)

    @staticmethod
    def _atomic_store(keep: ir.Value, bits: ir.Value, value: ir.Value,
                      where: list[ir.Value]) -> None:
        memref.atomic_rmw(arith.AtomicRMWKind.andi, keep, value, where)
        memref.atomic_rmw(arith.AtomicRMWKind.ori, bits, value, where)

    @staticmethod
    def _inside(value: ir.Value, where: list[ir.Value]) -> ir.Value:
        inside = None
        for axis, position in enumerate(where):
            extent = ir.MemRefType(value.type).shape[axis]
            size = (memref.dim(value, index(axis))
                    if extent == ir.ShapedType.get_dynamic_size() else index(extent))
            check = arith.cmpi(arith.CmpIPredicate.ult, position, size)
            inside = check if inside is None else arith.andi(inside, check)
        return inside

    # ------------------------------------------------------------------ tile ops

    def _copy(self, op: ir.Operation) -> None:
        src, src_offsets, src_shape, dst, dst_offsets, dst_shape = copy_parts(op)
        ends = ((src, src_offsets, src_shape), (dst, dst_offsets, dst_shape))
        if all(self._whole_bytes(*end) for end in ends):
            per_byte = self.buffers[src].per_byte
            starts = [_byte_start(offsets[-1], per_byte) for offsets in (src_offsets, dst_offsets)]
            copy = op.clone(ir.InsertionPoint(op))
            for position, start in zip((len(src_shape), len(op.operands) - 1), starts,
                                       strict=True):
                copy.operands[position] = start
            for key, shape in (("src_shape", src_shape), ("dst_shape", dst_shape)):
                copy.attributes[key] = ir.DenseI64ArrayAttr.get([*shape[:-1],
                                                                 shape[-1] // per_byte])
            return
        extents = [extent for extent in dst_shape if extent != 1] or [1]
        loop = ParallelOp(ir.DenseI64ArrayAttr.get(extents))
        body = loop.regions[0].blocks.append(*[ir.IndexType.get()] * len(extents))
        with ir.InsertionPoint(body):
            def place(offsets: list[ir.Value], shape: list[int]) -> list[ir.Value]:
                points = iter(body.arguments)
                return [offset if extent == 1 else arith.addi(offset, next(points))
                        for offset, extent in zip(offsets, shape, strict=True)]

            value = self._load(src, place(src_offsets, src_shape))
            self._store(value, dst, place(dst_offsets, dst_shape))
            YieldOp()

    def _whole_bytes(self, value: ir.Value, offsets: list[ir.Value], shape: list[int]) -> bool:
        """Whether a copy's box in `value` is whole bytes of a packed buffer."""
        buffer = self.buffers.get(value)
        if buffer is None or not buffer.packed:
            return False
        return shape[-1] % buffer.per_byte == 0 and multiple_of(offsets[-1], buffer.per_byte)

    def _fill(self, op: ir.Operation) -> None:
        """The fill value encoded into a byte (repeated in every field when packed)."""
        buffer = self.buffers[op.operands[0]]
        byte = arith.extui(_i8(), _to_bits(op.operands[1]))
        if buffer.packed:
            bits = sub_byte_bits(buffer.element)
            field = byte
            for number in range(1, buffer.per_byte):
                byte = arith.ori(byte, arith.shli(field, arith.constant(_i8(), number * bits)))
        op.operands[1] = byte
