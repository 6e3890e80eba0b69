"""Loads a CUDA artifact (cubin, or PTX for the driver's JIT) and launches it on torch tensors.

No MLIR and no compiler here: a GPU machine runs kernels compiled elsewhere. The kernel ABI is
compiler/targets/cuda.py's: launch["abi"] lists one slot per kernel argument,
  ["ptr", p]          the data pointer of tensor parameter p,
  ["scalar", p, t]    scalar parameter p as MLIR type t (i32, i64, f32, f64),
  ["dim", p, d]       dimension d of tensor parameter p as int64 (a dynamic one),
  ["tma", p, role]    a pointer to the TMA map of tensor parameter p, encoded (and cached)
                      from launch["tma"][role] by tilec.runtime.tma.
Launches go to torch's current stream of the tensors' device, with launch["shared_bytes"] of
dynamic shared memory (the per-kernel limit is set to it: the 48 KB default also counts the
kernel's static shared bytes).

Two launch paths with the same interface: the native extension `tilec.runtime._launcher`
(C++, built by CMake; a launch is one call with a list of ints) and, where it is absent, the
CUDA driver through cuda-bindings. A kernel marked launch["cooperative"] (T.sync_grid: its
blocks wait for each other) takes the latter, launched by cuLaunchCooperativeKernel after
checking its grid against the blocks the GPU holds at once (the occupancy of its block size
and shared memory on every multiprocessor): a larger grid would wait forever.
"""

from __future__ import annotations

import ast
import ctypes
import functools
import re
from collections.abc import Callable
from typing import Any

from tilec.errors import LaunchError
from tilec.runtime import checked_grid, scalar_positions
from tilec.runtime.artifact import Artifact

Launcher = Callable[[list, dict], None]

MAX_GRID = (2**31 - 1, 65535, 65535)  # blocks along x, y, z a CUDA launch may have
SLOT_KINDS = {"ptr": 0, "i32": 1, "i64": 2, "f32": 3, "f64": 4}
CTYPES = {0: ctypes.c_void_p, 1: ctypes.c_int32, 2: ctypes.c_int64, 3: ctypes.c_float,
          4: ctypes.c_double}
GRID_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.Constant,
              ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.USub)


def native_available() -> bool:
    return launcher_import_error() is None


def launcher_import_error() -> str | None:
    """Why the native launcher `tilec.runtime._launcher` does not import (its ImportError's
    text), or None where it does."""
    try:
        from tilec.runtime import _launcher  # noqa: F401
    except (ImportError, OSError) as missing:
        return str(missing)
    return None


def _slot_kind(slot: list) -> int:
    if slot[0] in ("ptr", "tma"):
        return SLOT_KINDS["ptr"]
    if slot[0] == "dim":
        return SLOT_KINDS["i64"]
    if slot[2] not in SLOT_KINDS:
        raise LaunchError(f"the CUDA runtime cannot pass a scalar of type {slot[2]}")
    return SLOT_KINDS[slot[2]]


def _grid_source(size: int | str) -> str:
    """A checked Python expression for one grid size (its symbols and scalar parameters are
    local names of the packer)."""
    if isinstance(size, int):
        return str(size)
    tree = ast.parse(size, mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, GRID_NODES) or (
                isinstance(node, ast.Constant) and not isinstance(node.value, int)):
            raise LaunchError(f"unsupported grid expression '{size}'")
    return f"({size})"


def build_packer(artifact: Artifact) -> Callable[[list, dict], tuple[list, tuple]]:
    """Generates `pack(args, symbols) -> (slot values, (gx, gy, gz))` for this artifact, so a
    launch does no interpretation of the metadata."""
    params = artifact.params
    names: set[str] = set()
    values = []
    for slot in artifact.launch["abi"]:
        number = int(slot[1])
        if slot[0] == "ptr":
            values.append(f"args[{number}].data_ptr()")
        elif slot[0] == "tma":
            values.append(f"tensor_map_pointer(args[{number}], tma[{slot[2]!r}])")
        elif slot[0] == "dim":
            symbol = params[number].shape[int(slot[2])] if number < len(params) else None
            if isinstance(symbol, str) and symbol.isidentifier():
                values.append(f"symbols[{symbol!r}]")
            else:
                values.append(f"args[{number}].shape[{int(slot[2])}]")
        elif slot[2] in ("f32", "f64"):
            values.append(f"float(args[{number}])")
        else:
            values.append(f"int(args[{number}])")
    grid = [_grid_source(size) for size in list(artifact.launch.get("grid", [1]))[:3]]
    grid += ["1"] * (3 - len(grid))
    for expression in grid:
        names |= {node.id for node in ast.walk(ast.parse(expression, mode="eval"))
                  if isinstance(node, ast.Name)}
    scalars = scalar_positions(artifact)
    lines = ["def pack(args, symbols):"]
    lines += [f"    {name} = int(args[{scalars[name]}])" if name in scalars else
              f"    {name} = symbols[{name!r}]" for name in sorted(names)]
    lines.append(f"    return [{', '.join(values)}], ({', '.join(grid)},)")
    namespace: dict[str, Any] = {}
    if "tma" in artifact.launch:
        from tilec.runtime.tma import tensor_map_pointer

        namespace.update(tensor_map_pointer=tensor_map_pointer, tma=artifact.launch["tma"])
    exec(compile("\n".join(lines), f"<tilec launch {artifact.name}>", "exec"), namespace)
    return namespace["pack"]


