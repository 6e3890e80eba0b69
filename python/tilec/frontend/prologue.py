"""An eager kernel's prologue, its Python before the first `with T.Kernel`, run as Python.

`dtype = T.float16`, `A_shape = (K, M) if trans_A else (M, K)`, helper calls and
`A: T.Tensor(A_shape, dtype)` annotations run as the user wrote them. `T.const` sizes come from
`.compile(M=...)` keywords or from the tensors' shapes: a first run hands out placeholders
(`SizeProbe`), the annotations of the given tensors bind them, and the prologue runs again with
every size an int, so a Python `if` on a size works. The last run's locals are the names the
kernel body starts with. Pure Python (no MLIR): the JIT computes cache keys from the result.
"""

from __future__ import annotations

import ast
import builtins
import copy
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tilec.language as T
from tilec.errors import TilecError, at_caller
from tilec.frontend.signature import EagerSignature, analyze_eager, bind_symbols
from tilec.frontend.source import KernelSource

_ANNOTATE = "__tilec_annotate__"
_LOCALS = "__tilec_locals__"
_MAX_RUNS = 8  # each run but the last binds at least one more size
_MAX_CONDITIONS = 10_000  # probes read as conditions in one run (a `while` on a size)


class _NeedsValue(Exception):
    """A size probe's value was read (a condition, range(), int()) before anything bound it."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


class SizeProbe:
    """A `T.const` size not known yet, or arithmetic or a comparison on such sizes.

    Arithmetic and comparisons give another probe; as a condition a probe counts as true, so
    the first run goes on to the annotations that bind it (the last run, with ints, decides
    for real); reading it as a number (`range`, `int`, a format) stops the run. Only a bare
    probe (`name`) binds from a shape.
    """

    __slots__ = ("name", "unknown")

    def __init__(self, unknown: tuple[str, ...], name: str | None = None):
        self.unknown = unknown
        self.name = name

    def _combine(self, other: Any) -> SizeProbe:
        more = other.unknown if isinstance(other, SizeProbe) else ()
        return SizeProbe(self.unknown + tuple(n for n in more if n not in self.unknown))

    def _read(self, *_: Any) -> Any:
        raise _NeedsValue(self.unknown[0])

    def __bool__(self) -> bool:
        run = T.prologue_handler.get()
        if not isinstance(run, _Run) or run.count_condition():
            raise _NeedsValue(self.unknown[0])  # a loop on a size that never ends here
        return True

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _combine
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = _combine
    __pow__ = __rpow__ = __and__ = __rand__ = __or__ = __ror__ = _combine
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _combine
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _combine

    def __neg__(self) -> SizeProbe:
        return SizeProbe(self.unknown)

    __pos__ = __abs__ = __invert__ = __neg__
    __index__ = __int__ = __float__ = __format__ = _read
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return self.name or f"<size computed from {', '.join(self.unknown)}>"


class OutputTensor(T.Tensor):
    """A `T.empty` of the prologue: an output the kernel object allocates and returns."""


class Workspace(OutputTensor):
    """A `T.alloc_global` of the prologue: allocated by each call like an output, not returned."""


class _MissingTensor:
    """A tensor parameter given no argument (`.compile(M=...)`): its annotation defines it."""

    def __init__(self, name: str, kernel: str):
        self._name = name
        self._kernel = kernel

    def __getattr__(self, attribute: str) -> Any:
        raise TilecError(f"tensor '{self._name}' of kernel '{self._kernel}' has no argument: "
                         f"annotate it (`{self._name}: T.Tensor((M, K), T.float16)`) before "
                         f"using '{self._name}.{attribute}'")


@dataclass
class EagerTensor:
    """A tensor parameter as the kernel takes it: ints and T.dynamic Symbols, one dtype."""

    name: str
    shape: tuple[Any, ...]
    dtype: T.DType
    stands_for: list[Any] = field(default_factory=list)  # the prologue values naming it


@dataclass
class Prologue:
    """What the last run of the prologue, with every T.const an int, gave."""

    statements: int  # how many of the kernel's statements the prologue is
    namespace: dict[str, Any]  # its locals
    inputs: list[EagerTensor]
    outputs: list[OutputTensor]  # T.empty outputs and T.alloc_global workspaces, in order
    sizes: dict[str, int]  # the T.const values


@dataclass
class CompiledPrologue:
    """A kernel's prologue compiled once into a function factory (closure cells as arguments)."""

    source: KernelSource
    statements: int
    factory: Callable[..., Callable]
    code: types.CodeType  # the prologue function's code: its frames carry the user's lines
    indexing: EagerSignature  # sizes read from how the kernel indexes its parameters


