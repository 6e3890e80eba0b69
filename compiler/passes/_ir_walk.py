"""Small IR helpers shared by the CUDA passes: walking, scopes, block arguments."""

from __future__ import annotations

import re

from mlir import ir

from tilec.errors import CompileError


def as_operation(op: ir.Operation | ir.OpView) -> ir.Operation:
    return op.operation if hasattr(op, "operation") else op


def walk(op: ir.Operation | ir.OpView) -> list[ir.Operation]:
    """Every op nested in `op` (not `op` itself), parents before children, in program order,
    as they stand when called (a pass rewriting ops as it goes through the list does not see
    the ops it adds; the ops nested in one it erases are gone, so it must not visit them).

    MLIR's own walk collects them: a generator nested as deep as the IR, building an OpView
    per op, took a tenth of a large kernel's compile."""
    found: list[ir.Operation] = []

    def visit(child: ir.Operation) -> ir.WalkResult:
        found.append(child)
        return ir.WalkResult.ADVANCE

    as_operation(op).walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[1:]


def touches(op: ir.Operation, values: list[ir.Value]) -> bool:
    """Whether `op` or an op nested in it uses one of `values`."""
    return any(operand == value for inner in [as_operation(op), *walk(op)]
               for operand in inner.operands for value in values)


def ancestors(op: ir.Operation) -> list[ir.Operation]:
    """The ops `op` is nested in, innermost first."""
    found = []
    while op.parent is not None:
        op = as_operation(op.parent)
        found.append(op)
    return found


def enclosing(op: ir.Operation, name: str) -> ir.Operation | None:
    """The innermost op named `name` that `op` is nested in (None outside any)."""
    return next((parent for parent in ancestors(op) if parent.name == name), None)


def scope(value: ir.Value) -> str:
    """The scope a memref value's memory space names: global, shared, fragment, local, var."""
    space = ir.MemRefType(value.type).memory_space
    if space is None:
        return "global"
    if isinstance(space, ir.StringAttr):
        return ir.StringAttr(space).value
    return str(space)


def is_memref(value: ir.Value) -> bool:
    return isinstance(value.type, ir.MemRefType)


def defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return as_operation(owner)


def block_arg_index(value: ir.Value, block: ir.Block) -> int | None:
    """The argument number of `value` in `block`, or None if it is not one of its arguments."""
    if not isinstance(value, ir.BlockArgument):
        return None
    return value.arg_number if value.owner == block else None


def constant_index(value: ir.Value) -> int | None:
    op = defining_op(value)
    if op is None or op.name != "arith.constant":
        return None
    attr = op.attributes["value"]
    return attr.value if isinstance(attr, ir.IntegerAttr) else None


def kernels(module: ir.Module) -> list[ir.Operation]:
    return [op for op in walk(module.operation) if op.name == "tile.kernel"]


def copy_parts(op: ir.Operation) -> tuple[ir.Value, list[ir.Value], list[int],
                                          ir.Value, list[ir.Value], list[int]]:
    """(src, src_offsets, src_shape, dst, dst_offsets, dst_shape) of a tile.copy."""
    operands = list(op.operands)
    src_rank = len(ir.DenseI64ArrayAttr(op.attributes["src_shape"]))
    src, src_offsets = operands[0], operands[1:1 + src_rank]
    dst, dst_offsets = operands[1 + src_rank], operands[2 + src_rank:]
    return (src, src_offsets, list(ir.DenseI64ArrayAttr(op.attributes["src_shape"])),
            dst, dst_offsets, list(ir.DenseI64ArrayAttr(op.attributes["dst_shape"])))


# a file:line location, or the one a named location wraps
LOCATION = re.compile(r'loc\((?:"[^"]*"\()?"([^"]*)":(\d+):\d+')


def op_error(op: ir.Operation, message: str) -> CompileError:
    """A CompileError at the op's source location (the user's file:line when it has one)."""
    found = LOCATION.search(str(op.location))
    if found is None:
        return CompileError(message)
    return CompileError(message, found.group(1), int(found.group(2)))