class _BindingsKernel:
    """The same launch interface as the native Kernel, through cuda-bindings (slower)."""

    def __init__(self, image: bytes, entry: str, kinds: list[int], shared_bytes: int,
                 block: list[int], device: int, cooperative: bool = False):
        try:
            from cuda.bindings import driver as cu
        except ImportError:
            try:
                from cuda import cuda as cu
            except ImportError:
                raise LaunchError("no CUDA launcher: build tilec's native launcher or install "
                                  "cuda-bindings") from None
        self.cu = cu
        self._check(cu.cuInit(0), "cuInit")
        context = self._check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent")
        if not int(context):
            handle = self._check(cu.cuDeviceGet(device), "cuDeviceGet")
            context = self._check(cu.cuDevicePrimaryCtxRetain(handle), "cuDevicePrimaryCtxRetain")
            self._check(cu.cuCtxSetCurrent(context), "cuCtxSetCurrent")
        self.image = image + b"\0"
        self.module = self._check(cu.cuModuleLoadData(self.image), "cuModuleLoadData")
        self.function = self._check(cu.cuModuleGetFunction(self.module, entry.encode()),
                                    "cuModuleGetFunction")
        if shared_bytes > 0:  # static shared bytes count against the 48 KB default too
            attribute = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self._check(cu.cuFuncSetAttribute(self.function, attribute, shared_bytes),
                        "cuFuncSetAttribute")
        self.types = tuple(CTYPES[kind] for kind in kinds)
        self.shared_bytes = shared_bytes
        self.block = block
        self.entry = entry
        self.resident = self._resident_blocks(device) if cooperative else None

    def _resident_blocks(self, device: int) -> tuple[int, int]:
        """(blocks per multiprocessor, multiprocessors) of this kernel on `device`."""
        cu = self.cu
        handle = self._check(cu.cuDeviceGet(device), "cuDeviceGet")
        attributes = cu.CUdevice_attribute
        if not self._check(cu.cuDeviceGetAttribute(
                attributes.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, handle), "cuDeviceGetAttribute"):
            raise LaunchError(f"kernel '{self.entry}' synchronizes its whole grid "
                              "(T.sync_grid), which needs a cooperative launch this GPU does "
                              "not support")
        per_sm = self._check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            self.function, self.block[0] * self.block[1] * self.block[2], self.shared_bytes),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor")
        sms = self._check(cu.cuDeviceGetAttribute(
            attributes.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, handle), "cuDeviceGetAttribute")
        return per_sm, sms

    def _check(self, result: Any, what: str) -> Any:
        result = result if isinstance(result, tuple) else (result,)
        if result[0] != self.cu.CUresult.CUDA_SUCCESS:
            message = self.cu.cuGetErrorString(result[0])[1]
            raise LaunchError(f"{what} failed: {message}")
        return result[1] if len(result) == 2 else result[1:]

    def launch(self, values: list, gx: int, gy: int, gz: int, stream: int) -> None:
        if gx == 0 or gy == 0 or gz == 0:
            return
        if self.resident is not None:
            per_sm, sms = self.resident
            if gx * gy * gz > per_sm * sms:
                raise LaunchError(
                    f"kernel '{self.entry}' synchronizes its whole grid (T.sync_grid), so its "
                    f"{gx * gy * gz} blocks must all be resident at once; this GPU holds "
                    f"{per_sm * sms} of them ({per_sm} per multiprocessor x {sms} at "
                    f"{self.block[0] * self.block[1] * self.block[2]} threads and "
                    f"{self.shared_bytes} bytes of shared memory each): launch fewer blocks")
            self._check(self.cu.cuLaunchCooperativeKernel(
                self.function, gx, gy, gz, *self.block, self.shared_bytes, stream,
                (tuple(values), self.types)), "cuLaunchCooperativeKernel")
            return
        self._check(self.cu.cuLaunchKernel(
            self.function, gx, gy, gz, *self.block, self.shared_bytes, stream,
            (tuple(values), self.types), 0), "cuLaunchKernel")