def _opens_a_kernel(statement: ast.stmt) -> bool:
    """Whether a statement holds a `with` or a `return` (outside nested definitions)."""
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.With, ast.AsyncWith, ast.Return)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        pending.extend(ast.iter_child_nodes(node))
    return False


class _AnnotationsToCalls(ast.NodeTransformer):
    """`A: T.Tensor(shape, dtype)` -> `A = __tilec_annotate__("A", T.Tensor(shape, dtype))`."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:  # noqa: N802
        return node  # a helper defined in the prologue keeps its own annotations

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt:  # noqa: N802
        if node.value is not None or not isinstance(node.target, ast.Name):
            return node
        call = ast.Call(ast.Name(_ANNOTATE, ast.Load()),
                        [ast.Constant(node.target.id), node.annotation], [])
        return ast.copy_location(
            ast.Assign([ast.Name(node.target.id, ast.Store())], ast.copy_location(call, node)),
            node)


def _function_like(tree: ast.FunctionDef, name: str, arguments: ast.arguments,
                   body: list[ast.stmt]) -> ast.FunctionDef:
    """A plain `def` at the kernel's location (a copy of its node: every field the running
    Python's AST wants is there)."""
    function = copy.copy(tree)
    function.name, function.args, function.body = name, arguments, body
    function.decorator_list, function.returns = [], None
    return function


def compile_prologue(source: KernelSource) -> CompiledPrologue:
    """The statements before the first `with T.Kernel` as a function of the kernel's arguments.

    The function is nested in a factory taking the kernel's closure variables, so it sees its
    globals, closure cells and builtins as the kernel does; it returns its locals.
    """
    tree = source.tree
    count = 0
    while count < len(tree.body) and not _opens_a_kernel(tree.body[count]):
        count += 1
    body = [_AnnotationsToCalls().visit(copy.deepcopy(s)) for s in tree.body[:count]]
    end = tree.body[count] if count < len(tree.body) else tree
    body.append(ast.copy_location(ast.Return(ast.Call(ast.Name(_LOCALS, ast.Load()), [], [])),
                                  end))
    arguments = copy.deepcopy(tree.args)
    arguments.defaults, arguments.kw_defaults = [], [None] * len(arguments.kwonlyargs)
    for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                arguments.vararg, arguments.kwarg):
        if arg is not None:
            arg.annotation = None
    inner = _function_like(tree, tree.name, arguments, body)
    freevars = list(source.fn.__code__.co_freevars)
    outer_args = ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in (
        *freevars, _ANNOTATE, _LOCALS)], vararg=None, kwonlyargs=[], kw_defaults=[],
        kwarg=None, defaults=[])
    outer = _function_like(tree, "__tilec_prologue__", outer_args,
                           [inner, ast.copy_location(ast.Return(ast.Name(tree.name, ast.Load())),
                                                     tree)])
    module = ast.fix_missing_locations(ast.Module([outer], []))
    code = builtins.compile(module, source.filename, "exec")
    outer_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner_code = next(c for c in outer_code.co_consts if isinstance(c, types.CodeType))
    factory = types.FunctionType(outer_code, source.fn.__globals__)
    parameters = [a.arg for a in (*tree.args.posonlyargs, *tree.args.args,
                                  *tree.args.kwonlyargs)]
    return CompiledPrologue(source, count, factory, inner_code, analyze_eager(tree, parameters))


