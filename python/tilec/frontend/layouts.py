"""`T.annotate_layout`: a user's layouts as the dialect's layout attributes on tile.alloc.

- a fragment's `T.Fragment` (TileLang's forward functions, evaluated at every element) or a
  tilec `LinearLayout` becomes `tile.layout = #tile.linear<...>`, which infer-fragment-layout
  keeps and converts around where other ops need another layout;
- a shared buffer's `tilec.layout.make_swizzled_layout(buffer)` (and its fixed-width
  variants) becomes `tile.swizzle_request = #tile.swizzle<...>`: the swizzle the user asked
  for, beside the one select-shared-swizzle decides (`tile.swizzle`);
- a `T.Layout` is accepted where it keeps every element in place (tilec lays shared memory out
  by swizzles only);
- a tensor parameter's `T.Layout` places its elements as TileLang does: element (i, j, ...) is
  at `forward(i, j, ...)` of the parameter's memory seen with the layout's output shape (each
  output index's largest value plus one, `output_shape`), and the frontend sends every access
  there.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from mlir import ir

import tilec.language as T
from tilec.compiler.layouts.linear import LayoutError, LinearLayout
from tilec.errors import TilecError
from tilec.frontend.values import Buffer
from tilec.layout import SwizzledLayout

LAYOUT_ATTR = "tile.layout"
SWIZZLE_REQUEST_ATTR = "tile.swizzle_request"


def fragment_layout(buffer: Buffer, layout: Any, threads: int) -> LinearLayout:
    """The linear layout a fragment annotation asks for (TilecError when it has none)."""
    shape = tuple(buffer.shape)
    if isinstance(layout, LinearLayout):
        linear = layout
    elif isinstance(layout, T.Fragment):
        if tuple(layout.shape) != shape:
            raise TilecError(f"T.Fragment over {list(layout.shape)} for fragment "
                             f"'{buffer.name}' of shape {list(shape)}")
        try:
            holders = layout.holders()
        except (ArithmeticError, TypeError, ValueError) as error:
            raise TilecError(f"evaluating the T.Fragment of '{buffer.name}' failed: "
                             f"{type(error).__name__}: {error}") from None
        used = max(thread for _, thread in holders) + 1
        if used != threads:
            raise TilecError(f"the T.Fragment of '{buffer.name}' spans {used} threads, the "
                             f"kernel has {threads}")
        try:
            linear = LinearLayout.from_holders(shape, holders, threads)
        except LayoutError as error:
            raise TilecError(f"the T.Fragment of '{buffer.name}' is not a layout tilec can "
                             f"express: {error}") from None
    else:
        raise TilecError(f"fragment '{buffer.name}' takes a T.Fragment layout, not "
                         f"{type(layout).__name__}")
    if linear.shape != shape:
        raise TilecError(f"a layout over {list(linear.shape)} for fragment '{buffer.name}' of "
                         f"shape {list(shape)}")
    if linear.threads != threads:
        raise TilecError(f"the layout of '{buffer.name}' spans {linear.threads} threads, the "
                         f"kernel has {threads}")
    return linear


def annotate(buffer: Buffer, layout: Any, threads: int) -> None:
    """Record `layout` on the buffer's tile.alloc (TilecError for what tilec cannot honour)."""
    alloc = buffer.value.owner
    alloc = getattr(alloc, "operation", alloc)
    if not isinstance(alloc, ir.Operation) or alloc.name != "tile.alloc":
        raise TilecError(f"T.annotate_layout takes buffers the kernel allocates, not "
                         f"'{buffer.name or 'this buffer'}'")
    if buffer.scope == "fragment":
        if not math.log2(threads).is_integer():
            raise TilecError(f"fragment layouts need a power-of-two thread count, not {threads}")
        text = str(fragment_layout(buffer, layout, threads))
        try:
            alloc.attributes[LAYOUT_ATTR] = ir.Attribute.parse(text)
        except ir.MLIRError as error:
            reasons = "; ".join(d.message for d in error.error_diagnostics) or str(error)
            raise TilecError(f"the layout of '{buffer.name}' is not a fragment layout: "
                             f"{reasons}") from None
        return
    if buffer.scope == "shared":
        if isinstance(layout, SwizzledLayout):
            if tuple(layout.shape) != tuple(buffer.shape):
                raise TilecError(f"a swizzled layout of shape {list(layout.shape)} for shared "
                                 f"buffer '{buffer.name}' of shape {list(buffer.shape)}")
            attribute = "#tile.swizzle<none>" if layout.swizzle == "none" else \
                f"#tile.swizzle<{layout.swizzle}>"
            alloc.attributes[SWIZZLE_REQUEST_ATTR] = ir.Attribute.parse(attribute)
            return
        if isinstance(layout, T.Layout) and tuple(layout.shape) == tuple(buffer.shape) and \
                layout.is_identity():
            return
        swizzle = _mma_swizzle(buffer, layout)
        if swizzle is not None:  # TileLang's get_swizzle_layout as a T.Layout
            annotate(buffer, swizzle, threads)
            return
        raise TilecError(f"shared buffer '{buffer.name}' takes tilec.layout."
                         "make_swizzled_layout(...) (or a T.Layout that keeps elements in "
                         "place); other index layouts are not supported by tilec")
    raise TilecError(f"T.annotate_layout takes fragment and shared buffers, not the "
                     f"{buffer.scope} buffer '{buffer.name}'")


