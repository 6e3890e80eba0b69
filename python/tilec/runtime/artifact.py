"""A compiled kernel as data: the device binary plus what the runtime needs to launch it.

Importable without MLIR: a GPU machine without the compiler loads artifacts from a cache
directory that a compiler machine filled.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Param:
    """One kernel parameter as the caller sees it.

    `shape` entries are ints, or names of dynamic symbols bound from the arguments at call time.
    A workspace (`T.alloc_global`) is an output too: allocated by each call, never returned.
    """

    name: str
    kind: str  # "tensor" | "scalar"
    dtype: str  # tilec dtype name: "float16", "int32", ...
    shape: list[int | str] = field(default_factory=list)
    is_output: bool = False
    is_workspace: bool = False  # an output the kernel object allocates but does not return


@dataclass
class Artifact:
    """What the runtime loads: `binary` is a shared library (cpu), cubin or PTX (cuda), HSACO
    (hip).

    A function with several `with T.Kernel` blocks is one artifact per block in `kernels`
    (launched in order with the same arguments); it then has no binary of its own.
    """

    name: str
    target: str
    binary_kind: str  # "so" | "cubin" | "ptx" | "hsaco"
    params: list[Param]
    launch: dict = field(default_factory=dict)  # grid/block/shared bytes, target specific
    asm: dict[str, str] = field(default_factory=dict)  # stage name -> text of that stage
    compiler: str = ""  # fingerprint of the compiler that made it (tilec.cache)
    binary: bytes = b""
    kernels: list[Artifact] = field(default_factory=list)  # one per T.Kernel block, if several

    def save(self, directory: Path) -> None:
        """kernel.bin and kernel.json, which records the binary's checksum: a truncated or
        overwritten binary is found at load, never run."""
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "kernel.bin").write_bytes(self.binary)
        meta = {k: v for k, v in asdict(self).items() if k not in ("binary", "kernels")}
        meta["kernels"] = len(self.kernels)
        meta["binary_sha256"] = hashlib.sha256(self.binary).hexdigest()
        for number, kernel in enumerate(self.kernels):
            kernel.save(directory / f"kernel{number}")
        (directory / "kernel.json").write_text(json.dumps(meta, indent=1))

    @classmethod
    def load(cls, directory: Path) -> Artifact:
        """The artifact saved in `directory`; ValueError where its kernel.json is no object
        with a checksum of the binary (save writes one) or the binary does not match it."""
        meta = json.loads((directory / "kernel.json").read_text())
        if not isinstance(meta, dict) or not isinstance(meta.get("binary_sha256"), str):
            raise ValueError(f"{directory / 'kernel.json'} records no checksum of the binary "
                             "(not written by tilec's Artifact.save)")
        checksum = meta.pop("binary_sha256")
        binary = (directory / "kernel.bin").read_bytes()
        if hashlib.sha256(binary).hexdigest() != checksum:
            raise ValueError(f"{directory / 'kernel.bin'} ({len(binary)} bytes) does not match "
                             "the checksum its kernel.json records (truncated or overwritten)")
        meta["params"] = [Param(**p) for p in meta["params"]]
        meta["kernels"] = [cls.load(directory / f"kernel{n}")
                           for n in range(meta.get("kernels", 0))]
        return cls(**meta, binary=binary)
