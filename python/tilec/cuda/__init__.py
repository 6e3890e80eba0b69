"""TileLang's `tilelang.cuda`: of its CUDA backend, the intrinsic helpers examples import
(`tilelang.cuda.intrinsics`). tilec's own CUDA backend is `tilec.compiler.targets.cuda`.
"""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    if name == "intrinsics":
        return importlib.import_module("tilec.cuda.intrinsics")
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from tilec.tvm import NotInTilec

    raise NotInTilec(f"tilelang.cuda.{name} is part of TileLang's TVM-based CUDA backend, which "
                     "tilec does not have (tilec has tilelang.cuda.intrinsics' layout helpers)")
