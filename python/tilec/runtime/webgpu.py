"""Loads a webgpu artifact (WGSL source) and runs it through wgpu, as tilec.runtime.vulkan runs
SPIR-V: on torch CPU tensors and numpy arrays, copied in and out."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.runtime.artifact import Artifact
from tilec.runtime.vulkan import Launcher, SpirvKernel


def load(artifact: Artifact) -> Launcher:
    if artifact.binary_kind != "wgsl":
        raise LaunchError(f"a webgpu artifact holds WGSL, not {artifact.binary_kind}")
    return SpirvKernel(artifact, artifact.binary.decode()).launch
