"""Python AST -> tile IR (contract 1): one func.func, a tile.kernel per `with T.Kernel` block
(launched in order), every op located.

The builder walks the kernel's statements in order. Names bind to plain Python values (folded
at compile time), Scalars (SSA values, immutable) or Buffers. T.* calls become tile ops; element
reads and writes become memref.load/store; scalar math becomes arith/math.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import contextlib
import inspect
import math as pymath
import operator
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

from mlir import ir
from mlir.dialects import arith, builtin, cf, func, gpu, llvm, memref, scf, vector
from mlir.dialects import math as mmath

import tilec.dialect as tile
import tilec.language as T
from tilec.compiler.passes._scalar import float_to_integer
from tilec.errors import TilecError
from tilec.frontend.allreduce_ops import AllReduceOps, AttrSpec, CommReducer
from tilec.frontend.barrier_ops import BarrierOps, WarpgroupSpec
from tilec.frontend.extern_ops import ExternOps
from tilec.frontend.iket_ops import IketOps, IketRange
from tilec.frontend.layouts import annotate as annotate_layout
from tilec.frontend.layouts import output_shape
from tilec.frontend.mma_emitter_ops import MmaEmitterOps
from tilec.frontend.print_ops import PrintOps
from tilec.frontend.prologue import EagerTensor, Prologue, Workspace
from tilec.frontend.random_ops import RandomOps, inside_parallel
from tilec.frontend.source import KernelSource, parse_kernel
from tilec.frontend.thread_ops import ThreadOps
from tilec.frontend.values import (
    Affine,
    Buffer,
    ElementRef,
    KernelSpec,
    LoopSpec,
    Method,
    Placement,
    Region,
    RuntimeExtent,
    Scalar,
    aliased,
    is_alias,
    mlir_type,
    reinterpreted,
    row_major_map,
    storage_type,
)
from tilec.runtime.artifact import Param

PyNumber = (int, float)  # bool is an int
# TileLang's buffer scopes -> tilec's
_ALLOC_SCOPES = {"shared": "shared", "shared.dyn": "shared", "local.fragment": "fragment",
                 "local": "local"}
_LOC_RE = re.compile(r'loc\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)\)')

_UNSUPPORTED_EXPRS = {
    ast.Lambda: "lambda", ast.ListComp: "list comprehension", ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension", ast.GeneratorExp: "generator expression",
    ast.Await: "await", ast.Yield: "yield", ast.YieldFrom: "yield from",
    ast.NamedExpr: "assignment expression (:=)", ast.Starred: "starred expression",
    ast.Dict: "dict display", ast.Set: "set display",
}
_UNSUPPORTED_STMTS = {
    ast.Try: "try", ast.Raise: "raise", ast.FunctionDef: "nested def", ast.ClassDef: "class",
    ast.Import: "import", ast.ImportFrom: "import", ast.Global: "global",
    ast.Nonlocal: "nonlocal", ast.Delete: "del",
    ast.AsyncFor: "async for", ast.AsyncWith: "async with", ast.AsyncFunctionDef: "async def",
    ast.Match: "match",
}
_BINOPS: dict[type, str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
    ast.RShift: ">>",
}


def _truncated_division(a: Any, b: Any) -> Any:
    """C's a / b of Python numbers: the quotient rounded toward zero."""
    if isinstance(a, int) and isinstance(b, int):
        quotient = abs(a) // abs(b)
        return quotient if (a < 0) == (b < 0) else -quotient
    return float(pymath.trunc(a / b))


_PY_BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
    "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
    "truncdiv": _truncated_division,
    "truncmod": lambda a, b: a - b * _truncated_division(a, b),
}
_DIVISIONS = ("/", "//", "%", "truncdiv", "truncmod")  # integer ones guard their divisor
# the operators that mean on two bools what they mean on Python's and torch's (and, or, xor);
# the others wrap at one bit (True + True is False where torch and Python count to 2)
_BOOL_OPERATORS = ("*", "&", "|", "^")
_BOOL_ADVICE = ("T.cast the bools to an integer dtype to count them, or write a or b, "
                "a and b, a ^ b for logic")
# T.reduce_* of unsigned integers: compared as unsigned; abs of an unsigned value is itself
_UNSIGNED_REDUCTIONS = {"max": "umax", "min": "umin", "absmax": "umax", "abssum": "sum"}
_CMPOPS: dict[type, str] = {
    ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne",
}
_PY_CMPOPS: dict[str, Callable[[Any, Any], bool]] = {
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
    "eq": operator.eq, "ne": operator.ne,
}
_MATH_OPS: dict[str, tuple[Callable[..., Any], Callable[[float], float]]] = {
    "exp": (mmath.exp, pymath.exp), "exp2": (mmath.exp2, lambda x: 2.0**x),
    "log": (mmath.log, pymath.log), "log2": (mmath.log2, pymath.log2),
    "sqrt": (mmath.sqrt, pymath.sqrt), "rsqrt": (mmath.rsqrt, lambda x: 1.0 / pymath.sqrt(x)),
    "tanh": (mmath.tanh, pymath.tanh), "floor": (mmath.floor, pymath.floor),
    "ceil": (mmath.ceil, pymath.ceil), "sin": (mmath.sin, pymath.sin),
    "cos": (mmath.cos, pymath.cos), "erf": (mmath.erf, pymath.erf),
}

# modules of layout makers that read a buffer's shape and dtype (they take kernel buffers)
_LAYOUT_MAKER_MODULES = frozenset({"tilec.layout", "tilec.cuda.intrinsics.layout.mma_layout"})


@dataclass
class FrontendResult:
    """The tile IR of one kernel plus what the runtime must know to call it."""

    module: ir.Module
    name: str
    params: list[Param]
    launch: dict  # grid and threads; {"kernels": [...]}, one per T.Kernel block, for several
    context: ir.Context


@dataclass
class BufferData:
    """`A.data`: the memory of tensor parameter `A`, which `T.Tensor(shape, dtype, A.data)`
    views with another shape."""

    buffer: Buffer


def _is_py_value(value: Any) -> bool:
    return not isinstance(value, (Scalar, Buffer, Region, T.Symbol, ElementRef, BufferData))


def _is_variable(value: Any) -> bool:
    """A T.alloc_var variable or a T.Ref'd element: a name for a value stored in memory."""
    return isinstance(value, ElementRef) or (isinstance(value, Buffer) and value.scope == "var")


def _is_user_function(value: Any) -> bool:
    """A Python function of the program (not tilec's own), whose body the kernel can build."""
    return inspect.isfunction(value) and not (value.__module__ or "").startswith("tilec")


class _LayoutIndex:
    """A kernel index as a T.Layout's Python function computes with it: its arithmetic builds
    index IR through the builder."""

    def __init__(self, builder: KernelBuilder, value: Any, node: ast.AST | None):
        self.builder, self.value, self.node = builder, value, node

    def _apply(self, op: str, other: Any, reflected: bool) -> _LayoutIndex:
        other = other.value if isinstance(other, _LayoutIndex) else other
        if not isinstance(other, (int, Scalar)) or isinstance(other, bool):
            raise TypeError(f"a layout function computes with ints, got {other!r}")
        a, b = (other, self.value) if reflected else (self.value, other)
        return _LayoutIndex(self.builder, self.builder.binop(op, a, b, self.node), self.node)

    def __bool__(self) -> bool:
        raise TypeError("a layout function cannot branch on a kernel index")


for _op, _name in (("+", "add"), ("-", "sub"), ("*", "mul"), ("//", "floordiv"),
                   ("%", "mod"), ("&", "and"), ("|", "or"), ("^", "xor"), ("<<", "lshift"),
                   (">>", "rshift")):
    setattr(_LayoutIndex, f"__{_name}__",
            lambda self, other, op=_op: self._apply(op, other, False))
    setattr(_LayoutIndex, f"__r{_name}__",
            lambda self, other, op=_op: self._apply(op, other, True))


class _Returned(Exception):  # noqa: N818 (control flow, not an error)
    """A helper's `return`: leaves its inlined body with the value."""

    def __init__(self, value: Any):
        super().__init__()
        self.value = value


_MAX_INLINE_DEPTH = 64
_MAX_BUFFER_BYTES = 2**63 - 1  # the largest byte offset of 64-bit index arithmetic
_MEMORY_ORDERS = ("relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst")


