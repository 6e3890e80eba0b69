"""The native kernel call: a kernel's argument checks, output allocation and launch in C.

`native_call` compiles what a JITKernel checks on every call (per input its dtype and
dimensions, per output its dtype and shape, the launch slots and the grid) into a
`tilec.runtime._launcher_torch.Call` for one device. Calling it with arguments that match
costs a few hundred nanoseconds besides cuLaunchKernel; any other arguments go to `fallback`
(the Python call, whose checks raise the error naming the argument), so both paths take
exactly the same calls.

A kernel takes the Python call instead when the native module is absent (built against the
torch it runs with: launcher/CMakeLists.txt), when TILEC_NATIVE_CALL=0, or when its launch
needs Python: scalar parameters, TMA maps, derived sizes, several kernels in turn; `native_call`
then returns the reason, which the kernel keeps as `JITKernel.call_path`, so a benchmark or a
user sees which call runs and why (a missing module says which import failed). It is the
default on the CPU target (tests/test_native_call.py) and on CUDA (tests/gpu/
test_native_call_gpu.py runs the CUDA suite's kernels through it; the rest of the GPU suite
calls kernels through whichever call is the default).

By default (TILEC_GRAPH_LAUNCH=0 turns it off; read when a kernel makes its native call) a
CUDA kernel launches through a one-node CUDA graph per stream, its node's grid and arguments
set per call, instead of cuLaunchKernel (launcher/graph_launch.h: why, and where
cuLaunchKernel still runs, such as under torch.cuda.graph's capture). The call's
`graph_launch` says "on", "off", or "off: " and why it stopped after a graph entry point
failed.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Sequence
from typing import Any

from tilec.runtime.artifact import Artifact

# postfix grid programs, as torch_call.cpp runs them
CONST, SYMBOL, ADD, SUB, MUL, FLOOR_DIV, MOD, NEG = range(8)
BINARY = {ast.Add: ADD, ast.Sub: SUB, ast.Mult: MUL, ast.FloorDiv: FLOOR_DIV, ast.Mod: MOD}
# launch slot kinds
POINTER, CONSTANT, SYMBOL_VALUE = range(3)
CUDA_BINARIES = ("cubin", "ptx")

# (position among the parameters, stored shape, torch dtype, returned to the caller)
TensorPlan = tuple[int, Sequence[int | str], Any, bool]


def enabled(device_type: str) -> bool:
    """TILEC_NATIVE_CALL: "0" off; otherwise on for the CPU and CUDA devices (the module
    checks and allocates torch tensors of those two only)."""
    return os.environ.get("TILEC_NATIVE_CALL") != "0" and device_type in ("cpu", "cuda")


def graph_launch_wanted() -> bool:
    """CUDA native calls launch through a one-node CUDA graph unless TILEC_GRAPH_LAUNCH=0
    (on an H100, 4.4 us a call against 7.7 through cuLaunchKernel:
    benchmarks/results/2026-12-07-h100_launch-overhead-634ddad.json)."""
    return os.environ.get("TILEC_GRAPH_LAUNCH") != "0"


def grid_program(size: int | str, symbols: dict[str, int]) -> list[int] | None:
    """One grid size as a flat postfix program of (op, value) pairs; None for what the
    native call does not evaluate (a name that is not a shape symbol)."""
    if isinstance(size, int):
        return [CONST, size]
    program: list[int] = []

    def emit(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            program.extend((CONST, node.value))
        elif isinstance(node, ast.Name) and node.id in symbols:
            program.extend((SYMBOL, symbols[node.id]))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            if not emit(node.operand):
                return False
            program.extend((NEG, 0))
        elif isinstance(node, ast.BinOp) and type(node.op) in BINARY:
            if not (emit(node.left) and emit(node.right)):
                return False
            program.extend((BINARY[type(node.op)], 0))
        else:
            return False
        return True

    return program if emit(ast.parse(size, mode="eval").body) else None


def _dims(shape: Sequence[int | str], symbols: dict[str, int], bind: bool) -> list[int] | None:
    """A tensor's dimensions for the plan: a size, or -1 - symbol (bound on first sight for
    inputs; an output's must already be bound)."""
    dims = []
    for dim in shape:
        if isinstance(dim, int):
            dims.append(dim)
            continue
        if not dim.isidentifier():  # a derived size such as "(K // 2)"
            return None
        if dim not in symbols:
            if not bind:
                return None
            symbols[dim] = len(symbols)
        dims.append(-1 - symbols[dim])
    return dims


