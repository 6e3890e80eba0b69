"""Loads a CPU artifact (a shared library) and calls its entry with ctypes; no MLIR needed.

The calling convention is the one compiler/targets/cpu.py documents (launch["abi"]):
each tensor passes (allocated ptr, aligned ptr, offset, sizes..., strides...), integer scalars
as their C type, float scalars as float/double (half types widened to float). The entry runs
the whole grid itself, so `symbols` are not needed here: sizes come from the tensors.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

from tilec.errors import LaunchError
from tilec.runtime import checked_grid, launch_grid
from tilec.runtime.artifact import Artifact, Param

ABI = "mlir-memref-expanded-v1"
CPU_MAX_GRID = 2**63 - 1  # the grid loops count in 64-bit indices

Launcher = Callable[[list, dict], None]

SCALAR_CTYPES: dict[str, type] = {
    "bool": ctypes.c_bool,
    "int8": ctypes.c_int8,
    "uint8": ctypes.c_uint8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "float16": ctypes.c_float,
    "bfloat16": ctypes.c_float,
    "float8_e4m3": ctypes.c_float,
    "float8_e4m3fn": ctypes.c_float,
    "float8_e5m2": ctypes.c_float,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
}


def _open_library(binary: bytes, name: str) -> ctypes.CDLL:
    """dlopen the .so with every symbol bound now: a missing helper fails here, not mid-run."""
    handle, path = tempfile.mkstemp(prefix=f"tilec-{name}-", suffix=".so")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(binary)
        return ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError as error:
        # e.g. "undefined symbol: __truncsfbf2" when the C runtime lacks a conversion helper
        raise LaunchError(f"cannot load the CPU kernel '{name}': {error}") from None
    finally:
        os.unlink(path)


def _argument_types(params: Sequence[Param]) -> list[type]:
    types: list[type] = []
    for param in params:
        if param.kind == "tensor":
            rank = len(param.shape)
            types += [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
            types += [ctypes.c_int64] * (2 * rank)
        elif param.dtype in SCALAR_CTYPES:
            types.append(SCALAR_CTYPES[param.dtype])
        else:
            raise LaunchError(
                f"parameter '{param.name}': no CPU calling convention for {param.dtype}"
            )
    return types


def _tensor_values(tensor: Any) -> list[int]:
    """Pointer, pointer, offset, sizes, strides (in elements) of a torch tensor or numpy array."""
    if hasattr(tensor, "data_ptr"):
        pointer = tensor.data_ptr()
        strides = list(tensor.stride())
    else:
        pointer = tensor.ctypes.data
        strides = [stride // tensor.itemsize for stride in tensor.strides]
    return [pointer, pointer, 0, *tensor.shape, *strides]


def load(artifact: Artifact) -> Launcher:
    """A launcher for a CPU artifact: `launcher(args, symbols)` runs the whole grid."""
    if artifact.launch.get("abi") != ABI:
        raise LaunchError(
            f"kernel '{artifact.name}' was built for CPU ABI {artifact.launch.get('abi')!r}, "
            f"this runtime speaks {ABI!r}: recompile it"
        )
    library = _open_library(artifact.binary, artifact.name)
    entry = getattr(library, artifact.launch["entry"])
    entry.restype = None
    entry.argtypes = _argument_types(artifact.params)
    params = list(artifact.params)
    runtime_grid = any(isinstance(size, str) for size in artifact.launch.get("grid", [1]))

    def launcher(args: list, symbols: dict[str, int]) -> None:
        if runtime_grid and not checked_grid(artifact, launch_grid(artifact, symbols, args),
                                             (CPU_MAX_GRID,) * 3):
            return
        values: list[Any] = []
        for param, arg in zip(params, args, strict=True):
            if param.kind == "tensor":
                values += _tensor_values(arg)
            elif param.dtype == "bool":
                values.append(bool(arg))
            elif param.dtype.startswith(("int", "uint")):
                values.append(int(arg))
            else:
                values.append(float(arg))
        entry(*values)

    launcher.library = library  # keeps the library loaded as long as the launcher lives
    return launcher
