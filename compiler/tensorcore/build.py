"""Generate, lower and check one tensor-core GEMM kernel: config -> PTX + launch metadata."""

from __future__ import annotations

from dataclasses import dataclass

from tilec.compiler.tensorcore.ampere import AmpereGemmConfig, ampere_gemm_mlir
from tilec.compiler.tensorcore.hopper import HopperGemmConfig, hopper_gemm_mlir
from tilec.compiler.tensorcore.ptx import mlir_to_ptx, ptxas_check


@dataclass
class BuiltKernel:
    """A kernel ready for the CUDA runtime: entry name, PTX, launch metadata, ptxas numbers."""

    name: str
    arch: str
    mlir: str
    ptx: str
    launch: dict
    registers: int
    spill_bytes: int


def gemm_mlir(cfg: HopperGemmConfig | AmpereGemmConfig) -> str:
    if isinstance(cfg, HopperGemmConfig):
        return hopper_gemm_mlir(cfg)
    return ampere_gemm_mlir(cfg)


def build_kernel(cfg: HopperGemmConfig | AmpereGemmConfig, arch: str) -> BuiltKernel:
    """Lower `cfg`'s kernel for `arch` and validate it with ptxas; raises if ptxas rejects it."""
    if isinstance(cfg, HopperGemmConfig) and not arch.startswith("sm_90"):
        raise ValueError(f"the wgmma kernel needs sm_90a, not {arch}")
    mlir = gemm_mlir(cfg)
    ptx = mlir_to_ptx(mlir, arch)
    report = ptxas_check(ptx, arch)
    if not report.ok:
        raise RuntimeError(f"ptxas rejected {cfg.name}:\n{report.log}")
    launch = {"arch": arch, "entry": cfg.name, **cfg.launch()}
    return BuiltKernel(cfg.name, arch, mlir, ptx, launch, report.registers, report.spill_bytes)
