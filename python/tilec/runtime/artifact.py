"""A compiled kernel as data: the device binary plus what the runtime needs to launch it.

Importable without MLIR: a GPU machine without the compiler loads artifacts from a cache
directory that a compiler machine filled.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Param:
    """One kernel parameter as the caller sees it.

    `shape` entries are ints, or names of dynamic symbols bound from the arguments at call time.
    """

    name: str
    kind: str  # "tensor" | "scalar"
    dtype: str  # tilec dtype name: "float16", "int32", ...
    shape: list[int | str] = field(default_factory=list)
    is_output: bool = False


@dataclass
class Artifact:
    """What the runtime loads: `binary` is a shared library (cpu), cubin or PTX (cuda)."""

    name: str
    target: str
    binary_kind: str  # "so" | "cubin" | "ptx"
    params: list[Param]
    launch: dict = field(default_factory=dict)  # grid/block/shared bytes, target specific
    asm: dict[str, str] = field(default_factory=dict)  # stage name -> text of that stage
    compiler: str = ""  # fingerprint of the compiler that made it (tilec.cache)
    binary: bytes = b""

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "kernel.bin").write_bytes(self.binary)
        meta = asdict(self)
        del meta["binary"]
        (directory / "kernel.json").write_text(json.dumps(meta, indent=1))

    @classmethod
    def load(cls, directory: Path) -> Artifact:
        meta = json.loads((directory / "kernel.json").read_text())
        meta["params"] = [Param(**p) for p in meta["params"]]
        return cls(**meta, binary=(directory / "kernel.bin").read_bytes())