class _Run:
    """One run of the prologue: answers T.const / T.empty and the annotations."""

    def __init__(self, compiled: CompiledPrologue, given: dict[str, T.Tensor],
                 tensor_names: list[str], known: dict[str, int]):
        self.compiled = compiled
        self.given = given  # tensor parameter -> its argument's shape and dtype
        self.tensor_names = tensor_names
        self.known = known
        self.consts: dict[str, int] = {}  # T.const name -> line of its call
        self.probed = False
        self.learned: dict[str, tuple[int, str]] = {}  # size -> (value, where it was read)
        self.annotated: dict[str, EagerTensor] = {}
        self.outputs: list[OutputTensor] = []
        self.conditions = 0

    def count_condition(self) -> bool:
        """One more probe read as a condition; True once there were too many."""
        self.conditions += 1
        return self.conditions > _MAX_CONDITIONS

    @property
    def concrete(self) -> bool:
        return not self.probed

    def line(self) -> int:
        """The kernel's line running now (the prologue's innermost frame)."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code is not self.compiled.code:
            frame = frame.f_back
        return frame.f_lineno if frame is not None else self.compiled.source.def_line

    def error(self, message: str) -> TilecError:
        return TilecError(message, self.compiled.source.filename, self.line())

    # ------------------------------------------------------------------ T calls

    def __call__(self, marker: Callable, args: tuple, kwargs: dict) -> Any:
        name = getattr(marker, "__tilec_op__", getattr(marker, "__name__", "?"))
        if name == "const":
            return self.const(*args, **kwargs)
        if name == "empty":
            return self.empty(*args, **kwargs)
        if name == "alloc_global":
            return self.empty(*args, kind=Workspace, **kwargs)
        if name == "ceildiv":
            return self.ceildiv(*args)
        raise self.error(f"T.{name} is kernel code: it belongs inside `with T.Kernel(...)`")

    def const(self, names: Any, dtype: Any = "int32") -> Any:
        if not isinstance(names, str):
            raise self.error('T.const takes the names as one string: T.const("M, N, K")')
        values = []
        for name in (n for n in re.split(r"[,\s]+", names) if n):
            self.consts.setdefault(name, self.line())
            if name in self.known:
                values.append(self.known[name])
            else:
                self.probed = True
                values.append(SizeProbe((name,), name))
        return values[0] if len(values) == 1 else tuple(values)

    def empty(self, shape: Any, dtype: Any, scope: str = "global",
              kind: type[OutputTensor] = OutputTensor) -> OutputTensor:
        try:
            output = kind(shape, dtype)
        except TilecError as error:
            raise self.error(error.message) from None
        if self.concrete:
            for size in output.shape:
                if not (_is_size(size) or isinstance(size, T.Symbol)):
                    raise self.error(f"a tensor's shape holds positive ints and T.dynamic sizes, "
                                     f"got {tuple(output.shape)!r}")
        self.outputs.append(output)
        return output

    def ceildiv(self, a: Any, b: Any) -> Any:
        if isinstance(a, T.Symbol) or isinstance(b, T.Symbol):
            raise self.error("T.ceildiv of a T.dynamic size belongs inside `with T.Kernel(...)` "
                             "(before it the size has no value)")
        return -(-a // b)

    # ------------------------------------------------------------------ annotations

    def annotate(self, name: str, annotation: Any) -> Any:
        """`name: T.Tensor(shape, dtype)`: bind sizes from the argument, or define the tensor."""
        if name not in self.tensor_names:
            raise self.error(f"'{name}' is not a tensor parameter of the kernel: only tensor "
                             "parameters are annotated without a value")
        if not isinstance(annotation, T.Tensor):
            raise self.error(f"the annotation of '{name}' must be T.Tensor(shape, dtype), got "
                             f"{annotation!r}")
        argument = self.given.get(name)
        if argument is not None:
            self.bind_from(name, annotation, argument)
        bound = T.Tensor(annotation.shape, annotation.dtype)  # one object per parameter
        if self.concrete:
            shape = tuple(annotation.shape)
            for size in shape:
                if not (_is_size(size) or isinstance(size, T.Symbol)):
                    raise self.error(f"the shape of '{name}' holds positive ints and T.const or "
                                     f"T.dynamic sizes, got {shape!r}")
            tensor = EagerTensor(name, shape, annotation.dtype, [bound])
            if argument is not None:
                tensor.stands_for.append(argument)
            self.annotated[name] = tensor
        return bound

    def bind_from(self, name: str, annotation: T.Tensor, argument: T.Tensor) -> None:
        expected, actual = tuple(annotation.shape), tuple(argument.shape)
        dtype = annotation.dtype
        if dtype.is_sub_byte and argument.dtype.name == dtype.torch_name and actual:
            # the byte tensor holding packed elements: its last extent counts bytes
            actual = (*actual[:-1], actual[-1] * (8 // dtype.bits))
            argument = T.Tensor(actual, dtype)
        if len(expected) != len(actual):
            raise self.error(f"tensor '{name}' has shape {actual}, but its annotation says "
                             f"{len(expected)} dimensions")
        for axis, (size, value) in enumerate(zip(expected, actual, strict=True)):
            if isinstance(size, SizeProbe) and size.name is not None:
                where = f"dimension {axis} of '{name}'"
                seen = self.learned.setdefault(size.name, (value, where))
                if seen[0] != value:
                    raise self.error(f"size '{size.name}' is {seen[0]} in {seen[1]} but {value} "
                                     f"in {where}")
            elif self.concrete and not isinstance(size, T.Symbol) and size != value:
                raise self.error(f"tensor '{name}' has shape {actual}, but its annotation says "
                                 f"{expected} (dimension {axis})")
        if self.concrete and not annotation.dtype.interchangeable(argument.dtype):
            raise self.error(f"tensor '{name}' has dtype {argument.dtype.name}, but its "
                             f"annotation says {annotation.dtype.name}")

    # ------------------------------------------------------------------ running

    def execute(self, call_args: tuple, call_kwargs: dict) -> dict[str, Any]:
        """Run the prologue; every exception is re-raised at the kernel's line."""
        compiled = self.compiled
        fn = compiled.source.fn
        cells = []
        for cell in fn.__closure__ or ():
            try:
                cells.append(cell.cell_contents)
            except ValueError:  # a closure cell not yet assigned
                cells.append(None)
        prologue = compiled.factory(*cells, self.annotate, builtins.locals)
        token = T.prologue_handler.set(self)
        try:
            namespace = prologue(*call_args, **call_kwargs)
        except (_NeedsValue, TilecError) as error:
            if isinstance(error, TilecError) and error.filename is None:
                raise TilecError(error.message, compiled.source.filename,
                                 _failing_line(error, compiled)) from None
            raise
        except Exception as error:
            raise TilecError(f"{type(error).__name__}: {error}", compiled.source.filename,
                             _failing_line(error, compiled)) from error
        finally:
            T.prologue_handler.reset(token)
        return {k: v for k, v in namespace.items() if k not in (_ANNOTATE, _LOCALS)}


