"""`T.annotate_layout`: a user's layouts as the dialect's layout attributes on tile.alloc.

- a fragment's `T.Fragment` (TileLang's forward functions, evaluated at every element) or a
  tilec `LinearLayout` becomes `tile.layout = #tile.linear<...>`, which infer-fragment-layout
  keeps and converts around where other ops need another layout;
- a shared buffer's `tilec.layout.make_swizzled_layout(buffer)` (and its fixed-width
  variants) becomes `tile.swizzle_request = #tile.swizzle<...>`: the swizzle the user asked
  for, beside the one select-shared-swizzle decides (`tile.swizzle`);
- a `T.Layout` is accepted where it keeps every element in place (tilec lays shared memory out
  by swizzles only).
"""

from __future__ import annotations

import math
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
        raise TilecError(f"shared buffer '{buffer.name}' takes tilec.layout."
                         "make_swizzled_layout(...) (or a T.Layout that keeps elements in "
                         "place); other index layouts are not supported by tilec")
    raise TilecError(f"T.annotate_layout takes fragment and shared buffers, not the "
                     f"{buffer.scope} buffer '{buffer.name}'")
