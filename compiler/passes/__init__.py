"""tilec's passes, one per file, each known by one kebab-case name.

A pass is a small class: `name`, typed options as dataclass fields, and `run(module)`, which
changes the module in place or raises `CompileError` naming the offending op's location.
`tilec-opt --NAME` runs one alone.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir


@dataclass
class TilePass:
    """Base of every tilec pass."""

    name: ClassVar[str]
    summary: ClassVar[str] = ""

    def run(self, module: ir.Module) -> None:
        raise NotImplementedError


_REGISTRY: dict[str, type[TilePass]] = {}


def register(cls: type[TilePass]) -> type[TilePass]:
    """Class decorator: make a pass known to pipelines and tilec-opt by its name."""
    _REGISTRY[cls.name] = cls
    return cls


@functools.cache
def _import_all() -> None:
    """Import every pass module once (each registers its passes); pipelines look passes up
    many times per compile, and listing the folder each time shows in compile times."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


def all_passes() -> dict[str, type[TilePass]]:
    _import_all()
    return dict(sorted(_REGISTRY.items()))


def get_pass(name: str) -> type[TilePass]:
    """The pass named `name`: its own file imported first (a CUDA compile then never imports
    the CPU, SPIR-V or Ascend passes), every pass file where it is not there."""
    if name not in _REGISTRY:
        module = f"{__name__}.{name.replace('-', '_')}"
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name != module:
                raise
    if name not in _REGISTRY:
        passes = all_passes()
        if name not in passes:
            raise KeyError(f"unknown tilec pass '{name}'; known: {', '.join(passes)}")
    return _REGISTRY[name]