def _failing_line(error: BaseException, compiled: CompiledPrologue) -> int:
    """The kernel line an exception came through (its innermost prologue frame)."""
    line = compiled.source.def_line
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code is compiled.code:
            line = trace.tb_lineno
        trace = trace.tb_next
    return line


def _is_size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def run_prologue(compiled: CompiledPrologue, bind: Callable[[dict[str, Any]], tuple[tuple, dict]],
                 values: dict[str, Any], given: dict[str, T.Tensor], tensor_names: list[str],
                 sizes: dict[str, int]) -> Prologue:
    """Run the prologue until every T.const is an int, then describe the kernel's tensors.

    `values` are the parameters' values (constants; tensors as T.Tensor of their argument),
    `bind` turns them into call arguments, `given` holds the tensor arguments, `sizes` the
    `.compile(M=...)` keywords.
    """
    source = compiled.source
    kernel = source.fn.__name__
    known = dict(sizes)
    for _ in range(_MAX_RUNS):
        arguments = dict(values)
        for name in tensor_names:
            arguments[name] = given[name] if name in given else _MissingTensor(name, kernel)
        run = _Run(compiled, given, tensor_names, known)
        needed = None
        try:
            namespace = run.execute(*bind(arguments))
        except _NeedsValue as stop:
            needed = stop.name
        if needed is None and run.concrete:
            _check_sizes_are_consts(run, sizes)
            return _describe(run, namespace, arguments, tensor_names, compiled.statements)
        learned = {k: v for k, (v, _) in run.learned.items() if k not in known}
        if not learned and needed is None:
            learned = _sizes_from_indexing(run, source, known)
        if not learned:
            missing = needed or next(n for n in run.consts if n not in known)
            raise _unbound(run, missing, needed is not None)
        known = {**known, **learned}
    raise TilecError(f"kernel '{kernel}': its sizes did not settle after {_MAX_RUNS} runs of "
                     "its prologue", source.filename, source.def_line)


def _check_sizes_are_consts(run: _Run, sizes: dict[str, int]) -> None:
    """Every `.compile(M=...)` keyword names a T.const of the kernel (a misspelt size would be
    dropped without a word); an error at the caller's line."""
    unknown = [name for name in sizes if name not in run.consts]
    if unknown:
        fn = run.compiled.source.fn
        kernel = fn.__name__
        parameters = ", ".join(fn.__code__.co_varnames[:fn.__code__.co_argcount]) or "none"
        consts = ", ".join(run.consts) or "none"
        raise at_caller(f"kernel '{kernel}' has no parameter or T.const size {unknown[0]!r} "
                        f"(its parameters: {parameters}; its T.const sizes: {consts})")


