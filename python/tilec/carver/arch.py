"""What carver knows of a device: TileLang's `carver.arch` objects (`CUDA("cuda")`, `CPU()`).

A `CUDA` arch is the compiler's TargetDescription of the chip (tilec.compiler.targets
.description: shared memory per block, registers, warp size, SM count of the reference part,
tensor-core family) under TileLang's field names; when the chip is the GPU present, the SM
count, shared memory, registers and L2 are read from it through torch. A bare "cuda" on a
machine without a GPU describes sm_90a, as the cuda target compiles for it by default.

Carver's cost model needs a few per-SM figures the compiler does not (`SM_FIGURES`): shared
memory and threads per SM, the L2 size, and two throughputs per SM and clock: dense 16-bit
tensor-core FLOPs (989 TFLOP/s at 1.83 GHz over 132 SMs on the H100, 312 TFLOP/s at 1.41 GHz
over 108 SMs on the A100) and operand bytes the L2 delivers (the A100 whitepaper's 5120 B/clk
over 108 SMs; NVIDIA publishes no Hopper figure, so Hopper is modelled with the same per-SM
rate). H100 and H200 SXM share the GH100 SM, so one entry serves both.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass

from tilec.carver import driver
from tilec.errors import TilecError

__all__ = ["CDNA", "CPU", "CUDA", "METAL", "RDNA", "TileDevice", "auto_infer_current_arch",
           "driver", "get_arch"]


@dataclass(frozen=True)
class SmFigures:
    """Per-SM figures of one chip for carver's cost model."""

    chip: str
    shared_memory_per_sm: int
    max_threads_per_sm: int
    l2_cache_bytes: int
    tensor_flops_per_clock: int  # dense 16-bit tensor-core FLOPs per SM and clock
    operand_bytes_per_clock: int  # operand bytes per SM and clock the L2 feeds


_HOPPER = SmFigures("NVIDIA H100 / H200 SXM", 233472, 2048, 50 * 2**20, 4096, 47)
SM_FIGURES = {
    "sm_90a": _HOPPER,
    "sm_90": _HOPPER,
    "sm_80": SmFigures("NVIDIA A100 SXM", 167936, 2048, 40 * 2**20, 2048, 47),
}
_TARGET_TAGS = {"h100": "sm_90a", "h200": "sm_90a", "h800": "sm_90a", "a100": "sm_80",
                "a800": "sm_80"}


class TileDevice:
    """A device carver recommends tiles for."""

    platform = "unknown"
    name = "unknown"


def _arch_name(target: str) -> str:
    """tilec's arch for a target string ("cuda:sm_90a", "sm_80", "cuda -arch=sm_80",
    "nvidia/nvidia-h100"; "cuda" / "auto": the GPU present, else the cuda target's default)."""
    from tilec.compiler.targets.description import DEFAULT_CUDA_ARCH

    match = re.search(r"sm_\d+a?", target)
    if match:
        return match.group(0)
    for tag, arch in _TARGET_TAGS.items():
        if tag in target.lower():
            return arch
    if target.split(":")[0].split()[0] not in ("cuda", "auto", "nvidia"):
        raise TilecError(f"tilec.carver.arch.CUDA: cannot tell the chip from target '{target}' "
                         "(use 'cuda', 'cuda:sm_90a' or 'cuda:sm_80')")
    return _present_arch() or DEFAULT_CUDA_ARCH


def _present_arch() -> str | None:
    """The arch of the GPU torch sees, in tilec's naming; None without one."""
    from tilec.jit import resolve_target

    return resolve_target("cuda").partition(":")[2] or None


class CUDA(TileDevice):
    """An NVIDIA GPU under TileLang's field names: `compute_max_core` (SMs), `smem_cap` and
    `max_smem_usage` (shared memory a block may use), `reg_cap`, `warp_size`,
    `l2_cache_size_bytes`; `description` is the compiler's view of the chip, `sm_figures` the
    cost model's (None where carver has none)."""

    platform = "CUDA"

    def __init__(self, target: str = "cuda"):
        from tilec.compiler.targets.description import describe

        self.arch = _arch_name(str(target))
        try:
            self.description = describe(self.arch)
        except TilecError as error:
            raise TilecError(f"tilec.carver.arch.CUDA: {error.message}") from None
        self.target = f"cuda:{self.arch}"
        self.sm_version = int(re.sub(r"\D", "", self.arch))
        self.compute_capability = str(self.sm_version)
        self.sm_figures = SM_FIGURES.get(self.arch)
        description = self.description
        self.name = self.sm_figures.chip if self.sm_figures else f"NVIDIA {self.arch}"
        self.compute_max_core = description.sm_count
        self.smem_cap = description.max_shared_bytes
        self.reg_cap = description.registers_per_block
        self.warp_size = description.warp_size
        self.l2_cache_size_bytes = self.sm_figures.l2_cache_bytes if self.sm_figures else 0
        if _present_arch() == self.arch:  # the GPU present: its own figures
            self.name = driver.get_device_name()
            self.compute_max_core = driver.get_num_sms()
            self.smem_cap = driver.get_max_dynamic_shared_size_bytes()
            self.reg_cap = driver.get_registers_per_block()
            self.l2_cache_size_bytes = driver.get_l2_cache_size_bytes()
        self.max_smem_usage = self.smem_cap
        self.sm_partition = 4  # warp schedulers (and tensor cores) per SM

    def __repr__(self) -> str:
        return f"CUDA({self.target}: {self.name}, {self.compute_max_core} SMs)"


class CPU(TileDevice):
    """The host CPU (tilec's cpu target)."""

    platform = "CPU"

    def __init__(self, target: str = "cpu"):
        self.target = "cpu"
        self.name = platform.processor() or platform.machine()
        self.compute_max_core = os.cpu_count() or 1

    def __repr__(self) -> str:
        return f"CPU({self.name}, {self.compute_max_core} cores)"


class _Unsupported(TileDevice):
    """A device family tilec does not compile for: constructing one is a clear error."""

    def __init__(self, target: str = ""):
        raise TilecError(f"tilec.carver.arch.{type(self).__name__}: tilec compiles for NVIDIA "
                         "GPUs (sm_80, sm_90a) and the CPU, not for this device")


class CDNA(_Unsupported):
    platform = "CDNA"


class RDNA(_Unsupported):
    platform = "RDNA"


class METAL(_Unsupported):
    platform = "METAL"


def get_arch(target: str = "cuda") -> TileDevice:
    """The arch object for a target string ("cuda", "cuda:sm_80", "cpu", "llvm")."""
    kind = str(target).split(":")[0].split()[0].lower()
    if kind in ("cpu", "llvm", "c"):
        return CPU()
    if kind in ("hip", "rocm"):
        return CDNA(target)
    if kind == "metal":
        return METAL(target)
    return CUDA(target)


def auto_infer_current_arch() -> TileDevice:
    """The current GPU when torch sees one, else the CPU."""
    return CUDA("cuda") if _present_arch() is not None else CPU()
