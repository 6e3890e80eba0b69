"""The `tile` MLIR dialect: generated op classes plus the C++ half loaded into a context.

Importing this module imports MLIR; the runtime never does.
"""

import sys

from mlir import ir

from . import _tile
from ._tile_ops_gen import *  # noqa: F403
from ._tile_ops_gen import _Dialect  # noqa: F401

# The bindings wrap an op in its dialect's class after importing `mlir.dialects.<namespace>`;
# a failed import is not remembered, so without this name every tile op they hand out would
# search sys.path again (thousands of times per compile) and come back as a plain OpView.
sys.modules.setdefault("mlir.dialects.tile", sys.modules[__name__])

SCOPES = ("shared", "fragment", "local", "var")


def load(context: ir.Context) -> None:
    """Make the tile dialect (and every upstream one) available in `context`."""
    _tile.register_dialect(context)


def new_context() -> ir.Context:
    """A context with the tile dialect and all upstream dialects loaded."""
    context = ir.Context()
    load(context)
    context.load_all_available_dialects()
    return context


def scope_of(memref_type: ir.MemRefType) -> str:
    """The scope a memref's memory space names ("global" when it has none)."""
    space = memref_type.memory_space
    if space is None:
        return "global"
    return ir.StringAttr(space).value