def _sizes_from_indexing(run: _Run, source: KernelSource, known: dict[str, int]
                         ) -> dict[str, int]:
    """Sizes no annotation gives, read from how the kernel indexes its tensors (see signature)."""
    analysis = run.compiled.indexing
    shapes = {name: tuple(t.shape) for name, t in run.given.items()}
    found = bind_symbols(analysis, shapes, source.filename)
    return {k: v for k, v in found.items() if k in run.consts and k not in known
            and isinstance(v, int)}


def _unbound(run: _Run, name: str, read: bool) -> TilecError:
    source = run.compiled.source
    line = run.consts.get(name, source.def_line)
    if read:
        return TilecError(f"the size '{name}' is used as a number before an annotation binds "
                          f"it: annotate the tensor that has it first, e.g. "
                          f"`{_annotation_hint(run, name)}`", source.filename, line)
    return TilecError(f"cannot tell the size '{name}' from the arguments: annotate the tensor "
                      f"that has it in the kernel body, e.g. `{_annotation_hint(run, name)}`, "
                      f"or pass {name}=... to .compile", source.filename, line)


def _annotation_hint(run: _Run, missing: str) -> str:
    """An annotation that would bind `missing`: a tensor with a size no size explains."""
    by_value = {value: name for name, (value, _) in run.learned.items()}
    by_value.update({value: name for name, value in run.known.items()})
    for name, tensor in run.given.items():
        shape = tuple(tensor.shape)
        unexplained = [axis for axis, size in enumerate(shape)
                       if isinstance(size, int) and size not in by_value]
        if unexplained:
            dims = [by_value.get(size, str(size)) for size in shape]
            dims[unexplained[0]] = missing
            text = ", ".join(dims) + ("," if len(dims) == 1 else "")
            return f"{name}: T.Tensor(({text}), T.{tensor.dtype.name})"
    return f"A: T.Tensor((..., {missing}), T.float16)"


def _describe(run: _Run, namespace: dict[str, Any], arguments: dict[str, Any],
              tensor_names: list[str], statements: int) -> Prologue:
    """The kernel's tensors after a run with every size known."""
    inputs = []
    for name in tensor_names:
        tensor = run.annotated.get(name)
        if tensor is None and name in run.given:
            argument = run.given[name]
            tensor = EagerTensor(name, _dynamic_axes(run, name, tuple(argument.shape)),
                                 argument.dtype, [argument])
        if tensor is None:
            tensor = _inferred_tensor(run, name, namespace)
        tensor.stands_for.append(arguments[name])
        inputs.append(tensor)
    sizes = {name: run.known[name] for name in run.consts}
    return Prologue(statements, namespace, inputs, run.outputs, sizes)


def _dynamic_axes(run: _Run, name: str, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """An unannotated tensor's axes that the kernel indexes by a T.dynamic size stay symbolic."""
    analysis = run.compiled.indexing
    axes = analysis.dims.get(name, {})
    return tuple(T.Symbol(analysis.dynamic[axes[axis]]) if axes.get(axis) in analysis.dynamic
                 else size for axis, size in enumerate(shape))


def _inferred_tensor(run: _Run, name: str, namespace: dict[str, Any]) -> EagerTensor:
    """A tensor with neither argument nor annotation: its sizes and dtype read from its uses."""
    source = run.compiled.source
    analysis = run.compiled.indexing
    hint = analysis.dtype_hints.get(name)
    axes = analysis.dims.get(name, {})
    rank = max(axes, default=-1) + 1
    missing = [a for a in range(rank) if a not in axes or axes[a] not in run.known]
    if hint is None or rank == 0 or missing:
        raise TilecError(f"cannot tell the shape and dtype of tensor '{name}' without an "
                         f"argument: pass a tensor, or annotate it in the kernel body (`{name}: "
                         "T.Tensor((M, K), T.float16)`) and give its sizes", source.filename,
                         source.def_line)
    env = {**source.outer_names(), **namespace}
    try:
        code = builtins.compile(ast.Expression(hint), source.filename, "eval")
        dtype = T.dtype(eval(code, env))  # noqa: S307 - the user's own dtype expression
    except Exception as error:
        raise TilecError(f"cannot tell the dtype of tensor '{name}': {error}", source.filename,
                         hint.lineno) from None
    return EagerTensor(name, tuple(run.known[axes[a]] for a in range(rank)), dtype)
