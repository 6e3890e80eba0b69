"""Layout constructors of TileLang's `tilelang.layout`, for `T.annotate_layout`.

`make_swizzled_layout(buffer)` and the fixed-width variants do not build a layout: they return a
`SwizzledLayout`, a small record of the shared buffer's shape, dtype and the XOR swizzle asked
for, which the frontend's `T.annotate_layout` turns into the buffer's `#tile.swizzle` layout
attribute. `make_swizzled_layout` asks for the widest swizzle (128, 64 or 32 bytes) that divides
the buffer's row, as TileLang picks it; a row of fewer bytes is left unswizzled ("none").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilec.errors import TilecError

SWIZZLES = ("128B", "64B", "32B", "none")


@dataclass(frozen=True)
class SwizzledLayout:
    """A shared buffer's requested swizzle: `swizzle` is one of SWIZZLES."""

    shape: tuple[int, ...]
    dtype: str
    swizzle: str
    k_major: bool = True
    allow_pad: bool = True


def _shape_and_dtype(buffer: Any, maker: str) -> tuple[tuple[int, ...], Any]:
    shape, dtype = getattr(buffer, "shape", None), getattr(buffer, "dtype", None)
    if shape is None or dtype is None:
        raise TilecError(f"{maker} takes a buffer (T.alloc_shared(...)), got "
                         f"{type(buffer).__name__}")
    shape = tuple(shape)
    if not shape or any(not isinstance(dim, int) for dim in shape):
        raise TilecError(f"{maker}: the buffer's shape {shape} must be known at compile time")
    return shape, dtype


def _layout(buffer: Any, swizzle: str, maker: str, k_major: bool = True,
            allow_pad: bool = True) -> SwizzledLayout:
    from tilec.language import dtype as tile_dtype

    shape, dtype = _shape_and_dtype(buffer, maker)
    return SwizzledLayout(shape, tile_dtype(dtype).name, swizzle, k_major, allow_pad)


def make_swizzled_layout(buffer: Any, k_major: bool = True,
                         allow_pad: bool = True) -> SwizzledLayout:
    """The swizzle TileLang would give `buffer`: the widest of 128/64/32 bytes dividing its
    row (its last dimension times the element size), else none."""
    from tilec.language import dtype as tile_dtype

    shape, dtype = _shape_and_dtype(buffer, "make_swizzled_layout")
    row_bytes = shape[-1] * tile_dtype(dtype).bits // 8
    swizzle = next((s for s in SWIZZLES[:-1] if row_bytes % int(s[:-1]) == 0), "none")
    return _layout(buffer, swizzle, "make_swizzled_layout", k_major, allow_pad)


def make_full_bank_swizzled_layout(buffer: Any) -> SwizzledLayout:
    """The 128-byte swizzle."""
    return _layout(buffer, "128B", "make_full_bank_swizzled_layout")


def make_half_bank_swizzled_layout(buffer: Any) -> SwizzledLayout:
    """The 64-byte swizzle."""
    return _layout(buffer, "64B", "make_half_bank_swizzled_layout")


def make_quarter_bank_swizzled_layout(buffer: Any) -> SwizzledLayout:
    """The 32-byte swizzle."""
    return _layout(buffer, "32B", "make_quarter_bank_swizzled_layout")


def make_linear_layout(buffer: Any) -> SwizzledLayout:
    """No swizzle: rows one after another."""
    return _layout(buffer, "none", "make_linear_layout")


__all__ = ["SWIZZLES", "SwizzledLayout", "make_full_bank_swizzled_layout",
           "make_half_bank_swizzled_layout", "make_linear_layout",
           "make_quarter_bank_swizzled_layout", "make_swizzled_layout"]
