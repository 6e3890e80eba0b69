"""`tilec.jit`, `tilec.compile` and the kernel object they give.

Two styles, as in TileLang: an eager `@tilec.jit` kernel called with tensors (it specializes on
their shapes and dtypes) and a factory returning a `@T.prim_func` (compiled once per factory
arguments; the kernel object is called with the inputs and returns the `out_idx` outputs).

The cache key is computed from source text and arguments before anything heavy is imported:
a cache hit imports neither MLIR nor the compiler (nor the frontend).
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import numbers
import operator
import os
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import tilec.language as T
from tilec import cache
from tilec.errors import LaunchError, TilecError, at_caller, check_options
from tilec.runtime import evaluate_size
from tilec.runtime.artifact import Artifact, Param
from tilec.transform import codegen_settings, ignored_pass_configs, normalize_pass_configs


def _torch() -> Any:
    import torch

    return torch


def torch_dtype(name: str) -> Any:
    return T.dtype(name).as_torch()


def stored_shape(param: Param) -> list[int | str]:
    """The shape of the torch tensor passed for a tensor parameter (sub-byte elements packed)."""
    return T.dtype(param.dtype).storage_shape(param.shape)


def _packing_note(param: Param) -> str:
    dtype = T.dtype(param.dtype)
    if not dtype.is_sub_byte:
        return ""
    return (f": its {tuple(param.shape)} T.{dtype.name} elements are packed {8 // dtype.bits} to "
            f"a byte of a torch.{dtype.torch_name} tensor along the last dimension")


def dtype_of_tensor(tensor: Any) -> str:
    """The tilec dtype name of a torch tensor or numpy array."""
    return T.dtype(str(tensor.dtype).removeprefix("torch.")).name


def resolve_target(target: str | None) -> str:
    """"auto" (or nothing): TILEC_TARGET, else "cuda" with a GPU, else "cpu".

    A bare "cuda" becomes the current device's arch ("cuda:sm_90a" on Hopper), so cache keys
    name the code they hold.
    """
    target = target or "auto"
    if not isinstance(target, str):
        raise at_caller(f"target is a name such as \"cuda\", \"cuda:sm_90a\" or \"cpu\", got "
                        f"{type(target).__name__} {target!r}")
    if target == "auto":
        target = os.environ.get("TILEC_TARGET") or "auto"
    if target == "auto":
        target = "cuda" if _cuda_available() else "cpu"
    if target == "cuda" and _cuda_available():
        major, minor = _torch().cuda.get_device_capability()
        target = f"cuda:sm_{major}{minor}{'a' if major >= 9 else ''}"
    return target


def _cuda_available() -> bool:
    try:
        return _torch().cuda.is_available()
    except ImportError:
        return False


def _is_tensor(value: Any) -> bool:
    """A torch tensor or numpy array; not a numpy scalar (it has a shape () and a dtype too)."""
    return (hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, T.DType)
            and not isinstance(value, numbers.Number))


def scalar_problem(name: str, dtype: T.DType, value: Any) -> str | None:
    """What is wrong with `value` as the scalar argument `name` of `dtype`, None if nothing:
    it must be a Python or numpy number of the dtype's kind (torch's tensors are not numbers),
    an integer inside the dtype's range (it would arrive wrapped: 2**33 + 5 as 5)."""
    kind = numbers.Real if dtype.is_float else numbers.Integral
    if not isinstance(value, kind):
        what = f"Tensor of shape {tuple(value.shape)}" if _is_tensor(value) else \
            type(value).__name__
        return f"argument '{name}' must be a {dtype} scalar, got {what}"
    if dtype.is_integer and dtype.name != "bool":
        low, high = dtype.integer_range
        if not low <= int(value) <= high:
            return f"argument '{name}' = {int(value)} does not fit in {dtype} ({low} to {high})"
    return None


def tensor_arguments(args: tuple, kwargs: dict, fn: Callable | None = None) -> list[Any]:
    """The tensors of an eager call, in `fn`'s parameter order: what its kernel takes."""
    if fn is not None and kwargs:
        values = list(inspect.signature(fn).bind(*args, **kwargs).arguments.values())
    else:
        values = [*args, *kwargs.values()]
    return [value for value in values if _is_tensor(value)]


def _code_location(fn: Callable) -> tuple[str, int]:
    """The file and `def` line of a function (past its decorators), without parsing it."""
    code = fn.__code__
    line = code.co_firstlineno
    for offset in range(50):
        text = linecache.getline(code.co_filename, line + offset).lstrip()
        if text.startswith(("def ", "async def ")):
            return code.co_filename, line + offset
        if not text:
            break
    return code.co_filename, line


# ---------------------------------------------------------------------------------------------
# the kernel object


_SLOW_PATH = object()  # the fast call declined: take the fully checked one
# targets whose kernels take torch's "cuda" tensors (ROCm's torch calls its devices so too);
# the others (cpu, and vulkan / webgpu, whose runtime copies in and out) take CPU tensors
GPU_TARGETS = ("cuda", "hip")


