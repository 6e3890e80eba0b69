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
