"""Targets: one module per target, each a list of named stages plus a final packaging step.

A target module defines two functions (compiler/targets/cpu.py is the model):

- `stages(options: CompileOptions) -> list[Stage]`: the ordered stages after the frontend's
  "tile" stage. Each takes the previous product (the `ir.Module`, changed in place, then text
  or bytes past MLIR) and returns the next; the driver keeps every stage's text.
- `finish(product, options, kernel_name) -> (binary: bytes, binary_kind: str, launch: dict)`:
  turns the last stage's product into what the runtime loads (`binary_kind` "so", "cubin",
  "ptx"...) and the target's launch metadata, merged over the frontend's grid/threads.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from tilec.errors import CompileError

# target family (the part before ":") -> module under compiler/targets/
TARGET_MODULES = {"cpu": "cpu", "cuda": "cuda", "hip": "hip", "ascend": "ascend",
                  "vulkan": "vulkan", "metal": "metal", "webgpu": "webgpu"}


def get_target(target: str) -> ModuleType:
    """The module implementing `target` ("cpu", "cuda", "cuda:sm_90a"...)."""
    family = target.partition(":")[0]
    if family not in TARGET_MODULES:
        raise CompileError(f"unknown target '{target}'; known: {', '.join(sorted(TARGET_MODULES))}")
    try:
        return importlib.import_module(f"{__name__}.{TARGET_MODULES[family]}")
    except ModuleNotFoundError as error:
        if error.name != f"{__name__}.{TARGET_MODULES[family]}":
            raise
        raise CompileError(f"target '{target}' is not available in this build") from None


def stage_names(target: str) -> list[str]:
    """The names of `target`'s stages, in order, after the frontend's "tile" (CompileError for
    an unknown target or arch): what `--emit` and `--stop-after` may name, checked before any
    compile so a misspelt one is a usage error."""
    from tilec.compiler.pipeline import CompileOptions

    return [stage.name for stage in get_target(target).stages(CompileOptions(target=target))]