def _mma_swizzle(buffer: Buffer, layout: Any) -> SwizzledLayout | None:
    """The swizzle request a T.Layout of a 2-d shared tile stands for where its index map is
    `get_swizzle_layout`'s (tilec.cuda.intrinsics) at every element: that map's XOR swizzle
    of 16-byte vectors in groups as wide as the row (at most 128 bytes), which tilec's own
    swizzles are; None for any other layout."""
    from tilec.cuda.intrinsics.layout.mma_layout import get_swizzle_layout

    shape = tuple(buffer.shape)
    if not isinstance(layout, T.Layout) or tuple(layout.shape) != shape or len(shape) != 2:
        return None
    row_bytes = shape[1] * buffer.dtype.bits // 8
    if row_bytes % 32:
        return None
    for i in range(shape[0]):
        for j in range(shape[1]):
            image = layout.forward_fn(i, j)
            image = tuple(image) if isinstance(image, (list, tuple)) else (image,)
            if image != tuple(get_swizzle_layout(i, j, shape[1], buffer.dtype)):
                return None
    return SwizzledLayout(shape, buffer.dtype.name, f"{min(128, row_bytes)}B", True, True)


class _Bounds:
    """The smallest and largest value of an index expression over a tensor's index ranges, as
    a layout function's arithmetic computes them (integer interval arithmetic)."""

    def __init__(self, low: int, high: int):
        self.low, self.high = low, high

    @staticmethod
    def of(value: Any) -> _Bounds:
        if isinstance(value, _Bounds):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return _Bounds(value, value)
        raise TypeError(f"a layout function computes with ints, got {value!r}")

    def __bool__(self) -> bool:
        raise TypeError("a layout function cannot branch on an index")

    def _corners(self, other: Any, combine: Callable[[int, int], int]) -> _Bounds:
        other = _Bounds.of(other)
        values = [combine(a, b) for a in (self.low, self.high) for b in (other.low, other.high)]
        return _Bounds(min(values), max(values))

    def __add__(self, other: Any) -> _Bounds:
        other = _Bounds.of(other)
        return _Bounds(self.low + other.low, self.high + other.high)

    __radd__ = __add__

    def __sub__(self, other: Any) -> _Bounds:
        other = _Bounds.of(other)
        return _Bounds(self.low - other.high, self.high - other.low)

    def __rsub__(self, other: Any) -> _Bounds:
        return _Bounds.of(other) - self

    def __mul__(self, other: Any) -> _Bounds:
        return self._corners(other, operator.mul)

    __rmul__ = __mul__

    def _divisor(self, other: Any, what: str) -> int:
        if not isinstance(other, int) or isinstance(other, bool) or other <= 0:
            raise TypeError(f"a layout function's {what} takes a positive int, got {other!r}")
        if self.low < 0:
            raise TypeError(f"a layout function's {what} of a value that may be negative")
        return other

    def __floordiv__(self, other: Any) -> _Bounds:
        divisor = self._divisor(other, "//")
        return _Bounds(self.low // divisor, self.high // divisor)

    def __mod__(self, other: Any) -> _Bounds:
        divisor = self._divisor(other, "%")
        if self.high - self.low < divisor and self.low % divisor <= self.high % divisor:
            return _Bounds(self.low % divisor, self.high % divisor)
        return _Bounds(0, divisor - 1)


def output_shape(layout: Any, shape: tuple[int, ...]) -> list[int]:
    """The shape a T.Layout places a tensor of `shape` into: each output index's largest
    value plus one over the tensor's indices (TileLang's Layout output shape)."""
    try:
        image = layout.forward_fn(*(_Bounds(0, extent - 1) for extent in shape))
    except TypeError as error:
        raise TilecError(f"the T.Layout's function cannot be bounded: {error}") from None
    image = list(image) if isinstance(image, (list, tuple)) else [image]
    bounds = [_Bounds.of(index) for index in image]
    if any(b.low < 0 for b in bounds):
        raise TilecError("the T.Layout's function gives negative indices")
    return [b.high + 1 for b in bounds]