def _slots(artifact: Artifact, symbols: dict[str, int]) -> list[int] | None:
    """The kernel arguments as (kind, value) pairs, flat; None for one that needs Python."""
    flat: list[int] = []
    for slot in artifact.launch["abi"]:
        number = int(slot[1])
        if slot[0] == "ptr":
            flat.extend((POINTER, number))
        elif slot[0] == "dim":
            dim = artifact.params[number].shape[int(slot[2])]
            if isinstance(dim, int):
                flat.extend((CONSTANT, dim))
            elif dim in symbols:
                flat.extend((SYMBOL_VALUE, symbols[dim]))
            else:
                return None
        else:  # scalars and TMA maps
            return None
    return flat


def native_call(artifact: Artifact, launcher: Callable[[list, dict], None],
                inputs: Sequence[TensorPlan], outputs: Sequence[TensorPlan], device: Any,
                fallback: Callable[..., Any], error: type[Exception]) -> Callable[..., Any] | str:
    """The native call of `artifact` on `device` (a torch.device), or why the kernel takes the
    Python call. `launcher` is what tilec.runtime.load made of the artifact."""
    if not enabled(device.type):
        return "TILEC_NATIVE_CALL=0" if os.environ.get("TILEC_NATIVE_CALL") == "0" else \
            f"a {device.type} device (the native call runs on cpu and cuda)"
    if artifact.kernels:
        return "several kernels launched in turn"
    if artifact.launch.get("cooperative"):
        return "a cooperative launch (T.sync_grid)"
    if any(dtype is None for _, _, dtype, _ in inputs):
        return "an input whose dtype torch lacks"
    try:
        import torch

        from tilec.runtime import _launcher_torch
    except (ImportError, OSError) as missing:  # not built, or built against another torch
        return f"tilec.runtime._launcher_torch does not import ({missing}): build it against " \
               "this torch (launcher/CMakeLists.txt)"
    symbols: dict[str, int] = {}
    plans = []
    for (position, shape, dtype, returned), bind in [*((p, True) for p in inputs),
                                                     *((p, False) for p in outputs)]:
        dims = _dims(shape, symbols, bind)
        if dims is None:
            return f"parameter {position}'s shape {list(shape)} has a derived size"
        plans.append((position, dtype, dims, returned))
    grid_sizes = (list(artifact.launch.get("grid", [1])) + [1, 1])[:3]
    grid = [grid_program(size, symbols) for size in grid_sizes]
    if any(program is None for program in grid):
        return f"the grid {grid_sizes} needs more than shape symbols"
    names = tuple(sorted(symbols, key=symbols.__getitem__))
    common = dict(params=len(plans), inputs=plans[:len(inputs)], outputs=plans[len(inputs):],
                  symbols=names, grid=grid, fallback=fallback, error=error, name=artifact.name)
    if device.type == "cpu":
        return _launcher_torch.Call(**common, slots=[], device_type="cpu", device_index=-1,
                                    launch=launcher)
    if device.index is None:  # no tensor input: the current device, which may change
        return "no tensor input fixes the device (the outputs go to the current one)"
    # torch names a ROCm GPU "cuda" too: only a CUDA binary launches through cuLaunchKernel
    if artifact.binary_kind not in CUDA_BINARIES:
        return f"a {artifact.binary_kind} binary (cuLaunchKernel runs cubin and PTX)"
    slots = _slots(artifact, symbols)
    if slots is None:
        return "a launch argument that is a scalar, a TMA map or a derived size"
    kernel_for = getattr(launcher, "kernel_for", None)
    kernel = None if kernel_for is None else kernel_for(device.index)
    if not hasattr(kernel, "function"):
        from tilec.runtime.cuda import launcher_import_error

        return "the kernel was loaded by the cuda-bindings launcher: tilec.runtime._launcher " \
               f"does not import ({launcher_import_error()})"
    launch = artifact.launch
    if graph_launch_wanted():  # passed only then: a module built before it still loads kernels
        common["graph"] = True
    return _launcher_torch.Call(
        **common, slots=slots, device_type="cuda", device_index=device.index,
        function=kernel.function, block=(list(launch.get("threads", [1])) + [1, 1])[:3],
        shared_bytes=int(launch.get("shared_bytes", 0)),
        stream_of=torch._C._cuda_getCurrentRawStream, keep=kernel)
