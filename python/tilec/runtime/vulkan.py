"""Runs SPIR-V (vulkan target) and WGSL (webgpu target) kernels through wgpu, on CPU tensors.

No MLIR and no compiler here: `wgpu` (PyPI; wgpu-native, whose naga reads SPIR-V and WGSL)
picks a Vulkan device, Mesa's lavapipe on a machine without a GPU. A call copies every tensor
argument (torch CPU tensors, numpy arrays through the jit) into a storage buffer, the scalars
and dynamic dimensions into small buffers of their own (the binding order of
launch["abi"]: compiler/targets/spirv.py), dispatches the grid and copies the tensors back
(a kernel may write any of them). It is a correctness path, not a fast one.

TILEC_WGPU_ADAPTER picks the adapter whose device name contains it (default: the first Vulkan
adapter, preferring lavapipe's "llvmpipe" where it is the only one).
"""

from __future__ import annotations

import functools
import os
import struct
from collections.abc import Callable
from typing import Any

from tilec.errors import LaunchError
from tilec.runtime import checked_grid, launch_grid
from tilec.runtime.artifact import Artifact

Launcher = Callable[[list, dict], None]
ABI = "tilec-spirv-bindings-v1"
MAX_WORKGROUPS = 65535  # per grid dimension, Vulkan's and WebGPU's guaranteed minimum
MAX_ELEMENTS = 2**31 - 1  # the kernels index in 32 bits
# wgpu features a kernel may use (requested where the adapter has them)
FEATURES = ("shader-f16", "subgroup", "shader-float32-atomic", "shader-f64", "shader-int64")
SCALAR_FORMATS = {"int8": "i", "int16": "i", "int32": "i", "uint8": "I", "uint16": "I",
                  "uint32": "I", "bool": "I", "int64": "q", "uint64": "Q", "float32": "f",
                  "float64": "d", "float16": "e"}


def _wgpu() -> Any:
    try:
        import wgpu
    except ImportError:
        raise LaunchError("the vulkan and webgpu targets run through wgpu: pip install "
                          "wgpu==0.32.0 (and a Vulkan driver: apt-get install "
                          "mesa-vulkan-drivers for lavapipe)") from None
    return wgpu


@functools.cache
def device() -> Any:
    """The wgpu device every kernel of the process runs on."""
    wgpu = _wgpu()
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")  # Mesa's window-system noise only
    wanted = os.environ.get("TILEC_WGPU_ADAPTER", "")
    adapters = [adapter for adapter in wgpu.gpu.enumerate_adapters_sync()
                if adapter.info["backend_type"] == "Vulkan"
                and wanted in adapter.info["device"]]
    if not adapters:
        raise LaunchError("no Vulkan adapter found" + (f" named '{wanted}'" if wanted else "")
                          + " (apt-get install mesa-vulkan-drivers libvulkan1 for lavapipe)")
    adapter = adapters[0]
    features = [name for name in FEATURES if name in adapter.features]
    return adapter.request_device_sync(required_features=features,
                                       required_limits=dict(adapter.limits))


def device_name() -> str:
    """The adapter's name ("llvmpipe (LLVM 15.0.6, 256 bits)" for lavapipe)."""
    return device().adapter.info["device"]


SUBGROUP_PROBE = """
@group(0) @binding(0) var<storage, read_write> width: array<u32>;
@compute @workgroup_size(64)
fn probe(@builtin(subgroup_size) size: u32, @builtin(local_invocation_index) lane: u32) {
    if (lane == 0u) { width[0] = size; }
}
"""


@functools.cache
def subgroup_size() -> int:
    """The device's subgroup width as a kernel sees it (0 without the subgroup feature)."""
    gpu = device()
    if "subgroup" not in gpu.features:
        return 0
    wgpu = _wgpu()
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
    buffer = gpu.create_buffer_with_data(data=b"\0" * 4, usage=usage)
    pipeline = gpu.create_compute_pipeline(
        layout="auto", compute={"module": gpu.create_shader_module(code=SUBGROUP_PROBE),
                                "entry_point": "probe"})
    group = gpu.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": buffer, "offset": 0, "size": 4}}])
    encoder = gpu.create_command_encoder()
    compute = encoder.begin_compute_pass()
    compute.set_pipeline(pipeline)
    compute.set_bind_group(0, group)
    compute.dispatch_workgroups(1)
    compute.end()
    gpu.queue.submit([encoder.finish()])
    return struct.unpack("<I", gpu.queue.read_buffer(buffer))[0]


def _scalar_bytes(value: Any, dtype: str) -> bytes:
    if dtype not in SCALAR_FORMATS:
        raise LaunchError(f"a {dtype} scalar cannot be passed to a SPIR-V kernel")
    return _words(struct.pack("<" + SCALAR_FORMATS[dtype], value))


def _words(data: bytes) -> bytes:
    """`data` padded to whole 4-byte words (a binding holds at least one)."""
    return data + b"\0" * (-len(data) % 4 if data else 4)


