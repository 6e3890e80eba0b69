"""Metal artifacts (MSL source + argument table) run on Apple GPUs, which tilec's runtime does
not drive yet: loading one is a LaunchError saying so. The same kernel compiled for the vulkan
target runs here (its SPIR-V is the one the MSL was made from)."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.runtime.artifact import Artifact


def load(artifact: Artifact):
    raise LaunchError(f"kernel '{artifact.name}' is Metal Shading Language for Apple GPUs; "
                      "tilec has no Metal runtime yet (kernel.get_kernel_source() gives the "
                      "MSL, launch['arguments'] its buffers): on this machine compile it for "
                      "target='vulkan'")
