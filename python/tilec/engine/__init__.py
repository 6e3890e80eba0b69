"""TileLang's `tilelang.engine`: the lowering entry points of its TVM-based compiler.

tilec lowers through MLIR (`tilec.compiler`), so of this module only the source
post-processing callbacks exist (`tilec.engine.callback`), and they say why they cannot apply.
"""

from __future__ import annotations

from tilec.engine import callback

__all__ = ["callback"]


def __getattr__(name: str) -> object:
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise AttributeError(f"tilelang.engine.{name} is not implemented by tilec (TileLang's TVM "
                         "lowering; tilec compiles with tilec.compile / @tilec.jit)")
