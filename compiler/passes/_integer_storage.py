"""Memory that holds floats as the integers of their bits, for the SPIR-V targets.

SPIR-V has no bf16 type and no compare-and-swap on floats, so a buffer of either kind is
declared with integer elements of the same width: the buffer (a gpu.func argument or an
alloc) and every view of it are retyped, each load reads the bits and bitcasts them to the
float, each store bitcasts first. Atomics on the buffer are left to the caller.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref

from tilec.compiler.passes._ir_walk import as_operation, defining_op, op_error

# ops whose memref result is a view of their first operand, with its element type
VIEWS = ("memref.reinterpret_cast", "memref.subview", "memref.cast", "memref.expand_shape",
         "memref.collapse_shape")
# ops that read a memref's shape only
SHAPE_ONLY = ("memref.dim", "memref.dealloc")
ROOTS = ("memref.alloc", "memref.alloca")


def root_of(buffer: ir.Value) -> ir.Value:
    """The gpu.func argument or alloc that `buffer` is a view of."""
    while (op := defining_op(buffer)) is not None and op.name in VIEWS:
        buffer = op.operands[0]
    return buffer


def with_element(type_: ir.Type, element: ir.Type) -> ir.Type:
    memref_type = ir.MemRefType(type_)
    return ir.MemRefType.get(memref_type.shape, element, memref_type.layout,
                             memref_type.memory_space)


def _retype_argument(argument: ir.BlockArgument, element: ir.Type, why: str) -> None:
    function = as_operation(argument.owner.owner)
    if function.name != "gpu.func":
        raise op_error(function, f"{why} reach a buffer that is an argument of "
                                 f"{function.name}, not of the kernel")
    signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    inputs = list(signature.inputs)
    inputs[argument.arg_number] = with_element(inputs[argument.arg_number], element)
    function.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(inputs, list(signature.results)))


def store_as_bits(root: ir.Value, bits: ir.Type, why: str) -> list[ir.Operation]:
    """Retype `root` (a gpu.func argument or an alloc) and its views to `bits` elements, loads
    and stores bitcasting; returns the memref.atomic_rmw ops on it, unchanged but for their
    memref's type. `why` (what needs the bits, plural) words the errors."""
    if isinstance(root, ir.BlockArgument):
        _retype_argument(root, bits, why)
    elif defining_op(root).name not in ROOTS:
        raise op_error(defining_op(root), f"{why} reach a buffer made by "
                                          f"{defining_op(root).name}, whose element type "
                                          "cannot be changed")
    atomics: list[ir.Operation] = []
    pending = [root]
    while pending:
        buffer = pending.pop()
        buffer.set_type(with_element(buffer.type, bits))
        for use in list(buffer.uses):
            user = as_operation(use.owner)
            if user.name in VIEWS and use.operand_number == 0:
                pending.append(user.results[0])
            elif user.name == "memref.load":
                _load_bits(user)
            elif user.name == "memref.store" and use.operand_number == 1:
                with ir.InsertionPoint(user), user.location:
                    user.operands[0] = arith.bitcast(bits, user.operands[0])
            elif user.name == "memref.atomic_rmw" and use.operand_number == 1:
                atomics.append(user)
            elif user.name not in SHAPE_ONLY:
                raise op_error(user, f"{user.name} uses a buffer held as {bits} bits (for "
                                     f"{why}); only loads, stores and views can")
    return atomics


def _load_bits(load: ir.Operation) -> None:
    """A load of the bits, bitcast to the float the old load gave."""
    value = load.results[0]
    with ir.InsertionPoint(load), load.location:
        loaded = memref.load(load.operands[0], list(load.operands)[1:])
        value.replace_all_uses_with(arith.bitcast(value.type, loaded))
    load.erase()


def retype_views(buffer: ir.Value, retype) -> list[ir.Operation]:
    """Give `buffer` and its views retype(type); returns the ops using any of them."""
    users, pending = [], [buffer]
    while pending:
        value = pending.pop()
        value.set_type(retype(value.type))
        for use in list(value.uses):
            user = as_operation(use.owner)
            if user.name in VIEWS and use.operand_number == 0:
                pending.append(user.results[0])
            users.append(user)
    return users


def words_type(type_: ir.Type, per_word: int) -> ir.Type:
    """The i32 memref holding a flat memref's elements `per_word` to a word (a memref of
    another rank is left for check_flat_view to report)."""
    memref_type = ir.MemRefType(type_)
    if memref_type.rank != 1:
        return type_
    size = memref_type.shape[0]
    words = size if size == ir.ShapedType.get_dynamic_size() else -(-size // per_word)
    return ir.MemRefType.get([words], ir.IntegerType.get_signless(32), None,
                             memref_type.memory_space)


def check_flat_view(view: ir.Operation, what: str) -> None:
    """A view of a buffer packed into i32 words must be the same 1-D array at offset 0 (its
    sizes then count words: the view's static size and stride are reset to the words');
    `what` names the buffer's elements in the error."""
    source = ir.MemRefType(view.operands[0].type)
    result = ir.MemRefType(view.results[0].type)
    offset_ok = view.name != "memref.reinterpret_cast" or (
        list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"])) == [0])
    if source.rank != 1 or result.rank != 1 or not offset_ok:
        raise op_error(view, f"{view.name} views a {what} buffer other than as the same 1-D "
                             f"array: SPIR-V holds {what} as i32 words")
    if view.name == "memref.reinterpret_cast":
        view.attributes["static_sizes"] = ir.DenseI64ArrayAttr.get([result.shape[0]])
        view.attributes["static_strides"] = ir.DenseI64ArrayAttr.get([1])


def word_and_shift(index: ir.Value, element_bits: int) -> tuple[ir.Value, ir.Value]:
    """The i32 word holding element `index` of a buffer packed `32 / element_bits` to a word
    (element i at bits (i % n) * element_bits of word i / n: the buffer's own bytes, little
    endian), and the bit its field starts at, as i32."""
    i32 = ir.IntegerType.get_signless(32)
    per_word = 32 // element_bits
    word = arith.shrui(index, arith.constant(ir.IndexType.get(), per_word.bit_length() - 1))
    slot = arith.andi(arith.index_cast(i32, index), arith.constant(i32, per_word - 1))
    return word, arith.muli(slot, arith.constant(i32, element_bits))


def store_field(buffer: ir.Value, index: ir.Value, field: ir.Value, element_bits: int) -> None:
    """Store `field` (i32, zero above its `element_bits`) as element `index` of a packed
    buffer: an atomic `andi` clears the element's bits of its word, an atomic `ori` sets them,
    so threads storing the other elements of one word all land."""
    i32 = ir.IntegerType.get_signless(32)
    word, shift = word_and_shift(index, element_bits)
    mask = arith.shli(arith.constant(i32, (1 << element_bits) - 1), shift)
    keep = arith.xori(mask, arith.constant(i32, -1))
    memref.atomic_rmw(arith.AtomicRMWKind.andi, keep, buffer, [word])
    memref.atomic_rmw(arith.AtomicRMWKind.ori, arith.shli(field, shift), buffer, [word])
