"""The `T` namespace of tile programs (`import tilec.language as T`), as TileLang spells it.

Most names here are markers: the frontend reads a kernel's Python source and recognizes them,
so calling one from ordinary Python raises a TilecError. The dtypes, `Tensor` annotations,
`dynamic` symbols, `GemmWarpPolicy` and `prim_func` are real objects usable anywhere. Importing
this module imports neither MLIR nor torch: cache keys are computed with it on machines that
have no compiler.
"""

from __future__ import annotations

import builtins
import functools
import inspect
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from tilec.errors import TilecError

# ---------------------------------------------------------------------------------------------
# dtypes


class DType(str):
    """An element type, a `str` that compares and hashes like its name (`T.float16 ==
    "float16"`, `getattr(torch, T.float16)`), as TileLang's dtypes do; it also knows its MLIR
    spelling, width and kind.

    `T.dtype(spec)` (this class) returns the DType a user wrote: a DType, a name such as
    "float16" or "float", or a torch dtype. Names that differ but share storage (float8_e4m3 and
    float8_e4m3fn) are distinct dtypes with the same `mlir` type.
    """

    name: str
    mlir: str  # the type of its values
    storage: str  # the element type of its buffers: i8 for bool (a byte each, as torch's)
    bits: int
    kind: str  # "float" | "int" | "uint" | "bool" | "index"
    torch_name: str | None

    def __new__(cls, spec: Any) -> DType:
        if isinstance(spec, DType):
            return spec
        name = spec if isinstance(spec, str) else str(spec).removeprefix("torch.")
        found = DTYPES.get(name) or _ALIASES.get(name)
        if found is None:
            known = ", ".join(DTYPES)
            raise TilecError(f"unknown dtype {spec!r}; known dtypes: {known}")
        return found

    @classmethod
    def _define(cls, name: str, mlir: str, bits: int, kind: str,
                torch_name: str | None = None, storage: str | None = None) -> DType:
        """One of tilec's dtypes (only this module makes them)."""
        made = str.__new__(cls, name)
        fields = {"name": name, "mlir": mlir, "storage": storage or mlir, "bits": bits,
                  "kind": kind, "torch_name": torch_name if torch_name is not None else name}
        made.__dict__.update(fields)
        return made

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"dtype {self.name} is immutable")

    def __reduce__(self) -> tuple:
        return DType, (self.name,)  # unpickled as the same singleton

    @property
    def bytes(self) -> int:
        return -(-self.bits // 8)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_integer(self) -> bool:
        return self.kind in ("int", "uint", "bool", "index")

    @property
    def is_unsigned(self) -> bool:
        return self.kind in ("uint", "bool")

    @property
    def integer_range(self) -> tuple[int, int]:
        """The least and the greatest value of an integer dtype."""
        if self.is_unsigned:
            return 0, 2**self.bits - 1
        return -(2 ** (self.bits - 1)), 2 ** (self.bits - 1) - 1

    def interchangeable(self, other: DType) -> bool:
        """Whether the two are one type under two names (float8_e4m3 and float8_e4m3fn): the
        same IR type read the same way, so nothing converts between them."""
        return self.mlir == other.mlir and self.kind == other.kind

    @property
    def is_pair(self) -> bool:
        """float16x2: two values in one 32-bit register, computed on together (HFMA2, HADD2);
        scalars only (no buffers or tensors of them)."""
        return self.mlir.startswith("vector<")

    @property
    def is_sub_byte(self) -> bool:
        """int4, uint4, int2, uint2, float4_e2m1fn: tensors of them are packed into bytes."""
        return self.bits < 8 and self.kind != "bool"

    def storage_shape(self, shape: Sequence[Any]) -> list[Any]:
        """The shape of the torch tensor holding a tensor of this dtype: a sub-byte dtype
        packs 8 / bits elements to a byte along the last dimension."""
        shape = list(shape)
        if self.is_sub_byte and shape:
            shape[-1] = shape[-1] // (8 // self.bits)
        return shape

    def as_torch(self) -> Any:
        """The torch dtype of tensors of this dtype (imports torch)."""
        import torch

        if not self.torch_name:
            raise TilecError(f"T.{self.name} has no torch dtype")
        return getattr(torch, self.torch_name)

    def __repr__(self) -> str:
        return f"T.{self.name}"

    def __str__(self) -> str:
        return self.name


dtype = DType

float16 = DType._define("float16", "f16", 16, "float")
bfloat16 = DType._define("bfloat16", "bf16", 16, "float")
float32 = DType._define("float32", "f32", 32, "float")
float64 = DType._define("float64", "f64", 64, "float")
float8_e4m3 = DType._define("float8_e4m3", "f8E4M3FN", 8, "float", "float8_e4m3fn")
float8_e4m3fn = DType._define("float8_e4m3fn", "f8E4M3FN", 8, "float")
float8_e5m2 = DType._define("float8_e5m2", "f8E5M2", 8, "float")
int8 = DType._define("int8", "i8", 8, "int")
int16 = DType._define("int16", "i16", 16, "int")
int32 = DType._define("int32", "i32", 32, "int")
int64 = DType._define("int64", "i64", 64, "int")
uint8 = DType._define("uint8", "i8", 8, "uint")
uint16 = DType._define("uint16", "i16", 16, "uint")
uint32 = DType._define("uint32", "i32", 32, "uint")
uint64 = DType._define("uint64", "i64", 64, "uint")
bool = DType._define("bool", "i1", 1, "bool", storage="i8")  # noqa: A001 - TileLang's T.bool
# tf32 operands are float32 values (tilec's float32 gemms run on tf32 tensor cores)
tfloat32 = DType._define("tfloat32", "f32", 32, "float", "float32")
# e8m0: the power-of-two block scales of MXFP4 / NVFP4 (an exponent byte, no sign or mantissa)
float8_e8m0fnu = DType._define("float8_e8m0fnu", "f8E8M0FNU", 8, "float")
# sub-byte dtypes: a tensor of them is a torch int8 / uint8 tensor packing 8 / bits elements to
# a byte along its last dimension (the low bits first); lower-sub-byte-types decodes them
int4 = DType._define("int4", "i4", 4, "int", "int8")
uint4 = DType._define("uint4", "i4", 4, "uint", "uint8")
int2 = DType._define("int2", "i2", 2, "int", "int8")
uint2 = DType._define("uint2", "i2", 2, "uint", "uint8")
float4_e2m1fn = DType._define("float4_e2m1fn", "f4E2M1FN", 4, "float", "uint8")
index = DType._define("index", "index", 64, "index", "")
# a pair of float16 values in 32 bits (TileLang's float16x2): T.float16x2(a, b) packs two values,
# T.reinterpret reads the bits of a 32-bit scalar as one, and + - * act on both halves at once
float16x2 = DType._define("float16x2", "vector<2xf16>", 32, "float", "")
# a device address (TileLang's T.ptr): a tensor of them is a torch int64 tensor of data_ptr()s,
# and T.make_tensor(address, shape, dtype) reads and writes the tensor there
ptr = DType._define("ptr", "i64", 64, "uint", "int64")
# TileLang's C-style names: the same dtypes under a second name (the builtins they shadow here
# are spelled builtins.int / builtins.float in this module)
float = float32  # noqa: A001
half = float16
int = int32  # noqa: A001
uint = uint32

DTYPES: dict[str, DType] = {
    d.name: d
    for d in (float16, bfloat16, float32, float64, float8_e4m3, float8_e4m3fn, float8_e5m2,
              int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool, tfloat32,
              float8_e8m0fnu, int4, uint4, int2, uint2, float4_e2m1fn, ptr, float16x2)
}
_ALIASES = {
    "float": float32, "half": float16, "double": float64, "int": int32, "uint": uint32,
    "long": int64, "ulong": uint64, "short": int16, "fp16": float16, "bf16": bfloat16,
    "fp32": float32, "fp64": float64, "e4m3_float8": float8_e4m3, "e5m2_float8": float8_e5m2,
}


# ---------------------------------------------------------------------------------------------
# annotations and symbols


@dataclass(frozen=True)
class Symbol:
    """A dynamic dimension (`T.dynamic("M")`): the kernel is compiled once for all its values.

    `seq_len * heads` (a symbol times or plus an int or symbol) is a derived size: a tensor's
    dimension of that size is bound from the tensor and checked at each call against the
    value of its expression.
    """

    name: str
    dtype: DType = int32

    def __repr__(self) -> str:
        return f"T.dynamic({self.name!r})"

    @property
    def is_derived(self) -> builtins.bool:
        """A size computed from others (`seq_len * heads`), its name the expression."""
        return self.name.startswith("(")

    def _derive(self, op: str, other: Any, reflected: builtins.bool) -> Any:
        if isinstance(other, builtins.bool) or not isinstance(other, (builtins.int, Symbol)):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        text = [x.name if isinstance(x, Symbol) else str(x) for x in (a, b)]
        return Symbol(f"({text[0]} {op} {text[1]})", self.dtype)

    def __mul__(self, other: Any) -> Any:
        return self._derive("*", other, False)

    def __rmul__(self, other: Any) -> Any:
        return self._derive("*", other, True)

    def __add__(self, other: Any) -> Any:
        return self._derive("+", other, False)

    def __radd__(self, other: Any) -> Any:
        return self._derive("+", other, True)


def dynamic(name: str, dtype: Any = "int32") -> Symbol | tuple[Symbol, ...]:
    """A symbolic size bound from the arguments' shapes at call time; `T.dynamic("M, N")`
    gives one per name."""
    element = DType(dtype)
    names = [n for n in name.replace(",", " ").split() if n]
    if len(names) > 1:
        return tuple(Symbol(n, element) for n in names)
    return Symbol(name.strip(), element)


symbolic = dynamic


class Tensor:
    """`T.Tensor((M, K), dtype)` or `T.Tensor[(M, K), dtype]`: a global tensor parameter.

    In a kernel, `T.Tensor(shape, dtype, A.data)` is a row-major view of parameter `A`'s
    memory with another shape of the same element count.
    """

    def __init__(self, shape: Any, dtype: Any = "float32", data: Any = None):
        self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        self.dtype = DType(dtype)
        if data is not None:
            raise _outside("Tensor(shape, dtype, data)")

    def __class_getitem__(cls, item: Any) -> Tensor:
        return cls(*item) if isinstance(item, tuple) and len(item) == 2 else cls(item)

    def __repr__(self) -> str:
        return f"T.Tensor({self.shape}, {self.dtype!r})"


Buffer = Tensor


class SharedBuffer(Tensor):
    """`T.SharedBuffer(shape, dtype)`: TileLang's annotation of a macro parameter that is a
    shared buffer (documentation: the argument is the caller's buffer, checked nowhere)."""


class FragmentBuffer(Tensor):
    """`T.FragmentBuffer(shape, dtype)`: a macro parameter that is a fragment (annotation)."""


class LocalBuffer(Tensor):
    """`T.LocalBuffer(shape, dtype)`: a macro parameter that is a local buffer (annotation)."""


class GemmWarpPolicy:
    """How the warps of a block split a gemm's C tile."""

    Square = "square"
    FullRow = "full_row"
    FullCol = "full_col"


@dataclass(frozen=True)
class Fragment:
    """TileLang's fragment layout, for `T.annotate_layout({fragment: T.Fragment(...)})`: which
    thread holds element (i0, i1, ...) of a fragment of `shape`, and at which index of that
    thread's registers. Give `forward_fn(i0, ..., [rep]) -> (thread, index)`, or
    `forward_thread_fn(i0, ..., [rep]) -> thread` and `forward_index_fn(i0, ...) -> index`
    (an index may be a list: row-major over its extents); with `replicate` > 1 the functions
    take the copy number `rep` too and each element is held by that many threads. The
    frontend evaluates the functions at every element and keeps the layout when it is linear
    (tilec.compiler.layouts.linear), else reports the kernel line."""

    shape: tuple[int, ...]
    forward_fn: Callable | None = None
    forward_thread_fn: Callable | None = None
    replicate: int = 1
    forward_index_fn: Callable | None = None

    def __init__(self, shape: Any, forward_fn: Callable | None = None,
                 forward_thread_fn: Callable | None = None, replicate: int = 1,
                 forward_index_fn: Callable | None = None):
        if forward_fn is None and (forward_thread_fn is None or forward_index_fn is None):
            raise TilecError("T.Fragment takes forward_fn, or forward_thread_fn and "
                             "forward_index_fn")
        if not isinstance(replicate, builtins.int) or replicate < 1:
            raise TilecError(f"T.Fragment: replicate must be a positive int, got {replicate!r}")
        fields = {"shape": tuple(shape), "forward_fn": forward_fn,
                  "forward_thread_fn": forward_thread_fn, "replicate": replicate,
                  "forward_index_fn": forward_index_fn}
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def holders(self) -> dict[tuple[int, int], tuple[int, ...]]:
        """(register, thread) -> element for every element and copy (TileLang's semantics:
        the functions evaluated on Python ints)."""
        import itertools

        points = list(itertools.product(*(range(extent) for extent in self.shape)))
        copies = range(self.replicate)

        def extra(rep: int) -> tuple[int, ...]:
            return (rep,) if self.replicate > 1 else ()

        placed = []
        for point in points:
            for rep in copies:
                if self.forward_fn is not None:
                    thread, index = self.forward_fn(*point, *extra(rep))
                else:
                    thread = self.forward_thread_fn(*point, *extra(rep))
                    index = self.forward_index_fn(*point)
                index = tuple(index) if isinstance(index, (list, tuple)) else (index,)
                placed.append((builtins.int(thread), tuple(builtins.int(i) for i in index),
                               point))
        extents = [builtins.max(index[d] for _, index, _ in placed) + 1
                   for d in range(len(placed[0][1]))]
        table: dict[tuple[int, int], tuple[int, ...]] = {}
        for thread, index, point in placed:
            register = 0
            for value, extent in zip(index, extents, strict=True):
                register = register * extent + value
            known = table.setdefault((register, thread), point)
            if known != point:
                raise TilecError(f"T.Fragment puts elements {list(known)} and {list(point)} in "
                                 f"register {register} of thread {thread}")
        return table


@dataclass(frozen=True)
class Layout:
    """TileLang's index layout of a buffer (`T.Layout(shape, forward_fn)`). On a tensor
    parameter it places the elements as TileLang does (element (i, ...) at forward(i, ...) of
    the memory seen with the layout's output shape); tilec lays shared buffers out by swizzle
    only (tilec.layout.make_swizzled_layout), so there T.annotate_layout accepts a T.Layout
    that keeps every element in place."""

    shape: tuple[int, ...]
    forward_fn: Callable

    def __init__(self, shape: Any, forward_fn: Callable):
        object.__setattr__(self, "shape", tuple(shape))
        object.__setattr__(self, "forward_fn", forward_fn)

    def is_identity(self) -> bool:
        import itertools

        for point in itertools.product(*(range(extent) for extent in self.shape)):
            image = self.forward_fn(*point)
            image = tuple(image) if isinstance(image, (list, tuple)) else (image,)
            if tuple(builtins.int(i) for i in image) != point:
                return False
        return True


class PrimFunc:
    """A `@T.prim_func` kernel: its Python function, compiled by `tilec.compile`.

    `env` holds the local names of the scope that defined it (a factory's sizes and dtypes):
    annotations may use them even where Python keeps no closure cell (postponed annotations).
    """

    def __init__(self, fn: Callable, env: dict[str, Any] | None = None):
        self.fn = fn
        self.env = dict(env or {})
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TilecError(
            f"prim_func '{self.__name__}' is compiled, not called: use "
            f"tilec.compile({self.__name__}, out_idx=...) and call the kernel it returns",
            *_where(self.fn),
        )

    def __repr__(self) -> str:
        return f"<T.prim_func {self.__name__}>"


def _decorating_scope() -> dict[str, Any]:
    """The local names of the scope that applied a decorator calling this (see PrimFunc.env);
    none at module level."""
    caller = inspect.currentframe().f_back.f_back
    in_function = caller is not None and caller.f_code.co_name != "<module>"
    return dict(caller.f_locals) if in_function else {}


def prim_func(fn: Callable) -> PrimFunc:
    """Marks a kernel written with `T.Tensor` annotations (TileLang's classic style)."""
    return PrimFunc(fn, _decorating_scope())


class Macro:
    """A `@T.macro`: kernel code the frontend inlines where it is called (TileLang's T.macro)."""

    def __init__(self, fn: Callable, env: dict[str, Any] | None = None):
        self.fn = fn
        self.env = dict(env or {})
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TilecError(f"macro '{self.__name__}' can only be called inside a tilec kernel",
                         *_where(self.fn))

    def __repr__(self) -> str:
        return f"<T.macro {self.__name__}>"


def macro(fn: Callable) -> Macro:
    """Marks a helper whose body is inlined into the kernels that call it."""
    return Macro(fn, _decorating_scope())


def _where(fn: Callable) -> tuple[str | None, int | None]:
    try:
        return inspect.getsourcefile(fn), inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return None, None


# ---------------------------------------------------------------------------------------------
# markers: recognized by the frontend inside a kernel, an error anywhere else

# While an eager kernel's prologue (its Python before `with T.Kernel`) runs, the frontend
# answers the markers called there (T.const, T.empty, T.ceildiv of sizes) through this.
prologue_handler: ContextVar[Callable[[Callable, tuple, dict], Any] | None] = ContextVar(
    "tilec_prologue_handler", default=None)


def _intrinsic(fn: Callable) -> Callable:
    """Tag `fn` so the frontend knows it (it binds calls against `fn`'s signature); called
    outside a kernel, it checks the arguments as `fn` takes them, then raises `_outside`."""

    @functools.wraps(fn)
    def outside_a_kernel(*args: Any, **kwargs: Any) -> Any:
        fn(*args, **kwargs)
        handler = prologue_handler.get()
        if handler is not None:
            return handler(fn, args, kwargs)
        raise _outside(fn.__name__)

    outside_a_kernel.__tilec_op__ = fn.__name__  # type: ignore[attr-defined]
    return outside_a_kernel


class OutsideKernelError(TilecError):
    """A T function Python ran outside a kernel; the frontend then builds the helper that
    called it as kernel code instead."""


def _outside(name: str) -> TilecError:
    return OutsideKernelError(
        f"T.{name} can only be used inside a tilec kernel (a @tilec.jit function or a "
        "@T.prim_func); it has no meaning when Python runs it"
    )


@_intrinsic
def Kernel(*grid: Any, threads: Any = 128) -> Any:  # noqa: N802
    """`with T.Kernel(gx, gy, threads=128) as (bx, by)`: a grid of thread blocks."""


@_intrinsic
def annotate_layout(layout_map: Any) -> Any:
    """`T.annotate_layout({buffer: layout, ...})`: a fragment's T.Fragment (or a tilec
    LinearLayout), a shared buffer's tilec.layout.make_swizzled_layout(buffer)."""


@_intrinsic
def use_swizzle(panel_size: int, order: str = "row", enable: bool = True) -> Any:
    """Rasterize the grid in panels of `panel_size` blocks for L2 reuse (a kernel attribute)."""


@_intrinsic
def const(names: str, dtype: Any = "int32") -> Any:
    """`M, N, K = T.const("M, N, K")`: sizes bound from the arguments' shapes (or from
    `.compile(M=...)`); `dtype` is TileLang's and only documents them."""


@_intrinsic
def empty(shape: Any, dtype: Any) -> Any:
    """An output tensor the kernel object allocates and returns."""


@_intrinsic
def alloc_shared(shape: Any, dtype: Any, scope: str = "shared.dyn") -> Any:
    """A buffer shared by the threads of a block (`scope` as TileLang names it decides)."""


@_intrinsic
def alloc_fragment(shape: Any, dtype: Any, scope: str = "local.fragment") -> Any:
    """A block-level buffer distributed over the registers of the block's threads."""


@_intrinsic
def alloc_local(shape: Any, dtype: Any, scope: str = "local") -> Any:
    """A buffer private to each thread."""


@_intrinsic
def alloc_var(dtype: Any, *args: Any, scope: str = "local.var", init: Any = None) -> Any:
    """A mutable scalar variable (scalars bound by `=` are immutable): `alloc_var(dtype)`,
    `alloc_var(dtype, init)`, `alloc_var(dtype, init, scope)` or `alloc_var(dtype, scope)`."""


@_intrinsic
def alloc_global(shape: Any, dtype: Any, scope: str = "global") -> Any:
    """A global workspace of the kernel function, made before or between its T.Kernel blocks:
    allocated by each call, not returned."""


@_intrinsic
def copy(src: Any, dst: Any, *, coalesced_width: int | None = None, disable_tma: bool = False,
         eviction_policy: str | None = None) -> Any:
    """Copies a region between two buffers of any scopes (converting the dtype if needed).
    TileLang's coalesced_width / disable_tma / eviction_policy are hints; tilec's scheduling
    passes decide vector widths, TMA and caching themselves."""


@_intrinsic
def gemm(A: Any, B: Any, C: Any, transpose_A: bool = False, transpose_B: bool = False,  # noqa: N803
         policy: str = GemmWarpPolicy.Square, clear_accum: Any = False, k_pack: int = 1,
         mbar: Any = None) -> Any:
    """C += op(A) @ op(B); C = op(A) @ op(B) where `clear_accum` holds (a constant or a
    condition computed at run time). `k_pack` packs K for AMD matrix cores (a hint: the
    result is the same); `mbar` is sm_100's tcgen05 barrier."""


@_intrinsic
def make_tensor(ptr: Any, shape: Any, dtype: Any = "float32", strides: Any = None) -> Any:
    """The global tensor of `shape` and `dtype` (row-major) at the device address `ptr` (an
    element of a T.ptr tensor: a torch tensor's data_ptr()), read and written as a tensor
    parameter is."""


@_intrinsic
def device_assert(condition: Any, msg: str = "", no_stack_info: bool = False) -> Any:
    """Stops the kernel where `condition` is false on a thread: on CUDA the device's
    __assertfail (the message, the kernel's file:line and the thread; the launch then fails),
    on the CPU target a message and abort(), as an assert in a C program."""


@_intrinsic
def gemm_sp(A_sparse: Any, E: Any, B: Any, C: Any, transpose_A: bool = False,  # noqa: N803
            transpose_E: bool = False, transpose_B: bool = False,  # noqa: N803
            policy: str = GemmWarpPolicy.Square, clear_accum: bool = False, k_pack: int = 1,
            wg_wait: int = 0, annotations: Any = None) -> Any:
    """C += A @ op(B) for a 2:4 structured-sparse A (1:2 for float32): `A_sparse` holds the
    kept elements of each group of A's rows, `E` TileLang's ordered metadata (the compressor of
    examples/gemm_sp). tilec decompresses A into a shared tile and runs the dense T.gemm."""


@_intrinsic
def wgmma_gemm(A: Any, B: Any, C: Any, transpose_A: bool = False,  # noqa: N803
               transpose_B: bool = False, policy: str = GemmWarpPolicy.Square,  # noqa: N803
               clear_accum: Any = False, annotations: Any = None) -> Any:
    """T.gemm on Hopper's wgmma, or a CompileError where it cannot run there (TileLang's
    explicit WGMMA gemm). tilec's wgmma gemm waits for its own result, so a T.wait_wgmma after
    it has nothing left to wait for; the CPU target runs it as T.gemm."""


@_intrinsic
def wait_wgmma(id: int) -> Any:  # noqa: A002 - TileLang's parameter name
    """Wait until at most `id` wgmma groups are in flight; tilec's gemms wait for their own
    results, so there is nothing left to wait for."""


@_intrinsic
def clear(buffer: Any) -> Any:
    """Sets every element of a block-level buffer (or a region or element of one) to zero."""


@_intrinsic
def fill(buffer: Any, value: Any) -> Any:
    """Sets every element of a block-level buffer (or a region or element of one) to `value`."""


@_intrinsic
def Pipelined(start: Any, stop: Any = None, num_stages: int = 0, order: Any = None,  # noqa: N802
              stage: Any = None, group: Any = None) -> Any:
    """A sequential loop over range(start) or range(start, stop) whose copies and compute
    overlap in `num_stages` stages."""


@_intrinsic
def Parallel(*extents: Any, coalesced_width: int | None = None,  # noqa: N802
             loop_layout: Any = None, prefer_async: bool | None = None,
             annotations: dict | None = None) -> Any:
    """An N-d iteration space of independent points spread over the block's threads.

    TileLang's hints are taken and left to tilec's own choices: `coalesced_width` (tilec picks
    vector widths), `prefer_async` and `annotations` (its element copies are complete when the
    loop ends, so a later T.ptx_wait_group has nothing left to wait for); `loop_layout` is
    refused (annotate the fragment with T.annotate_layout)."""


@_intrinsic
def serial(*bounds: Any) -> Any:
    """A sequential loop: serial(stop), serial(start, stop) or serial(start, stop, step)."""


Serial = serial  # TileLang's capitalised name for the same tile-level loop


@_intrinsic
def Persistent(domain: Any, wave_size: Any, index: Any, group_size: Any = 8) -> Any:  # noqa: N802
    """`for bx, by in T.Persistent([tiles_m, tiles_n], wave_size, block_id)`: the tiles of
    `domain` a persistent block `index` of `wave_size` takes, one per wave (a serial loop):
    tile `w * wave_size + index` of the domain walked in groups of `group_size` along its last
    dimension; a tile past the domain's end is skipped."""


@_intrinsic
def parallel(start: Any, stop: Any = None, *, annotations: dict | None = None) -> Any:
    """TIR's parallel loop over [start, stop) (or [0, start)): a T.Parallel of one extent;
    directly nested ones form one T.Parallel over all their extents, as TileLang fuses them."""


@_intrinsic
def unroll(*bounds: Any) -> Any:
    """A sequential loop that is fully unrolled."""


def _reduce_marker(kind: str) -> Callable:
    def reduce(src: Any, dst: Any, dim: int = -1, clear: bool = True) -> Any:
        ...

    reduce.__name__ = f"reduce_{kind}"
    reduce.__doc__ = f"Reduces `src` along `dim` into `dst` with {kind}."
    return _intrinsic(reduce)


reduce_max = _reduce_marker("max")
reduce_min = _reduce_marker("min")
reduce_sum = _reduce_marker("sum")
reduce_abssum = _reduce_marker("abssum")
reduce_absmax = _reduce_marker("absmax")


@_intrinsic
def cumsum(src: Any, dst: Any = None, dim: int = 0, reverse: bool = False) -> Any:
    """Inclusive prefix sums of `src` along `dim` into `dst` (into `src` when dst is None),
    from the end when `reverse`."""


@_intrinsic
def reshape(src: Any, shape: Any) -> Any:
    """A row-major view of a tensor parameter with another shape of the same element count."""


@_intrinsic
def view(src: Any, shape: Any = None, dtype: Any = None) -> Any:
    """T.reshape with the shape defaulting to the source's; with another `dtype`, a shared or
    local buffer's bytes read and written as that wider type (the last dimension scaled by
    the sizes' ratio when no shape is given)."""


@_intrinsic
def im2col(img: Any, col: Any, nhw_step: Any, c_step: Any, kernel: int, stride: int,
           dilation: int, pad: int, eviction_policy: str | None = None,
           annotations: dict | None = None) -> Any:
    """Gathers 2-D convolution patches of the NHWC tensor `img` into the tile `col`:
    col[i, j] is img at output pixel nhw_step * rows + i (n, oh, ow over N x OH x OW) and
    patch column c_step * cols + j (kh, kw, c over kernel x kernel x C), zero in the padding
    and past the ends."""


@_intrinsic
def atomic_add(dst: Any, value: Any, memory_order: str | None = None, return_prev: bool = False,
               use_tma: bool = False, annotations: dict | None = None) -> Any:
    """Atomically adds `value` to an element (or a region) of a global or shared buffer.

    tilec's atomics are acq_rel read-modify-writes, which every `memory_order` but "seq_cst"
    allows; `use_tma` (TileLang's cp.reduce.async.bulk) is lowered as ordinary atomics and
    listed in `kernel.notes`; `return_prev` gives the element's value before the add (in
    per-thread code, outside T.Parallel)."""


@_intrinsic
def atomic_addx2(dst: Any, value: Any, return_prev: bool = False) -> Any:
    """Atomically adds the 2 elements of `value` from the one it names to the 2 of `dst` from
    the one it names (along the last dimension); each element's add is atomic."""


@_intrinsic
def atomic_addx4(dst: Any, value: Any, return_prev: bool = False) -> Any:
    """T.atomic_addx2 over 4 consecutive elements (TileLang's float4 atomic add)."""


def ceildiv(a: Any, b: Any) -> Any:
    """(a + b - 1) // b; plain Python ints are folded right away."""
    if isinstance(a, builtins.int) and isinstance(b, builtins.int):
        return -(-a // b)
    handler = prologue_handler.get()
    if handler is not None:
        return handler(ceildiv, (a, b), {})
    raise _outside("ceildiv")


ceildiv.__tilec_op__ = "ceildiv"  # type: ignore[attr-defined]


@_intrinsic
def if_then_else(cond: Any, then_value: Any, else_value: Any) -> Any:
    """Selects between two values."""


@_intrinsic
def max(a: Any, b: Any) -> Any:  # noqa: A001
    ...


@_intrinsic
def min(a: Any, b: Any) -> Any:  # noqa: A001
    ...


@_intrinsic
def abs(x: Any) -> Any:  # noqa: A001
    ...


def _math_marker(name: str) -> Callable:
    def op(x: Any) -> Any:
        ...

    op.__name__ = name
    op.__doc__ = f"Elementwise {name} of a scalar."
    return _intrinsic(op)


exp = _math_marker("exp")
exp2 = _math_marker("exp2")
log = _math_marker("log")
log2 = _math_marker("log2")
sqrt = _math_marker("sqrt")
rsqrt = _math_marker("rsqrt")
tanh = _math_marker("tanh")
sigmoid = _math_marker("sigmoid")
floor = _math_marker("floor")
ceil = _math_marker("ceil")
sin = _math_marker("sin")
cos = _math_marker("cos")
erf = _math_marker("erf")


@_intrinsic
def pow(x: Any, y: Any) -> Any:  # noqa: A001
    """x ** y."""


@_intrinsic
def clamp(x: Any, low: Any, high: Any) -> Any:
    """min(max(x, low), high)."""


@_intrinsic
def max_value(dtype: Any) -> Any:
    """The largest finite value of a dtype."""


@_intrinsic
def min_value(dtype: Any) -> Any:
    """The most negative finite value of a dtype."""


@_intrinsic
def vectorized(*bounds: Any) -> Any:
    """A short per-thread loop whose accesses may be vectorized (it is unrolled)."""


@_intrinsic
def cast(value: Any, dtype: Any) -> Any:
    """Converts a scalar to `dtype` (also written `value.astype(dtype)`)."""


@_intrinsic
def Cast(dtype: Any, value: Any) -> Any:  # noqa: N802
    """TVM's spelling of T.cast, dtype first: converts a scalar to `dtype`."""


@_intrinsic
def reinterpret(value: Any, dtype: Any) -> Any:
    """The bits of a scalar read as `dtype` (same width), e.g. a float32's as uint32."""


@_intrinsic
def floordiv(a: Any, b: Any) -> Any:
    """a // b rounded toward minus infinity (as Python's // and TileLang's)."""


@_intrinsic
def floormod(a: Any, b: Any) -> Any:
    """a - floordiv(a, b) * b: takes the divisor's sign (as Python's % and TileLang's)."""


@_intrinsic
def truncdiv(a: Any, b: Any) -> Any:
    """a / b rounded toward zero (C's integer division; TileLang's T.truncdiv)."""


@_intrinsic
def truncmod(a: Any, b: Any) -> Any:
    """a - truncdiv(a, b) * b: takes the dividend's sign (C's %)."""


@_intrinsic
def shift_left(a: Any, b: Any) -> Any:
    """a << b."""


@_intrinsic
def shift_right(a: Any, b: Any) -> Any:
    """a >> b (arithmetic on signed integers)."""


@_intrinsic
def evaluate(value: Any) -> Any:
    """A statement made of an expression (TVM's Evaluate): its calls take effect, its value is
    dropped."""


class Ref:
    """`def helper(x: T.Ref)` in a T.macro: `x` refers to the caller's T.alloc_var variable or
    buffer element, so assigning it writes there (as a C++ reference)."""


@_intrinsic
def infinity(dtype: Any) -> Any:
    """Positive infinity of a float dtype."""


# ---------------------------------------------------------------------------------------------
# threads of a block: what one thread sees (CUDA target; the CPU runs each block as one thread)


@_intrinsic
def print(obj: Any = None, msg: str = "", warp_group_id: int = 0, warp_id: int = 0) -> None:  # noqa: A001
    """Prints from the device on each run, in TileLang's format: a scalar (every thread), a
    buffer element by element (a shared or fragment buffer from thread warp_group_id * 128 +
    warp_id * 32 alone, a local or global one from every thread), or `msg` alone."""


@_intrinsic
def get_thread_binding(dim: int = 0) -> Any:
    """This thread's index in the block along `dim` (0: threadIdx.x, 1: .y, 2: .z)."""


@_intrinsic
def get_thread_bindings() -> Any:
    """This thread's (x, y, z) index in the block."""


@_intrinsic
def thread_binding(start: Any, stop: Any = None, thread: str | None = None) -> Any:
    """`tx = T.thread_binding(0, threads, thread="threadIdx.x")`: the thread index along the
    named axis, whose extent must be the block's."""


@_intrinsic
def get_block_binding(dim: int = 0) -> Any:
    """The block's index in the grid along `dim` (the names T.Kernel binds)."""


@_intrinsic
def get_block_bindings() -> Any:
    """The block's index along every grid dimension."""


@_intrinsic
def import_source(source: str | None = None) -> Any:
    """Adds CUDA C/C++ source (device functions for T.call_extern) to the kernel; None adds
    nothing. The CUDA target compiles it and links it with the kernel."""


@_intrinsic
def call_extern(*args: Any, dtype: Any = None) -> Any:
    """`T.call_extern(dtype, func_name, *args)` (or `(func_name, *args, dtype=...)`): calls the
    device function `func_name` of a T.import_source; its value has `dtype` when used."""


@_intrinsic
def access_ptr(base: Any, access_type: Any = "r", *extents: Any, offset: Any = 0,
               extent: Any = None) -> Any:
    """The address of a per-thread buffer (or of its element `buf[i]`) plus `offset` elements,
    for T.call_extern; `extents` / `extent` say how far the access reaches (the address does
    not depend on them)."""


@_intrinsic
def sync_threads(barrier_id: Any = None, arrive_count: Any = None) -> Any:
    """Waits until every thread of the block (or `arrive_count` threads at named barrier
    `barrier_id`) arrives here; shared-memory writes before it are visible after it."""


@_intrinsic
def shfl_xor(value: Any, delta: Any, width: Any = 32, mask: Any = 0xFFFFFFFF) -> Any:
    """`value` of the lane whose id is this lane's xor `delta`, in groups of `width` lanes
    (__shfl_xor_sync)."""


@_intrinsic
def shfl_down(value: Any, delta: Any, width: Any = 32, mask: Any = 0xFFFFFFFF) -> Any:
    """`value` of the lane `delta` above this one in its group of `width` lanes, this lane's
    own past the group's end (__shfl_down_sync)."""


@_intrinsic
def shfl_up(value: Any, delta: Any, width: Any = 32, mask: Any = 0xFFFFFFFF) -> Any:
    """`value` of the lane `delta` below this one in its group of `width` lanes, this lane's
    own before the group's start (__shfl_up_sync)."""


@_intrinsic
def shfl_sync(value: Any, srcLane: Any, width: Any = 32, mask: Any = 0xFFFFFFFF) -> Any:  # noqa: N803
    """`value` of lane `srcLane` of this lane's group of `width` lanes (__shfl_sync)."""


@_intrinsic
def tvm_warp_shuffle(mask: Any, value: Any, srcLane: Any, width: Any,  # noqa: N803
                     warp_size: Any) -> Any:
    """TVM's builtin spelling of T.shfl_sync(value, srcLane, width, mask); `warp_size` is
    the warp's (32)."""


@_intrinsic
def dp4a(A: Any, B: Any, C: Any) -> Any:  # noqa: N803
    """C[k] += A[i] * B[j] + ... + A[i + 3] * B[j + 3]: four int8 products summed into the
    int32 element C names (A, B, C name their first elements)."""


def _warp_reduce_marker(kind: str) -> Callable:
    def reduce(value: Any) -> Any:
        ...

    reduce.__name__ = f"warp_reduce_{kind}"
    reduce.__doc__ = f"The {kind} of `value` over the 32 lanes of the warp, on every lane."
    return _intrinsic(reduce)


warp_reduce_sum = _warp_reduce_marker("sum")
warp_reduce_max = _warp_reduce_marker("max")
warp_reduce_min = _warp_reduce_marker("min")
warp_reduce_bitand = _warp_reduce_marker("bitand")
warp_reduce_bitor = _warp_reduce_marker("bitor")


@_intrinsic
def any_sync(predicate: Any, mask: Any = 0xFFFFFFFF) -> Any:
    """1 (int32) on every lane if `predicate` holds on any lane of the warp, else 0."""


@_intrinsic
def all_sync(predicate: Any, mask: Any = 0xFFFFFFFF) -> Any:
    """1 (int32) on every lane if `predicate` holds on all lanes of the warp, else 0."""


# ----- mbarriers, TMA and warp specialization (python/tilec/frontend/barrier_ops.py) -----

@_intrinsic
def alloc_barrier(arrive_count: Any) -> Any:
    """mbarriers in shared memory, one per arrive count (an int or a list of ints)."""


@_intrinsic
def mbarrier_arrive(mbarrier: Any, cta_id: Any = None) -> Any:
    """Every thread running it arrives once at the barrier (`bars[i]`, or `bars`: its first)."""


@_intrinsic
def barrier_arrive(mbarrier: Any) -> Any:
    """T.mbarrier_arrive."""


@_intrinsic
def mbarrier_wait_parity(mbarrier: Any, parity: Any) -> Any:
    """Waits until the barrier's phase of this parity (0 or 1) has completed; a fresh barrier
    counts its phase of parity 1 as completed."""


@_intrinsic
def barrier_wait(mbarrier: Any, parity: Any) -> Any:
    """T.mbarrier_wait_parity."""


@_intrinsic
def mbarrier_expect_tx(mbarrier: Any, tx: Any) -> Any:
    """One thread raises the transaction bytes the barrier's current phase waits for."""


@_intrinsic
def mbarrier_arrive_expect_tx(mbarrier: Any, tx: Any) -> Any:
    """One thread raises the phase's transaction bytes and arrives."""


@_intrinsic
def named_barrier_arrive(barrier_id: Any, thread_count: Any) -> Any:
    """Arrives at a named barrier of `thread_count` threads without waiting (bar.arrive)."""


@_intrinsic
def fence_proxy_async() -> Any:
    """Orders this thread's shared-memory accesses with later TMA / wgmma accesses."""


@_intrinsic
def tma_copy(src: Any, dst: Any, *, barrier: Any = None, cluster_mask: Any = None,
             leader_scope_threads: Any = None, eviction_policy: Any = None,
             annotations: Any = None) -> Any:
    """One thread starts an asynchronous copy of a global box into shared memory; its
    arrival completes on `barrier` (wait there with T.mbarrier_wait_parity)."""


@_intrinsic
def ptx_cp_async(dst_access_ptr: Any, src_access_ptr: Any, num_elems: Any,
                 predicate: Any = None) -> Any:
    """This thread starts an asynchronous copy (cp.async) of `num_elems` elements (4, 8 or 16
    bytes) from a global element to a shared one, each named `T.access_ptr(buf[i, j], ...)`;
    complete it with T.cp_async_barrier_noinc and a wait on that barrier."""


@_intrinsic
def cp_async_barrier_noinc(barrier: Any) -> Any:
    """The barrier (`bars[i]`) receives this thread's arrival once every cp.async it started
    before has landed (cp.async.mbarrier.arrive.noinc: counted in the arrive count)."""


@_intrinsic
def ptx_commit_group() -> Any:
    """Closes this thread's group of cp.async copies started since the last commit
    (cp.async.commit_group)."""


@_intrinsic
def ptx_wait_group(num: int) -> Any:
    """Waits until at most `num` of this thread's committed cp.async groups are in flight
    (cp.async.wait_group num); the CPU target's copies are complete at once."""


@_intrinsic
def sync_grid() -> Any:
    """Waits until every thread of every block of the grid arrives here; global-memory writes
    before it are visible after it. The kernel is launched cooperatively (all its blocks
    resident at once), so its grid may not exceed what the GPU holds at a time."""


@_intrinsic
def ws(*warp_group_idx: int) -> Any:
    """`with T.ws(1):` the body runs on warpgroup 1 only (threads 128 to 255)."""


@_intrinsic
def set_max_nreg(reg_count: int, is_inc: int) -> Any:
    """Raises (is_inc=1) or lowers (0) the warpgroup's registers per thread (sm_90a)."""


@_intrinsic
def inc_max_nreg(reg_count: int) -> Any:
    """T.set_max_nreg(reg_count, 1)."""


@_intrinsic
def dec_max_nreg(reg_count: int) -> Any:
    """T.set_max_nreg(reg_count, 0)."""


@_intrinsic
def annotate_producer_reg_dealloc(reg_count: int = 24) -> Any:
    """The producer warpgroup gives registers back: T.dec_max_nreg(reg_count)."""


@_intrinsic
def annotate_consumer_reg_alloc(reg_count: int = 240) -> Any:
    """The consumer warpgroup takes registers: T.inc_max_nreg(reg_count)."""


@_intrinsic
def no_set_max_nreg() -> Any:
    """Opts out of automatic register reallocation (tilec does none: a no-op)."""


disable_warp_group_reg_alloc = no_set_max_nreg  # TileLang's other name for it


@_intrinsic
def alloc_reducer(shape: Any, dtype: Any, op: str = "sum", replication: Any = None) -> Any:
    """A sum reducer (TileLang's replication="all" form): threads add their contributions
    with `reducer[i] += x`; after T.finalize_reducer(reducer) it holds the block's sums."""


@_intrinsic
def finalize_reducer(reducer: Any, dst: Any = None) -> Any:
    """Completes a T.alloc_reducer's sums (and copies them into `dst`, if given)."""


@_intrinsic
def attr(node: Any, attr_key: str, value: Any) -> Any:
    """`with T.attr(T.comm_reducer(...), "reduce_scope", handle):` the scope of a
    T.tvm_thread_allreduce (the one TVM attribute statement tilec has)."""


@_intrinsic
def comm_reducer(combiner: Any, identity: Any) -> Any:
    """A commutative reducer: `combiner` a lambda of two values, `identity` its unit ([x])."""


@_intrinsic
def tvm_thread_allreduce(*args: Any, dtype: str = "handle") -> Any:
    """`(T.uint32(1), value, True, result[i], thread_index, ...)`: every thread gets in
    result[i] the reducer's combination of `value` over the threads that differ from it only
    along the given thread axes (inside T.attr's reduce_scope; wrap it in T.evaluate)."""


@_intrinsic
def rng_init(seed: Any, seq: Any = None, off: Any = 0,
             generator: str = "curandStatePhilox4_32_10_t") -> Any:
    """Starts this thread's random numbers as cuRAND's curand_init(seed, seq, off) does
    (Philox4x32-10; seq defaults to the thread's number in the grid)."""


@_intrinsic
def rng_rand() -> Any:
    """The thread's next random uint32 (cuRAND's curand)."""


@_intrinsic
def rng_rand_float(bit: int = 32, dist: str = "uniform") -> Any:
    """The thread's next random float32 / float64 in (0, 1] (cuRAND's curand_uniform)."""


# ---------------------------------------------------------------------------------------------
# names tilec does not have

# TileLang names whose hardware only sm_100 (Blackwell) has: tensor memory, tcgen05 MMAs and
# cluster launch control
_SM100_PREFIXES = ("tcgen05_", "clc_")
_SM100_NAMES = frozenset({"alloc_tmem"})


# TVM's statement-level constructs: what to write in tilec instead
_TVM_ONLY = frozenset({"tvm_storage_sync"})


def unknown_name_message(name: str) -> str:
    """Why `T.<name>` does not exist: an sm_100-only name, or one tilec does not implement."""
    if name in _SM100_NAMES or name.startswith(_SM100_PREFIXES):
        return (f"T.{name} needs sm_100 (Blackwell: tensor memory, tcgen05, cluster launch "
                "control); tilec targets sm_80 and sm_90a and the CPU")
    if name in _TVM_ONLY:
        return (f"T.{name} (a TVM builtin) is not implemented by tilec; synchronize with "
                "T.sync_threads, exchange values with T.shfl_*")
    return f"T.{name} is not implemented by tilec"


def __getattr__(name: str) -> Any:
    """A missing `T.<name>`: an AttributeError saying why (so `hasattr(T, name)` is False)."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise AttributeError(unknown_name_message(name))


__all__ = [
    "DType", "DTYPES", "dtype", "Symbol", "dynamic", "symbolic", "Tensor", "Buffer",
    "GemmWarpPolicy", "Fragment", "Layout", "PrimFunc", "prim_func", "Macro", "macro", "Kernel",
    "annotate_layout", "use_swizzle",
    "const", "empty", "alloc_shared", "gemm_sp", "device_assert", "make_tensor", "ptr",
    "alloc_fragment", "alloc_local", "alloc_var", "copy", "gemm", "clear", "fill", "Pipelined",
    "Parallel", "parallel", "serial", "Serial", "unroll", "reshape", "view", "im2col", "reduce_max",
    "reduce_min", "reduce_sum", "reduce_abssum",
    "reduce_absmax", "atomic_add", "atomic_addx2", "atomic_addx4", "ceildiv", "if_then_else",
    "max", "min", "abs", "exp", "exp2",
    "log", "log2", "sqrt", "rsqrt", "tanh", "sigmoid", "floor", "ceil", "sin", "cos", "erf",
    "pow", "clamp", "max_value", "min_value", "vectorized", "cast", "infinity",
    "float16", "bfloat16", "float32", "float64", "float8_e4m3", "float8_e4m3fn", "float8_e5m2",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "index",
    "float", "half", "int", "uint", "tfloat32", "int4", "float4_e2m1fn", "float16x2",
    "print",
    "get_thread_binding", "get_thread_bindings",
    "thread_binding", "get_block_binding", "get_block_bindings", "sync_threads", "shfl_xor",
    "shfl_down", "shfl_up", "shfl_sync", "tvm_warp_shuffle", "dp4a", "warp_reduce_sum",
    "warp_reduce_max",
    "warp_reduce_min", "warp_reduce_bitand", "warp_reduce_bitor", "Cast", "reinterpret",
    "floordiv", "floormod", "truncdiv", "truncmod", "alloc_global", "cumsum", "any_sync",
    "all_sync", "shift_left",
    "shift_right", "evaluate", "Ref", "alloc_barrier", "mbarrier_arrive", "barrier_arrive",
    "mbarrier_wait_parity", "barrier_wait", "mbarrier_expect_tx", "mbarrier_arrive_expect_tx",
    "named_barrier_arrive", "fence_proxy_async", "tma_copy", "ws", "set_max_nreg", "inc_max_nreg",
    "dec_max_nreg", "annotate_producer_reg_dealloc", "annotate_consumer_reg_alloc",
    "no_set_max_nreg", "disable_warp_group_reg_alloc", "SharedBuffer",
    "FragmentBuffer", "LocalBuffer", "alloc_reducer", "finalize_reducer", "attr", "comm_reducer",
    "tvm_thread_allreduce", "rng_init", "rng_rand", "rng_rand_float",
    "import_source", "call_extern", "access_ptr", "ptx_cp_async", "cp_async_barrier_noinc",
    "ptx_commit_group", "ptx_wait_group", "sync_grid",
]
