"""Lets `import tvm` find tilec.tvm where no real TVM is installed.

TileLang puts its bundled TVM on the path, so its examples write `from tvm import tirx` next to
`import tilelang`; with `import tilec as tilelang` those imports must find something. A finder
at the front of sys.meta_path answers for `tvm` and its `tirx`, `tir`, `target` and `testing` only
when the ordinary path has no `tvm` (a real TVM always wins), with the tilec.tvm modules
themselves; other `tvm.*` modules are a ModuleNotFoundError saying what tilec.tvm has.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Sequence

MODULES = {"tvm": "tilec.tvm", "tvm.tirx": "tilec.tvm.tirx", "tvm.tir": "tilec.tvm.tirx",
           "tvm.target": "tilec.tvm.target", "tvm.testing": "tilec.testing"}


class _ExistingModule(importlib.abc.Loader):
    """Loads a name as an already importable tilec module (the same module object)."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: types.ModuleType) -> None:
        """The module ran when tilec imported it."""


class TvmAliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "tvm" and not fullname.startswith("tvm."):
            return None
        if fullname == "tvm" and importlib.machinery.PathFinder.find_spec("tvm") is not None:
            return None  # a real TVM is installed
        if fullname != "tvm" and sys.modules.get("tvm") is not sys.modules.get("tilec.tvm"):
            return None
        if fullname not in MODULES:
            raise ModuleNotFoundError(f"No module named '{fullname}': tilec has no TVM, and its "
                                      "stand-in tilec.tvm has only tvm.tirx (tvm.tir), "
                                      "tvm.target and tvm.testing", name=fullname)
        return importlib.util.spec_from_loader(fullname, _ExistingModule(MODULES[fullname]))


def install() -> None:
    if not any(isinstance(finder, TvmAliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, TvmAliasFinder())
