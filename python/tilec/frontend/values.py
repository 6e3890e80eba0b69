"""What a kernel's names stand for while the frontend builds IR: scalars, buffers and regions.

Plain Python values (ints, floats, dtypes, tuples) stay Python values: they are folded at
compile time and only become `arith.constant`s where they meet IR values.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mlir import ir

from tilec.language import DType

_fresh_ids = itertools.count()


@dataclass(frozen=True)
class Affine:
    """An integer value as `const + sum(coeff * var)`: a var is a loop or block index, or a
    run-time value the frontend cannot see into (a tensor element, a var's reading).

    Lets the frontend see that `(by + 1) * 64 - by * 64` and `(s + 64) - s` are the constant
    64 (slice extents).
    """

    terms: tuple[tuple[int, int], ...] = ()
    const: int = 0

    @staticmethod
    def variable() -> Affine:
        return Affine(((next(_fresh_ids), 1),), 0)

    def _combine(self, other: Affine, sign: int) -> Affine:
        coeffs = dict(self.terms)
        for key, coeff in other.terms:
            coeffs[key] = coeffs.get(key, 0) + sign * coeff
        terms = tuple(sorted((k, c) for k, c in coeffs.items() if c != 0))
        return Affine(terms, self.const + sign * other.const)

    def __add__(self, other: Affine) -> Affine:
        return self._combine(other, 1)

    def __sub__(self, other: Affine) -> Affine:
        return self._combine(other, -1)

    def scale(self, factor: int) -> Affine:
        terms = tuple((k, c * factor) for k, c in self.terms if c * factor)
        return Affine(terms, self.const * factor)

    @property
    def constant(self) -> int | None:
        return None if self.terms else self.const


@dataclass
class Scalar:
    """An SSA scalar of the IR.

    `expr` is set on sizes computed before the kernel (grid sizes): a Python expression over
    the dynamic symbols, which the runtime evaluates to launch the grid. `affine` tracks
    integer arithmetic (see `Affine`).
    """

    value: ir.Value
    dtype: DType
    expr: str | None = None
    affine: Affine | None = None


@dataclass
class Buffer:
    """A memref: a global tensor parameter or a block-level allocation.

    `dims` holds each dimension's size: an int, or the Scalar that measures a dynamic one.
    """

    value: ir.Value
    name: str
    dims: tuple[Any, ...]
    dtype: DType
    scope: str  # "global" | "shared" | "fragment" | "local" | "var"
    placement: Placement | None = None  # a global tensor's T.Layout: where elements live

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def static_shape(self) -> tuple[int | None, ...]:
        return tuple(d if isinstance(d, int) else None for d in self.dims)

    @property
    def shape(self) -> tuple[Any, ...]:
        return self.dims


@dataclass(frozen=True)
class RuntimeExtent:
    """The length of a slice known only at run time (`A[s:e]` where `e - s` is no constant).

    As in TileLang, such a box takes its extent from the other operand of the copy (the
    block-level tile), starting at the run-time `s`; the tensor's bounds guard the accesses.
    """


@dataclass
class Placement:
    """A T.Layout annotated on a tensor parameter (TileLang's layout of a global buffer):
    element (i0, i1, ...) lives at `forward(i0, i1, ...)` of `storage`, the parameter's memory
    seen with the layout's output shape."""

    storage: Buffer
    forward: Callable[..., Any]


@dataclass
class Region:
    """A box of a buffer: corner offsets and extents (None: taken from the other operand, in
    the corner form A[y, x]; a RuntimeExtent: a slice whose length is known at run time)."""

    buffer: Buffer
    offsets: list[Any]
    extents: list[int | None | RuntimeExtent]

    @property
    def is_corner(self) -> bool:
        return any(e is None for e in self.extents)

    @property
    def has_runtime_extent(self) -> bool:
        return any(isinstance(e, RuntimeExtent) for e in self.extents)


@dataclass
class ElementRef:
    """What a `T.Ref` parameter of a macro names: one element of a buffer, read where it is used
    and written where it is assigned."""

    buffer: Buffer
    indices: list[Any]


@dataclass
class Method:
    """A method looked up on a frontend value (`x.astype`), called later."""

    receiver: Any
    name: str


@dataclass
class LoopSpec:
    """What `T.Pipelined(...)`, `T.Parallel(...)`, `T.serial(...)`, `range(...)` evaluate to."""

    kind: str  # "pipelined" | "parallel" | "serial" | "unroll"
    args: list[Any]
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class KernelSpec:
    """What `T.Kernel(...)` evaluates to, entered by `with ... as (bx, by)`."""

    grid: list[Any]
    threads: list[int]


def mlir_type(dtype: DType) -> ir.Type:
    """The type of a scalar of `dtype`."""
    return ir.Type.parse(dtype.mlir)


def storage_type(dtype: DType) -> ir.Type:
    """The element type of a buffer of `dtype` (i8 for bool: memrefs of i1 do not lower)."""
    return ir.Type.parse(dtype.storage)
