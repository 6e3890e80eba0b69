"""TileLang's source post-processing callbacks (`tilelang.engine.callback`).

TileLang prints each kernel as CUDA/HIP/C/Metal source and lets a registered callback edit that
text before nvcc runs. tilec prints no such source: a kernel goes from MLIR to PTX (or to LLVM IR
on the CPU), so there is no text for a callback to edit. Importing these names works (examples
import them beside commented-out uses); registering a callback is an error at the caller's line,
since ignoring it would run a kernel other than the one its author asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilec.errors import at_caller


def _register(language: str, func: Callable | bool | None) -> Any:
    what = f"the callback {func.__name__}()" if callable(func) else "a callback"
    raise at_caller(f"register_{language}_postproc_callback: tilec cannot run {what}: it "
                    f"generates no {language.upper()} source to post-process (kernels go from "
                    "MLIR to PTX / LLVM IR); change the kernel in its Python source instead")


def register_cuda_postproc_callback(func: Callable | bool | None = None,
                                    override: bool = True) -> Any:
    """Raises: tilec makes no CUDA C source for the callback to edit (see the module docstring)."""
    return _register("cuda", func)


def register_hip_postproc_callback(func: Callable | bool | None = None,
                                   override: bool = True) -> Any:
    """Raises: tilec makes no HIP source for the callback to edit."""
    return _register("hip", func)


def register_c_postproc_callback(func: Callable | bool | None = None,
                                 override: bool = True) -> Any:
    """Raises: tilec makes no C source for the callback to edit."""
    return _register("c", func)


def register_metal_postproc_callback(func: Callable | bool | None = None,
                                     override: bool = True) -> Any:
    """Raises: tilec makes no Metal source for the callback to edit."""
    return _register("metal", func)


register_cuda_postproc = register_cuda_postproc_callback
register_hip_postproc = register_hip_postproc_callback
register_c_postproc = register_c_postproc_callback
register_metal_postproc = register_metal_postproc_callback
