"""Tensor-core GEMM kernels for NVIDIA GPUs, generated as MLIR (gpu + nvgpu + nvvm + inline PTX).

`hopper` builds the sm_90a kernel (TMA + mbarrier pipeline, producer warpgroup, wgmma consumer
warpgroups, shared-memory + TMA-store epilogue); `ampere` builds the sm_80 kernel (cp.async
multistage pipeline, ldmatrix, mma.sync). `ptx` compiles their MLIR to PTX with the upstream
`gpu-lower-to-nvvm-pipeline` and checks it with ptxas. Nothing here reads tile IR: the pass
`lower-gemm-to-tensorcore` maps a recognized tile GEMM kernel onto these generators.
"""

from tilec.compiler.tensorcore.build import BuiltKernel, build_kernel

__all__ = ["BuiltKernel", "build_kernel"]