@dataclass
class _CallPlan:
    """A kernel's parameters as each call checks them (positions in the parameter list)."""

    torch: Any
    device_type: str
    inputs: list[tuple[int, list, Any, tuple | None]]  # position, stored shape, torch dtype, static
    outputs: list[tuple[int, list, Any, tuple | None]]
    total: int
    derived: bool  # some dimension is a derived size, checked against its expression


class JITKernel:
    """A compiled kernel: call it with the inputs, get the outputs back.

    `asm[stage]` holds every stage's text; `get_kernel_source()` the final device source.
    `pass_configs` are the configs it was compiled with (TileLang's string keys). A kernel
    the autotuner chose carries its tuning's `config`, `latency` and `ref_latency` (ms), as
    TileLang's does; they are None on a kernel compiled directly. `call_path` says, after the
    first call, whether later calls take the native call or the Python call and why.
    """

    def __init__(self, artifact: Artifact, location: tuple[str, int],
                 pass_configs: dict[str, Any] | None = None,
                 specialization: Specialization | None = None):
        self.artifact = artifact
        self.params: list[Param] = list(artifact.params)
        self.location = location
        self.pass_configs = dict(pass_configs or {})
        self.specialization = specialization  # what it was compiled from (for trace())
        self._launcher: Callable[[list, dict], None] | None = None
        self._plan: _CallPlan | None = None
        self._call: Callable[..., Any] = self._first_call
        # which call runs from the second call on, and why not the native one: set by the first
        self.call_path = "not called yet"
        self.config: dict[str, Any] | None = None
        self.latency: float | None = None
        self.ref_latency: float | None = None

    def update_tuner_result(self, latency: float | None, config: dict[str, Any] | None,
                            ref_latency: float | None) -> JITKernel:
        """Records what the autotuner measured of this kernel (TileLang's method)."""
        self.latency, self.config, self.ref_latency = latency, config, ref_latency
        return self

    def get_tuner_result(self) -> dict[str, Any]:
        """The tuning's latency, config and ref_latency (an error before any tuning)."""
        if self.config is None:
            raise TilecError(f"kernel '{self.name}' was not chosen by the autotuner: it has no "
                             "tuning results", *self.location)
        return {"latency": self.latency, "config": self.config,
                "ref_latency": self.ref_latency}

    @property
    def name(self) -> str:
        return self.artifact.name

    @property
    def target(self) -> str:
        return self.artifact.target

    @property
    def asm(self) -> dict[str, str]:
        return self.artifact.asm

    @property
    def ignored_pass_configs(self) -> dict[str, Any]:
        """The pass configs that did not change this kernel (tilec.transform says which do)."""
        return ignored_pass_configs(self.pass_configs, self.target)

    @property
    def notes(self) -> list[str]:
        """What the kernel does otherwise than its source asks (file:line: why), such as
        hints tilec accepts without acting on them."""
        parts = self.artifact.kernels or [self.artifact]
        return [note for part in parts for note in part.launch.get("notes", [])]

    @property
    def out_idx(self) -> list[int]:
        return [i for i, p in enumerate(self.params) if p.is_output and not p.is_workspace]

    def get_kernel_source(self) -> str:
        """The final device source: PTX for cuda, AMDGPU assembly for hip, LLVM IR for the
        CPU, SPIR-V assembly for vulkan, MSL for metal."""
        for stage in ("ptx", "amdgcn", "llvmir"):
            if stage in self.asm:
                return self.asm[stage]
        return list(self.asm.values())[-1] if self.asm else ""

    def trace(self, path: str | os.PathLike | None = None) -> Any:
        """The compile of this kernel pass by pass (a tilec.tools.Trace, compiled again with
        a recorder); with `path`, also written there as the HTML page `tilec trace` makes."""
        if self.specialization is None:
            raise TilecError(f"kernel '{self.name}' was loaded from an artifact: there is "
                             "nothing to trace (compile it with tilec.jit or tilec.compile)",
                             *self.location)
        from tilec.tools.trace import trace_specialization

        found = trace_specialization(self.specialization)
        if path is not None:
            found.save(path)
        return found

    def get_profiler(self, *args: Any, **kwargs: Any) -> Any:
        from tilec.profiler import Profiler

        return Profiler(self, *args, **kwargs)

    def _error(self, message: str) -> LaunchError:
        return LaunchError(f"kernel '{self.name}': {message}", *self.location)

    @property
    def launcher(self) -> Callable[[list, dict], None]:
        if self._launcher is None:
            from tilec.runtime import load

            if self.artifact.binary_kind == "none":
                raise self._error("was compiled only up to an intermediate stage; it cannot run")
            self._launcher = load(self.artifact)
        return self._launcher

    def _make_plan(self) -> _CallPlan:
        """What every call checks, resolved once: torch dtypes, static shapes, positions."""
        torch = _torch()
        inputs, outputs = [], []
        for position, param in enumerate(self.params):
            dtype = torch_dtype(param.dtype) if param.kind == "tensor" else None
            shape = stored_shape(param)
            static = tuple(shape) if all(isinstance(d, int) for d in shape) else None
            (outputs if param.is_output else inputs).append((position, shape, dtype, static))
        device_type = "cuda" if self.target.startswith(GPU_TARGETS) else "cpu"
        derived = any(isinstance(d, str) and d.startswith("(")
                      for p in self.params for d in stored_shape(p))
        return _CallPlan(torch, device_type, inputs, outputs, len(self.params), derived)

    def _derived_mismatch(self, symbols: dict[str, int]) -> str | None:
        """Why the bound sizes disagree with a derived one (`(seq_len * 4)` bound from a
        tensor, seq_len from another), or None."""
        for name, size in symbols.items():
            if not name.startswith("("):
                continue
            try:
                value = evaluate_size(name, symbols)
            except LaunchError:  # a size only this dimension measures: nothing to check
                continue
            if value != size:
                return f"a dimension of size {name} is {size}, but {name} = {value}"
        return None

    def _fast_call(self, plan: _CallPlan, args: tuple) -> Any:
        """The call when every argument is right (torch tensors only); else _SLOW_PATH."""
        if len(args) != len(plan.inputs):
            return _SLOW_PATH
        tensor_type = plan.torch.Tensor
        full: list[Any] = [None] * plan.total
        symbols: dict[str, int] = {}
        device = None
        for arg, (position, shape, dtype, static) in zip(args, plan.inputs, strict=True):
            if dtype is None:  # a scalar: checked by the full path
                return _SLOW_PATH
            if not isinstance(arg, tensor_type) or arg.dtype is not dtype:
                return _SLOW_PATH
            if static is not None:
                if arg.shape != static:
                    return _SLOW_PATH
            else:
                if arg.dim() != len(shape):
                    return _SLOW_PATH
                for dim, size in zip(shape, arg.shape, strict=True):
                    if (dim != size) if isinstance(dim, int) else (
                            symbols.setdefault(dim, size) != size):
                        return _SLOW_PATH
            if not arg.is_contiguous():
                return _SLOW_PATH
            if device is None:
                device = arg.device
                if device.type != plan.device_type:
                    return _SLOW_PATH
            elif arg.device != device:
                return _SLOW_PATH
            full[position] = arg
        if plan.derived and self._derived_mismatch(symbols) is not None:
            return _SLOW_PATH
        outputs = []
        for position, shape, dtype, static in plan.outputs:
            if static is None:
                if any(isinstance(d, str) and d not in symbols for d in shape):
                    return _SLOW_PATH
                shape = [d if isinstance(d, int) else symbols[d] for d in shape]
            output = plan.torch.empty(static or shape, dtype=dtype,
                                      device=device or plan.device_type)
            full[position] = output
            if not self.params[position].is_workspace:
                outputs.append(output)
        self.launcher(full, symbols)
        if not outputs:
            return None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    # kernel(*args) is self._call(*args) with no Python frame between: a property whose getter
    # is C hands back the current call (the first, then the native or the Python one)
    __call__ = property(operator.attrgetter("_call"),
                        doc="Runs the kernel on its inputs and returns its outputs.")

    def _first_call(self, *args: Any, **keywords: Any) -> Any:
        """The Python call; once it succeeded, later calls take the native one where the
        kernel has it (tilec.runtime.fastcall), with the Python call for what it declines."""
        result = self._python_call(*args, **keywords)
        native = self._native_call(args)
        if isinstance(native, str):
            self.call_path, self._call = f"Python call: {native}", self._python_call
        else:
            self.call_path, self._call = "native call", native
        return result

    def _native_call(self, args: tuple) -> Callable[..., Any] | str:
        from tilec.runtime.fastcall import native_call

        plan = self._plan
        tensor = next((arg for arg in args if isinstance(arg, plan.torch.Tensor)), None)
        device = tensor.device if tensor is not None else plan.torch.device(plan.device_type)
        returned = [(position, shape, dtype, not self.params[position].is_workspace)
                    for position, shape, dtype, _ in plan.outputs]
        return native_call(self.artifact, self.launcher,
                           [(position, shape, dtype, True)
                            for position, shape, dtype, _ in plan.inputs],
                           returned, device, self._python_call, LaunchError)

    def _python_call(self, *args: Any, **keywords: Any) -> Any:
        if keywords:
            raise self._keywords_error(keywords)
        if self._plan is None:
            self._plan = self._make_plan()
        result = self._fast_call(self._plan, args)
        if result is not _SLOW_PATH:
            return result
        return self._checked_call(args)

    def _keywords_error(self, keywords: dict[str, Any]) -> LaunchError:
        names = ", ".join(p.name for p in self.params if not p.is_output)
        return self._error(f"takes its arguments by position ({names}), got keyword arguments "
                           f"{', '.join(keywords)}")

    def _checked_call(self, args: tuple) -> Any:
        """Every check with its message; numpy arrays and scalars go this way too."""
        inputs = [p for p in self.params if not p.is_output]
        if len(args) != len(inputs):
            names = ", ".join(p.name for p in inputs)
            raise self._error(f"takes {len(inputs)} arguments ({names}), got {len(args)}")
        symbols: dict[str, int] = {}
        device, from_numpy = None, False
        checked: dict[str, Any] = {}
        for param, arg in zip(inputs, args, strict=True):
            if param.kind == "tensor":
                tensor, was_numpy = self._check_tensor(param, arg, symbols)
                from_numpy = from_numpy or was_numpy
                if device is None:
                    device = tensor.device
                elif tensor.device != device:
                    raise self._error(f"argument '{param.name}' is on {tensor.device}, but "
                                      f"other arguments are on {device}")
                checked[param.name] = tensor
            else:
                checked[param.name] = self._check_scalar(param, arg)
        mismatch = self._derived_mismatch(symbols)
        if mismatch is not None:
            raise self._error(mismatch)
        outputs = []
        torch = _torch()
        for param in self.params:
            if param.is_output:
                shape = [self._size(d, symbols, param) for d in stored_shape(param)]
                output = torch.empty(shape, dtype=torch_dtype(param.dtype),
                                     device=device or self._default_device())
                checked[param.name] = output
                if not param.is_workspace:
                    outputs.append(output)
        self.launcher([checked[p.name] for p in self.params], symbols)
        if from_numpy:
            outputs = [o.numpy() for o in outputs]
        if not outputs:
            return None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _default_device(self) -> str:
        return "cuda" if self.target.startswith(GPU_TARGETS) else "cpu"

    def _size(self, dim: int | str, symbols: dict[str, int], param: Param) -> int:
        if isinstance(dim, int):
            return dim
        if dim not in symbols:
            try:
                return evaluate_size(dim, symbols)  # a derived size of bound ones
            except LaunchError:
                raise self._error(f"the size '{dim}' of output '{param.name}' is not the size "
                                  "of any input") from None
        return symbols[dim]

    def _check_tensor(self, param: Param, arg: Any, symbols: dict[str, int]) -> tuple[Any, bool]:
        torch = _torch()
        was_numpy = type(arg).__module__ == "numpy"
        if was_numpy:
            if self.target.startswith(GPU_TARGETS):
                raise self._error(f"argument '{param.name}' is a numpy array; the {self.target} "
                                  "target takes torch tensors on the GPU")
            if any(stride < 0 for stride in arg.strides):  # torch.from_numpy refuses these
                raise self._error(f"argument '{param.name}' is a numpy view with a negative "
                                  f"stride (strides {arg.strides}, a reversed array); pass "
                                  "np.ascontiguousarray of it")
            arg = torch.from_numpy(arg)
        if not isinstance(arg, torch.Tensor):
            raise self._error(f"argument '{param.name}' must be a tensor, got "
                              f"{type(arg).__name__}")
        expected = torch_dtype(param.dtype)
        if arg.dtype != expected:
            raise self._error(f"argument '{param.name}' has dtype {arg.dtype}, expected "
                              f"{expected}")
        shape = stored_shape(param)
        if arg.dim() != len(shape):
            raise self._error(f"argument '{param.name}' has {arg.dim()} dimensions, expected "
                              f"{len(shape)} (shape {tuple(shape)})")
        for axis, (dim, size) in enumerate(zip(shape, arg.shape, strict=True)):
            if isinstance(dim, int) and dim != size:
                raise self._error(f"argument '{param.name}' has shape {tuple(arg.shape)}, "
                                  f"expected {tuple(shape)} (dimension {axis})"
                                  + _packing_note(param))
            if isinstance(dim, str):
                if symbols.setdefault(dim, size) != size:
                    raise self._error(f"argument '{param.name}' has {dim} = {size} in dimension "
                                      f"{axis}, but an earlier argument has {dim} = "
                                      f"{symbols[dim]}")
        wanted = "cuda" if self.target.startswith(GPU_TARGETS) else "cpu"
        if arg.device.type != wanted:
            raise self._error(f"argument '{param.name}' is on {arg.device}, but a {self.target} "
                              f"kernel needs {wanted} tensors")
        if not arg.is_contiguous():
            raise self._error(f"argument '{param.name}' is not contiguous (strides "
                              f"{tuple(arg.stride())}); pass .contiguous()")
        return arg, was_numpy

    def _check_scalar(self, param: Param, arg: Any) -> Any:
        """The scalar argument as a Python number (scalar_problem says what is wrong with
        one)."""
        dtype = T.dtype(param.dtype)
        problem = scalar_problem(param.name, dtype, arg)
        if problem is not None:
            raise self._error(problem)
        return float(arg) if dtype.is_float else int(arg)

    def __repr__(self) -> str:
        return f"<tilec kernel {self.name} for {self.target}>"


