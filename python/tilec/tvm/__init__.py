"""A stand-in for the few TVM names TileLang programs read (`from tilelang import tvm`).

TileLang is built on TVM and its examples reach into it for a handful of things; tilec has no
TVM, so this module gives those with their meaning in tilec:

- `DataType(dtype)`: a dtype's `bits`, `lanes`, `itemsize` and kind, from its name
  ("float16", "uint32", "float8_e4m3fn", "int4", "float16x4"), a tilec dtype or a torch dtype;
- `tirx` (also `tir`): scalar expressions inside kernels (`const`, `Cast`, `reinterpret`,
  `Select`, `Min`, ...) as the `T` functions they are, and `PrimExpr` for annotations;
- `target.Target("llvm" | "cuda" | "cuda -arch=sm_90a")`: the tilec target string;
- `testing`: tilec.testing (`requires_package`, `requires_cuda`, `assert_allclose`...).

Anything else is a TilecError naming what was asked for. `import tilec` also lets a plain
`import tvm` / `from tvm import tirx` find this module, when no real TVM is installed
(tilec._tvm_alias), as TileLang's bundled TVM is found.
"""

from __future__ import annotations

import re
from typing import Any

from tilec.errors import TilecError
from tilec.tvm import target, tirx

tir = tirx

_NAME = re.compile(r"(?P<kind>uint|int|bfloat|float)(?P<bits>\d+)(?P<variant>_\w+)?")


class NotInTilec(TilecError, AttributeError):
    """A TVM name tilec's stand-in does not have (an AttributeError too, so hasattr works)."""


class DataType:
    """A dtype as TVM describes it: kind, bits per lane and lanes."""

    def __init__(self, dtype: Any):
        text = str(dtype).removeprefix("torch.")
        name, lanes = text, 1
        vector = re.fullmatch(r"(.+?)x(\d+)", text)
        if vector:
            name, lanes = vector.group(1), int(vector.group(2))
        if name == "bool":
            kind, bits = "bool", 1
        elif name == "handle":
            kind, bits = "handle", 64
        else:
            match = _NAME.fullmatch(name)
            if match is None:
                raise TilecError(f"tvm.DataType({dtype!r}): not a dtype name tilec knows "
                                 "(int8, uint32, float16, bfloat16, float8_e4m3fn, ...)")
            kind, bits = match.group("kind"), int(match.group("bits"))
        self.name = name
        self.kind = kind
        self.bits = bits
        self.lanes = lanes

    @property
    def itemsize(self) -> int:
        """Bytes of one element (all lanes), rounded up."""
        return (self.bits * self.lanes + 7) // 8

    def is_float(self) -> bool:
        return self.kind in ("float", "bfloat")

    def is_int(self) -> bool:
        return self.kind == "int"

    def is_uint(self) -> bool:
        return self.kind == "uint"

    def __str__(self) -> str:
        return self.name if self.lanes == 1 else f"{self.name}x{self.lanes}"

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (DataType, str)):
            return str(self) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))


def __getattr__(name: str) -> Any:
    if name == "testing":  # TVM's test decorators are tilec.testing's
        import tilec.testing

        return tilec.testing
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotInTilec(f"tvm.{name} is not part of tilec: TileLang's TVM is not there, and "
                     "tilec.tvm offers only DataType, tirx (tir), target and testing")


__all__ = ["DataType", "NotInTilec", "target", "testing", "tir", "tirx"]
