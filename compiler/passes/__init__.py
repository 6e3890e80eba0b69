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
    passes = all_passes()
    if name not in passes:
        raise KeyError(f"unknown tilec pass '{name}'; known: {', '.join(passes)}")
    return passes[name]