def code_for_device(artifact: Artifact, capability: tuple[int, int]) -> bytes:
    """What to load on a GPU of compute `capability`: the artifact's cubin where it runs there,
    else its PTX, which the driver compiles for that GPU. A cubin for sm_XY runs on X.Y and
    later chips of major X only; PTX for sm_XY on any chip from X.Y on, so an sm_80 kernel
    on an sm_90 GPU loads its PTX. An arch-specific target (sm_90a) runs on its own chip
    only, and no code runs on a chip older than its target: a LaunchError saying so, where
    the driver would answer 'no kernel image is available'."""
    arch = artifact.launch.get("arch", "")
    found = re.fullmatch(r"sm_(\d+)(\d)(a?)", arch)
    if found is None:  # artifacts saved before the launch recorded its arch
        return artifact.binary
    target = (int(found[1]), int(found[2]))
    device_arch = f"sm_{capability[0]}{capability[1]}"
    if (found[3] and capability != target) or capability < target:
        runs_on = (f"compute capability {target[0]}.{target[1]} only" if found[3] else
                   f"compute capability {target[0]}.{target[1]} and later")
        raise LaunchError(
            f"CUDA kernel '{artifact.name}' was compiled for {arch}, which runs on {runs_on}; "
            f"this GPU is {device_arch} (compute capability {capability[0]}.{capability[1]}): "
            f"compile it with target=\"cuda\" (the current GPU) or \"cuda:{device_arch}"
            f"{'a' if capability[0] >= 9 else ''}\"")
    if artifact.binary_kind == "ptx" or capability[0] == target[0]:
        return artifact.binary
    ptx = artifact.asm.get("ptx")
    if not ptx:
        raise LaunchError(
            f"CUDA kernel '{artifact.name}' holds a cubin for {arch}, which runs on "
            f"{target[0]}.x GPUs only, and no PTX the driver could compile for this "
            f"{device_arch} GPU: compile it with target=\"cuda\" (the current GPU)")
    return ptx.encode()


def load(artifact: Artifact, *, native: bool | None = None) -> Launcher:
    """A launcher for a CUDA artifact; `native=False` forces the cuda-bindings path."""
    import torch

    if artifact.binary_kind not in ("cubin", "ptx"):
        raise LaunchError(f"a CUDA artifact holds a cubin or PTX, not '{artifact.binary_kind}'")
    launch = artifact.launch
    kinds = [_slot_kind(slot) for slot in launch["abi"]]
    block = (list(launch.get("threads", [1])) + [1, 1])[:3]
    shared_bytes = int(launch.get("shared_bytes", 0))
    entry = launch.get("entry", artifact.name)
    pack = build_packer(artifact)
    cooperative = bool(launch.get("cooperative"))
    use_native = not cooperative and (native_available() if native is None else native)
    if use_native:
        from tilec.runtime._launcher import Kernel as kernel_class
    else:
        kernel_class = functools.partial(_BindingsKernel, cooperative=cooperative)
    tensor_params = [n for n, p in enumerate(artifact.params) if p.kind == "tensor"]
    first_tensor = tensor_params[0] if tensor_params else None
    raw_stream = torch._C._cuda_getCurrentRawStream
    runtime_grid = any(isinstance(size, str) for size in launch.get("grid", [1]))
    loaded: dict[int, Any] = {}

    def load_on(device: int) -> Any:
        image = code_for_device(artifact, torch.cuda.get_device_capability(device))
        with torch.cuda.device(device):
            try:
                kernel = kernel_class(image, entry, kinds, shared_bytes, block, device)
            except (RuntimeError, LaunchError) as error:
                raise LaunchError(f"cannot load CUDA kernel '{artifact.name}': {error}") from None
        loaded[device] = kernel
        return kernel

    def launcher(args: list, symbols: dict) -> None:
        values, grid = pack(args, symbols)
        if runtime_grid and not checked_grid(artifact, grid, MAX_GRID):
            return
        device = args[first_tensor].get_device() if first_tensor is not None else (
            torch.cuda.current_device())
        kernel = loaded.get(device) or load_on(device)
        try:
            kernel.launch(values, grid[0], grid[1], grid[2], raw_stream(device))
        except RuntimeError as error:
            raise LaunchError(f"launching '{artifact.name}' failed: {error}") from None

    launcher.native = use_native  # type: ignore[attr-defined]
    # the loaded kernel of a device, for tilec.runtime.fastcall's native call
    launcher.kernel_for = lambda device: loaded.get(device) or load_on(device)  # type: ignore[attr-defined]
    return launcher