# ---------------------------------------------------------------------------------------------
# specializations: what is compiled, keyed before building


@dataclass
class Specialization:
    """One compile of a kernel: its cache key parts and how to build its tile IR."""

    key_parts: dict[str, Any]
    build: Callable[[], Any]  # -> tilec.frontend.builder.FrontendResult
    location: tuple[str, int]
    target: str
    pass_configs: dict[str, Any] = field(default_factory=dict)  # normalized (tilec.transform)

    @functools.cached_property
    def key(self) -> str:
        if self.pass_configs:
            return cache.cache_key({**self.key_parts, "pass_configs": self.pass_configs})
        return cache.cache_key(self.key_parts)


_kernel_objects: dict[str, JITKernel] = {}  # cache key -> kernel (its library stays loaded)


def load_compiler(target: str) -> None:
    """Import the frontend, `target`'s stages and every pass now. A process that forks
    compiler children (the autotuner) calls it first, so that each child starts with the
    compiler in memory instead of importing it again: about a second of a child's two where
    Python cannot cache bytecode."""
    import tilec.compiler.driver  # noqa: F401 (imported to be in memory before a fork)
    import tilec.frontend.builder  # noqa: F401
    from tilec.compiler.passes import all_passes
    from tilec.compiler.targets import get_target

    get_target(target)
    all_passes()


