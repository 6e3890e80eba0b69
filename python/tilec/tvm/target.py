"""`tvm.target.Target(...)` as a tilec target string ("cpu", "cuda", "cuda:sm_90a")."""

from __future__ import annotations

import re

from tilec.errors import TilecError


class Target(str):
    """A TVM target description turned into the tilec target it names: "llvm" / "c" are the
    CPU, "cuda" (with `-arch=sm_XX`) the CUDA target; others are a TilecError. `host` is
    accepted as TVM takes it; tilec's host code is its own runtime."""

    def __new__(cls, spec: str, host: object = None) -> Target:
        words = str(spec).split()
        kind = words[0] if words else ""
        if kind in ("llvm", "c"):
            return super().__new__(cls, "cpu")
        if kind == "cuda" or kind.startswith("nvidia/"):
            arch = re.search(r"-arch=(sm_\w+)", str(spec))
            return super().__new__(cls, f"cuda:{arch.group(1)}" if arch else "cuda")
        raise TilecError(f"tvm.target.Target({spec!r}): tilec compiles for 'llvm' (the CPU) and "
                         "'cuda' targets")
