"""The Vulkan target: a SPIR-V compute shader (compiler/targets/spirv.py has the stages).

The artifact is the validated SPIR-V binary; tilec.runtime.vulkan runs it through wgpu (whose
naga reads SPIR-V) on any Vulkan device, Mesa's lavapipe on a machine without a GPU.
"""

from __future__ import annotations

from tilec.compiler.pipeline import CompileOptions, Stage
from tilec.compiler.targets import spirv
from tilec.errors import CompileError


def stages(options: CompileOptions) -> list[Stage]:
    return spirv.stages(options)


def finish(product: spirv.SpirvBinary, options: CompileOptions, kernel_name: str
           ) -> tuple[bytes, str, dict]:
    if not isinstance(product, spirv.SpirvBinary):
        raise CompileError("the vulkan target finishes after its 'spirv-binary' stage")
    return product.binary, "spirv", spirv.launch_metadata(options, kernel_name)
