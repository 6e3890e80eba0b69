"""Loads a HIP artifact (an HSACO code object) and launches it on a ROCm GPU's torch tensors.

No MLIR and no compiler here, and no Python package beyond torch: HIP's module API is called
through ctypes on `libamdhip64` (hipModuleLoadData, hipModuleGetFunction,
hipModuleLaunchKernel on torch's current stream). The kernel ABI is the CUDA target's
(launch["abi"]: ["ptr", p], ["scalar", p, t], ["dim", p, d]), so the argument packer is
tilec.runtime.cuda's. On a machine without ROCm, or without an AMD GPU, loading raises a
LaunchError that says so; a code object built for another chip than the GPU's is refused.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable
from typing import Any

from tilec.errors import LaunchError
from tilec.runtime import checked_grid
from tilec.runtime.artifact import Artifact
from tilec.runtime.cuda import CTYPES, _slot_kind, build_packer

Launcher = Callable[[list, dict], None]
MAX_GRID = (2**32 - 1,) * 3  # blocks along x, y, z a HIP launch takes (32-bit counts)
LIBRARY_NAMES = ("libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5")


@functools.cache
def hip_library() -> ctypes.CDLL:
    """libamdhip64: TILEC_HIP_LIBRARY, the loader's search path, then /opt/rocm/lib."""
    candidates = [os.environ.get("TILEC_HIP_LIBRARY", ""), *LIBRARY_NAMES,
                  *(os.path.join("/opt/rocm/lib", name) for name in LIBRARY_NAMES)]
    for candidate in filter(None, candidates):
        try:
            return ctypes.CDLL(candidate)
        except OSError:
            continue
    raise LaunchError("the hip target runs on an AMD GPU through ROCm's HIP runtime, and "
                      "libamdhip64 was not found on this machine (install ROCm, or set "
                      "TILEC_HIP_LIBRARY; a HSACO compiled here can run on a ROCm machine)")


def _check(status: int, what: str) -> None:
    if status != 0:
        hip = hip_library()
        hip.hipGetErrorString.restype = ctypes.c_char_p
        message = hip.hipGetErrorString(status).decode(errors="replace")
        raise LaunchError(f"{what} failed: {message} (hipError {status})")


def device_count() -> int:
    """AMD GPUs HIP sees (0 where HIP is installed but finds none)."""
    count = ctypes.c_int(0)
    status = hip_library().hipGetDeviceCount(ctypes.byref(count))
    return count.value if status == 0 else 0


class HipKernel:
    """One kernel of a loaded code object on one device."""

    def __init__(self, image: bytes, entry: str, kinds: list[int], shared_bytes: int,
                 block: list[int], device: int):
        hip = hip_library()
        _check(hip.hipSetDevice(device), "hipSetDevice")
        self.image = ctypes.create_string_buffer(image, len(image))
        self.module = ctypes.c_void_p()
        _check(hip.hipModuleLoadData(ctypes.byref(self.module), self.image),
               "hipModuleLoadData")
        self.function = ctypes.c_void_p()
        _check(hip.hipModuleGetFunction(ctypes.byref(self.function), self.module,
                                        entry.encode()), "hipModuleGetFunction")
        self.types = [CTYPES[kind] for kind in kinds]
        self.shared_bytes = shared_bytes
        self.block = block

    def launch(self, values: list, gx: int, gy: int, gz: int, stream: int) -> None:
        if gx == 0 or gy == 0 or gz == 0:
            return
        boxed = [type_(value) for type_, value in zip(self.types, values, strict=True)]
        pointers = (ctypes.c_void_p * len(boxed))(
            *(ctypes.addressof(value) for value in boxed))
        _check(hip_library().hipModuleLaunchKernel(
            self.function, ctypes.c_uint(gx), ctypes.c_uint(gy), ctypes.c_uint(gz),
            *(ctypes.c_uint(size) for size in self.block), ctypes.c_uint(self.shared_bytes),
            ctypes.c_void_p(stream), pointers, None), "hipModuleLaunchKernel")


def _device_arch(torch: Any, device: int) -> str:
    """The GPU's chip as the compiler names it ("gfx942" from "gfx942:sramecc+:xnack-")."""
    properties = torch.cuda.get_device_properties(device)
    return str(getattr(properties, "gcnArchName", "")).partition(":")[0]


def load(artifact: Artifact) -> Launcher:
    """A launcher for a HIP artifact on the ROCm GPU holding the kernel's tensors."""
    if artifact.binary_kind != "hsaco":
        raise LaunchError(f"a HIP artifact holds an HSACO, not '{artifact.binary_kind}'")
    hip_library()
    if device_count() == 0:
        raise LaunchError(f"'{artifact.name}' is compiled for {artifact.launch.get('arch')}, "
                          "but HIP finds no AMD GPU on this machine")
    import torch

    launch = artifact.launch
    kinds = [_slot_kind(slot) for slot in launch["abi"]]
    block = (list(launch.get("threads", [1])) + [1, 1])[:3]
    shared_bytes = int(launch.get("shared_bytes", 0))
    entry = launch.get("entry", artifact.name)
    pack = build_packer(artifact)
    tensor_params = [n for n, p in enumerate(artifact.params) if p.kind == "tensor"]
    first_tensor = tensor_params[0] if tensor_params else None
    runtime_grid = any(isinstance(size, str) for size in launch.get("grid", [1]))
    loaded: dict[int, HipKernel] = {}

    def kernel_for(device: int) -> HipKernel:
        arch = _device_arch(torch, device)
        if arch and arch != launch.get("arch"):
            raise LaunchError(f"'{artifact.name}' is compiled for {launch.get('arch')}, but "
                              f"device {device} is a {arch} (compile with target='hip:{arch}')")
        loaded[device] = HipKernel(artifact.binary, entry, kinds, shared_bytes, block, device)
        return loaded[device]

    def launcher(args: list, symbols: dict) -> None:
        values, grid = pack(args, symbols)
        if runtime_grid and not checked_grid(artifact, grid, MAX_GRID):
            return
        device = args[first_tensor].get_device() if first_tensor is not None else (
            torch.cuda.current_device())
        kernel = loaded.get(device) or kernel_for(device)
        kernel.launch(values, grid[0], grid[1], grid[2],
                      torch.cuda.current_stream(device).cuda_stream)

    return launcher
