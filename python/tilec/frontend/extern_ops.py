"""T.import_source, T.call_extern and T.access_ptr: device functions written in CUDA C/C++ and
called from a kernel (a mixin of the KernelBuilder).

`T.import_source(src)` adds the user's source to the kernel: the module attribute
`tile.extern_sources` keeps every distinct text. `T.call_extern(dtype, name, *args)` (or
`T.call_extern(name, *args, dtype=...)`, as TileLang forwards it) becomes an `llvm.call` of a
declared `llvm.func` whose `tile.extern` attribute names the C function, the dtype of each
argument (`*` for a pointer to it) and the result ("void" when the call is a statement, its
value unused). The CUDA target compiles the sources with a small C++ shim per declaration,
which calls the named function with typed arguments (so templates instantiate as TileLang's
generated CUDA would have them), and links the result with the kernel
(compiler/targets/cuda_extern.py). Arguments cross the C ABI as 32- or 64-bit words: 16-bit
floats and fp8 as their bits, narrow integers widened, pointers as generic addresses.

`T.access_ptr(buffer_or_element, access_type)` is the generic address of a per-thread buffer
(T.alloc_local / T.alloc_var) or of one of its elements, for call_extern. Only per-thread
buffers qualify: a shared buffer may be laid out by a swizzle, a fragment is spread over the
block's threads and a tensor lives in another address space, so C code reading them by plain
pointer arithmetic could read the wrong elements.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from mlir import ir
from mlir.dialects import arith, llvm, memref

import tilec.language as T
from tilec.compiler.passes._extern import EXTERN_ATTR, SOURCES_ATTR
from tilec.frontend.values import Buffer, Scalar, mlir_type

_POINTER_SCOPES = ("local", "var")
_ACCESS_TYPES = ("r", "w", "rw", 1, 2, 3)


@dataclass(frozen=True)
class Pointer:
    """What T.access_ptr evaluates to: a generic address (an i64 SSA value) of `dtype`s."""

    address: ir.Value
    dtype: T.DType

    def __repr__(self) -> str:
        return f"<a pointer to {self.dtype} (T.access_ptr)>"


class ExternOps:
    """t_* handlers of the extern-call intrinsics; mixed into KernelBuilder."""

    def extern_module(self) -> ir.Operation:
        """The builtin.module the kernel is built into (declarations and sources go there)."""
        op = ir.InsertionPoint.current.block.owner
        while op.name != "builtin.module":
            op = op.parent
        return op

    def t_import_source(self, nodes: dict, node: ast.Call) -> None:
        self.require_kernel(node, "T.import_source")
        source = self.arg(nodes, "source")
        if source is None:  # TileLang's import_source(None) adds nothing
            return
        if not isinstance(source, str):
            self.error(node, f"T.import_source takes CUDA C/C++ source text, got "
                             f"{type(source).__name__}")
        module = self.extern_module()
        known = ([ir.StringAttr(s).value for s in ir.ArrayAttr(module.attributes[SOURCES_ATTR])]
                 if SOURCES_ATTR in module.attributes else [])
        if source not in known:
            module.attributes[SOURCES_ATTR] = ir.ArrayAttr.get(
                [ir.StringAttr.get(s) for s in (*known, source)])

    def t_access_ptr(self, nodes: dict, node: ast.Call) -> Pointer:
        self.require_kernel(node, "T.access_ptr")
        access = self.arg(nodes, "access_type", "r")
        if access not in _ACCESS_TYPES:
            self.error(node, f"T.access_ptr: access_type is 'r', 'w' or 'rw' (or 1, 2, 3), "
                             f"got {access!r}")
        base = nodes["base"]
        if isinstance(base, ast.Subscript):
            buffer = self.eval(base.value)
            indices = self.element_indices(buffer, base) if isinstance(buffer, Buffer) else []
        else:
            buffer, indices = self.eval(base), []
        if not isinstance(buffer, Buffer):
            self.error(node, "T.access_ptr takes a buffer or one of its elements (buf[i])")
        if buffer.scope not in _POINTER_SCOPES:
            self.error(node, f"T.access_ptr of {buffer.scope} buffer '{buffer.name}': tilec "
                             "passes pointers to per-thread buffers only (T.alloc_local, "
                             "T.alloc_var); copy the elements into one first")
        if indices and len(indices) != buffer.rank:
            self.error(node, f"T.access_ptr: '{buffer.name}' has {buffer.rank} dimensions, "
                             f"the element names {len(indices)}")
        offset = self.arg(nodes, "offset", 0)
        element = self.linear_index(buffer, indices, node)
        element = self.binop("+", element, offset, node) if offset != 0 else element
        i64 = ir.IntegerType.get_signless(64)
        with self.at(node):
            base_address = arith.index_cast(
                i64, memref.ExtractAlignedPointerAsIndexOp(buffer.value).result)
            if element == 0:
                return Pointer(base_address, buffer.dtype)
            step = self.binop("*", element, buffer.dtype.bytes, node)
            step_value = self.materialize(step, T.int64, node).value
            return Pointer(arith.addi(base_address, step_value), buffer.dtype)

    def linear_index(self, buffer: Buffer, indices: list[Any], node: ast.AST) -> Any:
        """The row-major element number of `indices` in `buffer` (0 for none)."""
        total: Any = 0
        for index, extent in zip(indices, buffer.dims[:len(indices)], strict=True):
            total = self.binop("+", self.binop("*", total, extent, node), index, node)
        return total

    def t_call_extern(self, nodes: dict, node: ast.Call) -> Scalar | None:
        self.require_kernel(node, "T.call_extern")
        args = list(nodes.get("args", ()))
        if "dtype" in nodes:  # call_extern(name, *args, dtype=...), as TileLang forwards it
            dtype = self.eval(nodes["dtype"])
        elif args:
            dtype = self.eval(args.pop(0))
        else:
            dtype = None
        name = self.eval(args.pop(0)) if args else None
        if not isinstance(name, str) or not name.isidentifier():
            self.error(node, "T.call_extern(dtype, func_name, *args): func_name is the name of "
                             f"a device function (a C identifier), got {name!r}")
        used = getattr(node, "tilec_value_used", True)
        result = self.extern_result(dtype, used, node)
        values, kinds = [], []
        for arg_node in args:
            value, kind = self.extern_argument(self.eval(arg_node), arg_node)
            values.append(value)
            kinds.append(kind)
        callee = self.declare_extern(name, kinds, result, node)
        with self.at(node):
            result_types = [] if result == "void" else [self.extern_word(T.dtype(result))]
            call = llvm.CallOp(result_types[0] if result_types else None, values, [], [],
                               callee=ir.FlatSymbolRefAttr.get(callee))
        if result == "void":
            return None
        return self.from_extern_word(call.result, T.dtype(result), node)

    def extern_result(self, dtype: Any, used: bool, node: ast.AST) -> str:
        if not used:
            return "void"  # a statement: whatever the function returns is dropped, as in C
        if dtype is None or str(dtype) in ("handle", "void"):
            self.error(node, "the value of T.call_extern is used, so its dtype must be a "
                             "scalar dtype (T.call_extern(T.float32, 'f', ...))")
        try:
            return T.dtype(dtype).name
        except Exception as error:  # noqa: BLE001 - an unknown dtype's message
            self.error(node, f"T.call_extern: {error}")

    def extern_argument(self, value: Any, node: ast.AST) -> tuple[ir.Value, str]:
        """An argument as the C shim takes it, and its kind ("float16", "int8*", ...)."""
        if isinstance(value, Pointer):
            with self.at(node):
                return llvm.inttoptr(ir.Type.parse("!llvm.ptr"), value.address), \
                    f"{value.dtype.name}*"
        if isinstance(value, Buffer) and value.scope != "var":
            self.error(node, f"T.call_extern takes buffer '{value.name}' by address: pass "
                             f"T.access_ptr({value.name}, 'r')")
        value = self.rvalue(value, node)
        if isinstance(value, bool):
            value = self.materialize(value, T.bool, node)
        elif isinstance(value, int):
            value = self.materialize(value, T.int32, node)
        elif isinstance(value, float):
            value = self.materialize(value, T.float32, node)
        if not isinstance(value, Scalar):
            self.error(node, f"T.call_extern cannot pass {type(value).__name__} to C")
        if value.dtype == T.index:
            value = self.convert(value, T.int64, node, False)
        return self.to_extern_word(value, node), value.dtype.name

    def extern_word(self, dtype: T.DType) -> ir.Type:
        """The type a scalar of `dtype` crosses the C ABI as (see the module docstring)."""
        if dtype.is_float and dtype.bits >= 32:
            return mlir_type(dtype)
        return ir.IntegerType.get_signless(64 if dtype.bits == 64 else 32)

    def to_extern_word(self, value: Scalar, node: ast.AST) -> ir.Value:
        dtype, word = value.dtype, self.extern_word(value.dtype)
        with self.at(node):
            if dtype.is_float and dtype.bits >= 32:
                return value.value
            bits = value.value
            if dtype.is_float:  # 16-bit floats and fp8: their bits
                bits = arith.bitcast(ir.IntegerType.get_signless(dtype.bits), bits)
            if ir.IntegerType(bits.type).width == ir.IntegerType(word).width:
                return bits
            if dtype.is_unsigned or dtype.is_float:
                return arith.extui(word, bits)
            return arith.extsi(word, bits)

    def from_extern_word(self, word: ir.Value, dtype: T.DType, node: ast.AST) -> Scalar:
        with self.at(node):
            if dtype.is_float and dtype.bits >= 32:
                return Scalar(word, dtype)
            bits = word
            if dtype.bits < ir.IntegerType(word.type).width:
                bits = arith.trunci(ir.IntegerType.get_signless(dtype.bits), word)
            if dtype.is_float:
                bits = arith.bitcast(mlir_type(dtype), bits)
            elif dtype == T.bool:
                bits = arith.trunci(ir.IntegerType.get_signless(1), word)
            return Scalar(bits, dtype)

    def declare_extern(self, name: str, kinds: list[str], result: str, node: ast.AST) -> str:
        """The symbol of the `llvm.func` declaring the shim for this C function, signature and
        result (one per distinct triple)."""
        module = self.extern_module()
        signature = ir.DictAttr.get({
            "name": ir.StringAttr.get(name),
            "args": ir.ArrayAttr.get([ir.StringAttr.get(k) for k in kinds]),
            "result": ir.StringAttr.get(result),
        })
        count = 0
        for op in module.regions[0].blocks[0].operations:
            if EXTERN_ATTR in op.attributes:
                if op.attributes[EXTERN_ATTR] == signature:
                    return ir.StringAttr(op.attributes["sym_name"]).value
                count += 1
        symbol = f"tilec_extern_{count}_{name}"
        words = ["ptr" if k.endswith("*") else str(self.extern_word(T.dtype(k))) for k in kinds]
        result_type = "void" if result == "void" else str(self.extern_word(T.dtype(result)))
        function_type = ir.Type.parse(f"!llvm.func<{result_type} ({', '.join(words)})>")
        with self.at(node), ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
            declaration = llvm.LLVMFuncOp(symbol, ir.TypeAttr.get(function_type))
        declaration.attributes[EXTERN_ATTR] = signature
        return symbol