def _tensor_bytes(arg: Any) -> tuple[bytes, Any]:
    """The tensor's bytes and a numpy view of its memory to copy the result back into."""
    if type(arg).__module__ == "numpy":
        array = arg
    else:
        import torch

        tensor = arg.detach()
        # numpy has no bfloat16 or float8: their bytes as integers of their width (the kernel
        # reads them as i32 words)
        if tensor.dtype == torch.bfloat16 or tensor.dtype.is_floating_point and (
                tensor.element_size() == 1):
            tensor = tensor.view(torch.int16 if tensor.element_size() == 2 else torch.uint8)
        array = tensor.numpy()
    if array.size > MAX_ELEMENTS:
        raise LaunchError(f"a tensor of {array.size} elements: SPIR-V kernels index in 32 bits")
    return _words(array.tobytes()), array


class SpirvKernel:
    """One kernel's compute pipeline, from its SPIR-V binary or its WGSL source."""

    def __init__(self, artifact: Artifact, code: bytes | str):
        wgpu = _wgpu()
        if artifact.launch.get("abi_version") != ABI:
            raise LaunchError(f"kernel '{artifact.name}' was built for ABI "
                              f"{artifact.launch.get('abi_version')!r}, this runtime speaks "
                              f"{ABI!r}: recompile it")
        self.artifact = artifact
        self.device = device()
        needed = artifact.launch.get("subgroup_size", 1)
        if needed > 1 and subgroup_size() < needed:
            raise LaunchError(
                f"kernel '{artifact.name}' combines lanes in subgroups of {needed}; this "
                f"device's ({self.device.adapter.info['device']}) are "
                f"{subgroup_size() or 'not available'}: compile for the webgpu target, which "
                "uses none")
        missing = [feature for feature in artifact.launch.get("features", [])
                   if feature not in self.device.features]
        if missing:
            raise LaunchError(
                f"kernel '{artifact.name}' needs the device feature {', '.join(missing)} (float "
                f"atomic adds); this device ({self.device.adapter.info['device']}) lacks it: "
                "compile for the webgpu target, which adds by atomic exchanges")
        self.abi = artifact.launch["abi"]
        self.threads = artifact.launch["threads"]
        try:
            module = self.device.create_shader_module(code=code)
            self.layout = self.device.create_bind_group_layout(entries=[
                {"binding": n, "visibility": wgpu.ShaderStage.COMPUTE,
                 "buffer": {"type": wgpu.BufferBindingType.storage}}
                for n in range(len(self.abi))])
            self.pipeline = self.device.create_compute_pipeline(
                layout=self.device.create_pipeline_layout(bind_group_layouts=[self.layout]),
                compute={"module": module, "entry_point": artifact.launch["entry"]})
        except Exception as error:  # wgpu's GPUValidationError and friends
            raise LaunchError(f"the device rejected kernel '{artifact.name}': {error}") from None

    def buffers(self, args: list) -> tuple[list[bytes], dict[int, Any]]:
        """Each binding's bytes, and the numpy view of each tensor binding to copy back."""
        data, tensors = [], {}
        params = self.artifact.params
        for binding, slot in enumerate(self.abi):
            kind, number = slot[0], slot[1]
            if kind == "ptr":
                payload, tensors[binding] = _tensor_bytes(args[number])
            elif kind == "scalar":
                payload = _scalar_bytes(args[number], params[number].dtype)
            else:  # ["dim", param, axis]
                payload = _scalar_bytes(int(args[number].shape[slot[2]]), "int32")
            data.append(payload)
        return data, tensors

    def launch(self, args: list, symbols: dict) -> None:
        wgpu = _wgpu()
        grid = (launch_grid(self.artifact, symbols, args) + [1, 1])[:3]
        if any(size > MAX_WORKGROUPS for size in grid):
            raise LaunchError(f"kernel '{self.artifact.name}' needs a grid of {grid} "
                              f"workgroups; Vulkan and WebGPU guarantee {MAX_WORKGROUPS} per "
                              "dimension (use larger blocks)")
        if not checked_grid(self.artifact, grid, (MAX_WORKGROUPS,) * 3):
            return
        data, tensors = self.buffers(args)
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        buffers = [self.device.create_buffer_with_data(data=payload, usage=usage)
                   for payload in data]
        group = self.device.create_bind_group(layout=self.layout, entries=[
            {"binding": n, "resource": {"buffer": buffer, "offset": 0, "size": buffer.size}}
            for n, buffer in enumerate(buffers)])
        encoder = self.device.create_command_encoder()
        compute = encoder.begin_compute_pass()
        compute.set_pipeline(self.pipeline)
        compute.set_bind_group(0, group)
        compute.dispatch_workgroups(*grid)
        compute.end()
        self.device.queue.submit([encoder.finish()])
        for binding, array in tensors.items():
            if array.nbytes == 0:
                continue
            produced = self.device.queue.read_buffer(buffers[binding], size=-(
                -array.nbytes // 4) * 4)
            array.reshape(-1).view("u1")[:] = memoryview(produced)[:array.nbytes]
        for buffer in buffers:
            buffer.destroy()


def load(artifact: Artifact) -> Launcher:
    """A launcher for a vulkan artifact (its binary is the SPIR-V module)."""
    if artifact.binary_kind != "spirv":
        raise LaunchError(f"a vulkan artifact holds SPIR-V, not {artifact.binary_kind}")
    return SpirvKernel(artifact, artifact.binary).launch
