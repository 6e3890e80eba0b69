"""Which sizes of an eager kernel's tensors are its `T.const` symbols, read from the AST.

Annotations in the body (`A: T.Tensor((M, K), T.float16)`) say it directly when the prologue
runs (see prologue); a kernel without them is read here: in
`T.copy(A[by * block_M, k * block_K], A_shared)`, `by` runs over `T.ceildiv(M, block_M)` and
`k` over `T.ceildiv(K, block_K)`, so A's shape is (M, K). Pure Python: no MLIR needed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from tilec.errors import TilecError

_LOOP_MARKERS = {"Pipelined", "serial", "unroll", "Parallel", "range"}


@dataclass
class EagerSignature:
    """What the AST says about an eager kernel's tensor parameters."""

    symbols: dict[str, int] = field(default_factory=dict)  # symbol -> line of its T.const
    dynamic: dict[str, str] = field(default_factory=dict)  # T.dynamic variable -> its name
    dims: dict[str, dict[int, str]] = field(default_factory=dict)  # tensor -> axis -> symbol
    dtype_hints: dict[str, ast.expr] = field(default_factory=dict)  # tensor -> dtype expression


def _callee_name(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _extents(call: ast.Call) -> list[ast.expr]:
    """The extent of each index a loop or kernel call binds."""
    name = _callee_name(call)
    if name in ("Parallel", "Kernel"):
        return list(call.args)
    if len(call.args) >= 2:
        return [call.args[1]]
    return list(call.args[:1])


def analyze_eager(tree: ast.FunctionDef, tensors: list[str]) -> EagerSignature:
    """Collect T.const symbols and bind tensor dimensions to them by indexing."""
    signature = EagerSignature()
    index_extents: dict[str, ast.expr] = {}
    allocations: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _callee_name(node.value) == "const":
            call = node.value
            if call.args and isinstance(call.args[0], ast.Constant):
                for name in re.split(r"[,\s]+", str(call.args[0].value)):
                    if name:
                        signature.symbols[name] = node.lineno
        if isinstance(node, ast.Assign) and _callee_name(node.value) in ("dynamic", "symbolic"):
            call = node.value
            declared = call.args[0].value if call.args and isinstance(
                call.args[0], ast.Constant) else None
            for target in node.targets:
                if isinstance(target, ast.Name):  # M = T.dynamic("M"): the Python name binds
                    signature.symbols[target.id] = node.lineno
                    signature.dynamic[target.id] = str(declared or target.id)
        if isinstance(node, ast.Assign) and _callee_name(node.value) in (
            "alloc_shared", "alloc_fragment", "alloc_local"
        ):
            call = node.value
            dtype = call.args[1] if len(call.args) > 1 else next(
                (k.value for k in call.keywords if k.arg == "dtype"), None)
            for target in node.targets:
                if isinstance(target, ast.Name) and dtype is not None:
                    allocations[target.id] = dtype
        if isinstance(node, ast.With):
            for item in node.items:
                if _callee_name(item.context_expr) == "Kernel":
                    _bind_indices(item.optional_vars, _extents(item.context_expr), index_extents)
        if isinstance(node, ast.For) and _callee_name(node.iter) in _LOOP_MARKERS:
            _bind_indices(node.target, _extents(node.iter), index_extents)
    index_symbols = {
        name: symbol for name, extent in index_extents.items()
        if (symbol := _symbol_of_extent(extent, signature.symbols)) is not None
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            if node.value.id in tensors:
                _bind_subscript(signature, node, index_symbols)
        if _callee_name(node) == "copy" and len(node.args) == 2:
            _hint_dtype(signature, node.args, tensors, allocations)
    return signature


def _bind_indices(target: ast.expr | None, extents: list[ast.expr],
                  index_extents: dict[str, ast.expr]) -> None:
    names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
    for name, extent in zip(names, extents, strict=False):
        if isinstance(name, ast.Name):
            index_extents[name.id] = extent


def _symbol_of_extent(extent: ast.expr, symbols: dict[str, int]) -> str | None:
    if isinstance(extent, ast.Name):
        return extent.id if extent.id in symbols else None
    if _callee_name(extent) == "ceildiv" and extent.args:
        return _symbol_of_extent(extent.args[0], symbols)
    if isinstance(extent, ast.BinOp) and isinstance(extent.op, (ast.FloorDiv, ast.Div)):
        return _symbol_of_extent(extent.left, symbols)
    return None


def _bind_subscript(signature: EagerSignature, node: ast.Subscript,
                    index_symbols: dict[str, str]) -> None:
    tensor = node.value.id
    elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    for axis, element in enumerate(elements):
        if isinstance(element, ast.Slice):
            if isinstance(element.upper, ast.Name) and element.upper.id in signature.symbols:
                signature.dims.setdefault(tensor, {}).setdefault(axis, element.upper.id)
                continue
            element = element.lower
            if element is None:
                continue
        found = {index_symbols[n.id] for n in ast.walk(element)
                 if isinstance(n, ast.Name) and n.id in index_symbols}
        if len(found) == 1:
            signature.dims.setdefault(tensor, {}).setdefault(axis, found.pop())


def _hint_dtype(signature: EagerSignature, operands: list[ast.expr], tensors: list[str],
                allocations: dict[str, ast.expr]) -> None:
    """A tensor copied to or from an allocation most likely has the allocation's dtype."""
    names = [(o.value if isinstance(o, ast.Subscript) else o) for o in operands]
    ids = [n.id if isinstance(n, ast.Name) else None for n in names]
    for mine, other in ((ids[0], ids[1]), (ids[1], ids[0])):
        if mine in tensors and other in allocations:
            signature.dtype_hints.setdefault(mine, allocations[other])


def bind_symbols(signature: EagerSignature, shapes: dict[str, tuple[int, ...]], filename: str,
                 ) -> dict[str, int]:
    """Symbol values from the arguments' shapes; disagreeing tensors are an error."""
    values: dict[str, int] = {}
    origin: dict[str, str] = {}
    for tensor, axes in signature.dims.items():
        shape = shapes.get(tensor)
        if shape is None:
            continue
        for axis, symbol in axes.items():
            if axis >= len(shape):
                continue
            size = shape[axis]
            if symbol in values and values[symbol] != size:
                raise TilecError(
                    f"size '{symbol}' is {values[symbol]} in {origin[symbol]} but {size} in "
                    f"dimension {axis} of '{tensor}'", filename, signature.symbols[symbol])
            values[symbol] = size
            origin[symbol] = f"'{tensor}'"
    return values
