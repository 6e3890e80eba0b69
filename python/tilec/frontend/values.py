"""What a kernel's names stand for while the frontend builds IR: scalars, buffers and regions.

Plain Python values (ints, floats, dtypes, tuples) stay Python values: they are folded at
compile time and only become `arith.constant`s where they meet IR values.
"""

from __future__ import annotations

import itertools
import math
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

    def __repr__(self) -> str:
        # what a user's message shows: no MLIR object
        if self.expr is not None:
            return f"<the size {self.expr}>"
        article = "an" if str(self.dtype)[0] in "aeiou" else "a"
        return f"<{article} {self.dtype} value computed in the kernel>"


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
    mma_operand: tuple[Any, str] | None = None  # (MMA emitter, "A" | "B" | "C") it stands for

    def __repr__(self) -> str:
        dims = ", ".join(map(repr, self.dims))
        return f"<{self.scope} buffer {self.name}[{dims}] of {self.dtype}>"

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
    parts: int = 1  # > 1: a reinterpreting view; forward takes the part's number last


def is_alias(buffer: Buffer) -> bool:
    """A view of a shared, fragment or local buffer with another shape (`aliased`)."""
    return buffer.scope != "global" and buffer.placement is not None


def aliased(source: Buffer, shape: tuple[int, ...]) -> Buffer:
    """`source` seen row-major with `shape` (as many elements, both static): an alias whose
    element (i, j, ...) is read and written at the source's element of the same row-major
    position, so no data moves and the source sees every write (TileLang's T.reshape /
    T.view of a shared or fragment buffer). A view of a view maps through both."""
    storage, inner, parts = source, None, 1
    if source.placement is not None:
        storage, inner = source.placement.storage, source.placement.forward
        parts = source.placement.parts
    mapping = row_major_map(shape, tuple(source.dims))

    def forward(*indices: Any) -> list[Any]:
        if parts > 1:  # a view of a reinterpreting view: its part number passes through
            return list(inner(*mapping(*indices[:-1]), indices[-1]))
        image = mapping(*indices)
        return list(inner(*image)) if inner is not None else image

    return Buffer(storage.value, "", shape, source.dtype, source.scope,
                  Placement(storage, forward, parts))


def reinterpreted(source: Buffer, shape: tuple[int, ...], dtype: DType) -> Buffer:
    """`source` (a shared or local buffer that is no view) seen as elements of `dtype`, each
    `parts` of the source's side by side (TileLang's T.view with a wider dtype): element
    (i, j, ...) of the view is made of the source's elements at row-major positions
    parts * p ... parts * p + parts - 1, p its own row-major position, the first one its
    lowest bits (the bytes in memory, on the little-endian machines tilec targets)."""
    parts = dtype.bits // source.dtype.bits
    mapping = row_major_map((*shape, parts), tuple(source.dims))
    return Buffer(source.value, "", shape, dtype, source.scope,
                  Placement(source, lambda *indices: mapping(*indices), parts))


def row_major_map(shape: tuple[int, ...], other: tuple[int, ...]) -> Callable[..., list[Any]]:
    """The index of `other` at the row-major position of an index of `shape` (as many
    elements). Works on ints and on anything with their arithmetic (the frontend's index
    values); a split or merge of neighbouring dimensions maps each run on its own, without
    dividing the rest."""
    groups = _reshape_groups(other, shape)

    def mapping(*indices: Any) -> list[Any]:
        image: list[Any] = []
        position = 0
        for dims, other_dims in groups:
            part = indices[position:position + len(dims)]
            position += len(dims)
            linear = part[0]
            for size, index in zip(dims[1:], part[1:], strict=True):
                linear = linear * size + index
            for axis in range(len(other_dims)):
                inner_count = math.prod(other_dims[axis + 1:])
                digit = linear // inner_count if inner_count > 1 else linear
                image.append(digit % other_dims[axis] if axis else digit)
        return image

    return mapping


def _reshape_groups(source: tuple[int, ...], view: tuple[int, ...]) -> list[
        tuple[tuple[int, ...], tuple[int, ...]]]:
    """The reshape as runs of view dimensions and source dimensions of equal element counts
    (a split or merge of neighbours maps each run on its own, without dividing the rest)."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(view) and j < len(source):
        mine, theirs = [view[i]], [source[j]]
        i, j = i + 1, j + 1
        while math.prod(mine) != math.prod(theirs):
            if math.prod(mine) < math.prod(theirs):
                mine.append(view[i])
                i += 1
            else:
                theirs.append(source[j])
                j += 1
        groups.append((mine, theirs))
    groups[-1][0].extend(view[i:])  # what is left is dimensions of size 1
    groups[-1][1].extend(source[j:])
    return [(tuple(mine), tuple(theirs)) for mine, theirs in groups]


@dataclass
class Region:
    """A box of a buffer: corner offsets and extents (None: taken from the other operand, in
    the corner form A[y, x]; a RuntimeExtent: a slice whose length is known at run time)."""

    buffer: Buffer
    offsets: list[Any]
    extents: list[int | None | RuntimeExtent]

    def __repr__(self) -> str:
        return f"<a box of {self.buffer!r} at {self.offsets!r}, extents {self.extents!r}>"

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

    def __repr__(self) -> str:
        return f"<element {self.indices!r} of {self.buffer!r}>"


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