def compile_specialization(spec: Specialization) -> JITKernel:
    """The kernel for `spec`: from the cache, else built and compiled (then cached)."""
    artifact = cache.lookup(spec.key)
    if artifact is None:
        from tilec.compiler.driver import compile_module

        result = spec.build()
        settings = codegen_settings(spec.pass_configs)
        artifact = compile_module(result.module, result.params, spec.target,
                                  launch=result.launch, fast_math=settings.fast_math,
                                  disable_tma=settings.disable_tma,
                                  bounds_check=settings.bounds_check)
        cache.store(spec.key, artifact)
    kernel = _kernel_objects.get(spec.key)
    if kernel is None or kernel.artifact is not artifact:
        kernel = JITKernel(artifact, spec.location, spec.pass_configs, spec)
        if cache.is_enabled():
            _kernel_objects[spec.key] = kernel
    return kernel


_KEY_TYPES = (int, float, str, bool, type(None), T.DType, T.Symbol, T.Tensor)


def _python_number(value: Any) -> Any:
    """A numpy integer or float scalar (np.int64(64) from an array's shape) as the Python
    number it stands for, so sizes and factory arguments given that way compile; any other
    value as it is."""
    if isinstance(value, (int, float)) or not isinstance(value, numbers.Real):
        return value
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def _key_value(value: Any, depth: int = 0) -> str:
    """A value's part of a cache key: constants by repr, macros and functions by source, plain
    objects (a config) by their fields, tensors by shape and dtype; two values that can build
    different kernels never share a key part."""
    if isinstance(value, T.Macro):  # with the globals it names: the macros it calls, in turn
        from tilec.frontend.source import source_text

        named = {**_global_values(value.fn, depth + 1),
                 **_closure_values(value.fn, depth + 1)} if depth < 4 else {}
        return f"macro {source_text(value.fn)} {_key_value(named, depth + 1)}"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_key_value(v, depth) for v in value) + ")"
    if isinstance(value, dict):
        items = sorted((_key_value(k, depth), _key_value(v, depth)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(value, _KEY_TYPES):
        return repr(value)
    if _is_tensor(value):
        return f"<tensor {tuple(value.shape)} {value.dtype}>"
    code = getattr(value, "__code__", None)
    if code is not None:  # a function or method: what it computes is its source
        try:
            text = inspect.getsource(value)
        except (OSError, TypeError):
            text = f"{code.co_filename}:{code.co_firstlineno}"
        return f"function {getattr(value, '__qualname__', '?')} {text}"
    if type(value).__repr__ is not object.__repr__:
        return repr(value)
    fields = getattr(value, "__dict__", None)
    if fields is not None and depth < 4:
        return f"<{type(value).__qualname__} {_key_value(dict(fields), depth + 1)}>"
    return f"<{type(value).__qualname__}>"


def _global_values(fn: Callable, depth: int = 0) -> dict[str, str]:
    """The module globals a kernel names (sizes, dtypes, T.macros, helpers) are part of its
    key: a kernel whose global `BLOCK = 64` became 128 is compiled again, not taken from the
    cache. Modules (T, tilec) count by name."""
    names: set[str] = set()
    codes = [fn.__code__]
    while codes:  # the function's own names and those of its lambdas and comprehensions
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return {name: _key_value(fn.__globals__[name], depth) for name in sorted(names)
            if name in fn.__globals__ and not isinstance(fn.__globals__[name], types.ModuleType)}


def _closure_values(fn: Callable, depth: int = 0) -> dict[str, str]:
    """The closure cells a function reads (a kernel or macro made inside a factory sees its
    block sizes, dtypes and flags so) are part of its key, as its globals are: two kernels of
    one source made with `scale = 2.0` and `scale = 3.0` are two cache entries."""
    values = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        try:
            values[name] = _key_value(cell.cell_contents, depth)
        except ValueError:  # an unassigned cell
            values[name] = "<unbound>"
    return values


def _environment_values(prim: T.PrimFunc) -> dict[str, str]:
    """The names a prim_func sees from its factory (block sizes, dtypes...), for its key."""
    return {**{name: _key_value(value) for name, value in prim.env.items()},
            **_closure_values(prim.fn)}


def prim_func_specialization(prim: T.PrimFunc, out_idx: Sequence[int] | int | None,
                             target: str | None, extra_key: dict | None = None,
                             pass_configs: dict[str, Any] | None = None) -> Specialization:
    from tilec.frontend.source import source_text

    out = _normalize_out_idx(out_idx, len(inspect.signature(prim.fn).parameters),
                             _code_location(prim.fn))
    resolved = resolve_target(target)
    annotations = {k: repr(v) for k, v in getattr(prim.fn, "__annotations__", {}).items()}
    parts = {"kind": "prim_func", "source": source_text(prim.fn), "globals":
             _global_values(prim.fn), "environment":
             _environment_values(prim), "annotations": annotations, "out_idx": out,
             "target": resolved, **(extra_key or {})}

    def build() -> Any:
        from tilec.frontend.builder import build_prim_func

        return build_prim_func(prim, out)

    return Specialization(parts, build, _code_location(prim.fn), resolved,
                          normalize_pass_configs(pass_configs))


def _normalize_out_idx(out_idx: Sequence[int] | int | None, count: int,
                       location: tuple[str, int]) -> list[int]:
    """`out_idx` as TileLang takes it (an int, a list or tuple of ints, None; negative from the
    end) as parameter positions, each checked against the `count` parameters."""
    if out_idx is None:
        return []
    if isinstance(out_idx, str) or not isinstance(out_idx, (int, Sequence)):
        raise TilecError(f"out_idx takes an int or a list of ints (parameter positions), got "
                         f"{out_idx!r}", *location)
    indices = [out_idx] if isinstance(out_idx, int) else list(out_idx)
    positions = []
    for index in indices:
        if not isinstance(index, int) or isinstance(index, bool) or not -count <= index < count:
            raise TilecError(f"out_idx {out_idx!r}: {index!r} is not the position of one of the "
                             f"kernel's {count} parameters", *location)
        positions.append(index % count)
    if len(set(positions)) != len(positions):
        raise TilecError(f"out_idx {out_idx!r} names a parameter twice", *location)
    return positions


# TileLang's keywords of tilelang.compile and tilelang.jit that tilec's pipelines do not read
COMPILE_OPTIONS = frozenset({"execution_backend", "target_host", "verbose", "compile_flags"})
JIT_OPTIONS = COMPILE_OPTIONS | {"debug_root_path"}


def compile(func: T.PrimFunc, out_idx: Sequence[int] | int | None = None,  # noqa: A001
            target: str | None = "auto", pass_configs: dict | None = None,
            **_tilelang_options: Any) -> JITKernel:
    """Compile a `@T.prim_func` (TileLang's tilelang.compile); `out_idx` params are outputs."""
    check_options("tilec.compile", _tilelang_options, COMPILE_OPTIONS)
    if not isinstance(func, T.PrimFunc):
        raise TilecError(f"tilec.compile takes a @T.prim_func, got {type(func).__name__}")
    try:
        spec = prim_func_specialization(func, out_idx, target, pass_configs=pass_configs)
    except TilecError as error:
        if error.filename is not None:
            raise
        raise TilecError(error.message, *_code_location(func.fn)) from None
    return compile_specialization(spec)


# ---------------------------------------------------------------------------------------------
# @tilec.jit


def _is_factory(fn: Callable) -> bool:
    """A factory defines a @T.prim_func inside and returns it (TileLang's classic style)."""
    try:
        from tilec.frontend.source import parse_kernel

        tree = parse_kernel(fn).tree
    except (TilecError, SyntaxError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node is not tree:
            for decorator in node.decorator_list:
                name = decorator.attr if isinstance(decorator, ast.Attribute) else getattr(
                    decorator, "id", None)
                if name == "prim_func":
                    return True
    return False


class JITFunction:
    """What `@tilec.jit` makes of a function: an eager kernel or a prim_func factory."""

    def __init__(self, fn: Callable, out_idx: Sequence[int] | int | None, target: str | None,
                 pass_configs: dict | None = None):
        if not inspect.isfunction(fn):  # a class or a builtin has no source to build
            raise at_caller(f"tilec.jit decorates a function defined with def, got "
                            f"{type(fn).__name__} {getattr(fn, '__name__', fn)!r}")
        self.fn = fn
        self.out_idx = out_idx
        self.target = target
        try:
            self.pass_configs = normalize_pass_configs(pass_configs)
        except TilecError as error:
            raise TilecError(error.message, *_code_location(fn)) from None
        self.is_factory = _is_factory(fn)
        # per fast key: the kernel, and the positions of the arguments it takes (None: all)
        self._kernels: dict[Any, tuple[JITKernel, tuple[int, ...] | None]] = {}
        self._source: str | None = None
        functools.update_wrapper(self, fn)

    @property
    def source(self) -> str:
        if self._source is None:
            from tilec.frontend.source import source_text

            self._source = source_text(self.fn)
        return self._source

    @property
    def location(self) -> tuple[str, int]:
        return _code_location(self.fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.is_factory:
            return self._factory_kernel(args, kwargs)
        fast_key = self._fast_key(args, kwargs)
        try:
            known = self._kernels.get(fast_key)
        except TypeError:  # an argument that cannot be hashed: no in-memory key
            fast_key = known = None
        if known is None:
            try:
                self.signature.bind(*args, **kwargs)
            except TypeError as error:
                raise LaunchError(f"{self.fn.__name__}: {error}", *self.location) from None
            kernel = compile_specialization(self.specialize(args, kwargs))
            positions = tuple(n for n, arg in enumerate(args) if _is_tensor(arg))
            known = (kernel, None if len(positions) == len(args) else positions)
            if fast_key is not None and cache.is_enabled():
                self._kernels[fast_key] = known
        kernel, positions = known
        if kwargs:
            return kernel(*tensor_arguments(args, kwargs, self.fn))
        if positions is None:  # every argument is a tensor (the key fixes which ones are)
            return kernel(*args)
        return kernel(*[args[n] for n in positions])

    def _factory_kernel(self, args: tuple, kwargs: dict) -> JITKernel:
        """A factory's kernel for these arguments, kept in memory by their values as TileLang
        keeps it: examples call the factory inside the function they time (`kernel =
        factory(B, S, H, D)` on every call), where running the factory and hashing its source
        again took milliseconds. Arguments that are tensors or cannot be hashed are not kept, nor
        is anything while the cache is off."""
        if not cache.is_enabled() or any(hasattr(value, "shape")
                                         for value in (*args, *kwargs.values())):
            return self.compile(*args, **kwargs)
        fast_key = self._fast_key(args, kwargs)
        try:
            known = self._kernels.get(fast_key)
        except TypeError:  # an argument that cannot be hashed
            return self.compile(*args, **kwargs)
        if known is None:
            known = (self.compile(*args, **kwargs), None)
            self._kernels[fast_key] = known
        return known[0]

    def _fast_key(self, args: tuple, kwargs: dict) -> tuple:
        """A cheap in-memory key for repeated eager calls: shapes, dtypes, constants, target
        (unhashable where an argument is)."""
        parts: list[Any] = []
        for value in args:  # a numpy scalar (shape (), a dtype) is a constant: keyed by value
            shape = getattr(value, "shape", None)
            parts.append(value if shape is None or (not shape and isinstance(value, numbers.Number))
                         else (shape, value.dtype))
        if kwargs:  # sorting even an empty dict's names costs 0.2 µs
            for name in sorted(kwargs):
                value = kwargs[name]
                shape = getattr(value, "shape", None)
                parts.append((name, value if shape is None or (
                    not shape and isinstance(value, numbers.Number)) else (shape, value.dtype)))
        return tuple(parts), self.target, cache.key_environment()

    def compile(self, *args: Any, target: str | None = None, pass_configs: dict | None = None,
                **kwargs: Any) -> JITKernel:
        """The kernel for these arguments (tensors, or sizes as keywords: M=1024)."""
        return compile_specialization(self.specialize(args, kwargs, target, pass_configs))

    def get_tir(self, *args: Any, target: str | None = None, **kwargs: Any) -> Any:
        """The tile IR (an MLIR module of the tile dialect, before any pass) these arguments
        build: what TileLang's get_tir returns as TIR, e.g. for tilec.tools.Analyzer."""
        return self.specialize(args, kwargs, target).build().module

    def get_kernel_source(self, *args: Any, target: str | None = None, **kwargs: Any) -> str:
        """The device source (PTX, LLVM IR...) of the kernel these arguments compile, as
        TileLang's examples print it: `fn.get_kernel_source(M=M, N=N, block_N=64)`."""
        return self.compile(*args, target=target, **kwargs).get_kernel_source()

    def specialize(self, args: tuple, kwargs: dict, target: str | None = None,
                   pass_configs: dict | None = None) -> Specialization:
        """What these arguments compile; `pass_configs` are added to (and override) the
        decorator's."""
        args = tuple(_python_number(a) for a in args)
        kwargs = {name: _python_number(value) for name, value in kwargs.items()}
        if self.is_factory:
            spec = self._factory_specialization(args, kwargs, target)
        else:
            spec = self._eager_specialization(args, kwargs, target)
        try:
            spec.pass_configs = normalize_pass_configs({**self.pass_configs,
                                                        **normalize_pass_configs(pass_configs)})
        except TilecError as error:
            raise TilecError(error.message, *self.location) from None
        return spec

    def _scalar_annotation(self, annotation: Any) -> T.DType | None:
        """The dtype a parameter's annotation names (`s: T.int8`, or its text under `from
        __future__ import annotations`), None for any other annotation."""
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, self.fn.__globals__)  # noqa: S307 (the user's own text)
            except Exception:  # noqa: BLE001 (an annotation that is no expression of the module's names)
                return None
        return annotation if isinstance(annotation, T.DType) else None

    def _check_scalar_argument(self, name: str, dtype: T.DType, value: Any) -> None:
        """An eager call's argument for a parameter annotated with a scalar dtype (`s:
        T.int8`), as a compiled kernel's are checked: a tensor, None or a string there failed
        at a line using it, with no word of the argument, and a float for an integer was
        truncated."""
        problem = scalar_problem(name, dtype, value)
        if problem is not None:
            raise TilecError(f"{self.fn.__name__}: {problem}", *self.location)

    def _factory_specialization(self, args: tuple, kwargs: dict,
                                target: str | None) -> Specialization:
        try:
            bound = inspect.signature(self.fn).bind(*args, **kwargs)
        except TypeError as error:
            raise TilecError(f"{self.fn.__name__}: {error}", *self.location) from None
        bound.apply_defaults()
        arguments = {k: repr(v) for k, v in bound.arguments.items()}
        prim = self.fn(*args, **kwargs)
        if not isinstance(prim, T.PrimFunc):
            raise TilecError(f"{self.fn.__name__} must return a @T.prim_func, got "
                             f"{type(prim).__name__}", *self.location)
        extra = {"factory": self.source, "arguments": arguments}
        return prim_func_specialization(prim, self.out_idx, target or self.target, extra)

    def _eager_specialization(self, args: tuple, kwargs: dict,
                              target: str | None) -> Specialization:
        """Run the prologue with these arguments; the key is its sizes, tensors, constants."""
        if self.out_idx is not None:
            raise TilecError(f"kernel '{self.fn.__name__}': out_idx is for a jit function that "
                             "returns a @T.prim_func; an eager kernel returns the tensors it "
                             "makes with T.empty", *self.location)
        resolved = resolve_target(target or self.target)
        signature = self.signature
        parameters = signature.parameters
        try:
            bound = signature.bind_partial(*args, **{
                k: v for k, v in kwargs.items() if k in parameters})
        except TypeError as error:
            raise TilecError(f"{self.fn.__name__}: {error}", *self.location) from None
        sizes = {k: v for k, v in kwargs.items() if k not in parameters}
        values: dict[str, Any] = {}
        given: dict[str, T.Tensor] = {}
        tensor_names: list[str] = []
        for name, param in parameters.items():
            if name in bound.arguments:
                value = bound.arguments[name]
                dtype = self._scalar_annotation(param.annotation)
                if dtype is not None:
                    self._check_scalar_argument(name, dtype, value)
                if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or not _is_tensor(
                        value):
                    values[name] = value
                    continue
                tensor_names.append(name)
                given[name] = (T.Tensor(value.shape, value.dtype) if isinstance(value, T.Tensor)
                               else T.Tensor(tuple(value.shape), dtype_of_tensor(value)))
            elif param.kind == param.VAR_POSITIONAL:
                values[name] = ()
            elif param.kind == param.VAR_KEYWORD:
                values[name] = {}
            elif param.default is not inspect.Parameter.empty:
                values[name] = param.default
            else:
                tensor_names.append(name)  # no argument (`.compile(M=...)`): its annotation
        from tilec.frontend.prologue import run_prologue

        compiled = self.compiled_prologue

        def call_arguments(arguments: dict[str, Any]) -> tuple[tuple, dict]:
            call = inspect.BoundArguments(signature, {n: arguments[n] for n in parameters})
            return call.args, call.kwargs

        prologue = run_prologue(compiled, call_arguments, values, given, tensor_names, sizes)
        parts = {"kind": "eager", "source": self.source, "globals": _global_values(self.fn),
                 "closure": _closure_values(self.fn),
                 "tensors": {t.name: [[d.name if isinstance(d, T.Symbol) else d
                                       for d in t.shape], t.dtype.name]
                             for t in prologue.inputs},
                 "constants": {k: _key_value(v) for k, v in values.items()},
                 "sizes": prologue.sizes, "target": resolved}

        def build() -> Any:
            from tilec.frontend.builder import build_eager

            return build_eager(compiled.source, prologue)

        return Specialization(parts, build, self.location, resolved)

    @functools.cached_property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.fn)

    @functools.cached_property
    def compiled_prologue(self) -> Any:
        """The kernel parsed and its prologue compiled, once (a tilec.frontend.prologue
        CompiledPrologue)."""
        from tilec.frontend.prologue import compile_prologue
        from tilec.frontend.source import parse_kernel

        return compile_prologue(parse_kernel(self.fn))


def jit(func: Callable | None = None, *, out_idx: Sequence[int] | int | None = None,
        target: str | None = "auto", pass_configs: dict | None = None,
        **_tilelang_options: Any) -> Any:
    """`@tilec.jit` or `@tilec.jit(out_idx=[-1], target="cpu")`, as TileLang's tilelang.jit.

    `pass_configs` (PassConfigKey -> value) are checked and honoured where they change the code
    (tilec.transform); TileLang's other options (execution_backend...) are accepted so ported
    code runs, and tilec's pipelines do not read them.
    """
    check_options("tilec.jit", _tilelang_options, JIT_OPTIONS)
    if func is None:
        return lambda fn: JITFunction(fn, out_idx, target, pass_configs)
    return JITFunction(func, out_idx, target, pass_configs)