class KernelBuilder(ThreadOps, BarrierOps, RandomOps, ExternOps, AllReduceOps, PrintOps,
                    MmaEmitterOps, IketOps):
    """Builds the tile IR of one kernel from its parsed source."""

    def __init__(self, source: KernelSource, name: str):
        self.source = source
        self.name = name
        self.context = tile.new_context()
        self.outer = source.outer_names()
        self.scopes: list[dict[str, Any]] = [{}]
        self.in_kernel = False
        self.params: list[Param] = []
        self.launches: list[dict[str, Any]] = []  # one per `with T.Kernel`, in launch order
        self.symbols: dict[str, Scalar] = {}
        self.symbol_values: dict[str, int] = {}
        self.outputs: list[Buffer] = []
        self.returned: list[str] | None = None
        self.eager = False
        self.kernel_op: tile.KernelOp | None = None
        self.macro_depth = 0  # > 0 while a T.macro's or a helper's body is inlined
        self.helper_sources: dict[Callable, KernelSource] = {}
        self.eager_inputs: list[EagerTensor] = []
        self.loop_exits: list[LoopExits | None] = []  # per enclosing loop, innermost last
        self.thread_affines: dict[int, Affine] = {}  # one index variable per thread axis
        # the var each T.alloc_var stands for while no store can have changed it: a statement's
        # readings of one var are one value (reset at every statement and store)
        self.var_readings: dict[int, Affine] = {}
        self.placed_tensors: list[Buffer] = []  # tensors a T.Layout places in this T.Kernel
        # T.Parallel loops run over a fragment view's source: (view, its point, the source's)
        self.view_points: list[tuple[Buffer, list[Any], list[Scalar]]] = []
        self.rng_state: Buffer | None = None  # this T.Kernel's T.rng_init state
        self.reducers: list[CommReducer] = []  # the enclosing T.attr reduce scopes'
        self.reducers_allocated: set[int] = set()  # ids of the T.alloc_reducer buffers
        # this T.Kernel's MMA emitter operands: {local buffer name: (emitter, role)}
        self.emitter_operands: dict[str, tuple[Any, str]] = {}
        self.iket_events: dict[tuple[str, str], Any] = {}  # this module's IKET events
        self.iket_open_ranges: list[tuple[str, ast.AST]] = []  # pushed, not yet popped

    # ------------------------------------------------------------------ errors and locations

    def error(self, node: ast.AST | None, message: str) -> NoReturn:
        line = getattr(node, "lineno", None) or self.source.def_line
        raise TilecError(message, self.source.filename, line)

    def location(self, node: ast.AST) -> ir.Location:
        col = getattr(node, "col_offset", 0) + 1 + self.source.col_shift
        return ir.Location.file(self.source.filename, node.lineno, col, context=self.context)

    @contextlib.contextmanager
    def at(self, node: ast.AST) -> Iterator[None]:
        with self.location(node):
            yield

    # ------------------------------------------------------------------ the function

    def build_function(self, arg_types: list[ir.Type]) -> tuple[ir.Module, func.FuncOp, ir.Block]:
        with self.context, self.location(self.source.tree):
            module = ir.Module.create()
            with ir.InsertionPoint(module.body):
                fn = func.FuncOp(self.name, (arg_types, []))
                fn.attributes["tile.entry"] = ir.UnitAttr.get()
                block = fn.add_entry_block()
        return module, fn, block

    def finish(self, module: ir.Module, fn: func.FuncOp, block: ir.Block) -> FrontendResult:
        tree = self.source.tree
        if not self.launches:
            self.error(tree, f"kernel '{self.name}' has no `with T.Kernel(...)` block")
        for number, param in enumerate(self.params):
            if not param.name:  # a T.alloc_global no name was bound to
                param.name = f"workspace{number}"
        with self.context, self.location(tree), ir.InsertionPoint(block):
            func.ReturnOp([])
            arg_types = [arg.type for arg in block.arguments]
            fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(arg_types, []))
        try:
            module.operation.verify()
        except ir.MLIRError as error:
            self._raise_diagnostic(error)
        launch = self.launches[0] if len(self.launches) == 1 else {"kernels": self.launches}
        return FrontendResult(module, self.name, self.params, launch, self.context)

    def _raise_diagnostic(self, error: ir.MLIRError) -> NoReturn:
        diagnostic = error.error_diagnostics[0] if error.error_diagnostics else None
        if diagnostic is None:
            raise TilecError(f"invalid kernel: {error}", self.source.filename, self.source.def_line)
        found = _LOC_RE.search(str(diagnostic.location))
        filename = found["file"] if found else self.source.filename  # a macro's own file
        line = int(found["line"]) if found else self.source.def_line
        message = diagnostic.message
        for note in diagnostic.notes:
            if not note.message.startswith("see current operation"):  # an IR dump: noise here
                message += f" ({note.message})"
        raise TilecError(message, filename, line) from None

    def check_addressable(self, what: str, dims: tuple[Any, ...] | list[Any], dtype: T.DType,
                          node: ast.AST | None) -> None:
        """A buffer's static sizes must fit the 64-bit byte offsets its code computes: MLIR's
        layout and size arithmetic asserts (aborting the process) past them."""
        if dtype.is_pair:
            self.error(node, f"{what} cannot hold T.{dtype.name} values (they are scalars): "
                             f"keep their bits in a T.uint32 buffer and T.reinterpret them")
        static = [d for d in dims if isinstance(d, int)]
        size = pymath.prod(static) * dtype.bytes
        if size > _MAX_BUFFER_BYTES:
            self.error(node, f"{what} of shape {tuple(dims)} and dtype {dtype.name} spans "
                             f"{size} bytes, more than 64-bit offsets reach (2**63 - 1)")

    def add_tensor_param(self, block: ir.Block, name: str, dims: tuple[Any, ...], dtype: T.DType,
                         is_output: bool, value: ir.Value | None = None,
                         workspace: bool = False, node: ast.AST | None = None) -> Buffer:
        """A tensor parameter: the function's argument `value`, or a new one appended."""
        self.check_addressable(f"tensor '{name}'" if name else "a tensor", dims, dtype, node)
        if dtype.is_sub_byte:
            per_byte = 8 // dtype.bits
            if not isinstance(dims[-1], int) or dims[-1] % per_byte:
                self.error(node, f"tensor '{name}' of T.{dtype.name} packs {per_byte} elements "
                                 f"to a byte along its last dimension, whose size must be a "
                                 f"compile-time multiple of {per_byte}; its shape is "
                                 f"{tuple(dims)}")
        if value is None:
            value = block.add_argument(tensor_type(dims, dtype), self.location(self.source.tree))
        param_shape = [d if isinstance(d, int) else d.name for d in dims]
        self.params.append(Param(name, "tensor", dtype.name, param_shape, is_output or workspace,
                                 workspace))
        return self._tensor_buffer(value, name, dims, dtype)

    def _tensor_buffer(self, value: ir.Value, name: str, dims: tuple[Any, ...],
                       dtype: T.DType) -> Buffer:
        """A global buffer; dynamic dims get a memref.dim, shared by all uses of the symbol."""
        sizes: list[Any] = []
        for axis, dim in enumerate(dims):
            if isinstance(dim, int):
                sizes.append(dim)
                continue
            if dim.name not in self.symbols:
                index = arith.constant(ir.IndexType.get(), axis)
                size = memref.dim(value, index)
                self.symbols[dim.name] = Scalar(size, T.index, expr=dim.name)
            sizes.append(self.symbols[dim.name])
        return Buffer(value, name, tuple(sizes), dtype, "global")

    # ------------------------------------------------------------------ names

    def lookup(self, name: str, node: ast.AST) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.outer:
            return self.outer[name]
        self.error(node, f"name '{name}' is not defined")

    def bind(self, name: str, value: Any, node: ast.AST) -> None:
        """Bind a name; rebinding one from an enclosing loop or branch would need a mutable var."""
        for depth in range(len(self.scopes) - 1, -1, -1):
            scope = self.scopes[depth]
            if name not in scope:
                continue
            existing = scope[name]
            if isinstance(existing, Buffer) and existing.scope == "var" and not isinstance(
                value, Buffer
            ):
                self.store(existing, [0], value, node)
                return
            if isinstance(existing, ElementRef):  # a T.Ref parameter: the caller's element
                self.store(existing.buffer, existing.indices, value, node)
                return
            if depth != len(self.scopes) - 1 and not isinstance(value, Buffer):
                self.error(
                    node,
                    f"'{name}' is defined outside this loop or branch and cannot be reassigned "
                    f"here (scalars are immutable); declare it with `{name} = "
                    "T.alloc_var(dtype)` to make it mutable",
                )
            break
        if isinstance(value, Buffer) and value.name == "":
            value.name = name
            if value.scope == "global" and isinstance(value.value, ir.BlockArgument):
                # a T.empty output: its parameter takes the name
                self.params[self._param_index(value)].name = name
        self.scopes[-1][name] = value

    def _param_index(self, buffer: Buffer) -> int:
        return ir.BlockArgument(buffer.value).arg_number

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        self.scopes.append({})
        try:
            yield
        finally:
            self.scopes.pop()

    # ------------------------------------------------------------------ statements

    def body(self, statements: list[ast.stmt]) -> None:
        exits = self.loop_exits[-1] if self.loop_exits else None
        for position, statement in enumerate(statements):
            self.statement(statement)
            rest = statements[position + 1:]
            if exits is not None and rest and _may_leave(statement):
                # what follows a break / continue runs only while the loop still goes on
                with self.at(rest[0]):
                    branch = scf.IfOp(exits.going_on(self, rest[0]).value)
                    with ir.InsertionPoint(branch.then_block):
                        self.body(rest)
                        scf.YieldOp([])
                return

    @contextlib.contextmanager
    def loop_context(self, node: ast.For | ast.While, exits_allowed: bool) -> Iterator[
            LoopExits | None]:
        """Enter a loop's body: with break / continue in it, the flags they set."""
        leaves = _leaving_statements(node.body)
        exits = None
        if leaves:
            if not exits_allowed:
                self.error(leaves[0], f"{_leave_word(leaves[0])} is only allowed in T.serial, "
                                      "T.unroll, range and while loops")
            exits = LoopExits(
                broke=self.new_flag(node) if any(isinstance(s, ast.Break) for s in leaves)
                else None,
                skipped=self.new_flag(node) if any(isinstance(s, ast.Continue) for s in leaves)
                else None)
        self.loop_exits.append(exits)
        try:
            yield exits
        finally:
            self.loop_exits.pop()

    def new_flag(self, node: ast.AST) -> Buffer:
        """A var holding 0, set to 1 by break / continue (int8: memrefs of i1 do not lower to
        LLVM)."""
        flag = self.allocate("var", [1], T.int8, node)
        self.store(flag, [0], 0, node)
        return flag

    def stmt_Break(self, node: ast.Break) -> None:  # noqa: N802
        self.leave(node, "broke")

    def stmt_Continue(self, node: ast.Continue) -> None:  # noqa: N802
        self.leave(node, "skipped")

    def leave(self, node: ast.stmt, flag: str) -> None:
        exits = self.loop_exits[-1] if self.loop_exits else None
        if exits is None or getattr(exits, flag) is None:
            self.error(node, f"{_leave_word(node)} outside a loop of the kernel")
        self.store(getattr(exits, flag), [0], 1, node)

    def handler_for(self, node: ast.AST, prefix: str, unsupported: dict, what: str) -> Callable:
        """The method `{prefix}_{node type}` that translates `node`, else an error naming it."""
        for kind, construct in unsupported.items():
            if isinstance(node, kind):
                self.error(node, f"unsupported Python construct in a tilec kernel: {construct}")
        handler = getattr(self, f"{prefix}_{type(node).__name__}", None)
        if handler is None:
            self.error(node, f"unsupported {what} in a tilec kernel: {type(node).__name__}")
        return handler

    def statement(self, node: ast.stmt) -> None:
        handler = self.handler_for(node, "stmt", _UNSUPPORTED_STMTS, "statement")
        self.var_readings.clear()
        with self.at(node):
            try:
                handler(node)
            except (TilecError, _Returned):
                raise
            except Exception as error:  # a frontend bug: still point at the user's line
                self.error(node, f"internal error of the tilec frontend ({type(error).__name__}: "
                                 f"{error}); please report it with this kernel")

    def stmt_Pass(self, node: ast.Pass) -> None:  # noqa: N802
        return

    def stmt_Expr(self, node: ast.Expr) -> None:  # noqa: N802
        if isinstance(node.value, ast.Constant):  # a docstring
            return
        if not isinstance(node.value, ast.Call):
            self.error(node, "this expression statement has no effect in a kernel")
        node.value.tilec_value_used = False  # T.call_extern drops the C function's result
        self.eval(node.value)

    def stmt_Assert(self, node: ast.Assert) -> None:  # noqa: N802
        test = self.rvalue(self.eval(node.test), node.test)
        if not _is_py_value(test):
            self.error(node, "assert needs a condition known at compile time")
        if not test:
            message = self.eval(node.msg) if node.msg is not None else "assertion failed"
            self.error(node, str(message))

    def stmt_Assign(self, node: ast.Assign) -> None:  # noqa: N802
        target = node.targets[0]
        if len(node.targets) == 1 and isinstance(target, ast.Name) and self.in_kernel:
            operand = self.emitter_allocation(target.id, node.value, node)
            if operand is not None:
                self.assign(target, operand, node)
                return
        value = self.eval(node.value)
        for target in node.targets:
            self.assign(target, value, node)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:  # noqa: N802
        annotation = self.eval(node.annotation)
        if node.value is None:
            self.annotate(node, annotation)
            return
        value = self.eval(node.value)
        if isinstance(annotation, (T.DType, str)):
            value = self.cast(value, T.dtype(annotation), node)
        self.assign(node.target, value, node)

    def annotate(self, node: ast.AnnAssign, annotation: Any) -> None:
        """`A: T.Tensor((M, K), dtype)` in an eager kernel: check the argument against it."""
        if not isinstance(node.target, ast.Name) or not isinstance(annotation, T.Tensor):
            self.error(node, "only tensor parameters can be annotated without a value, as "
                             "`A: T.Tensor((M, K), T.float16)`")
        buffer = self.lookup(node.target.id, node.target)
        if not isinstance(buffer, Buffer) or buffer.scope != "global":
            self.error(node, f"'{node.target.id}' is not a tensor parameter of the kernel")
        expected = tuple(self._dim_value(d, node) for d in annotation.shape)
        actual = tuple(d if isinstance(d, int) else d.expr for d in buffer.dims)
        if len(expected) != len(actual) or any(
            e != a for e, a in zip(expected, actual, strict=False) if isinstance(e, int)
            or isinstance(a, str)
        ):
            self.error(node, f"tensor '{buffer.name}' has shape {actual}, but its annotation "
                             f"says {expected}")
        if not annotation.dtype.interchangeable(buffer.dtype):
            self.error(node, f"tensor '{buffer.name}' has dtype {buffer.dtype}, but its "
                             f"annotation says {annotation.dtype}")

    def _dim_value(self, dim: Any, node: ast.AST) -> Any:
        """An annotation's size: an int, or a dynamic symbol's name."""
        if isinstance(dim, T.Symbol):
            return dim.name if dim.name in self.symbols else self.symbol_values.get(dim.name,
                                                                                   dim.name)
        return dim

    def assign(self, target: ast.expr, value: Any, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(element, ast.Starred) for element in target.elts):
                self.error(node, "starred assignment (a, *rest = ...) is not supported in a "
                                 "kernel: name each value")
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                what = (f"{len(value)} values" if isinstance(value, (tuple, list))
                        else "a single value")
                self.error(node, f"cannot unpack {what} into {len(target.elts)} names")
            for element, item in zip(target.elts, value, strict=True):
                self.assign(element, item, node)
        elif isinstance(target, ast.Subscript):
            buffer = self.eval(target.value)
            if not isinstance(buffer, Buffer):
                self.error(target, "only buffer elements can be assigned with `x[i] = ...`")
            self.store(buffer, self.element_indices(buffer, target), value, node)
        else:
            self.error(node, f"cannot assign to {type(target).__name__} in a kernel")

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:  # noqa: N802
        op = _BINOPS[type(node.op)]
        target = node.target
        if isinstance(target, ast.Subscript):
            buffer = self.eval(target.value)
            if not isinstance(buffer, Buffer):
                self.error(target, "only buffer elements can be updated with `x[i] += ...`")
            indices = self.element_indices(buffer, target)
            if id(buffer) in self.reducers_allocated:
                self.reducer_update(buffer, indices, op, node)
                return
            current = self.load(buffer, indices, node)
            self.store(buffer, indices, self.binop(op, current, self.eval(node.value), node), node)
        elif isinstance(target, ast.Name):
            current = self.lookup(target.id, target)
            result = self.binop(op, current, self.eval(node.value), node)
            self.bind(target.id, result, target)
        else:
            self.error(node, f"cannot update {type(target).__name__} in a kernel")

    def stmt_Return(self, node: ast.Return) -> None:  # noqa: N802
        if self.macro_depth:
            if len(self.scopes) != 1:
                self.error(node, "a helper returns outside the kernel loops and data-dependent "
                                 "branches it builds (choose the value with T.if_then_else, or "
                                 "store it into a T.alloc_var)")
            raise _Returned(self.eval(node.value) if node.value is not None else None)
        if not self.eager or len(self.scopes) != 1:
            self.error(node, "return is only allowed at the end of a @tilec.jit kernel, "
                             "to return its T.empty outputs")
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        names: list[str] = []
        for value in values:
            result = self.eval(value) if value is not None else None
            if not isinstance(result, Buffer) or result not in self.outputs:
                self.error(node, "a kernel returns the tensors it created with T.empty")
            names.append(result.name)
        self.returned = names

    def stmt_If(self, node: ast.If) -> None:  # noqa: N802
        branches = self.warpgroup_branches(node)
        if branches is not None:  # `if tx < 128: ... elif tx >= 128: ...`
            self.warpgroup_chain(branches)
            return
        test = self.rvalue(self.eval(node.test), node.test)
        if _is_py_value(test):  # folded at compile time
            self.body(node.body if test else node.orelse)
            return
        self.require_kernel(node, "a data-dependent if")
        condition = self.to_bool(test, node)
        if_op = scf.IfOp(condition.value, [], has_else=bool(node.orelse))
        with ir.InsertionPoint(if_op.then_block), self.scope():
            self.body(node.body)
            scf.YieldOp([])
        if node.orelse:
            with ir.InsertionPoint(if_op.else_block), self.scope():
                self.body(node.orelse)
                scf.YieldOp([])

    def stmt_While(self, node: ast.While) -> None:  # noqa: N802
        self.require_kernel(node, "while")
        if node.orelse:
            self.error(node, "while ... else is not supported in a kernel")
        with self.loop_context(node, exits_allowed=True) as exits:
            while_op = scf.WhileOp([], [])
            before = while_op.before.blocks.append()
            with ir.InsertionPoint(before):
                test = self.rvalue(self.eval(node.test), node.test)
                if _is_py_value(test) and (exits is None or exits.broke is None):
                    self.error(node, "a while loop needs a condition computed at run time "
                                     "(from a T.alloc_var or a buffer); a constant one never "
                                     "ends or never runs")
                condition = self.to_bool(test, node)
                if exits is not None and exits.broke is not None:
                    condition = self.binop("&", condition, exits.not_broken(self, node), node)
                scf.ConditionOp(condition.value, [])
            after = while_op.after.blocks.append()
            with ir.InsertionPoint(after), self.scope():
                self.loop_body(node, exits)
                scf.YieldOp([])

    def stmt_For(self, node: ast.For) -> None:  # noqa: N802
        if node.orelse:
            self.error(node, "for ... else is not supported in a kernel")
        spec = self.eval(node.iter)
        if not isinstance(spec, LoopSpec):
            self.error(node.iter, "a kernel's for loop iterates over range(...), T.serial, "
                                  "T.unroll, T.Pipelined or T.Parallel")
        self.require_kernel(node, f"a {spec.kind} loop")
        if spec.kind == "parallel":
            self.parallel_loop(node, spec)
            return
        if spec.kind == "persistent":
            self.persistent_loop(node, spec)
            return
        if not isinstance(node.target, ast.Name):
            self.error(node.target, "a sequential loop binds a single index name")
        lower, upper, step = self.loop_bounds(spec, node)
        with self.loop_context(node, exits_allowed=spec.kind != "pipelined") as exits:
            if spec.kind == "pipelined":
                op = tile.PipelinedOp(lower, upper, step, **self.pipeline_options(spec, node))
            else:
                unrolled = spec.kind in ("unroll", "vectorized")
                op = tile.ForOp(lower, upper, step, unroll=unrolled or None)
            block = op.body.blocks.append(ir.IndexType.get(),
                                          arg_locs=[self.location(node.target)])
            index = Scalar(block.arguments[0], T.index, affine=Affine.variable())
            with ir.InsertionPoint(block), self.scope():
                self.scopes[-1][node.target.id] = index
                self.loop_body(node, exits)
                tile.yield_()
        if spec.kind == "pipelined":
            self.serial_if_user_synchronized(op)

    def persistent_loop(self, node: ast.For, spec: LoopSpec) -> None:
        """T.Persistent as TileLang builds it: the domain's last dimension split into groups
        (the last index runs fastest inside a group, the groups slowest), padded to whole
        groups; wave w visits padded tile w * wave_size + index, skipped past the domain."""
        sizes, wave, block, group = spec.args
        targets = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
        if len(targets) != len(sizes) or not all(isinstance(t, ast.Name) for t in targets):
            self.error(node.target, f"T.Persistent over {len(sizes)} dimensions binds "
                                    f"{len(sizes)} names")
        group = max(1, min(group, sizes[-1]))
        grouped = [-(-sizes[-1] // group), *sizes[:-1], group]
        waves = -(-pymath.prod(grouped) // wave)
        with self.loop_context(node, exits_allowed=True) as exits:
            op = tile.ForOp(self.index_value(0, node), self.index_value(waves, node),
                            self.index_value(1, node))
            block_ = op.body.blocks.append(ir.IndexType.get(), arg_locs=[self.location(node)])
            with ir.InsertionPoint(block_), self.scope():
                w = Scalar(block_.arguments[0], T.index, affine=Affine.variable())
                rest = self.binop("+", self.binop("*", w, wave, node), block, node)
                digits: list[Any] = [None] * len(grouped)
                for position in range(len(grouped) - 1, 0, -1):
                    digits[position] = self.binop("%", rest, grouped[position], node)
                    rest = self.binop("//", rest, grouped[position], node)
                digits[0] = rest
                last = self.binop("+", self.binop("*", digits[0], group, node), digits[-1],
                                  node)
                inside = self.to_bool(self.compare("lt", last, sizes[-1], node), node)
                branch = scf.IfOp(inside.value)
                with ir.InsertionPoint(branch.then_block):
                    for target, value in zip(targets, [*digits[1:-1], last], strict=True):
                        self.scopes[-1][target.id] = value
                    self.loop_body(node, exits)
                    scf.YieldOp([])
                tile.yield_()

    def loop_body(self, node: ast.For | ast.While, exits: LoopExits | None) -> None:
        """A loop's statements; after a break the remaining iterations do nothing."""
        if exits is None:
            self.body(node.body)
            return
        if exits.skipped is not None:
            self.store(exits.skipped, [0], False, node)
        if exits.broke is None:
            self.body(node.body)
            return
        branch = scf.IfOp(exits.not_broken(self, node).value)
        with ir.InsertionPoint(branch.then_block):
            self.body(node.body)
            scf.YieldOp([])

    def loop_bounds(self, spec: LoopSpec, node: ast.For) -> tuple[ir.Value, ir.Value, ir.Value]:
        args = spec.args
        if not 1 <= len(args) <= 3:
            self.error(node.iter, f"a loop takes 1 to 3 bounds (stop | start, stop | start, "
                                  f"stop, step), got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        known = _constant_index(self.rvalue(step, node.iter))
        if known is not None and known <= 0:
            self.error(node.iter, f"loop step must be positive, got {known}")
        lower, upper, stride = (self.index_value(value, node.iter) for value in (start, stop,
                                                                                   step))
        if known is None:  # a run-time step below 1 runs no iteration (the loop would not end)
            positive = arith.cmpi(arith.CmpIPredicate.sgt, stride,
                                  arith.constant(ir.IndexType.get(), 0))
            upper = arith.select(positive, upper, lower)
            stride = arith.select(positive, stride, arith.constant(ir.IndexType.get(), 1))
        return lower, upper, stride

    def pipeline_options(self, spec: LoopSpec, node: ast.For) -> dict[str, Any]:
        options = spec.options
        num_stages = options.get("num_stages", 0)
        if not isinstance(num_stages, int):
            self.error(node.iter, "num_stages must be an int known at compile time")
        result: dict[str, Any] = {"num_stages": num_stages}
        for key in ("order", "stage"):
            if options.get(key) is not None:
                values = options[key]
                if not all(isinstance(v, int) for v in values):
                    self.error(node.iter, f"{key} must be a list of ints")
                result[key] = list(values)
        if options.get("group") is not None:
            groups = options["group"]
            if not all(isinstance(g, (list, tuple)) and all(isinstance(v, int) for v in g)
                       for g in groups):
                self.error(node.iter, "group must be a list of lists of ints")
            groups = [ir.DenseI64ArrayAttr.get(list(group)) for group in groups]
            result["group"] = ir.ArrayAttr.get(groups)
        return result

    def parallel_loop(self, node: ast.For, spec: LoopSpec) -> None:
        node, spec = self.fused_parallel(node, spec)
        extents = spec.args
        for extent in extents:
            if not isinstance(extent, int) or extent <= 0:
                self.error(node.iter, f"T.Parallel extents must be positive ints known at compile "
                                      f"time, got {extent!r}")
        names = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
        if len(names) != len(extents) or not all(isinstance(n, ast.Name) for n in names):
            self.error(node.target, f"T.Parallel over {len(extents)} extents binds "
                                    f"{len(extents)} index names")
        leaves = _leaving_statements(node.body)
        if leaves:
            self.error(leaves[0], f"{_leave_word(leaves[0])} is not allowed in T.Parallel (its "
                                  "points are independent)")
        starts = spec.options.get("starts", [0] * len(names))
        view = None if any(starts) else self.parallel_view(node, names, extents)
        if view is not None:
            self.parallel_over_source(node, names, view)
            return
        op = tile.ParallelOp(list(extents))
        locs = [self.location(n) for n in names]
        block = op.body.blocks.append(*[ir.IndexType.get()] * len(names), arg_locs=locs)
        with ir.InsertionPoint(block), self.scope():
            for name, arg, start in zip(names, block.arguments, starts, strict=True):
                index = Scalar(arg, T.index, affine=Affine.variable())
                self.scopes[-1][name.id] = self.binop("+", index, start, name) if start else index
            self.body(node.body)
            tile.yield_()

    def parallel_view(self, node: ast.For, names: list[ast.Name],
                      extents: list[int]) -> Buffer | None:
        """A fragment view that the loop indexes with exactly its index names, in order, over
        the view's whole shape (`s_reshaped[n, q, h]` in T.Parallel(N, Q, H))."""
        wanted = [name.id for name in names]
        for sub in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if not isinstance(sub, ast.Subscript) or not isinstance(sub.value, ast.Name):
                continue
            elements = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
            if [getattr(e, "id", None) for e in elements] != wanted:
                continue
            value = next((scope[sub.value.id] for scope in reversed(self.scopes)
                          if sub.value.id in scope), None)
            if (isinstance(value, Buffer) and is_alias(value) and value.scope == "fragment"
                    and list(value.dims) == list(extents)):
                return value
        return None

    def parallel_over_source(self, node: ast.For, names: list[ast.Name], view: Buffer) -> None:
        """The T.Parallel over `view`'s source fragment instead, its index names computed from
        the source's point: the loop then indexes the fragment by its loop variables, so it
        keeps the fragment's registers (a view's index mapped onto the source would send it
        through a shared copy), while the view's accesses at the names go straight there."""
        storage = view.placement.storage
        op = tile.ParallelOp(list(storage.dims))
        block = op.body.blocks.append(*[ir.IndexType.get()] * storage.rank,
                                      arg_locs=[self.location(node.target)] * storage.rank)
        with ir.InsertionPoint(block), self.scope():
            points = [Scalar(arg, T.index, affine=Affine.variable()) for arg in block.arguments]
            named = row_major_map(tuple(storage.dims), tuple(view.dims))(
                *(_LayoutIndex(self, point, node) for point in points))
            named = [n.value if isinstance(n, _LayoutIndex) else n for n in named]
            for name, value in zip(names, named, strict=True):
                self.scopes[-1][name.id] = value
            self.view_points.append((view, named, points))
            try:
                self.body(node.body)
            finally:
                self.view_points.pop()
            tile.yield_()

    def fused_parallel(self, node: ast.For, spec: LoopSpec) -> tuple[ast.For, LoopSpec]:
        """Directly nested `T.parallel` loops as the one T.Parallel TileLang makes of them:
        a loop over every extent binding every index name, with the innermost body."""
        if not spec.options.get("fuses"):
            return node, spec
        names, extents, starts = [node.target], list(spec.args), list(spec.options["starts"])
        while len(node.body) == 1 and isinstance(node.body[0], ast.For) and isinstance(
                node.body[0].iter, ast.Call):
            inner = node.body[0]
            inner_spec = self.eval(inner.iter)
            if not isinstance(inner_spec, LoopSpec) or not inner_spec.options.get("fuses") or \
                    inner.orelse:
                break
            node = inner
            names.append(inner.target)
            extents += inner_spec.args
            starts += inner_spec.options["starts"]
        fused = ast.For(target=ast.Tuple(names, ast.Store()), iter=node.iter, body=node.body,
                        orelse=[])
        return ast.copy_location(fused, node), LoopSpec("parallel", extents, {"starts": starts})

    def stmt_With(self, node: ast.With) -> None:  # noqa: N802
        item, *ranges = node.items  # `with T.Kernel(...) as bx, iket.range("total"):`
        spec = self.eval(item.context_expr)
        if isinstance(spec, IketRange):
            self.iket_ranges(node.items, node.body, node, first=spec)
            return
        if ranges and not isinstance(spec, KernelSpec):
            self.error(node, "a kernel's with statement is `with T.Kernel(...) as (bx, by):`")
        if isinstance(spec, WarpgroupSpec):
            self.warpgroups_block(spec, node)
            return
        if isinstance(spec, AttrSpec):
            self.require_kernel(node, "T.attr")
            self.attr_block(spec, node)
            return
        if not isinstance(spec, KernelSpec):
            self.error(node, "unsupported Python construct in a tilec kernel: with (only "
                             "`with T.Kernel(...)` is allowed)")
        if self.in_kernel:
            self.error(node, "T.Kernel blocks cannot be nested")
        grid = [self.index_value(g, item.context_expr) for g in spec.grid]
        self.launches.append({"grid": [self.grid_expr(g, item.context_expr) for g in spec.grid],
                              "threads": spec.threads})
        op = tile.KernelOp(grid, spec.threads)
        self.kernel_op = op
        names = self.kernel_index_names(item.optional_vars, len(grid), node)
        block = op.body.blocks.append(*[ir.IndexType.get()] * len(grid),
                                      arg_locs=[self.location(node)] * len(grid))
        self.in_kernel = True
        self.emitter_operands = self.find_emitter_operands(node.body)
        with ir.InsertionPoint(block), self.scope():
            for name, arg in zip(names, block.arguments, strict=False):
                self.scopes[-1][name] = Scalar(arg, T.index, affine=Affine.variable())
            if ranges:
                self.iket_ranges(ranges, node.body, node)
            else:
                self.body(node.body)
            self.iket_check_closed()
            tile.yield_()
        self.in_kernel = False
        self.emitter_operands = {}
        self.rng_state = None
        for buffer in self.placed_tensors:  # a T.Layout holds in its kernel only
            buffer.placement = None
        self.placed_tensors.clear()

    def kernel_index_names(self, target: ast.expr | None, dims: int, node: ast.AST) -> list[str]:
        if target is None:
            return []
        names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        if not all(isinstance(n, ast.Name) for n in names):
            self.error(node, "T.Kernel binds block index names: `as (bx, by)`")
        if len(names) != dims:
            self.error(node, f"T.Kernel has {dims} grid dimensions but binds {len(names)} "
                             "block index names")
        return [n.id for n in names]

    def grid_expr(self, size: Any, node: ast.AST) -> int | str:
        """A grid size as the launch computes it on the host: an int, or a Python expression
        over the dynamic sizes and the integer scalar parameters (by name)."""
        if isinstance(size, int):
            return size
        if isinstance(size, Scalar) and size.expr is not None:
            scalars = {p.name for p in self.params if p.kind == "scalar"}
            names = {n.id for n in ast.walk(ast.parse(size.expr, mode="eval"))
                     if isinstance(n, ast.Name)}
            for name in sorted(names & scalars & set(self.symbols)):
                self.error(node, f"the grid size {size.expr} names '{name}', both a scalar "
                                 "parameter and a dynamic size of a tensor: rename one")
            return size.expr
        self.error(node, "grid sizes are computed from tensor sizes, integer scalar parameters "
                         "and constants (an expression of + - * // % and T.ceildiv over them), "
                         "not from values the kernel computes")

    # ------------------------------------------------------------------ expressions

    def eval(self, node: ast.expr) -> Any:
        handler = self.handler_for(node, "expr", _UNSUPPORTED_EXPRS, "expression")
        with self.at(node):
            return handler(node)

    def expr_Constant(self, node: ast.Constant) -> Any:  # noqa: N802
        return node.value

    def expr_Name(self, node: ast.Name) -> Any:  # noqa: N802
        return self.lookup(node.id, node)

    def expr_Tuple(self, node: ast.Tuple) -> tuple:  # noqa: N802
        return tuple(self.eval(e) for e in node.elts)

    def expr_List(self, node: ast.List) -> list:  # noqa: N802
        return [self.eval(e) for e in node.elts]

    def expr_Attribute(self, node: ast.Attribute) -> Any:  # noqa: N802
        base = self.eval(node.value)
        if isinstance(base, Buffer):
            if node.attr in ("shape", "dtype"):
                return getattr(base, node.attr)
            if node.attr == "data":
                return BufferData(base)
            self.error(node, f"buffer '{base.name}' has no attribute '{node.attr}'")
        if isinstance(base, Scalar):
            if node.attr == "astype":
                return Method(base, "astype")
            if node.attr == "dtype":
                return base.dtype
            self.error(node, f"a scalar has no attribute '{node.attr}'")
        if base is T and not hasattr(T, node.attr):
            self.error(node, T.unknown_name_message(node.attr))
        try:
            return getattr(base, node.attr)
        except AttributeError:
            self.error(node, f"{base!r} has no attribute '{node.attr}'")

    def expr_Subscript(self, node: ast.Subscript) -> Any:  # noqa: N802
        base = self.eval(node.value)
        if isinstance(base, Buffer):
            return self.load(base, self.element_indices(base, node), node)
        if not _is_py_value(base):
            self.error(node, f"cannot index {base!r}")
        key = self.eval(node.slice)
        if not _is_py_value(key):
            self.error(node, "Python sequences can only be indexed by compile-time values")
        try:
            return base[key]
        except (IndexError, KeyError, TypeError) as error:
            self.error(node, f"cannot index {base!r} with {key!r}: {error}")

    def expr_JoinedStr(self, node: ast.JoinedStr) -> str:  # noqa: N802
        """An f-string (an assert's message, say); a kernel value shows as its dtype."""
        parts = []
        for part in node.values:
            if not isinstance(part, ast.FormattedValue):
                parts.append(self.eval(part))
                continue
            value = self.eval(part.value)
            if not _is_py_value(value):
                value = f"<{getattr(value, 'dtype', 'kernel')} value>"
            convert = {ord("r"): repr, ord("s"): str, ord("a"): ascii}.get(part.conversion)
            spec = self.eval(part.format_spec) if part.format_spec is not None else ""
            parts.append(format(convert(value) if convert else value, spec))
        return "".join(parts)

    def expr_Slice(self, node: ast.Slice) -> slice:  # noqa: N802
        parts = [self.eval(p) if p is not None else None for p in (node.lower, node.upper,
                                                                   node.step)]
        return slice(*parts)

    def expr_BinOp(self, node: ast.BinOp) -> Any:  # noqa: N802
        op = _BINOPS.get(type(node.op))
        if op is None:
            self.error(node, f"unsupported operator {type(node.op).__name__}")
        return self.binop(op, self.eval(node.left), self.eval(node.right), node)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Any:  # noqa: N802
        operand = self.rvalue(self.eval(node.operand), node)
        if _is_py_value(operand):
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                    ast.Invert: operator.invert}[type(node.op)](operand)
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Not):
            flag = self.to_bool(operand, node)
            return Scalar(arith.xori(flag.value, self.constant(1, T.bool).value), T.bool)
        if isinstance(node.op, ast.Invert):
            if not operand.dtype.is_integer:
                self.error(node, "~ needs an integer")
            return self.binop("^", operand, -1, node)
        if isinstance(operand, Scalar) and operand.dtype.is_float:
            return Scalar(arith.negf(operand.value), operand.dtype)
        return self.binop("-", 0, operand, node)  # a whole buffer: binop's error

    def expr_BoolOp(self, node: ast.BoolOp) -> Any:  # noqa: N802
        is_and = isinstance(node.op, ast.And)
        values = []
        for operand in node.values:  # Python's short circuit on compile-time values
            values.append(self.rvalue(self.eval(operand), operand))
            if _is_py_value(values[-1]) and builtins.bool(values[-1]) != is_and:
                break
        if all(_is_py_value(v) for v in values):
            result = values[0]
            for value in values[1:]:
                result = (result and value) if is_and else (result or value)
            return result
        if not all(_is_bool(v) for v in values):
            # Python's value: `a or b` is a where a is true, else b (`2 or 5` is 2, not True)
            result = values[-1]
            for value in reversed(values[:-1]):
                taken, other = (result, value) if is_and else (value, result)
                result = self.select(value, taken, other, node)
            return result
        flags = [self.to_bool(v, node) for v in values]
        result = flags[0]
        for flag in flags[1:]:
            combine = arith.andi if is_and else arith.ori
            result = Scalar(combine(result.value, flag.value), T.bool)
        return result

    def expr_Compare(self, node: ast.Compare) -> Any:  # noqa: N802
        left = self.eval(node.left)
        results = []
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.eval(right_node)
            if isinstance(op, (ast.Is, ast.IsNot)):  # identity of the names' values (x is None)
                results.append((left is right) == isinstance(op, ast.Is))
                left = right
                continue
            if isinstance(op, (ast.In, ast.NotIn)) and _is_py_value(left) and _is_py_value(
                    right):  # membership in a Python container, decided when the kernel is built
                results.append((left in right) == isinstance(op, ast.In))
                left = right
                continue
            kind = _CMPOPS.get(type(op))
            if kind is None:  # `in` on a kernel value
                self.error(node, "`in` / `not in` of a kernel value is not supported: compare "
                                 "it with == to each value and combine them with or")
            results.append(self.compare(kind, left, right, node))
            left = right
        result = results[0]
        for other in results[1:]:
            if _is_py_value(result) and _is_py_value(other):
                result = result and other
            else:
                a, b = self.to_bool(result, node), self.to_bool(other, node)
                result = Scalar(arith.andi(a.value, b.value), T.bool)
        return result

    def expr_IfExp(self, node: ast.IfExp) -> Any:  # noqa: N802
        test = self.rvalue(self.eval(node.test), node.test)
        if _is_py_value(test):
            return self.eval(node.body if test else node.orelse)
        return self.select(test, self.eval(node.body), self.eval(node.orelse), node)

    def expr_Call(self, node: ast.Call) -> Any:  # noqa: N802
        callee = self.eval(node.func)
        op_name = getattr(callee, "__tilec_op__", None)
        if op_name is not None:
            return self.intrinsic(op_name, callee, node)
        if isinstance(callee, T.DType) and callee.is_pair:
            return self.pack_pair(callee, node)
        if isinstance(callee, T.DType):
            return self.cast(self.eval(node.args[0]) if node.args else 0, callee, node)
        if isinstance(callee, Method):
            return self.call_method(callee, node)
        if isinstance(callee, T.Macro):
            return self.inline_macro(callee, node)
        if callee is builtins.range:
            return LoopSpec("serial", [self.rvalue(self.eval(a), a) for a in node.args])
        if callee in (T.Fragment, T.Layout):
            args = [self.layout_function(a) if isinstance(a, ast.Lambda) else self.eval(a)
                    for a in node.args]
            kwargs = {k.arg: self.layout_function(k.value) if isinstance(k.value, ast.Lambda)
                      else self.eval(k.value) for k in node.keywords}
            try:
                return callee(*args, **kwargs)
            except TilecError as error:
                self.error(node, error.message)
        if callee is builtins.print and self.in_kernel:
            self.error(node, "print() in a kernel would run once, while the kernel is built, "
                             "not when it runs: T.print prints from the device on each run")
        args, kwargs = self.call_arguments(node)
        if callee in (builtins.min, builtins.max) and len(args) >= 2 and not kwargs:
            return self.reduce_minmax(callee.__name__, args, node)
        if callee is builtins.abs and len(args) == 1 and not kwargs:
            return self.absolute(args[0], node)
        if callee is T.Tensor and (len(args) > 2 or "data" in kwargs):
            return self.tensor_view(args, kwargs, node)
        reads_buffers = getattr(callee, "__module__", None) in _LAYOUT_MAKER_MODULES
        on_kernel_values = not all(_is_py_value(v) for v in (*args, *kwargs.values()))
        if on_kernel_values and _is_user_function(callee):
            if not self.makes_functions(callee, node):
                return self.call_helper(callee, args, kwargs, node)
            # a helper defining functions (a layout's index map) runs as Python, as TileLang
            # runs it: on buffers it reads their shapes and dtypes
            reads_buffers = not any(isinstance(v, Scalar) for v in (*args, *kwargs.values()))
        name = getattr(callee, "__name__", repr(callee))
        kernel_values_message = (f"cannot call {name}() on kernel values: only T functions and "
                                 "Python functions defined with def (whose bodies are built "
                                 "into the kernel) take them")
        if on_kernel_values and not reads_buffers:
            self.error(node, kernel_values_message)
        try:
            return callee(*args, **kwargs)
        except T.OutsideKernelError:
            if not _is_user_function(callee):
                raise
            # a helper calling T functions on constants: kernel code, as TileLang traces it
            return self.call_helper(callee, args, kwargs, node)
        except TilecError:
            raise
        except Exception as error:  # a compile-time helper failed: show where it was called
            if any(not _is_py_value(item) for value in (*args, *kwargs.values())
                   if isinstance(value, (list, tuple)) for item in value):
                self.error(node, kernel_values_message)  # sum([A[0], A[1]]): no Scalar shown
            self.error(node, f"calling {name} at compile time failed: {type(error).__name__}: "
                             f"{error}")

    def makes_functions(self, fn: Callable, node: ast.Call) -> bool:
        """Whether `fn`'s body defines a function (which no kernel can build)."""
        body = self.helper_source(fn, {}, node).tree.body
        return any(isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef))
                   for statement in body for inner in ast.walk(statement))

    def call_arguments(self, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
        """A call's positional and keyword values; `*xs` and `**kw` spread compile-time
        sequences and dicts."""
        args: list[Any] = []
        for argument in node.args:
            if not isinstance(argument, ast.Starred):
                args.append(self.eval(argument))
                continue
            spread = self.eval(argument.value)
            if not isinstance(spread, (tuple, list)):
                self.error(argument, f"*{ast.unparse(argument.value)} must be a tuple or list")
            args.extend(spread)
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is not None:
                kwargs[keyword.arg] = self.eval(keyword.value)
                continue
            spread = self.eval(keyword.value)
            if not isinstance(spread, dict):
                self.error(keyword, f"**{ast.unparse(keyword.value)} must be a dict")
            kwargs.update(spread)
        return args, kwargs

    def call_helper(self, fn: Callable, args: list[Any], kwargs: dict[str, Any],
                    node: ast.Call) -> Any:
        """A Python function called in a kernel on kernel values: its body is built here, as
        TileLang's traced kernels run it on their expressions (arithmetic, bit operations, T
        calls, `if`s on constants and its return value all become kernel code)."""
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as error:
            self.error(node, f"{fn.__name__}(): {error}")
        bound.apply_defaults()
        arguments = {key: self.rvalue(value, node) if _is_variable(value) else value
                     for key, value in bound.arguments.items()}  # passed by value, as Python's
        return self.inline(fn, {}, arguments, node)

    def inline_macro(self, macro: T.Macro, node: ast.Call) -> Any:
        """Build a T.macro's body here, its parameters bound to the call's values."""
        try:
            bound = inspect.signature(macro.fn).bind(
                *node.args, **{k.arg: k.value for k in node.keywords})
        except TypeError as error:
            self.error(node, f"macro {macro.__name__}: {error}")
        references = {name for name, annotation in _annotations(
            self.helper_source(macro.fn, macro.env, node)).items() if annotation is T.Ref}
        for name, argument in bound.arguments.items():
            if isinstance(argument, ast.AST):
                bound.arguments[name] = (self.reference(argument) if name in references
                                         else self.eval(argument))
        bound.apply_defaults()
        return self.inline(macro.fn, macro.env, dict(bound.arguments), node)

    def helper_source(self, fn: Callable, env: dict[str, Any], node: ast.Call) -> KernelSource:
        """The parsed source of a helper the kernel calls (parsed once per kernel)."""
        if fn not in self.helper_sources:
            if fn.__name__ == "<lambda>":
                self.error(node, "a lambda called on kernel values cannot be built into the "
                                 "kernel; define the helper with def")
            try:
                self.helper_sources[fn] = parse_kernel(fn, env)
            except TilecError as error:
                self.error(node, error.message)
        return self.helper_sources[fn]

    def inline(self, fn: Callable, env: dict[str, Any], arguments: dict[str, Any],
               node: ast.Call) -> Any:
        """Build `fn`'s statements at the call, its parameters bound to `arguments`; its
        errors name its own lines, then the call's."""
        if self.macro_depth >= _MAX_INLINE_DEPTH:
            self.error(node, f"helpers nest more than {_MAX_INLINE_DEPTH} calls deep "
                             f"(is {fn.__name__} recursive?)")
        source = self.helper_source(fn, env, node)
        caller = (self.source.filename, node.lineno)
        saved = (self.source, self.outer, self.scopes, self.macro_depth, self.loop_exits)
        self.source, self.outer = source, source.outer_names()
        self.scopes, self.macro_depth, self.loop_exits = [arguments], self.macro_depth + 1, []
        try:
            self.body(source.tree.body)
        except _Returned as returned:
            return returned.value
        except TilecError as error:
            if (error.filename, error.lineno) == caller:
                raise
            raise type(error)(f"{error.message} (in {fn.__name__}(), called at "
                              f"{caller[0]}:{caller[1]})", error.filename,
                              error.lineno) from None
        finally:
            self.source, self.outer, self.scopes, self.macro_depth, self.loop_exits = saved
        return None

    def reference(self, node: ast.expr) -> Buffer | ElementRef:
        """The argument of a `T.Ref` parameter: a T.alloc_var variable or a buffer element."""
        if isinstance(node, ast.Subscript):
            buffer = self.eval(node.value)
            if isinstance(buffer, Buffer):
                return ElementRef(buffer, self.element_indices(buffer, node))
        value = self.eval(node)
        if isinstance(value, ElementRef) or (isinstance(value, Buffer) and value.scope == "var"):
            return value
        self.error(node, "a T.Ref parameter takes a T.alloc_var variable or a buffer element, "
                         f"got {value!r}")

    def call_method(self, method: Method, node: ast.Call) -> Any:
        if method.name == "astype":
            if len(node.args) != 1:
                self.error(node, "astype takes one dtype")
            return self.cast(method.receiver, self._dtype(self.eval(node.args[0]), node), node)
        self.error(node, f"unknown method {method.name}")

    # ------------------------------------------------------------------ T intrinsics

    def intrinsic(self, name: str, marker: Callable, node: ast.Call) -> Any:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            self.error(node, f"T.{name} takes plain arguments (no *args or **kwargs)")
        try:
            bound = inspect.signature(marker).bind(
                *node.args, **{k.arg: k.value for k in node.keywords}
            )
        except TypeError as error:
            self.error(node, f"T.{name}: {error}")
        nodes = bound.arguments
        handler = getattr(self, f"t_{name}", None)
        if handler is None and name.startswith("reduce_"):
            return self.t_reduce(name.removeprefix("reduce_"), nodes, node)
        if handler is None and name in _MATH_OPS:
            return self.math_op(name, self.eval(nodes["x"]), node)
        if handler is None:
            self.error(node, f"T.{name} is not supported by tilec yet")
        if inspect.ismethod(marker):  # an object's method (an MMA emitter's): it is passed
            return handler(marker.__self__, nodes, node)
        return handler(nodes, node)

    def arg(self, nodes: dict[str, Any], key: str, default: Any = None) -> Any:
        if key not in nodes:
            return default
        value = nodes[key]
        if isinstance(value, tuple):  # a *args parameter
            return [self.rvalue(self.eval(v), v) for v in value]
        return self.eval(value)

    def const_arg(self, nodes: dict[str, Any], key: str, node: ast.AST, default: Any = None) -> Any:
        value = self.arg(nodes, key, default)
        if not _is_py_value(value):
            self.error(node, f"argument '{key}' must be known at compile time")
        return value

    def require_kernel(self, node: ast.AST, what: str) -> None:
        if not self.in_kernel:
            self.error(node, f"{what} must be inside `with T.Kernel(...)`")

    def t_Kernel(self, nodes: dict, node: ast.Call) -> KernelSpec:  # noqa: N802
        grid = self.arg(nodes, "grid", [])
        if not 1 <= len(grid) <= 3:
            self.error(node, f"T.Kernel takes one to three grid sizes, got {len(grid)}")
        for size in grid:
            constant = _constant_index(self.rvalue(size, node))
            if constant is not None and constant <= 0:
                self.error(node, f"a grid size must be positive, got {constant}")
        threads = self.const_arg(nodes, "threads", node, 128)
        threads = list(threads) if isinstance(threads, (tuple, list)) else [threads]
        if not all(isinstance(t, int) for t in threads) or not 1 <= len(threads) <= 3:
            self.error(node, f"threads must be one to three ints, got {threads!r}")
        total = pymath.prod(threads)
        if total > 1024 or min(threads) <= 0:
            self.error(node, f"a block has 1 to 1024 threads, got {total}")
        return KernelSpec(grid, threads)

    def t_annotate_layout(self, nodes: dict, node: ast.Call) -> None:
        """Layouts as attributes of the buffers' tile.alloc (tilec/frontend/layouts.py)."""
        self.require_kernel(node, "T.annotate_layout")
        mapping = nodes["layout_map"]
        if not isinstance(mapping, ast.Dict) or None in mapping.keys:
            self.error(node, "T.annotate_layout takes a dict literal {buffer: layout, ...}")
        threads = pymath.prod(ir.DenseI64ArrayAttr(self.kernel_op.attributes["threads"]))
        for key, value in zip(mapping.keys, mapping.values, strict=True):
            buffer = self.eval(key)
            if not isinstance(buffer, Buffer):
                self.error(key, "T.annotate_layout's keys are buffers")
            if is_alias(buffer):
                self.error(key, f"T.annotate_layout: '{buffer.placement.storage.name}' seen "
                                "with another shape (T.reshape / T.view) takes no layout of its "
                                f"own; annotate '{buffer.placement.storage.name}' itself")
            layout = self.eval(value)
            if buffer.scope == "global" and isinstance(layout, T.Layout):
                self.place(buffer, layout, value)
                continue
            try:
                annotate_layout(buffer, layout, threads)
            except TilecError as error:
                self.error(value, error.message)

    def note(self, node: ast.AST, text: str) -> None:
        """Something the user asked for that the kernel does differently, for `kernel.notes`
        (kept in the launch metadata of its T.Kernel block)."""
        line = f"{self.source.filename}:{node.lineno}: {text}"
        notes = self.launches[-1].setdefault("notes", [])
        if line not in notes:
            notes.append(line)

    def place(self, buffer: Buffer, layout: T.Layout, node: ast.AST) -> None:
        """A tensor parameter's T.Layout: for the rest of the kernel its element (i, j, ...)
        is read and written at layout(i, j, ...) of its memory seen with the layout's output
        shape, as TileLang places it (tilec/frontend/layouts.py)."""
        if not all(isinstance(d, int) for d in buffer.dims):
            self.error(node, f"tensor '{buffer.name}' has dynamic sizes; tilec places only "
                             "tensors of static shape by a T.Layout")
        if tuple(layout.shape) != tuple(buffer.dims):
            self.error(node, f"a T.Layout over {list(layout.shape)} for tensor '{buffer.name}' "
                             f"of shape {list(buffer.dims)}")
        if buffer.placement is not None:
            self.error(node, f"tensor '{buffer.name}' already has a T.Layout in this kernel")
        try:
            shape = output_shape(layout, buffer.dims)
        except TilecError as error:
            self.error(node, f"tensor '{buffer.name}': {error.message}")
        if pymath.prod(shape) != pymath.prod(buffer.dims):
            self.error(node, f"the T.Layout of tensor '{buffer.name}' places its "
                             f"{pymath.prod(buffer.dims)} elements in a {shape} box of "
                             f"{pymath.prod(shape)}; tilec takes layouts that fill the tensor's "
                             "memory exactly")
        storage = self.reshaped(buffer, shape, buffer.dtype, node)
        storage.name = buffer.name
        buffer.placement = Placement(storage, layout.forward_fn)
        self.placed_tensors.append(buffer)

    def placed(self, buffer: Buffer, indices: list[Any], node: ast.AST | None) -> tuple[
            Buffer, list[Any]]:
        """Where element `indices` of `buffer` lives: the buffer itself, or for a tensor
        with a T.Layout its storage at the layout's image of the indices."""
        if buffer.placement is None:
            return buffer, indices
        for view, named, points in reversed(self.view_points):
            if (buffer.placement.storage is view.placement.storage and buffer.dims == view.dims
                    and len(indices) == len(named) and all(
                        isinstance(i, Scalar) and isinstance(n, Scalar) and i.value == n.value
                        for i, n in zip(indices, named, strict=True))):
                return view.placement.storage, list(points)
        try:
            image = buffer.placement.forward(*(_LayoutIndex(self, self.rvalue(i, node), node)
                                               for i in indices))
        except TypeError as error:
            self.error(node, f"the T.Layout of tensor '{buffer.name}' failed on kernel "
                             f"indices: {error}")
        image = list(image) if isinstance(image, (list, tuple)) else [image]
        return buffer.placement.storage, [i.value if isinstance(i, _LayoutIndex) else i
                                          for i in image]

    def layout_function(self, node: ast.Lambda) -> Callable:
        """A T.Fragment / T.Layout lambda: run at compile time on Python ints, seeing the
        kernel's compile-time names (lambdas are not kernel code elsewhere)."""
        names = dict(self.outer)
        for scope in self.scopes:
            names.update({k: v for k, v in scope.items() if _is_py_value(v)})
        code = compile(ast.fix_missing_locations(ast.Expression(node)), self.source.filename,
                       "eval")
        return eval(code, names)  # noqa: S307 (the kernel's own source)

    def t_use_swizzle(self, nodes: dict, node: ast.Call) -> None:
        """Recorded on the kernel as tile.swizzle_panel / tile.swizzle_order for the backend."""
        self.require_kernel(node, "T.use_swizzle")
        panel = self.const_arg(nodes, "panel_size", node)
        order = self.const_arg(nodes, "order", node, "row")
        if not isinstance(panel, int) or panel <= 0 or order not in ("row", "col"):
            self.error(node, "T.use_swizzle takes a positive panel_size and order 'row' or 'col'")
        if self.const_arg(nodes, "enable", node, True):
            attributes = self.kernel_op.attributes
            attributes["tile.swizzle_panel"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                                  panel)
            attributes["tile.swizzle_order"] = ir.StringAttr.get(order)

    def t_const(self, nodes: dict, node: ast.Call) -> Any:
        names_text = self.const_arg(nodes, "names", node)
        if not isinstance(names_text, str):
            self.error(node, 'T.const takes the names as one string: T.const("M, N, K")')
        names = [n for n in re.split(r"[,\s]+", names_text) if n]
        values = []
        for name in names:
            if name not in self.symbol_values:
                self.error(node, f"cannot tell the size '{name}' from the arguments: annotate the "
                                 f"tensor that has it in the kernel body, e.g. "
                                 f"`{self.annotation_hint(name)}`")
            values.append(self.symbol_values[name])
        return values[0] if len(values) == 1 else tuple(values)

    def annotation_hint(self, missing: str) -> str:
        """An annotation that would bind `missing`: a tensor with a size no symbol explains."""
        by_value = {value: symbol for symbol, value in self.symbol_values.items()}
        for tensor in self.eager_inputs:
            unexplained = [axis for axis, size in enumerate(tensor.shape)
                           if isinstance(size, int) and size not in by_value]
            if unexplained:
                dims = [by_value.get(size, str(size)) if isinstance(size, int) else size.name
                        for size in tensor.shape]
                dims[unexplained[0]] = missing
                shape = ", ".join(dims) + ("," if len(dims) == 1 else "")
                return f"{tensor.name}: T.Tensor(({shape}), T.{tensor.dtype.name})"
        return f"A: T.Tensor((..., {missing}), T.float16)"

    def t_empty(self, nodes: dict, node: ast.Call) -> Buffer:
        if not self.eager or self.in_kernel or len(self.scopes) != 1:
            self.error(node, "T.empty creates an output of a @tilec.jit kernel, before "
                             "`with T.Kernel(...)`")
        shape = self.shape_arg(nodes, node, dynamic=True)
        dtype = self._dtype(self.arg(nodes, "dtype"), node)
        block = ir.InsertionPoint.current.block
        buffer = self.add_tensor_param(block, "", tuple(shape), dtype, is_output=True,
                                       node=node)
        self.outputs.append(buffer)
        return buffer

    def shape_arg(self, nodes: dict, node: ast.AST, key: str = "shape",
                  dynamic: bool = False) -> list[Any]:
        """A static shape; with `dynamic`, T.dynamic sizes of the inputs are allowed too."""
        shape = self.arg(nodes, key)
        shape = list(shape) if isinstance(shape, (tuple, list)) else [shape]

        def allowed(size: Any) -> bool:
            if isinstance(size, T.Symbol):
                return dynamic and size.name in self.symbols
            return isinstance(size, int) and not isinstance(size, builtins.bool) and size > 0

        if not shape or not all(allowed(size) for size in shape):
            self.error(node, f"a shape is a tuple of positive ints known at compile time, got "
                             f"{shape!r}")
        return shape

    def _dtype(self, spec: Any, node: ast.AST) -> T.DType:
        try:
            dtype = T.dtype(spec)
        except TilecError as error:
            self.error(node, error.message)
        return dtype

    def allocate(self, scope: str, shape: list[int], dtype: T.DType, node: ast.AST) -> Buffer:
        self.require_kernel(node, f"a {scope} allocation")
        self.check_addressable(f"a {scope} buffer", shape, dtype, node)
        space = ir.StringAttr.get(scope)
        value = tile.alloc(ir.MemRefType.get(shape, storage_type(dtype), memory_space=space))
        return Buffer(value, "", tuple(shape), dtype, scope)

    def block_allocation(self, nodes: dict, node: ast.Call, default_scope: str) -> Buffer:
        """T.alloc_shared / alloc_fragment / alloc_local: TileLang's `scope` names the kind."""
        scope = self.const_arg(nodes, "scope", node, default_scope)
        if scope not in _ALLOC_SCOPES:
            known = ", ".join(repr(name) for name in _ALLOC_SCOPES)
            self.error(node, f"unknown buffer scope {scope!r}; tilec allocates {known}")
        if _ALLOC_SCOPES[scope] in ("shared", "fragment") and inside_parallel():
            # the CUDA lowering crashed the process on a fragment allocated per point
            self.error(node, f"a {_ALLOC_SCOPES[scope]} buffer allocated inside T.Parallel: it "
                             "is the block's, shared by its threads; allocate it before the "
                             "loop, or use T.alloc_local for a buffer of each point")
        return self.allocate(_ALLOC_SCOPES[scope], self.shape_arg(nodes, node),
                             self._dtype(self.arg(nodes, "dtype"), node), node)

    def t_alloc_shared(self, nodes: dict, node: ast.Call) -> Buffer:
        return self.block_allocation(nodes, node, "shared.dyn")

    def t_alloc_fragment(self, nodes: dict, node: ast.Call) -> Buffer:
        return self.block_allocation(nodes, node, "local.fragment")

    def t_alloc_local(self, nodes: dict, node: ast.Call) -> Buffer:
        return self.block_allocation(nodes, node, "local")

    def t_alloc_global(self, nodes: dict, node: ast.Call) -> Buffer:
        """A global workspace between T.Kernel blocks: one more parameter, which the kernel
        object allocates on each call and does not return."""
        if self.in_kernel or len(self.scopes) != 1 or self.macro_depth:
            self.error(node, "T.alloc_global makes a workspace of the whole kernel function: "
                             "call it before or between the `with T.Kernel(...)` blocks")
        if self.const_arg(nodes, "scope", node, "global") != "global":
            self.error(node, "T.alloc_global's scope is 'global'")
        shape = self.shape_arg(nodes, node, dynamic=True)
        dtype = self._dtype(self.arg(nodes, "dtype"), node)
        block = ir.InsertionPoint.current.block
        return self.add_tensor_param(block, "", tuple(shape), dtype, False, workspace=True,
                                     node=node)

    def t_alloc_reducer(self, nodes: dict, node: ast.Call) -> Buffer:
        """TileLang's (legacy, replication="all") reducer: every thread adds its points'
        contributions with `reducer[i] += x` and T.finalize_reducer makes the sums whole. tilec
        keeps it in shared memory, each `+=` an atomic add (one per point, however many
        threads hold it), so finalizing is a barrier."""
        self.require_kernel(node, "T.alloc_reducer")
        op = self.const_arg(nodes, "op", node, "sum")
        if op != "sum":
            self.error(node, f"tilec's T.alloc_reducer sums; op={op!r} is not supported")
        shape = self.const_arg(nodes, "shape", node)
        shape = list(shape) if isinstance(shape, (list, tuple)) else [shape]
        if not all(isinstance(d, int) and d > 0 for d in shape):
            self.error(node, f"a reducer's shape is positive ints, got {shape!r}")
        buffer = self.allocate("shared", shape, self._dtype(self.arg(nodes, "dtype"), node),
                               node)
        self.reducers_allocated.add(id(buffer))
        return buffer

    def reducer_update(self, buffer: Buffer, indices: list[Any], op: str,
                       node: ast.AugAssign) -> None:
        if op != "+":
            self.error(node, f"a sum reducer is updated with +=, not {op}=")
        value = self.materialize(self.rvalue(self.eval(node.value), node), buffer.dtype, node)
        self.emit_atomic_add(buffer, indices, value, node)

    def t_finalize_reducer(self, nodes: dict, node: ast.Call) -> None:
        """Every contribution has landed once the block meets here; with `dst` the sums are
        copied there too."""
        reducer = self.buffer_arg(nodes, "reducer", node)
        if id(reducer) not in self.reducers_allocated:
            self.error(node, f"T.finalize_reducer takes a T.alloc_reducer buffer, not "
                             f"'{reducer.name}'")
        gpu.BarrierOp()
        dst = self.arg(nodes, "dst")
        if dst is not None:
            if not isinstance(dst, Buffer) or dst.static_shape != reducer.static_shape:
                self.error(node, "T.finalize_reducer's dst is a buffer of the reducer's shape")
            self.convert_box(self.whole(reducer), self.whole(dst), node)

    def t_alloc_var(self, nodes: dict, node: ast.Call) -> Buffer:
        """alloc_var(dtype[, init][, scope], scope=..., init=...), as TileLang reads them."""
        extra = self.arg(nodes, "args", [])
        init, scope = self.arg(nodes, "init"), self.const_arg(nodes, "scope", node, "local.var")
        if len(extra) > 2 or (len(extra) == 2 and not isinstance(extra[1], str)):
            self.error(node, "T.alloc_var takes (dtype, init, scope) at most")
        if extra and isinstance(extra[-1], str):
            scope = extra.pop()
        if extra:
            if init is not None:
                self.error(node, "T.alloc_var got its init twice")
            init = extra[0]
        if scope != "local.var":
            self.error(node, f"T.alloc_var makes a 'local.var', got scope {scope!r}")
        buffer = self.allocate("var", [1], self._dtype(self.arg(nodes, "dtype"), node), node)
        if init is not None:
            self.store(buffer, [0], init, node)
        return buffer

    def t_clear(self, nodes: dict, node: ast.Call) -> None:
        self.fill_with(nodes, 0, node)

    def t_fill(self, nodes: dict, node: ast.Call) -> None:
        self.fill_with(nodes, self.arg(nodes, "value"), node)

    def fill_with(self, nodes: dict, value: Any, node: ast.Call) -> None:
        """tile.fill of a whole buffer; a region (A[0:4, j]) or element (A[0]) of one is set
        point by point."""
        target = nodes["buffer"]
        if isinstance(target, ast.Subscript):
            self.require_kernel(node, "filling a region")
            region = self.region(target)
            if _is_element(region):
                self.store(region.buffer, region.offsets, value, node)
                return
            region = self.static_box(region, "a filled region", node)
            with self.over_box(region, node) as (point, _):
                self.store(region.buffer, self.box_indices(region, point), value, node)
            return
        buffer = self.buffer_arg(nodes, "buffer", node, views=True)
        if is_alias(buffer) and buffer.placement.parts > 1:  # elements taken apart
            region = self.whole(buffer)
            with self.over_box(region, node) as (point, _):
                self.store(buffer, self.box_indices(region, point), value, node)
            return
        if is_alias(buffer):  # a view holds every element of its source
            buffer = buffer.placement.storage
        tile.fill(buffer.value, self.stored(value, buffer.dtype, node))

    def buffer_arg(self, nodes: dict, key: str, node: ast.AST, views: bool = False) -> Buffer:
        """Argument `key` as a buffer; an op that cannot read through an alias (a reshaped
        shared or fragment buffer) rejects one unless it takes `views`."""
        what = f"T.{getattr(node.func, 'attr', key)}"
        self.require_kernel(node, what)
        value = self.arg(nodes, key)
        if not isinstance(value, Buffer):
            self.error(node, f"argument '{key}' must be a buffer, got {value!r}")
        if not views and is_alias(value):
            self.error(node, f"{what} does not take '{value.name}', a view of the "
                             f"{value.scope} buffer '{value.placement.storage.name}' with "
                             f"another shape, in tilec: index the view element by element "
                             f"(in T.Parallel), or pass '{value.placement.storage.name}'")
        return value

    def t_gemm(self, nodes: dict, node: ast.Call, wgmma: bool = False) -> None:
        a, b = self.gemm_operand(nodes, "A", node), self.gemm_operand(nodes, "B", node)
        c = self.buffer_arg(nodes, "C", node)
        k_pack = self.const_arg(nodes, "k_pack", node, 1)
        if not isinstance(k_pack, int) or isinstance(k_pack, builtins.bool) or k_pack < 1:
            self.error(node, f"T.gemm's k_pack is a positive int, got {k_pack!r}")
        if self.arg(nodes, "mbar") is not None:
            self.error(node, "T.gemm(mbar=...) is for sm_100's tcgen05 MMA; tilec targets sm_80 "
                             "and sm_90a, where T.gemm waits by itself")
        flags = {key: bool(self.const_arg(nodes, name, node, False)) for key, name in (
            ("transpose_a", "transpose_A"), ("transpose_b", "transpose_B"))}
        self.emit_gemm(a, b, c, self.gemm_policy(nodes, node), flags,
                       self.rvalue(self.arg(nodes, "clear_accum", False), node), node, wgmma)

    def gemm_policy(self, nodes: dict, node: ast.Call) -> str:
        policy = self.const_arg(nodes, "policy", node, T.GemmWarpPolicy.Square)
        if policy not in (T.GemmWarpPolicy.Square, T.GemmWarpPolicy.FullRow,
                          T.GemmWarpPolicy.FullCol):
            self.error(node, f"unknown warp policy {policy!r}; use T.GemmWarpPolicy.Square, "
                             "FullRow or FullCol")
        return policy

    def emit_gemm(self, a: Buffer, b: Buffer, c: Buffer, policy: str, flags: dict[str, bool],
                  clear: Any, node: ast.Call, wgmma: bool = False) -> None:
        """The tile.gemm of T.gemm's checked operands (`clear`: clear_accum's value)."""
        if _is_py_value(clear):
            flags["clear_accum"] = bool(clear)
        else:  # decided at run time (clear_accum=(k == 0)): zero C where it holds
            branch = scf.IfOp(self.to_bool(clear, node).value)
            with ir.InsertionPoint(branch.then_block):
                tile.fill(c.value, self.materialize(0, c.dtype, node).value)
                scf.YieldOp([])
        if a.rank == 2 and b.rank == 2:
            k_a = a.static_shape[0 if flags["transpose_a"] else 1]
            k_b = b.static_shape[1 if flags["transpose_b"] else 0]
            if k_a != k_b:
                self.error(node, f"T.gemm: K of A ('{a.name}': {k_a}) differs from K of B "
                                 f"('{b.name}': {k_b})")
        self.check_accumulator(a, b, c, node)
        a, b = self.widened_operand(a, b, "A", node), self.widened_operand(b, a, "B", node)
        if not a.dtype.interchangeable(b.dtype):  # the op's verifier named 'f16' vs 'f32'
            self.error(node, f"T.gemm of {a.dtype} x {b.dtype}: A and B take one dtype; T.copy "
                             "one of them into a tile of the other's dtype first")
        gemm = tile.gemm(a.value, b.value, c.value, policy=policy,
                         **{k: v for k, v in flags.items() if v})
        if wgmma:  # lower-gemm-simt rejects it where it would run on CUDA cores
            getattr(gemm, "operation", gemm).attributes["tile.wgmma_required"] = ir.UnitAttr.get()

    def t_make_tensor(self, nodes: dict, node: ast.Call) -> Buffer:
        """A global tensor at a run-time address: a memref whose descriptor (the address,
        offset 0, the static sizes and row-major strides) is built from it, so every lowering
        reads it as it reads a tensor parameter."""
        self.require_kernel(node, "T.make_tensor")
        if self.arg(nodes, "strides") is not None:
            self.error(node, "T.make_tensor(strides=...) is not supported by tilec: its tensors "
                             "are row-major")
        shape = self.arg(nodes, "shape")
        shape = list(shape) if isinstance(shape, (tuple, list)) else [shape]
        if not shape or not all(isinstance(d, int) and not isinstance(d, builtins.bool) and d > 0
                                for d in shape):
            self.error(node, f"T.make_tensor's shape is a tuple of positive ints known at "
                             f"compile time, got {tuple(shape)!r}")
        dtype = self._dtype(self.arg(nodes, "dtype", "float32"), node)
        address = self.convert(self.rvalue(self.arg(nodes, "ptr"), node), T.ptr, node, False)
        pointer_type, i64 = llvm.PointerType.get(), ir.IntegerType.get_signless(64)
        rank = len(shape)
        extents = ir.Type.parse(f"!llvm.array<{rank} x i64>")
        descriptor_type = llvm.StructType.get_literal(
            [pointer_type, pointer_type, i64, extents, extents])
        pointer = llvm.inttoptr(pointer_type, address.value)
        descriptor = llvm.UndefOp(descriptor_type).result
        strides = [pymath.prod(shape[axis + 1:]) for axis in range(rank)]
        fields = [([0], pointer), ([1], pointer), ([2], arith.constant(i64, 0))]
        fields += [([3, axis], arith.constant(i64, size)) for axis, size in enumerate(shape)]
        fields += [([4, axis], arith.constant(i64, stride)) for axis, stride in enumerate(strides)]
        for position, value in fields:
            descriptor = llvm.insertvalue(descriptor, value, position)
        memref_type = tensor_type(tuple(shape), dtype)
        value = builtin.UnrealizedConversionCastOp([memref_type], [descriptor]).results[0]
        return Buffer(value, "", tuple(shape), dtype, "global")

    def t_device_assert(self, nodes: dict, node: ast.Call) -> None:
        self.require_kernel(node, "T.device_assert")
        message = self.const_arg(nodes, "msg", node, "")
        if not isinstance(message, str):
            self.error(node, f"T.device_assert's msg is a string, got {message!r}")
        condition = self.to_bool(self.arg(nodes, "condition"), node)
        where = f"{self.source.filename}:{node.lineno}"
        cf.AssertOp(condition.value, f"{where}: {message or 'T.device_assert failed'}")

    def t_gemm_sp(self, nodes: dict, node: ast.Call) -> None:
        """T.gemm_sp as a dense T.gemm on A decompressed into a shared tile of its own
        (tilec.frontend.sparse_ops says how)."""
        from tilec.cuda.intrinsics.sparse_layout import GROUP_CONFIG, get_e_factor
        from tilec.frontend import sparse_ops

        sparse, meta = self.buffer_arg(nodes, "A_sparse", node), self.buffer_arg(nodes, "E", node)
        b, c = self.gemm_operand(nodes, "B", node), self.buffer_arg(nodes, "C", node)
        for key, name in (("transpose_A", "A_sparse"), ("transpose_E", "E")):
            if self.const_arg(nodes, key, node, False):
                self.error(node, f"T.gemm_sp({key}=True) is not supported by tilec: store "
                                 f"{name} with K along its last dimension")
        if sparse.dtype not in GROUP_CONFIG or meta.dtype not in (T.int8, T.int16, T.int32):
            self.error(node, f"T.gemm_sp takes A_sparse of {', '.join(GROUP_CONFIG)} and E of "
                             f"int8, int16 or int32, got {sparse.dtype} and {meta.dtype}")
        kept, group = GROUP_CONFIG[sparse.dtype]
        e_factor = get_e_factor(sparse.dtype, meta.dtype)
        if sparse.rank != 2 or meta.rank != 2 or sparse.scope == "global":
            self.error(node, "T.gemm_sp's A_sparse and E are 2-d block buffers (shared tiles)")
        rows, cols = sparse.static_shape[0], sparse.static_shape[1] * group // kept
        if list(meta.static_shape) != [rows, cols // e_factor]:
            self.error(node, f"T.gemm_sp: E ('{meta.name}') is {list(meta.static_shape)}; "
                             f"{rows} rows of {cols} elements take [{rows}, {cols // e_factor}] "
                             f"{meta.dtype} metadata")
        dense = self.allocate("shared", [rows, cols], sparse.dtype, node)
        dense.name = f"{sparse.name}_dense"
        decompress = (sparse_ops.decompress_one_of_two if group == 2
                      else sparse_ops.decompress_pairs_of_four)
        self.inline(decompress.fn, decompress.env, {
            "A_sparse": sparse, "E": meta, "A_dense": dense, "rows": rows, "cols": cols,
            "e_factor": e_factor}, node)
        flags = {"transpose_a": False,
                 "transpose_b": bool(self.const_arg(nodes, "transpose_B", node, False))}
        self.emit_gemm(dense, b, c, self.gemm_policy(nodes, node), flags,
                       self.const_arg(nodes, "clear_accum", node, False), node)

    def check_accumulator(self, a: Buffer, b: Buffer, c: Buffer, node: ast.AST) -> None:
        """C must hold the products: a float product in an integer C (fp16 into int32 gave
        zeros) or integer products in fewer than 32 bits are errors at the line. So are
        unsigned operands of 8 bits or more: integer GEMMs multiply signed values (uint8's 200
        was taken for -56)."""
        operands = f"{a.dtype} x {b.dtype}"
        for operand in (a, b):
            if operand.dtype.is_unsigned and operand.dtype.bits >= 8:
                self.error(node, f"T.gemm of {operands}: tilec's integer GEMMs multiply signed "
                                 f"values, so '{operand.name}' of {operand.dtype} would be read "
                                 "as signed; use int8 operands (or T.uint4 / T.uint2, widened "
                                 "exactly), or a float dtype")
        if (a.dtype.is_float or b.dtype.is_float) and not c.dtype.is_float:
            self.error(node, f"T.gemm accumulates {operands} products into '{c.name}' of "
                             f"{c.dtype}, which cannot hold them: use a float accumulator "
                             "(float32)")
        if not c.dtype.is_float and c.dtype.bits < 32:
            self.error(node, f"T.gemm accumulates {operands} products into '{c.name}' of "
                             f"{c.dtype}, which overflows: use an int32 accumulator")

    def widened_operand(self, operand: Buffer, other: Buffer, key: str,
                        node: ast.AST) -> Buffer:
        """A T.gemm operand of 4- or 2-bit integers (T.int4, T.uint4, T.int2, T.uint2) times
        integers: its elements widened to int8 in a tile of its own, where the int8 tensor-core
        gemm reads them (every such value is an int8 one, so the int32 sums are exact); the
        tensor cores' own 4-bit MMAs are not used."""
        if not operand.dtype.is_sub_byte:
            return operand
        if not (operand.dtype.is_integer and other.dtype.is_integer):
            self.error(node, f"T.gemm's operand {key} ('{operand.name}') holds {operand.dtype} "
                             f"elements and the other operand {other.dtype}: tilec multiplies "
                             "4- and 2-bit integers by integers only; convert the operands "
                             "(T.copy into a float16 tile) first")
        wide = self.allocate(operand.scope, list(operand.static_shape), T.int8, node)
        wide.name = f"{operand.name}_int8"
        self.convert_box(self.whole(operand), self.whole(wide), node)
        return wide

    def t_wgmma_gemm(self, nodes: dict, node: ast.Call) -> None:
        """T.gemm that must run on wgmma. tilec's wgmma gemm waits for its own result, so
        the T.wait_wgmma after it finds nothing in flight."""
        annotations = self.const_arg(nodes, "annotations", node, None)
        if annotations is not None and not isinstance(annotations, dict):
            self.error(node, f"T.wgmma_gemm's annotations are a dict, got {annotations!r}")
        self.t_gemm(nodes, node, wgmma=True)

    def t_wait_wgmma(self, nodes: dict, node: ast.Call) -> None:
        count = self.const_arg(nodes, "id", node)
        if not isinstance(count, int) or isinstance(count, builtins.bool) or count < 0:
            self.error(node, f"T.wait_wgmma takes how many wgmma groups may stay in flight (an "
                             f"int >= 0), got {count!r}")

    def gemm_operand(self, nodes: dict, key: str, node: ast.Call) -> Buffer:
        """A or B of T.gemm: a buffer, or a 2-d region of a shared one (`Q_shared[:, :D]`,
        `A_shared[stage, :, :]`), which is copied into a shared tile of its own first: every
        gemm lowering then reads a whole tile, laid out and swizzled as its own."""
        target = nodes.get(key)
        if not isinstance(target, ast.Subscript) or not any(
                isinstance(e, ast.Slice) for e in (target.slice.elts if isinstance(
                    target.slice, ast.Tuple) else [target.slice])):
            return self.buffer_arg(nodes, key, node)
        self.require_kernel(node, "T.gemm")
        region = self.static_box(self.region(target), f"T.gemm's operand {key}", node)
        buffer = region.buffer
        shape = _squeeze(region.extents)
        if buffer.scope != "shared" or len(shape) != 2:
            self.error(node, f"T.gemm's operand {key} is a part of '{buffer.name}' (a "
                             f"{buffer.scope} buffer, box {_box_text(region)}); tilec takes a "
                             "2-d box of a shared buffer there, or a whole buffer")
        if list(region.extents) == list(buffer.dims) and all(
                isinstance(o, int) and o == 0 for o in region.offsets):
            return buffer
        staging = self.allocate("shared", shape, buffer.dtype, node)
        staging.name = f"{buffer.name}_{key.lower()}_tile"
        self.emit_copy(region, self.whole(staging))
        return staging

    def t_reduce(self, kind: str, nodes: dict, node: ast.Call) -> None:
        src = self.buffer_arg(nodes, "src", node, views=True)
        dst = self.buffer_arg(nodes, "dst", node, views=True)
        dim = self.const_arg(nodes, "dim", node, -1)
        clear = self.const_arg(nodes, "clear", node, True)
        if not isinstance(dim, int) or not -src.rank <= dim < src.rank:
            self.error(node, f"dim {dim!r} is out of range for a {src.rank}-d buffer")
        dim %= src.rank
        if is_alias(src):  # reduced from a copy of the view's elements
            staged = self.allocate(src.scope, list(src.static_shape), src.dtype, node)
            self.convert_box(self.whole(src), self.whole(staged), node)
            src = staged
        if is_alias(dst):  # reduced into a copy, written back through the view
            staged = self.allocate(dst.scope, list(dst.static_shape), dst.dtype, node)
            if not clear:
                self.convert_box(self.whole(dst), self.whole(staged), node)
            self.reduce_into(kind, src, staged, dim, bool(clear), node)
            self.convert_box(self.whole(staged), self.whole(dst), node)
            return
        self.reduce_into(kind, src, dst, dim, bool(clear), node)

    def reduce_into(self, kind: str, src: Buffer, dst: Buffer, dim: int, clear: bool,
                    node: ast.Call) -> None:
        # a 1-d fragment reduces into a [1] fragment through a [1, N] one (TileLang's reducer
        # keeps one element where the source had one dimension)
        to_one = src.rank == 1 and dst.static_shape == (1,) and "fragment" == src.scope == \
            dst.scope
        if to_one or not src.dtype.interchangeable(dst.dtype):
            # TileLang accumulates in dst's dtype, each element cast to it as it is combined
            shape = [1, *src.static_shape] if to_one else list(src.static_shape)
            staged = self.allocate(src.scope, shape, dst.dtype, node)
            whole = self.whole(staged)
            with self.over_box(self.whole(src), node) as (point, value):
                self.store(staged, self.box_indices(whole, point),
                           self.cast(value, dst.dtype, node), node)
            src, dim = staged, dim + 1 if to_one else dim
        if dst.dtype.kind == "bool" and kind in ("sum", "abssum"):
            self.error(node, f"T.reduce_{kind} into a bool buffer computes in one bit: reduce "
                             "into an int32 buffer to count the True values (T.reduce_max is "
                             "any, T.reduce_min all)")
        if dst.dtype.is_unsigned:  # signless memrefs: the kind says how integers compare
            kind = _UNSIGNED_REDUCTIONS.get(kind, kind)
        tile.reduce(src.value, dst.value, kind, dim, clear=clear)

    def t_cumsum(self, nodes: dict, node: ast.Call) -> None:
        """Each line along `dim` is summed in order by one thread (a T.Parallel over the other
        dimensions, a serial loop along `dim`); fragments are scanned through a shared copy, as
        TileLang does."""
        src = self.buffer_arg(nodes, "src", node)
        dst = self.buffer_arg(nodes, "dst", node) if self.arg(nodes, "dst") is not None else src
        dim = self.const_arg(nodes, "dim", node, 0)
        reverse = bool(self.const_arg(nodes, "reverse", node, False))
        for buffer in (src, dst):
            if buffer.scope not in ("shared", "fragment", "local"):
                self.error(node, f"T.cumsum scans shared, fragment or local buffers, got the "
                                 f"{buffer.scope} buffer '{buffer.name}'")
        if src.static_shape != dst.static_shape:
            self.error(node, f"T.cumsum: '{src.name}' {src.static_shape} and '{dst.name}' "
                             f"{dst.static_shape} differ in shape")
        if not isinstance(dim, int) or not -src.rank <= dim < src.rank:
            self.error(node, f"dim {dim!r} is out of range for a {src.rank}-d buffer")
        dim %= src.rank
        if dst.dtype.kind == "bool":
            self.error(node, f"T.cumsum of the bool buffer '{dst.name}' computes in one bit: "
                             "scan an int32 copy of it to count the True values")
        if "fragment" in (src.scope, dst.scope):
            staged = self.allocate("shared", list(src.static_shape), src.dtype, node)
            self.emit_copy(self.whole(src), self.whole(staged))
            self.scan_lines(staged, staged, dim, reverse, node)
            self.convert_box(self.whole(staged), self.whole(dst), node)
            return
        self.scan_lines(src, dst, dim, reverse, node)

    def scan_lines(self, src: Buffer, dst: Buffer, dim: int, reverse: bool,
                   node: ast.AST) -> None:
        """dst[..., k, ...] = sum of src[..., :k + 1, ...] (from the end when reversed)."""
        shape = list(src.static_shape)
        others = [d for d in range(len(shape)) if d != dim]
        accumulate = T.float32 if src.dtype.is_float and src.dtype.bits < 32 else src.dtype
        total = self.allocate("var", [1], accumulate, node)
        op = tile.ParallelOp([shape[d] for d in others] or [1])
        block = op.body.blocks.append(*[ir.IndexType.get()] * (len(others) or 1),
                                      arg_locs=[self.location(node)] * (len(others) or 1))
        with ir.InsertionPoint(block):
            point = dict(zip(others, [Scalar(a, T.index) for a in block.arguments],
                             strict=False))
            self.store(total, [0], 0, node)
            length = shape[dim]
            loop = tile.ForOp(*(self.index_value(v, node) for v in (0, length, 1)))
            step = loop.body.blocks.append(ir.IndexType.get(), arg_locs=[self.location(node)])
            with ir.InsertionPoint(step):
                k = Scalar(step.arguments[0], T.index)
                at = self.binop("-", length - 1, k, node) if reverse else k
                indices = [point[d] if d != dim else at for d in range(len(shape))]
                running = self.binop("+", self.load(total, [0], node),
                                     self.load(src, indices, node), node)
                self.store(total, [0], running, node)
                self.store(dst, indices, self.cast(running, dst.dtype, node), node)
                tile.yield_()
            tile.yield_()

    def t_copy(self, nodes: dict, node: ast.Call) -> None:
        self.require_kernel(node, "T.copy")
        src = self.region(nodes["src"])
        dst = self.region(nodes["dst"])
        if _is_element(src) and _is_element(dst):  # T.copy(A[i], B[j]): one element
            value = self.load(src.buffer, src.offsets, node)
            self.store(dst.buffer, dst.offsets, self.cast(value, dst.buffer.dtype, node), node)
            return
        src, dst = self.paired_boxes(src, dst, "T.copy", node)
        if src.buffer.placement is not None or dst.buffer.placement is not None:
            self.convert_box(src, dst, node)  # element by element, through the T.Layout
        elif src.buffer.scope == dst.buffer.scope == "fragment" and not (
                _is_whole(src) and _is_whole(dst) and src.buffer.dims == dst.buffer.dims):
            # a part of a fragment (`lse[k, :]` into a row), or one of another shape: point
            # by point in a T.Parallel, as TileLang lowers it (a whole fragment copied into
            # one of its shape converts layouts in registers)
            self.convert_box(src, dst, node)
        elif src.buffer.dtype.interchangeable(dst.buffer.dtype):
            self.emit_copy(src, dst)
        elif src.buffer.scope == dst.buffer.scope == "global":
            # element by element, as TileLang lowers it: a fragment between the two would
            # hold the whole box in registers (a 64 x 576 float32 box: 288 a thread)
            self.convert_box(src, dst, node)
        elif src.buffer.scope == "global":  # load, then convert in registers
            # the staging fragment has the box's squeezed shape, so the T.Parallel converting
            # it indexes it by all its loop variables and takes its layout (a unit dimension
            # indexed by a constant left the two laid out apart, converted through shared
            # memory)
            staging = self.allocate("fragment", _squeeze(dst.extents) or [1],
                                    src.buffer.dtype, node)
            self.emit_copy(src, self.whole(staging))
            self.convert_box(self.whole(staging), dst, node)
        else:  # convert in registers, then store
            # squeezed only for a store to global memory: a fragment target is copied into from
            # the staging fragment whole, which needs the two of one shape
            extents = (_squeeze(src.extents) or [1] if dst.buffer.scope == "global"
                       else list(src.extents))
            staging = self.allocate("fragment", extents, dst.buffer.dtype, node)
            self.convert_box(src, self.whole(staging), node)
            self.emit_copy(self.whole(staging), dst)

    def whole(self, buffer: Buffer) -> Region:
        return Region(buffer, [0] * buffer.rank, list(buffer.static_shape))

    def emit_copy(self, src: Region, dst: Region) -> None:
        tile.copy(src.buffer.value, [self.index_value(o) for o in src.offsets], src.extents,
                  dst.buffer.value, [self.index_value(o) for o in dst.offsets], dst.extents)

    @contextlib.contextmanager
    def over_box(self, src: Region, node: ast.AST) -> Iterator[tuple[list[Scalar], Any]]:
        """A tile.parallel over `src`'s squeezed box: the body runs inside it with the point
        and src's element there."""
        extents = _squeeze(src.extents) or [1]
        op = tile.ParallelOp(extents)
        block = op.body.blocks.append(*[ir.IndexType.get()] * len(extents),
                                      arg_locs=[self.location(node)] * len(extents))
        with ir.InsertionPoint(block):
            point = [Scalar(a, T.index) for a in block.arguments]
            yield point, self.load(src.buffer, self.box_indices(src, point), node)
            tile.yield_()

    def convert_box(self, src: Region, dst: Region, node: ast.AST) -> None:
        """Element-wise dtype conversion of one box into another of the same squeezed shape."""
        with self.over_box(src, node) as (point, value):
            self.store(dst.buffer, self.box_indices(dst, point), value, node)

    def box_indices(self, region: Region, point: list[Scalar]) -> list[Any]:
        """The element of `region` at `point` of its squeezed box."""
        indices, next_axis = [], 0
        for offset, extent in zip(region.offsets, region.extents, strict=True):
            if extent == 1:
                indices.append(offset)
            else:
                indices.append(self.binop("+", offset, point[next_axis], None))
                next_axis += 1
        return indices

    def fill_extents(self, region: Region, other: list[int | None], node: ast.AST) -> Region:
        """Corner-index form: the box takes the other operand's extents (aligned at the end)."""
        rank = region.buffer.rank
        box = list(other)
        while len(box) > rank:
            if box[0] != 1:
                self.error(node, f"T.copy: a box of shape {tuple(other)} does not fit in the "
                                 f"{rank}-d buffer '{region.buffer.name}'")
            box.pop(0)
        box = [1] * (rank - len(box)) + box
        extents = [e if e is not None else b for e, b in zip(region.extents, box, strict=True)]
        return Region(region.buffer, region.offsets, extents)

    def region(self, node: ast.expr) -> Region:
        """A T.copy / T.atomic_add operand: a whole buffer, slices, or corner indices."""
        if not isinstance(node, ast.Subscript):
            buffer = self.eval(node)
            if not isinstance(buffer, Buffer):
                self.error(node, f"expected a buffer or a buffer region, got {buffer!r}")
            self.refuse_emitter_operand(buffer, node)
            extents = [d if isinstance(d, int) else RuntimeExtent() for d in buffer.dims]
            return Region(buffer, [0] * buffer.rank, extents)
        buffer = self.eval(node.value)
        if not isinstance(buffer, Buffer):
            self.error(node, f"expected a buffer region, got {buffer!r}")
        self.refuse_emitter_operand(buffer, node)
        elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(elements) > buffer.rank:
            self.error(node, f"buffer '{buffer.name}' has {buffer.rank} dimensions, indexed "
                             f"with {len(elements)}")
        offsets: list[Any] = []
        extents: list[int | None] = []
        for axis, element in enumerate(elements):
            if isinstance(element, ast.Slice):
                if element.step is not None:
                    self.error(node, "slices with a step are not supported")
                lower = self.rvalue(self.eval(element.lower), node) if element.lower else 0
                upper = (self.rvalue(self.eval(element.upper), node) if element.upper
                         else buffer.dims[axis])
                self.check_slice_bounds(buffer, axis, lower, upper, node)
                offsets.append(lower)
                extents.append(self.slice_extent(upper, lower, node))
            else:  # with slices elsewhere a scalar index is a unit extent; alone, a corner
                offsets.append(self.rvalue(self.eval(element), element))
                has_slices = any(isinstance(e, ast.Slice) for e in elements)
                extents.append(1 if has_slices else None)
        for axis in range(len(elements), buffer.rank):
            offsets.append(0)
            extents.append(self.slice_extent(buffer.dims[axis], 0, node))
        return Region(buffer, offsets, extents)

    def slice_extent(self, upper: Any, lower: Any, node: ast.AST) -> int | RuntimeExtent:
        """`upper - lower` where it is a constant (`(i + 1) * 64 - i * 64` is), else a
        RuntimeExtent that the other operand of the copy resolves."""
        if isinstance(upper, int) and isinstance(lower, int):
            extent = upper - lower
        else:
            upper_form, lower_form = self.affine_of(upper), self.affine_of(lower)
            difference = (upper_form - lower_form) if upper_form and lower_form else None
            extent = difference.constant if difference is not None else None
        if extent is None:
            return RuntimeExtent()
        if extent <= 0:
            self.error(node, f"slice extent must be positive, got {extent}")
        return extent

    def paired_boxes(self, src: Region, dst: Region, what: str,
                     node: ast.AST) -> tuple[Region, Region]:
        """The boxes of a two-operand region op, as TileLang pairs them: a corner operand
        (A[y, x]) takes the other's extents; a slice of run-time length takes the extent of
        the other's matching dimension (their non-unit dimensions paired in order), so a copy
        of `K[b, s:e, :]` into a (64, 128) tile moves 64 rows from the run-time row s. Loads
        past the tensor's end read zeros and stores there are skipped, as for any box."""
        if src.is_corner and dst.is_corner:
            self.error(node, f"{what} cannot tell the box to copy: give one side as a whole "
                             "buffer or with slices (A[a:b, c:d])")
        if src.is_corner:
            src = self.fill_extents(src, dst.extents, node)
        if dst.is_corner:
            dst = self.fill_extents(dst, src.extents, node)
        if src.has_runtime_extent or dst.has_runtime_extent:
            src_axes = [axis for axis, e in enumerate(src.extents) if e != 1]
            dst_axes = [axis for axis, e in enumerate(dst.extents) if e != 1]
            if len(src_axes) != len(dst_axes):
                self.error(node, f"{what}: a box of shape {_box_text(src)} does not match a box "
                                 f"of shape {_box_text(dst)}")
            src_extents, dst_extents = list(src.extents), list(dst.extents)
            for src_axis, dst_axis in zip(src_axes, dst_axes, strict=True):
                src_extent, dst_extent = src_extents[src_axis], dst_extents[dst_axis]
                if isinstance(src_extent, RuntimeExtent) and isinstance(dst_extent,
                                                                        RuntimeExtent):
                    self.error(node, f"{what}: both boxes, {_box_text(src)} and "
                                     f"{_box_text(dst)}, have a length known only at run time "
                                     "in the same dimension; one side must give it as a "
                                     "constant (a block-level tile or a constant-length slice)")
                if isinstance(src_extent, RuntimeExtent):
                    src_extents[src_axis] = dst_extent
                elif isinstance(dst_extent, RuntimeExtent):
                    dst_extents[dst_axis] = src_extent
            src = Region(src.buffer, src.offsets, src_extents)
            dst = Region(dst.buffer, dst.offsets, dst_extents)
        if _squeeze(src.extents) != _squeeze(dst.extents):
            self.error(node, f"{what} copies a box of shape {tuple(src.extents)} into a box of "
                             f"shape {tuple(dst.extents)}")
        self.check_box_bounds(src, what, node)
        self.check_box_bounds(dst, what, node)
        return src, dst

    def check_slice_bounds(self, buffer: Buffer, axis: int, lower: Any, upper: Any,
                           node: ast.AST) -> None:
        """A slice whose constant bounds leave its dimension is an error (it would copy
        zeros or another buffer's memory); Python's clamping of slices is not TileLang's."""
        size = buffer.dims[axis]
        for bound in (lower, upper):
            value = _constant_index(bound)
            if value is not None and isinstance(size, int) and not 0 <= value <= size:
                self.error(node, f"slice {_slice_text(lower, upper)} is out of bounds for "
                                 f"dimension {axis} of {_buffer_text(buffer)}")

    def check_box_bounds(self, region: Region, what: str, node: ast.AST) -> None:
        """A box at a constant offset must start inside its buffer; one in a block-level
        buffer must also end inside it. A box of a global tensor may run past the tensor's
        end (a ragged last tile): loads there read zeros and stores are skipped."""
        buffer = region.buffer
        for axis, (offset, extent, size) in enumerate(
                zip(region.offsets, region.extents, buffer.dims, strict=True)):
            start = _constant_index(offset)
            if start is None or not isinstance(size, int) or not isinstance(extent, int):
                continue
            inside = 0 <= start < size and (buffer.scope == "global" or start + extent <= size)
            if not inside:
                self.error(node, f"{what}: the box {_box_text(region)} at offset {start} is "
                                 f"out of bounds for dimension {axis} of {_buffer_text(buffer)}")

    def check_index_bounds(self, buffer: Buffer, indices: list[Any],
                           node: ast.AST | None) -> None:
        """A constant index outside its dimension is an error at the line: the kernel would
        read or write the memory next to the buffer (negative indices do not count from the
        end, as they do not in TileLang)."""
        for axis, (index, size) in enumerate(zip(indices, buffer.dims, strict=True)):
            value = _constant_index(index)
            if value is not None and isinstance(size, int) and not 0 <= value < size:
                self.error(node, f"index {value} is out of bounds for dimension {axis} of "
                                 f"{_buffer_text(buffer)}")
        self.grow_to_parallel_extents(buffer, indices)

    def grow_to_parallel_extents(self, buffer: Buffer, indices: list[Any]) -> None:
        """A fragment indexed by exactly the variables of the T.Parallel around the access,
        in order, holds the loop's points: TileLang gives such a fragment the loop's own
        layout, so `sinks[i]` over T.Parallel(block_M) on a fragment of `heads` elements
        keeps block_M values, one per point. The fragment's memory grows to the loop's
        extents here, so every target stores each point's value in an element of its own
        (none past the fragment's end); its declared shape stays what whole-buffer ops
        (T.copy, T.fill, reduces) and constant indices see."""
        if buffer.scope != "fragment" or is_alias(buffer) or not indices:
            return
        arguments = [i.value for i in indices if isinstance(i, Scalar)]
        if len(arguments) != len(indices) or not all(
                isinstance(a, ir.BlockArgument) for a in arguments):
            return
        block = arguments[0].owner
        loop = block.owner
        if loop.name != "tile.parallel" or list(block.arguments) != arguments:
            return
        extents = list(ir.DenseI64ArrayAttr(loop.attributes["extents"]))
        if not all(isinstance(d, int) for d in buffer.dims) or all(
                e <= d for e, d in zip(extents, buffer.dims, strict=True)):
            return
        old = ir.MemRefType(buffer.value.type)
        grown = [max(e, d) for e, d in zip(extents, old.shape, strict=True)]
        buffer.value.set_type(ir.MemRefType.get(grown, old.element_type,
                                                memory_space=old.memory_space))

    def static_box(self, region: Region, what: str, node: ast.AST) -> Region:
        """`region` where its extents must be known without another operand."""
        if region.is_corner or region.has_runtime_extent:
            self.error(node, f"{what} needs the region's extents as constants, got "
                             f"{_box_text(region)}: write it with slices of constant length")
        return region

    def affine_of(self, value: Any) -> Affine | None:
        """`value`'s affine form; an integer Scalar of unknown make is a var of its own."""
        if isinstance(value, int):
            return Affine((), value)
        if isinstance(value, Scalar) and _tracks_affine(value.dtype):
            if value.affine is None:
                value.affine = Affine.variable()
            return value.affine
        return None

    # ------------------------------------------------------------------ views and im2col

    def tensor_view(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Buffer:
        """`T.Tensor(shape, dtype, A.data)`: parameter A's memory seen with another shape."""
        try:
            bound = inspect.signature(T.Tensor).bind(*args, **kwargs)
        except TypeError as error:
            self.error(node, f"T.Tensor: {error}")
        bound.apply_defaults()
        data = bound.arguments["data"]
        if not isinstance(data, BufferData):
            self.error(node, f"T.Tensor's data is a tensor's memory, as `A.data`, got {data!r}")
        dtype = self._dtype(bound.arguments["dtype"], node)
        return self.reshaped(data.buffer, bound.arguments["shape"], dtype, node)

    def t_reshape(self, nodes: dict, node: ast.Call) -> Buffer:
        source = self.buffer_arg(nodes, "src", node)
        return self.reshaped(source, self.arg(nodes, "shape"), source.dtype, node)

    def t_view(self, nodes: dict, node: ast.Call) -> Buffer:
        source = self.buffer_arg(nodes, "src", node, views=True)
        shape, dtype = self.arg(nodes, "shape"), self.arg(nodes, "dtype")
        dtype = source.dtype if dtype is None else self._dtype(dtype, node)
        if not dtype.interchangeable(source.dtype):
            return self.reinterpreted_view(source, shape, dtype, node)
        return self.reshaped(source, source.dims if shape is None else shape, dtype, node)

    def reinterpreted_view(self, source: Buffer, shape: Any, dtype: T.DType,
                           node: ast.AST) -> Buffer:
        """`T.view(buf, shape, dtype)` of another element type: the buffer's bytes read and
        written as `dtype` (its shape by default the source's, the last dimension scaled by
        the sizes' ratio). Each element of the view is several of the source's side by side,
        put together and taken apart by the view's loads and stores."""
        self.require_kernel(node, "a view of a buffer")
        if source.scope not in ("shared", "local"):
            self.error(node, f"T.view of '{source.name}' as {dtype}: tilec reinterprets the "
                             f"bytes of shared and local buffers, not of a {source.scope} one")
        narrow = min(source.dtype.bits, dtype.bits)
        if narrow < 8 or T.bool in (source.dtype, dtype) or dtype.bits % source.dtype.bits:
            self.error(node, f"T.view of '{source.name}' ({source.dtype}) as {dtype}: tilec "
                             "reinterprets a buffer as elements as wide as its own or wider, "
                             "whole multiples of them (a narrower element written alone would "
                             "rewrite its neighbours' bytes), of 8 bits or more and not bool")
        if not all(isinstance(d, int) for d in source.dims):
            self.error(node, f"buffer '{source.name}' has dynamic sizes; tilec views buffers "
                           "of static shape only")
        parts = dtype.bits // source.dtype.bits
        if shape is None:
            if source.dims[-1] % parts:
                self.error(node, f"T.view of '{source.name}' {source.dims} as {dtype}: its last "
                                 f"dimension does not hold whole {dtype} elements; give the "
                                 "view's shape")
            shape = (*source.dims[:-1], source.dims[-1] // parts)
        shape = list(shape) if isinstance(shape, (tuple, list)) else [shape]
        if not shape or not all(isinstance(d, int) and not isinstance(d, builtins.bool)
                                and d > 0 for d in shape):
            self.error(node, f"a view's shape is a tuple of positive ints known at compile "
                             f"time, got {tuple(shape)!r}")
        view_bytes = pymath.prod(shape) * dtype.bytes
        source_bytes = pymath.prod(source.dims) * source.dtype.bytes
        if view_bytes != source_bytes:
            self.error(node, f"a {dtype} view of shape {tuple(shape)} takes {view_bytes} bytes, "
                             f"but buffer '{source.name}' ({source.dtype}, shape "
                             f"{source.dims}) holds {source_bytes}")
        return reinterpreted(source, tuple(shape), dtype)

    def reshaped(self, source: Buffer, shape: Any, dtype: T.DType, node: ast.AST) -> Buffer:
        """A row-major reinterpretation of a buffer's memory: no data moves, so copies and
        element accesses through the view read and write the source. A tensor parameter's view
        is a memref of its own; a shared, fragment or local buffer's is an alias (`aliased`)."""
        self.require_kernel(node, "a view of a buffer")
        if source.scope not in ("global", "shared", "fragment", "local"):
            self.error(node, f"a {source.scope} buffer ('{source.name}') cannot be viewed with "
                             "another shape")
        if not dtype.interchangeable(source.dtype):
            self.error(node, f"a view of '{source.name}' keeps its dtype {source.dtype}, got "
                             f"{dtype} (tilec does not reinterpret element types)")
        shape = list(shape) if isinstance(shape, (tuple, list)) else [shape]
        if not shape or not all(isinstance(d, int) and not isinstance(d, builtins.bool)
                                and d > 0 for d in shape):
            self.error(node, f"a view's shape is a tuple of positive ints known at compile "
                             f"time, got {tuple(shape)!r}")
        if not all(isinstance(d, int) for d in source.dims):
            self.error(node, f"buffer '{source.name}' has dynamic sizes; tilec views buffers "
                             "of static shape only")
        count, source_count = pymath.prod(shape), pymath.prod(source.dims)
        if count != source_count:
            self.error(node, f"a view of shape {tuple(shape)} has {count} elements, but buffer "
                             f"'{source.name}' of shape {source.dims} has {source_count}")
        if source.scope != "global":
            return aliased(source, tuple(shape))
        strides = [pymath.prod(shape[axis + 1:]) for axis in range(len(shape))]
        value = memref.reinterpret_cast(tensor_type(tuple(shape), source.dtype), source.value,
                                        [], [], [], [0], shape, strides)
        return Buffer(value, "", tuple(shape), source.dtype, "global")

    def t_im2col(self, nodes: dict, node: ast.Call) -> None:
        """A T.Parallel over `col` whose points load their image element, clamped into the
        image and replaced by zero where the patch reaches into the padding (or past the
        last output pixel or patch column). Where the tile's columns divide the channels, a
        tile row is one tap's run of channels: the tap and the bounds are computed from the
        tile's first column (free of the column variable, so the compiler reads each row's
        run as vectors, and can issue it as an async copy), the channel is that run's plus j."""
        img, col = self.buffer_arg(nodes, "img", node), self.buffer_arg(nodes, "col", node)
        kernel, stride, dilation, pad = (self.const_arg(nodes, key, node) for key in
                                         ("kernel", "stride", "dilation", "pad"))
        for key, value, least in (("kernel", kernel, 1), ("stride", stride, 1),
                                  ("dilation", dilation, 1), ("pad", pad, 0)):
            if not isinstance(value, int) or isinstance(value, builtins.bool) or value < least:
                self.error(node, f"T.im2col's {key} is an int >= {least}, got {value!r}")
        if img.scope != "global" or img.rank != 4 or not all(isinstance(d, int)
                                                             for d in img.dims):
            self.error(node, f"T.im2col gathers from an NHWC tensor parameter of static shape; "
                             f"'{img.name}' is a {img.scope} buffer of shape {img.dims}")
        if col.scope == "global" or col.rank != 2:
            self.error(node, f"T.im2col gathers into a 2-d block-level tile; '{col.name}' is a "
                             f"{col.scope} buffer of shape {col.dims}")
        if col.dtype != img.dtype:
            self.error(node, f"T.im2col copies {img.dtype} into {col.dtype}: the dtypes must "
                             "match")
        batch, height, width, channels = img.dims
        out_h = (height + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1
        out_w = (width + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1
        if out_h <= 0 or out_w <= 0:
            self.error(node, f"a {kernel}x{kernel} kernel (dilation {dilation}, padding {pad}) "
                             f"does not fit a {height}x{width} image")
        nhw_step, c_step = self.arg(nodes, "nhw_step"), self.arg(nodes, "c_step")
        rows, cols = col.dims
        op = tile.ParallelOp([rows, cols])
        block = op.body.blocks.append(ir.IndexType.get(), ir.IndexType.get(),
                                      arg_locs=[self.location(node)] * 2)
        with ir.InsertionPoint(block):
            i, j = (Scalar(arg, T.index, affine=Affine.variable()) for arg in block.arguments)
            pixel = self.binop("+", self.binop("*", nhw_step, rows, node), i, node)
            first = self.binop("*", c_step, cols, node)
            column = self.binop("+", first, j, node)
            # one tap per tile row where the columns divide the channels: the tap from the
            # row's first column
            tap_column = first if channels % cols == 0 else column
            image = self.binop("//", pixel, out_h * out_w, node)
            h_at = self.binop("*", self.binop("%", self.binop("//", pixel, out_w, node), out_h,
                                              node), stride, node)
            w_at = self.binop("*", self.binop("%", pixel, out_w, node), stride, node)
            kh = self.binop("//", tap_column, kernel * channels, node)
            kw = self.binop("%", self.binop("//", tap_column, channels, node), kernel, node)
            h = self.binop("-", self.binop("+", h_at, self.binop("*", kh, dilation, node), node),
                           pad, node)
            w = self.binop("-", self.binop("+", w_at, self.binop("*", kw, dilation, node), node),
                           pad, node)
            checks = [self.compare("lt", image, batch, node), self.compare("lt", kh, kernel, node),
                      self.compare("ge", h, 0, node), self.compare("lt", h, height, node),
                      self.compare("ge", w, 0, node), self.compare("lt", w, width, node)]
            inside = checks[0].value
            for check in checks[1:]:
                inside = arith.andi(inside, check.value)
            indices = [self.min_or_max("min", image, batch - 1, node),
                       self.clamped(h, height, node), self.clamped(w, width, node),
                       self.binop("%", column, channels, node) if tap_column is column else
                       self.binop("+", self.binop("%", first, channels, node), j, node)]
            value = self.load(img, indices, node)
            self.store(col, [i, j], self.select(Scalar(inside, T.bool), value, 0, node), node)
            tile.yield_()

    def clamped(self, index: Scalar, size: int, node: ast.AST) -> Any:
        """`index` moved into [0, size): a load there is safe where its value is not used."""
        return self.min_or_max("min", self.min_or_max("max", index, 0, node), size - 1, node)

    def t_atomic_add(self, nodes: dict, node: ast.Call) -> Scalar | None:
        self.require_kernel(node, "T.atomic_add")
        order = self.const_arg(nodes, "memory_order", node)
        if order not in (None, *_MEMORY_ORDERS):
            self.error(node, f"memory_order is one of {', '.join(_MEMORY_ORDERS)}, got {order!r}")
        if order == "seq_cst":
            self.error(node, "tilec's atomics are acq_rel read-modify-writes; memory_order="
                             "'seq_cst' is not supported")
        if self.const_arg(nodes, "return_prev", node, False):
            return self.atomic_add_returning(nodes, node)
        if self.const_arg(nodes, "use_tma", node, False):
            self.note(node, "T.atomic_add(use_tma=True) is lowered as per-element atomics "
                            "(tilec has no TMA reduce)")
        if self.const_arg(nodes, "annotations", node):
            self.note(node, "T.atomic_add's annotations are not used by tilec")
        dst = self.region(nodes["dst"])
        value_node = nodes["value"]
        is_region = isinstance(value_node, ast.Subscript) and any(
            isinstance(e, ast.Slice) for e in (
                value_node.slice.elts if isinstance(value_node.slice, ast.Tuple)
                else [value_node.slice]))
        value = None if is_region else self.eval(value_node)
        if is_region or (isinstance(value, Buffer) and value.scope != "var"):
            self.atomic_add_region(dst, self.region(value_node), node)
            return
        if dst.buffer.rank != len(dst.offsets) or not all(e is None for e in dst.extents):
            self.error(node, "T.atomic_add(dst, value) adds a scalar to one element: index every "
                             "dimension of dst")
        scalar = self.materialize(self.rvalue(value, node), dst.buffer.dtype, node)
        self.emit_atomic_add(dst.buffer, dst.offsets, scalar, node)

    def t_dp4a(self, nodes: dict, node: ast.Call) -> None:
        """C[k] += sum of A[i + e] * B[j + e] over e < 4, in int32 (TileLang's DP4A: the
        products of four int8 pairs; ptxas fuses what it can)."""
        self.require_kernel(node, "T.dp4a")
        regions = {key: self.region(nodes[key]) for key in ("A", "B", "C")}
        for key, region in regions.items():
            if not _is_element(region) or region.buffer.rank != len(region.offsets):
                self.error(node, f"T.dp4a's {key} names an element: index every dimension of "
                                 f"'{region.buffer.name}'")
            wanted = T.int32 if key == "C" else T.int8
            if region.buffer.dtype != wanted:
                self.error(node, f"T.dp4a's {key} is {wanted}, got '{region.buffer.name}' of "
                                 f"{region.buffer.dtype}")
        a, b, c = regions["A"], regions["B"], regions["C"]
        total = self.load(c.buffer, c.offsets, node)
        for element in range(4):
            x, y = ([*r.offsets[:-1], self.binop("+", r.offsets[-1], element, node)]
                    for r in (a, b))
            product = self.binop("*", self.cast(self.load(a.buffer, x, node), T.int32, node),
                                 self.cast(self.load(b.buffer, y, node), T.int32, node), node)
            total = self.binop("+", total, product, node)
        self.store(c.buffer, c.offsets, total, node)

    def t_atomic_addx2(self, nodes: dict, node: ast.Call) -> None:
        self.atomic_add_vector(2, nodes, node)

    def t_atomic_addx4(self, nodes: dict, node: ast.Call) -> None:
        self.atomic_add_vector(4, nodes, node)

    def atomic_add_vector(self, width: int, nodes: dict, node: ast.Call) -> None:
        """`T.atomic_addx4(dst[..., j], value[..., k])`: dst[..., j + e] += value[..., k + e]
        for e < width, each element's add atomic (TileLang's vector atomics promise no more:
        another thread may see some of the elements added and not the others)."""
        what = f"T.atomic_addx{width}"
        self.require_kernel(node, what)
        if self.const_arg(nodes, "return_prev", node, False):
            self.error(node, f"{what}(return_prev=True) is not supported by tilec: use "
                             "T.atomic_add(dst[i], v, return_prev=True) per element")
        dst, value = self.region(nodes["dst"]), self.region(nodes["value"])
        for region, key in ((dst, "dst"), (value, "value")):
            if not _is_element(region) or region.buffer.rank != len(region.offsets):
                self.error(node, f"{what}'s {key} names the first of {width} elements: index "
                                 f"every dimension of '{region.buffer.name}'")
        if dst.buffer.scope not in ("global", "shared"):
            self.error(node, f"{what} adds into a global or shared buffer, not the "
                             f"{dst.buffer.scope} buffer '{dst.buffer.name}'")
        for element in range(width):
            at = [*dst.offsets[:-1], self.binop("+", dst.offsets[-1], element, node)]
            source = [*value.offsets[:-1], self.binop("+", value.offsets[-1], element, node)]
            scalar = self.materialize(self.load(value.buffer, source, node), dst.buffer.dtype,
                                      node)
            self.emit_atomic_add(dst.buffer, at, scalar, node)

    def atomic_add_returning(self, nodes: dict, node: ast.Call) -> Scalar:
        """`T.atomic_add(dst[i], v, return_prev=True)`: the element's value before the add,
        as the thread that ran it saw it (memref.atomic_rmw). Kernel-level code only: in a
        T.Parallel the threads holding copies of a point would each add."""
        if inside_parallel():
            self.error(node, "T.atomic_add(return_prev=True) inside T.Parallel is not supported "
                             "by tilec; use it in per-thread code (outside T.Parallel)")
        dst = self.region(nodes["dst"])
        if not _is_element(dst) or dst.buffer.rank != len(dst.offsets):
            self.error(node, "T.atomic_add(return_prev=True) adds to one element: index every "
                             "dimension of dst")
        value = self.materialize(self.rvalue(self.eval(nodes["value"]), node), dst.buffer.dtype,
                                 node)
        self.check_atomic_dtype(dst.buffer, node)
        self.refuse_reinterpreted(dst.buffer, "T.atomic_add into", node)
        buffer, indices = self.placed(dst.buffer, dst.offsets, node)
        kind = arith.AtomicRMWKind.addf if buffer.dtype.is_float else arith.AtomicRMWKind.addi
        previous = memref.AtomicRMWOp(kind, value.value, buffer.value,
                                      [self.index_value(i, node) for i in indices]).result
        self.var_readings.clear()
        return Scalar(previous, buffer.dtype)

    def atomic_add_region(self, dst: Region, src: Region, node: ast.AST) -> None:
        """The region form: one scalar atomic per element, spread over the block's threads."""
        src, dst = self.paired_boxes(self.static_box(src, "the value of T.atomic_add", node),
                                     dst, "T.atomic_add", node)
        with self.over_box(src, node) as (point, value):
            value = self.materialize(value, dst.buffer.dtype, node)
            self.emit_atomic_add(dst.buffer, self.box_indices(dst, point), value, node)

    def check_atomic_dtype(self, buffer: Buffer, node: ast.AST) -> None:
        """float8 has no atomic add on any target (LLVM rejected the atomicrmw deep in the
        pipeline); a bool one would compute in one bit (the op's verifier named i1 and i8)."""
        if buffer.dtype.kind == "bool":
            self.error(node, f"T.atomic_add into the bool buffer '{buffer.name}' computes in "
                             f"one bit: add into an int32 buffer to count")
        if buffer.dtype.is_float and buffer.dtype.bits < 16:
            self.error(node, f"T.atomic_add into '{buffer.name}' of {buffer.dtype}: there is no "
                             "atomic add of 8-bit floats; accumulate in float16 or float32")

    def emit_atomic_add(self, buffer: Buffer, indices: list[Any], value: Scalar,
                        node: ast.AST) -> None:
        self.check_atomic_dtype(buffer, node)
        self.refuse_reinterpreted(buffer, "T.atomic_add into", node)
        buffer, indices = self.placed(buffer, indices, node)
        tile.atomic_add(buffer.value, [self.index_value(i, node) for i in indices], value.value)

    def t_Pipelined(self, nodes: dict, node: ast.Call) -> LoopSpec:  # noqa: N802
        options = {key: self.const_arg(nodes, key, node) for key in
                   ("num_stages", "order", "stage", "group") if key in nodes}
        start, stop = self.arg(nodes, "start"), self.arg(nodes, "stop")
        return LoopSpec("pipelined", [start] if stop is None else [start, stop], options)

    def t_Parallel(self, nodes: dict, node: ast.Call) -> LoopSpec:  # noqa: N802
        """TileLang's hints are checked and left to tilec (see T.Parallel's docstring); its
        `annotations` are not even evaluated (TileLang's loop annotation keys)."""
        if self.arg(nodes, "loop_layout") is not None:
            self.error(node, "T.Parallel(loop_layout=...) is not supported by tilec: lay the "
                             "fragments the loop writes out with T.annotate_layout instead")
        width = self.arg(nodes, "coalesced_width")
        if width is not None and (not isinstance(width, int) or width < 1):
            self.error(node, f"T.Parallel(coalesced_width=...) is a positive int, got {width!r}")
        return LoopSpec("parallel", self.arg(nodes, "extents", []))

    def t_parallel(self, nodes: dict, node: ast.Call) -> LoopSpec:
        start, stop = self.arg(nodes, "start"), self.arg(nodes, "stop")
        start, stop = (0, start) if stop is None else (start, stop)
        extent = self.binop("-", stop, start, node)
        return LoopSpec("parallel", [extent], {"starts": [start], "fuses": True})

    def t_serial(self, nodes: dict, node: ast.Call) -> LoopSpec:
        return LoopSpec("serial", self.arg(nodes, "bounds", []))

    def t_Persistent(self, nodes: dict, node: ast.Call) -> LoopSpec:  # noqa: N802
        domain = self.const_arg(nodes, "domain", node)
        wave = self.const_arg(nodes, "wave_size", node)
        group = self.const_arg(nodes, "group_size", node, 8)
        sizes = list(domain) if isinstance(domain, (list, tuple)) else [domain]
        if not sizes or not all(isinstance(v, int) and not isinstance(v, builtins.bool)
                                and v > 0 for v in [*sizes, wave, group]):
            self.error(node, "T.Persistent takes a domain of positive compile-time sizes, a "
                             "wave size and a group size (positive ints)")
        return LoopSpec("persistent", [sizes, wave, self.arg(nodes, "index"), group])

    def t_unroll(self, nodes: dict, node: ast.Call) -> LoopSpec:
        return LoopSpec("unroll", self.arg(nodes, "bounds", []))

    def t_vectorized(self, nodes: dict, node: ast.Call) -> LoopSpec:
        """A short per-thread loop: unrolled, so its accesses can be vectorized."""
        return LoopSpec("vectorized", self.arg(nodes, "bounds", []))

    def t_pow(self, nodes: dict, node: ast.Call) -> Any:
        return self.binop("**", self.arg(nodes, "x"), self.arg(nodes, "y"), node)

    def t_clamp(self, nodes: dict, node: ast.Call) -> Any:
        low = self.min_or_max("max", self.rvalue(self.arg(nodes, "x"), node),
                              self.rvalue(self.arg(nodes, "low"), node), node)
        return self.min_or_max("min", low, self.rvalue(self.arg(nodes, "high"), node), node)

    def t_max_value(self, nodes: dict, node: ast.Call) -> Scalar:
        dtype = self._dtype(self.arg(nodes, "dtype"), node)
        return self.constant(_extreme(dtype, largest=True), dtype, node)

    def t_min_value(self, nodes: dict, node: ast.Call) -> Scalar:
        dtype = self._dtype(self.arg(nodes, "dtype"), node)
        return self.constant(_extreme(dtype, largest=False), dtype, node)

    def t_ceildiv(self, nodes: dict, node: ast.Call) -> Any:
        a, b = self.rvalue(self.arg(nodes, "a"), node), self.rvalue(self.arg(nodes, "b"), node)
        for value in (a, b):
            if _is_py_value(value) and not isinstance(value, int):
                self.error(node, f"T.ceildiv takes integers, got {value!r}")
        if isinstance(b, int) and b == 0:
            self.error(node, "T.ceildiv divides by zero: its divisor is 0")
        if _is_py_value(a) and _is_py_value(b):
            return -(-a // b)
        dtype = self.result_dtype(a, b, node)
        if not dtype.is_integer:
            self.error(node, "T.ceildiv takes integers")
        x, y = self.materialize(a, dtype, node), self.materialize(b, dtype, node)
        result = Scalar(arith.ceildivsi(x.value, y.value), dtype)
        if not self.in_kernel and _has_expr(a) and _has_expr(b):
            sa, sb = _expr(a), _expr(b)
            result.expr = f"(({sa} + {sb} - 1) // {sb})"
        return result

    def t_floordiv(self, nodes: dict, node: ast.Call) -> Any:
        return self.binop("//", self.arg(nodes, "a"), self.arg(nodes, "b"), node)

    def t_floormod(self, nodes: dict, node: ast.Call) -> Any:
        return self.binop("%", self.arg(nodes, "a"), self.arg(nodes, "b"), node)

    def t_truncdiv(self, nodes: dict, node: ast.Call) -> Any:
        return self.binop("truncdiv", self.arg(nodes, "a"), self.arg(nodes, "b"), node)

    def t_truncmod(self, nodes: dict, node: ast.Call) -> Any:
        return self.binop("truncmod", self.arg(nodes, "a"), self.arg(nodes, "b"), node)

    def t_Cast(self, nodes: dict, node: ast.Call) -> Any:  # noqa: N802
        return self.cast(self.arg(nodes, "value"), self._dtype(self.arg(nodes, "dtype"), node),
                         node)

    def t_reinterpret(self, nodes: dict, node: ast.Call) -> Scalar:
        """The bits of a scalar read as another dtype of the same width (TileLang's argument
        order is (value, dtype); the older (dtype, value) is accepted too)."""
        value, dtype = self.arg(nodes, "value"), self.arg(nodes, "dtype")
        if isinstance(value, (str, T.DType)) and not isinstance(dtype, (str, T.DType)):
            value, dtype = dtype, value
        target = self._dtype(dtype, node)
        value = self.rvalue(value, node)
        if not isinstance(value, Scalar):
            if not isinstance(value, PyNumber):
                self.error(node, f"T.reinterpret takes a scalar, got {value!r}")
            value = self.constant(value, T.float32 if isinstance(value, float) else T.int32,
                                  node)
        source = value.dtype
        if T.index in (source, target) or T.bool in (source, target):
            self.error(node, f"T.reinterpret cannot take {source} to {target}")
        if source.bits != target.bits:
            self.error(node, f"T.reinterpret keeps the bits: {source} has {source.bits}, "
                             f"{target} has {target.bits}")
        if source.interchangeable(target) or (source.is_integer and target.is_integer):
            return Scalar(value.value, target)
        if source.is_pair or target.is_pair:  # through a one-element vector of the scalar
            if source.is_pair:
                word = ir.VectorType.get([1], mlir_type(target))
                return Scalar(vector.extract(vector.bitcast(word, value.value), [], [0]),
                              target)
            word = vector.broadcast(ir.VectorType.get([1], mlir_type(source)), value.value)
            return Scalar(vector.bitcast(mlir_type(target), word), target)
        return Scalar(arith.bitcast(mlir_type(target), value.value), target)

    def t_shift_left(self, nodes: dict, node: ast.Call) -> Any:
        return self.binop("<<", self.arg(nodes, "a"), self.arg(nodes, "b"), node)

    def t_shift_right(self, nodes: dict, node: ast.Call) -> Any:
        return self.binop(">>", self.arg(nodes, "a"), self.arg(nodes, "b"), node)

    def t_evaluate(self, nodes: dict, node: ast.Call) -> None:
        """The expression was built (its calls took effect); its value is dropped."""
        self.arg(nodes, "value")

    def t_if_then_else(self, nodes: dict, node: ast.Call) -> Any:
        cond = self.rvalue(self.arg(nodes, "cond"), node)
        then_value, else_value = self.arg(nodes, "then_value"), self.arg(nodes, "else_value")
        if _is_py_value(cond):
            return then_value if cond else else_value
        return self.select(cond, then_value, else_value, node)

    def t_max(self, nodes: dict, node: ast.Call) -> Any:
        return self.reduce_minmax("max", [self.arg(nodes, "a"), self.arg(nodes, "b")], node)

    def t_min(self, nodes: dict, node: ast.Call) -> Any:
        return self.reduce_minmax("min", [self.arg(nodes, "a"), self.arg(nodes, "b")], node)

    def reduce_minmax(self, kind: str, values: list[Any], node: ast.AST) -> Any:
        values = [self.rvalue(v, node) for v in values]
        result = values[0]
        for value in values[1:]:
            result = self.min_or_max(kind, result, value, node)
        return result

    def min_or_max(self, kind: str, a: Any, b: Any, node: ast.AST) -> Any:
        if _is_py_value(a) and _is_py_value(b):
            return builtins.max(a, b) if kind == "max" else builtins.min(a, b)
        dtype = self.exact_mixed_type(a, b, "taking T.max / T.min of", node) or \
            self.result_dtype(a, b, node)
        x, y = self.materialize(a, dtype, node), self.materialize(b, dtype, node)
        if dtype.is_float:
            op = arith.maximumf if kind == "max" else arith.minimumf
        elif dtype.is_unsigned:
            op = arith.maxui if kind == "max" else arith.minui
        else:
            op = arith.maxsi if kind == "max" else arith.minsi
        return Scalar(op(x.value, y.value), dtype)

    def t_abs(self, nodes: dict, node: ast.Call) -> Any:
        return self.absolute(self.arg(nodes, "x"), node)

    def absolute(self, x: Any, node: ast.AST) -> Any:
        x = self.rvalue(x, node)
        if _is_py_value(x):
            return builtins.abs(x)
        if x.dtype.is_float:
            return Scalar(mmath.absf(x.value), x.dtype)
        return Scalar(mmath.absi(x.value), x.dtype)

    def math_op(self, name: str, x: Any, node: ast.AST) -> Any:
        x = self.rvalue(x, node)
        device_op, host_op = _MATH_OPS[name]
        if isinstance(x, (Buffer, Region)):  # the op's verifier would name a memref type
            self.error(node, f"T.{name} of a whole buffer is not supported: index elements, "
                             "e.g. inside T.Parallel")
        if _is_py_value(x):
            try:
                return host_op(float(x))
            except (ValueError, OverflowError, ZeroDivisionError):  # sqrt(-1), log(0), exp(1000)
                x = self.constant(float(x), T.float32, node)  # the device's NaN or inf, not a raise
        if not x.dtype.is_float:
            x = self.cast(x, T.float32, node)
        return Scalar(device_op(x.value), x.dtype)

    def t_sigmoid(self, nodes: dict, node: ast.Call) -> Any:
        x = self.rvalue(self.arg(nodes, "x"), node)
        negated = -x if _is_py_value(x) else self.negate(x, node)
        denominator = self.binop("+", 1.0, self.math_op("exp", negated, node), node)
        return self.binop("/", 1.0, denominator, node)

    def negate(self, x: Scalar, node: ast.AST) -> Scalar:
        if not x.dtype.is_float:
            x = self.cast(x, T.float32, node)
        return Scalar(arith.negf(x.value), x.dtype)

    def t_cast(self, nodes: dict, node: ast.Call) -> Any:
        return self.cast(self.arg(nodes, "value"), self._dtype(self.arg(nodes, "dtype"), node),
                         node)

    def t_infinity(self, nodes: dict, node: ast.Call) -> Scalar:
        dtype = self._dtype(self.arg(nodes, "dtype"), node)
        if not dtype.is_float:
            self.error(node, f"T.infinity needs a float dtype, got {dtype}")
        return self.constant(float("inf"), dtype)

    # ------------------------------------------------------------------ scalars

    def rvalue(self, value: Any, node: ast.AST | None) -> Any:
        """The value a name stands for in an expression: vars are read, symbols measured."""
        if isinstance(value, Buffer) and value.scope == "var":
            reading = self.load(value, [0], node)
            if _tracks_affine(reading.dtype):
                reading.affine = self.var_readings.setdefault(id(value), Affine.variable())
            return reading
        if isinstance(value, ElementRef):
            return self.load(value.buffer, value.indices, node)
        if isinstance(value, T.Symbol):
            if value.name not in self.symbols:
                self.error(node, f"dynamic size '{value.name}' is not the size of any tensor "
                                 "parameter")
            return self.symbols[value.name]
        return value

    def pack_pair(self, dtype: T.DType, node: ast.Call) -> Scalar:
        """T.float16x2(a, b): the pair of two float16 values (a in the low half), or of one
        value twice."""
        if node.keywords or len(node.args) not in (1, 2):
            self.error(node, f"T.{dtype.name} takes one value (both halves) or two (low, high)")
        halves = [self.materialize(self.eval(arg), T.float16, arg) for arg in node.args]
        if len(halves) == 1:
            return Scalar(vector.broadcast(mlir_type(dtype), halves[0].value), dtype)
        return Scalar(vector.from_elements(mlir_type(dtype), [h.value for h in halves]), dtype)

    def constant(self, value: Any, dtype: T.DType, node: ast.AST | None = None) -> Scalar:
        if dtype.is_pair:
            pair = ir.VectorType(mlir_type(dtype))
            half = ir.FloatAttr.get(pair.element_type, float(value))
            return Scalar(arith.constant(pair, ir.DenseElementsAttr.get_splat(pair, half)), dtype)
        if dtype.is_float:
            result = arith.constant(mlir_type(dtype), float(value))
        else:
            value = int(value)
            if dtype == T.bool:
                value = int(builtins.bool(value))
            elif not _fits(value, dtype):
                low, high = dtype.integer_range
                self.error(node, f"the integer {value} does not fit in {dtype} ({low} to "
                                 f"{high})")
            result = arith.constant(mlir_type(dtype), value)
        affine = Affine((), int(value)) if _tracks_affine(dtype) else None
        return Scalar(result, dtype, affine=affine)

    def materialize(self, value: Any, dtype: T.DType, node: ast.AST | None) -> Scalar:
        value = self.rvalue(value, node)
        if isinstance(value, Scalar):
            return self.convert(value, dtype, node, implicit=True)
        if isinstance(value, PyNumber):
            if not dtype.is_float and isinstance(value, float) and not value.is_integer():
                self.error(node, f"dtype mismatch: the float {value} does not fit in {dtype}")
            return self.constant(value, dtype, node)
        self.error(node, f"expected a scalar value, got {value!r}")

    def index_value(self, value: Any, node: ast.AST | None = None) -> ir.Value:
        value = self.rvalue(value, node)
        if isinstance(value, builtins.bool) or not isinstance(value, (int, Scalar)):
            self.error(node, f"an index must be an integer, got {value!r}")
        if isinstance(value, Scalar) and not value.dtype.is_integer:
            self.error(node, f"an index must be an integer, got a {value.dtype} value")
        return self.materialize(value, T.index, node).value

    def cast(self, value: Any, dtype: T.DType, node: ast.AST) -> Any:
        value = self.rvalue(value, node)
        if _is_py_value(value):
            if not isinstance(value, PyNumber):
                self.error(node, f"cannot cast {value!r} to {dtype}")
            return self.constant(value, dtype, node)
        return self.convert(value, dtype, node, implicit=False)

    def convert(self, value: Scalar, dtype: T.DType, node: ast.AST | None,
                implicit: bool) -> Scalar:
        source = value.dtype
        if source == dtype:
            return value
        if source.interchangeable(dtype):
            return Scalar(value.value, dtype)
        if source.is_pair or dtype.is_pair:
            self.error(node, f"a {source} value cannot become {dtype}: T.float16x2(a, b) packs "
                             f"two float16 values, T.reinterpret reads the bits of a pair as a "
                             f"32-bit scalar and back")
        if implicit and source.is_float and not dtype.is_float:
            self.error(node, f"dtype mismatch: a {source} value where {dtype} is expected; "
                             f"convert it with T.cast(x, T.{dtype})")
        target = mlir_type(dtype)
        if dtype == T.bool:
            zero = self.constant(0, source)
            return self.compare("ne", value, zero, node)
        if source.is_float and dtype.is_float:
            if source.bits == dtype.bits:  # float16 <-> bfloat16 through float32
                return self.convert(self.convert(value, T.float32, node, implicit), dtype, node,
                                    implicit)
            op = arith.extf if dtype.bits > source.bits else arith.truncf
            return Scalar(op(target, value.value), dtype)
        if source.is_float:  # to an integer
            if dtype == T.index:
                return self.convert(self.convert(value, T.int64, node, implicit), dtype, node,
                                    implicit)
            return Scalar(float_to_integer(value.value, target, dtype.is_unsigned), dtype)
        if dtype.is_float:  # from an integer
            if source == T.index:
                value = self.convert(value, T.int64, node, implicit)
            op = arith.uitofp if value.dtype.is_unsigned else arith.sitofp
            return Scalar(op(target, value.value), dtype)
        # a widening keeps the value, so its affine form; a narrowing wraps it
        if source == T.index or dtype == T.index:
            op = arith.index_castui if source.is_unsigned else arith.index_cast
            affine = self.affine_of(value) if dtype == T.index else None
            return Scalar(op(target, value.value), dtype, expr=value.expr, affine=affine)
        if dtype.bits > source.bits:
            op = arith.extui if source.is_unsigned else arith.extsi
            affine = self.affine_of(value) if source.is_unsigned == dtype.is_unsigned else None
            return Scalar(op(target, value.value), dtype, affine=affine)
        if dtype.bits < source.bits:
            return Scalar(arith.trunci(target, value.value), dtype)
        return Scalar(value.value, dtype)  # int8 <-> uint8: same bits, other reading

    def result_dtype(self, a: Any, b: Any, node: ast.AST | None) -> T.DType:
        """TileLang-like promotion: literals take the other side's dtype, ints meet index."""
        if not isinstance(a, Scalar):
            a, b = b, a
        if not isinstance(a, Scalar):
            self.error(node, f"expected scalar values, got {a!r} and {b!r}")
        if not isinstance(b, Scalar):
            if isinstance(b, float) and not a.dtype.is_float and not b.is_integer():
                return T.float32
            if not isinstance(b, PyNumber):
                self.error(node, f"cannot combine a {a.dtype} value with {b!r}")
            return a.dtype
        da, db = a.dtype, b.dtype
        if da == db:
            return da
        if da.is_float and db.is_float:
            if da.bits == db.bits:
                return T.float32
            return da if da.bits > db.bits else db
        if da.is_float or db.is_float:
            return da if da.is_float else db
        if T.index in (da, db):
            return T.index
        if da == T.bool or db == T.bool:
            return db if da == T.bool else da
        if da.bits == db.bits:
            return da if not da.is_unsigned else db
        return da if da.bits > db.bits else db

    def binop(self, op: str, a: Any, b: Any, node: ast.AST | None) -> Any:
        a, b = self.rvalue(a, node), self.rvalue(b, node)
        if _is_py_value(a) and _is_py_value(b):
            try:
                return _PY_BINOPS[op](a, b)
            except (TypeError, ZeroDivisionError) as error:
                self.error(node, f"cannot compute {a!r} {op} {b!r}: {error}")
        if isinstance(a, (Buffer, Region)) or isinstance(b, (Buffer, Region)):
            self.error(node, "arithmetic on whole buffers is not supported: index elements, "
                             "e.g. inside T.Parallel")
        if op == "/" and any(isinstance(v, float) for v in (a, b)):  # true division
            a, b = (self.cast(v, T.float32, node) if isinstance(v, Scalar) and
                    v.dtype.is_integer else v for v in (a, b))
        if op == "/" and self.result_dtype(a, b, node).is_integer and not self.result_dtype(
                a, b, node).is_unsigned:
            self.error(node, "a / b of two signed integers is an error, as in TileLang (whose "
                             "integer division is ambiguous): write a // b for floor division "
                             "(Python's), T.truncdiv(a, b) for C's truncating one, or make an "
                             "operand a float for true division")
        identity = _identity_operand(op, a, b)
        if identity is not None:
            return identity
        dtype = (self.exact_mixed_type(a, b, "dividing", node) if op in _DIVISIONS else None
                 ) or self.result_dtype(a, b, node)
        if dtype.kind == "bool" and op not in _BOOL_OPERATORS:
            self.error(node, f"operator {op} on bool values computes in one bit (True + True "
                             f"is False): {_BOOL_ADVICE}")
        if op in _DIVISIONS + ("&", "|", "^", "<<", ">>") and dtype.is_integer:
            a, b = (_bit_pattern(v, dtype) if op in ("&", "|", "^") else v for v in (a, b))
            self.check_constant_operand(op, b, dtype, node)
        x, y = self.materialize(a, dtype, node), self.materialize(b, dtype, node)
        run_time = dtype.is_integer and _constant_index(b) is None
        if op in _DIVISIONS and run_time:
            guard = DivisorGuard(x.value, y.value, dtype)
            value = guard.result(op, self.scalar_op(op, x.value, guard.divisor, dtype, node))
        else:
            value = self.scalar_op(op, x.value, y.value, dtype, node)
        if op in ("<<", ">>") and run_time:
            value = clamped_shift(op, x.value, y.value, value, dtype)
        result = Scalar(value, dtype)
        if _tracks_affine(dtype):  # of the operands converted: only a widening keeps a form
            result.affine = _affine_op(op, x, y, self)
        if not self.in_kernel and _has_expr(a) and _has_expr(b) and op in ("+", "-", "*", "//",
                                                                            "%"):
            result.expr = f"({_expr(a)} {op} {_expr(b)})"
        return result

    def check_constant_operand(self, op: str, b: Any, dtype: T.DType, node: ast.AST | None
                               ) -> None:
        """A constant divisor of 0 or a constant shift outside the dtype's bits is an error at
        the line (Python raises; the hardware gives garbage or, on the CPU, SIGFPE)."""
        amount = _constant_index(b)
        if amount is None:
            return
        if op in _DIVISIONS and amount == 0:
            self.error(node, f"integer division by zero ({op} 0)")
        if op in ("<<", ">>") and not 0 <= amount < dtype.bits:
            self.error(node, f"a shift by {amount} is outside the {dtype.bits} bits of {dtype} "
                             f"(shift by 0 to {dtype.bits - 1})")

    def scalar_op(self, op: str, x: ir.Value, y: ir.Value, dtype: T.DType,
                  node: ast.AST | None) -> ir.Value:
        if op == "%":
            return floor_mod(x, y, dtype)
        if dtype.is_float:
            table = {"+": arith.addf, "-": arith.subf, "*": arith.mulf, "/": arith.divf,
                     "**": mmath.powf, "truncmod": arith.remf}
            if op == "//":
                return mmath.floor(arith.divf(x, y))
            if op == "truncdiv":
                return mmath.trunc(arith.divf(x, y))
            if op not in table:
                self.error(node, f"operator {op} needs integers, got {dtype}")
            return table[op](x, y)
        unsigned = dtype.is_unsigned
        table = {
            "+": arith.addi, "-": arith.subi, "*": arith.muli,
            "/": arith.divui if unsigned else arith.divsi,
            "truncdiv": arith.divui if unsigned else arith.divsi,
            "truncmod": arith.remui if unsigned else arith.remsi,
            "//": arith.divui if unsigned else arith.floordivsi,
            "&": arith.andi, "|": arith.ori, "^": arith.xori, "<<": arith.shli,
            ">>": arith.shrui if unsigned else arith.shrsi,
        }
        if op not in table:
            self.error(node, f"operator {op} is not supported on {dtype}")
        return table[op](x, y)

    def compare(self, kind: str, a: Any, b: Any, node: ast.AST | None) -> Any:
        a, b = self.rvalue(a, node), self.rvalue(b, node)
        if _is_py_value(a) and _is_py_value(b):
            return _PY_CMPOPS[kind](a, b)
        dtype = self.exact_mixed_type(a, b, "comparing", node) or self.result_dtype(a, b, node)
        if dtype.is_pair:
            self.error(node, f"T.{dtype.name} values are not compared (reinterpret them to "
                             f"T.uint32 and compare their halves)")
        x, y = self.materialize(a, dtype, node), self.materialize(b, dtype, node)
        if dtype.is_float:
            name = "UNE" if kind == "ne" else "O" + kind.upper()
            predicate = getattr(arith.CmpFPredicate, name)
            return Scalar(arith.cmpf(predicate, x.value, y.value), T.bool)
        if kind in ("eq", "ne"):
            name = kind
        else:
            name = ("u" if dtype.is_unsigned else "s") + kind
        return Scalar(arith.cmpi(getattr(arith.CmpIPredicate, name), x.value, y.value), T.bool)

    def exact_mixed_type(self, a: Any, b: Any, what: str, node: ast.AST | None
                         ) -> T.DType | None:
        """int64 for a signed and an unsigned integer that result_dtype would meet in one width
        (uint32 3e9 < int32 74 was True, T.max of them 74, 3e9 // 7 negative): compared,
        divided there as Python and torch do; None for any other pair. Against a uint64 no
        type holds both: an error."""
        if not _mixed_signedness(a, b):
            return None
        if max(v.dtype.bits for v in (a, b) if v.dtype.is_unsigned) >= 64:
            self.error(node, f"{what} {a.dtype} and {b.dtype} values: no integer type holds "
                             "both; cast one side (T.cast(x, T.int64))")
        return T.int64

    def to_bool(self, value: Any, node: ast.AST) -> Scalar:
        value = self.rvalue(value, node)
        if isinstance(value, Scalar):
            return value if value.dtype == T.bool else self.convert(value, T.bool, node, False)
        if not _is_py_value(value):
            self.error(node, f"expected a condition, got {value!r}")
        return self.constant(builtins.bool(value), T.bool)

    def select(self, cond: Any, a: Any, b: Any, node: ast.AST) -> Scalar:
        a, b = self.rvalue(a, node), self.rvalue(b, node)
        if _is_py_value(a) and _is_py_value(b):
            dtype = T.float32 if isinstance(a, float) or isinstance(b, float) else T.int32
        else:
            dtype = self.result_dtype(a, b, node)
        flag = self.to_bool(cond, node)
        x, y = self.materialize(a, dtype, node), self.materialize(b, dtype, node)
        return Scalar(arith.select(flag.value, x.value, y.value), dtype)

    # ------------------------------------------------------------------ elements

    def element_indices(self, buffer: Buffer, node: ast.Subscript) -> list[Any]:
        self.refuse_emitter_operand(buffer, node)
        elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(e, ast.Slice) for e in elements):
            self.error(node, "slices select regions for T.copy; to compute on elements, index "
                             "them inside T.Parallel")
        if len(elements) != buffer.rank:
            self.error(node, f"buffer '{buffer.name}' has {buffer.rank} dimensions but "
                             f"{len(elements)} indices were given")
        return [self.rvalue(self.eval(e), e) for e in elements]

    def refuse_reinterpreted(self, buffer: Buffer, what: str, node: ast.AST) -> None:
        if buffer.placement is not None and buffer.placement.parts > 1:
            self.error(node, f"{what} a T.view of '{buffer.placement.storage.name}' as "
                             f"{buffer.dtype}: each of its elements is several of the buffer's "
                             "in tilec, which no single atomic covers")

    def parts_of(self, buffer: Buffer, indices: list[Any], node: ast.AST | None) -> list[
            list[Any]]:
        """Where the parts of element `indices` of a reinterpreting view lie in its storage
        (the part that holds the lowest bits first)."""
        placement = buffer.placement
        wrapped = [_LayoutIndex(self, self.rvalue(i, node), node) for i in indices]
        return [[i.value if isinstance(i, _LayoutIndex) else i
                 for i in placement.forward(*wrapped, part)] for part in range(placement.parts)]

    def load_parts(self, buffer: Buffer, indices: list[Any], node: ast.AST | None) -> Scalar:
        """An element of a reinterpreting view: its storage's parts, put together."""
        storage = buffer.placement.storage
        part_type = ir.IntegerType.get_signless(storage.dtype.bits)
        word_type = ir.IntegerType.get_signless(buffer.dtype.bits)
        word = None
        for number, place in enumerate(self.parts_of(buffer, indices, node)):
            part = memref.load(storage.value, [self.index_value(i, node) for i in place])
            if part.type != part_type:
                part = arith.bitcast(part_type, part)
            part = arith.extui(word_type, part)
            if number:
                shift = arith.constant(word_type, number * storage.dtype.bits)
                part = arith.shli(part, shift)
            word = part if word is None else arith.ori(word, part)
        element_type = storage_type(buffer.dtype)
        return Scalar(word if element_type == word_type else arith.bitcast(element_type, word),
                      buffer.dtype)

    def store_parts(self, buffer: Buffer, indices: list[Any], element: ir.Value,
                    node: ast.AST | None) -> None:
        """An element of a reinterpreting view taken apart into its storage's parts."""
        storage = buffer.placement.storage
        part_type = ir.IntegerType.get_signless(storage.dtype.bits)
        word_type = ir.IntegerType.get_signless(buffer.dtype.bits)
        word = element if element.type == word_type else arith.bitcast(word_type, element)
        stored_type = storage_type(storage.dtype)
        for number, place in enumerate(self.parts_of(buffer, indices, node)):
            part = word
            if number:
                part = arith.shrui(part, arith.constant(word_type, number * storage.dtype.bits))
            part = arith.trunci(part_type, part)
            if stored_type != part_type:
                part = arith.bitcast(stored_type, part)
            memref.store(part, storage.value, [self.index_value(i, node) for i in place])

    def load(self, buffer: Buffer, indices: list[Any], node: ast.AST | None) -> Scalar:
        self.require_kernel(node, f"reading buffer '{buffer.name}'")
        self.check_index_bounds(buffer, indices, node)
        if buffer.placement is not None and buffer.placement.parts > 1:
            return self.load_parts(buffer, indices, node)
        buffer, indices = self.placed(buffer, indices, node)
        values = [self.index_value(i, node) for i in indices]
        element = memref.load(buffer.value, values)
        if buffer.dtype.storage != buffer.dtype.mlir:  # a bool byte
            element = arith.cmpi(arith.CmpIPredicate.ne, element,
                                 arith.constant(element.type, 0))
        return Scalar(element, buffer.dtype)

    def stored(self, value: Any, dtype: T.DType, node: ast.AST | None) -> ir.Value:
        """`value` as a buffer of `dtype` holds it (a bool as the byte 0 or 1)."""
        scalar = self.materialize(value, dtype, node).value
        if dtype.storage != dtype.mlir:
            return arith.extui(storage_type(dtype), scalar)
        return scalar

    def store(self, buffer: Buffer, indices: list[Any], value: Any, node: ast.AST | None) -> None:
        self.require_kernel(node, f"writing buffer '{buffer.name}'")
        if isinstance(value, (Buffer, Region)) and not (
            isinstance(value, Buffer) and value.scope == "var"
        ):
            self.error(node, "a buffer element is assigned a scalar; copy buffers with T.copy")
        element = self.stored(value, buffer.dtype, node)
        self.check_index_bounds(buffer, indices, node)
        if buffer.placement is not None and buffer.placement.parts > 1:
            self.store_parts(buffer, indices, element, node)
            self.var_readings.clear()
            return
        buffer, indices = self.placed(buffer, indices, node)
        values = [self.index_value(i, node) for i in indices]
        memref.store(element, buffer.value, values)
        self.var_readings.clear()


class DivisorGuard:
    """An integer `/`, `//` or `%` by a run-time divisor made total and the same on every
    target: by 0 it gives 0 (numpy's answer; x86's idiv would kill the process with SIGFPE,
    a GPU gives garbage), and the most negative value divided by -1 wraps. The division
    itself runs on a divisor of 1 in those cases."""

    def __init__(self, x: ir.Value, y: ir.Value, dtype: T.DType):
        self.x, self.unsigned = x, dtype.is_unsigned
        self.zero = arith.constant(x.type, 0)
        self.by_zero = arith.cmpi(arith.CmpIPredicate.eq, y, self.zero)
        self.bad = self.by_zero
        if not self.unsigned:
            minus_one = arith.cmpi(arith.CmpIPredicate.eq, y, arith.constant(x.type, -1))
            self.bad = arith.ori(self.by_zero, minus_one)
        self.divisor = arith.select(self.bad, arith.constant(x.type, 1), y)

    def result(self, op: str, computed: ir.Value) -> ir.Value:
        if self.unsigned:
            return arith.select(self.by_zero, self.zero, computed)
        by_minus_one = self.zero if op in ("%", "truncmod") else arith.subi(self.zero, self.x)
        special = arith.select(self.by_zero, self.zero, by_minus_one)
        return arith.select(self.bad, special, computed)


def clamped_shift(op: str, x: ir.Value, y: ir.Value, shifted: ir.Value,
                  dtype: T.DType) -> ir.Value:
    """A shift by a run-time amount outside 0..bits-1 (LLVM's poison) gives what PTX's
    clamped shifts give: 0, or the sign for an arithmetic right shift."""
    bits = arith.constant(x.type, dtype.bits)
    outside = arith.cmpi(arith.CmpIPredicate.uge, y, bits)
    if op == ">>" and not dtype.is_unsigned:
        fill = arith.shrsi(x, arith.constant(x.type, dtype.bits - 1))
    else:
        fill = arith.constant(x.type, 0)
    return arith.select(outside, fill, shifted)


def _fits(value: int, dtype: T.DType) -> bool:
    low, high = dtype.integer_range
    return low <= value <= high


def _bit_pattern(value: Any, dtype: T.DType) -> Any:
    """A literal operand of & | ^ as the bits it spells: 0xFFFF0000 with an int32 is the
    int32 of those bits, -1 with a uint32 all ones."""
    if not isinstance(value, int) or isinstance(value, builtins.bool) or dtype == T.bool:
        return value
    if dtype.is_unsigned and -(2 ** (dtype.bits - 1)) <= value < 0:
        return value + 2**dtype.bits
    if not dtype.is_unsigned and 2 ** (dtype.bits - 1) <= value < 2**dtype.bits:
        return value - 2**dtype.bits
    return value


def floor_mod(x: ir.Value, y: ir.Value, dtype: T.DType) -> ir.Value:
    """x - floor(x / y) * y: the remainder takes the divisor's sign, as Python's and TileLang's
    `%` (T.floormod) do; unsigned integers have one remainder."""
    if dtype.is_unsigned:
        return arith.remui(x, y)
    if dtype.is_float:
        return arith.subf(x, arith.mulf(mmath.floor(arith.divf(x, y)), y))
    remainder = arith.remsi(x, y)
    zero = arith.constant(x.type, 0)
    signs_differ = arith.cmpi(arith.CmpIPredicate.slt, arith.xori(remainder, y), zero)
    nonzero = arith.cmpi(arith.CmpIPredicate.ne, remainder, zero)
    fix = arith.andi(signs_differ, nonzero)
    return arith.select(fix, arith.addi(remainder, y), remainder)


def tensor_type(dims: tuple[Any, ...], dtype: T.DType) -> ir.MemRefType:
    """A global memref: static dims as given, `?` for dynamic symbols."""
    shape = [d if isinstance(d, int) else ir.ShapedType.get_dynamic_size() for d in dims]
    return ir.MemRefType.get(shape, storage_type(dtype))


def _mixed_signedness(a: Any, b: Any) -> bool:
    """Two kernel integers (not bools, not indices), one unsigned, the other signed and no
    wider (a wider signed type holds the unsigned one's values: result_dtype picks it)."""
    if not (isinstance(a, Scalar) and isinstance(b, Scalar)):
        return False
    if not all(v.dtype.is_integer and v.dtype not in (T.bool, T.index) for v in (a, b)):
        return False
    unsigned = [v.dtype for v in (a, b) if v.dtype.is_unsigned]
    signed = [v.dtype for v in (a, b) if not v.dtype.is_unsigned]
    return len(unsigned) == len(signed) == 1 and signed[0].bits <= unsigned[0].bits


def _is_bool(value: Any) -> bool:
    """A Python bool or a kernel bool (a condition)."""
    return isinstance(value, bool) or (isinstance(value, Scalar) and value.dtype == T.bool)


def _identity_operand(op: str, a: Any, b: Any) -> Scalar | None:
    """x + 0, 0 + x, x - 0, x * 1, 1 * x: no op is needed (keeps index math readable)."""
    if isinstance(b, int) and not isinstance(b, bool) and isinstance(a, Scalar):
        if (op in ("+", "-") and b == 0) or (op in ("*", "//") and b == 1):
            return a
    if isinstance(a, int) and not isinstance(a, bool) and isinstance(b, Scalar):
        if (op == "+" and a == 0) or (op == "*" and a == 1):
            return b
    return None


_FLOAT_MAX = {"f16": 65504.0, "bf16": 3.3895313892515355e38, "f32": 3.4028234663852886e38,
              "f64": 1.7976931348623157e308, "f8E4M3FN": 448.0, "f8E5M2": 57344.0}


def _extreme(dtype: T.DType, largest: bool) -> float | int:
    """The largest (or most negative) finite value of `dtype`."""
    if dtype.is_float:
        return _FLOAT_MAX[dtype.mlir] * (1 if largest else -1)
    if dtype == T.bool:
        return int(largest)
    if dtype.is_unsigned:
        return 2**dtype.bits - 1 if largest else 0
    return 2 ** (dtype.bits - 1) - 1 if largest else -(2 ** (dtype.bits - 1))


@dataclass
class LoopExits:
    """The flags of a loop whose body breaks or continues: `broke` ends the loop, `skipped`
    the iteration (bool vars; None where the body has no such statement)."""

    broke: Buffer | None
    skipped: Buffer | None

    def not_broken(self, builder: KernelBuilder, node: ast.AST) -> Scalar:
        return builder.compare("eq", builder.load(self.broke, [0], node), 0, node)

    def going_on(self, builder: KernelBuilder, node: ast.AST) -> Scalar:
        """True while neither flag is set."""
        flags = [f for f in (self.broke, self.skipped) if f is not None]
        result = builder.compare("eq", builder.load(flags[0], [0], node), 0, node)
        for flag in flags[1:]:
            result = builder.binop("&", result, builder.compare(
                "eq", builder.load(flag, [0], node), 0, node), node)
        return result


def _leaving_statements(statements: list[ast.stmt]) -> list[ast.stmt]:
    """The break / continue statements that leave this loop (not those of nested loops)."""
    found: list[ast.stmt] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.Break, ast.Continue)):
            found.append(node)
        elif not isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.Lambda)):
            for child in ast.iter_child_nodes(node):
                visit(child)

    for statement in statements:
        visit(statement)
    return found


def _may_leave(statement: ast.stmt) -> bool:
    return bool(_leaving_statements([statement]))


def _leave_word(node: ast.AST) -> str:
    return "break" if isinstance(node, ast.Break) else "continue"


def _is_whole(region: Region) -> bool:
    """The region is its whole buffer (offsets 0, extents the buffer's)."""
    return list(region.extents) == list(region.buffer.dims) and all(
        isinstance(o, int) and o == 0 for o in region.offsets)


def _is_element(region: Region) -> bool:
    """A region written A[i, j] with every dimension indexed: one element."""
    return all(extent is None for extent in region.extents)


def _squeeze(extents: list[int | None]) -> list[int | None]:
    return [e for e in extents if e != 1]


def _constant_index(value: Any) -> int | None:
    """`value` as an int where the frontend knows it at compile time."""
    if isinstance(value, int) and not isinstance(value, builtins.bool):
        return value
    if isinstance(value, Scalar) and value.affine is not None:
        return value.affine.constant
    return None


def _slice_text(lower: Any, upper: Any) -> str:
    def bound(value: Any) -> str:
        constant = _constant_index(value)
        return "?" if constant is None else str(constant)

    return f"{bound(lower)}:{bound(upper)}"


def _buffer_text(buffer: Buffer) -> str:
    """'tensor 'A' of shape (64, 64)' / 'shared buffer 's' of shape (16,)'."""
    kind = "tensor" if buffer.scope == "global" else f"{buffer.scope} buffer"
    shape = tuple(d if isinstance(d, int) else "?" for d in buffer.dims)
    return f"{kind} '{buffer.name}' of shape {shape}"


def _box_text(region: Region) -> str:
    """A box's shape as an error message shows it (`?` a run-time length, `_` a corner's)."""
    marks = {True: "?", False: "_"}
    return "(" + ", ".join(str(e) if isinstance(e, int) else marks[isinstance(e, RuntimeExtent)]
                           for e in region.extents) + ")"


def _has_expr(value: Any) -> bool:
    return isinstance(value, int) or (isinstance(value, Scalar) and value.expr is not None)


def _expr(value: Any) -> str:
    return str(value) if isinstance(value, int) else value.expr


def _tracks_affine(dtype: T.DType) -> bool:
    """Integers (not bools) carry affine forms."""
    return dtype.is_integer and dtype != T.bool


def _affine_op(op: str, a: Any, b: Any, builder: KernelBuilder) -> Affine | None:
    fa, fb = builder.affine_of(a), builder.affine_of(b)
    if fa is None or fb is None:
        return None
    if op == "+":
        return fa + fb
    if op == "-":
        return fa - fb
    if op == "*" and fa.constant is not None:
        return fb.scale(fa.constant)
    if op == "*" and fb.constant is not None:
        return fa.scale(fb.constant)
    return None


# ---------------------------------------------------------------------------------------------
# entry points


def _annotations(source: KernelSource) -> dict[str, Any]:
    """The parameters' annotations, evaluated where the function was defined."""
    raw = getattr(source.fn, "__annotations__", {})
    postponed = bool(source.fn.__code__.co_flags & __future__.annotations.compiler_flag)
    resolved: dict[str, Any] = {}
    for name, annotation in raw.items():
        if isinstance(annotation, str) and postponed:
            try:
                annotation = eval(annotation, source.outer_names())  # noqa: S307 - user's own code
            except Exception as error:
                raise TilecError(
                    f"cannot evaluate the annotation of '{name}' ({annotation!r}): {error}; with "
                    "`from __future__ import annotations`, sizes must be globals",
                    source.filename, source.def_line) from None
        resolved[name] = annotation
    return resolved


def build_prim_func(prim: T.PrimFunc, out_idx: list[int] | None = None) -> FrontendResult:
    """The tile IR of a `@T.prim_func`; parameters at `out_idx` are outputs."""
    source = parse_kernel(prim.fn, prim.env)
    builder = KernelBuilder(source, prim.fn.__name__)
    annotations = _annotations(source)
    names = [a.arg for a in source.tree.args.args]
    outputs = {i % len(names) for i in (out_idx or [])} if names else set()
    specs: list[Any] = []
    for position, name in enumerate(names):
        annotation = annotations.get(name)
        if isinstance(annotation, T.Tensor):
            for dim in annotation.shape:
                if not isinstance(dim, (int, T.Symbol)):
                    builder.error(source.tree, f"the shape of '{name}' must hold ints and "
                                               f"T.dynamic sizes, got {dim!r}")
                if isinstance(dim, int) and dim <= 0:
                    builder.error(source.tree.args.args[position],
                                  f"the shape of '{name}' has a "
                                  f"{'negative' if dim < 0 else 'zero'} size: "
                                  f"{tuple(annotation.shape)}")
            specs.append(annotation)
        elif isinstance(annotation, (T.DType, str)):
            specs.append(builder._dtype(annotation, source.tree))
        else:
            builder.error(source.tree, f"parameter '{name}' needs an annotation: "
                                       "T.Tensor((M, K), dtype) or a scalar dtype")
    with builder.context, builder.location(source.tree):
        types = [tensor_type(s.shape, s.dtype) if isinstance(s, T.Tensor) else mlir_type(s)
                 for s in specs]
    module, fn, block = builder.build_function(types)
    with builder.context, builder.location(source.tree), ir.InsertionPoint(block):
        for position, (name, spec) in enumerate(zip(names, specs, strict=True)):
            argument = block.arguments[position]
            if isinstance(spec, T.Tensor):
                value = builder.add_tensor_param(block, name, spec.shape, spec.dtype,
                                                 position in outputs, argument,
                                                 node=source.tree.args.args[position])
            else:
                builder.params.append(Param(name, "scalar", spec.name))
                # an integer argument may size the grid: the launch reads it by its name
                expr = name if _tracks_affine(spec) else None
                value = Scalar(argument, spec, expr=expr)
            builder.scopes[0][name] = value
        builder.body(source.tree.body)
    return builder.finish(module, fn, block)


def build_eager(source: KernelSource, prologue: Prologue) -> FrontendResult:
    """The tile IR of an eager `@tilec.jit` kernel whose prologue ran: its locals start the
    kernel's names (tensors and T.empty outputs become the function's parameters), the
    statements after it are built here."""
    builder = KernelBuilder(source, source.fn.__name__)
    builder.eager = True
    builder.symbol_values = dict(prologue.sizes)
    builder.eager_inputs = list(prologue.inputs)
    statements = source.tree.body
    for statement in statements[:-1]:
        if isinstance(statement, ast.Return):
            builder.error(statement, "return must be the last statement of the kernel")
    with builder.context, builder.location(source.tree):
        types = [tensor_type(t.shape, t.dtype) for t in prologue.inputs]
    module, function, block = builder.build_function(types)
    with builder.context, builder.location(source.tree), ir.InsertionPoint(block):
        buffers: dict[int, Buffer] = {}
        for argument, tensor in zip(block.arguments, prologue.inputs, strict=True):
            buffer = builder.add_tensor_param(block, tensor.name, tensor.shape, tensor.dtype,
                                              False, argument)
            buffers.update((id(value), buffer) for value in tensor.stands_for)
        for output in prologue.outputs:
            workspace = isinstance(output, Workspace)
            buffer = builder.add_tensor_param(block, "", output.shape, output.dtype, True,
                                              workspace=workspace)
            if not workspace:
                builder.outputs.append(buffer)
            buffers[id(output)] = buffer
        for name, value in prologue.namespace.items():
            builder.bind(name, _as_buffers(value, buffers), source.tree)
        for number, output in enumerate(builder.outputs):
            if not output.name:  # an output no local of the prologue names
                builder.bind(f"output{number}", output, source.tree)
        builder.body(statements[prologue.statements:])
    created = [o.name for o in builder.outputs]
    returned = builder.returned or []
    for name in created:
        if name not in returned:
            builder.error(source.tree, f"output '{name}' made by T.empty is never returned")
    if returned != created:
        builder.error(statements[-1], f"return the outputs in the order they were created "
                                      f"with T.empty: {', '.join(created)}")
    return builder.finish(module, function, block)


def _as_buffers(value: Any, buffers: dict[int, Buffer]) -> Any:
    """A prologue value with its tensors (also inside tuples and lists) as the kernel's buffers."""
    if id(value) in buffers:
        return buffers[id(value)]
    if type(value) in (tuple, list):
        return type(value)(_as_buffers(v, buffers) for v in value)
    return value
