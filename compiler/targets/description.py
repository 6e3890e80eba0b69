"""Target descriptions: what the passes may assume about a chip, as data.

Every arch name a user or the driver gives (`cuda:sm_89`, `TILEC_CUDA_ARCH`, the GPU the
jit finds: `tilec.jit.resolve_target`) resolves here, once, to a `TargetDescription`. Passes
read capabilities from it (which tensor-core instruction family exists, which async copies, how
much shared memory a block may take) instead of comparing arch strings, so a new chip is a new
entry in `DESCRIPTIONS` and a new family is a description plus its own instruction lowering.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilec.errors import CompileError


@dataclass(frozen=True)
class TargetDescription:
    """One chip as the compiler sees it.

    `mma` names the tensor-core instruction family the lowering emits for a gemm ("wgmma",
    "mma.sync", or "" for none); `async_copies` the asynchronous global->shared mechanisms
    ("tma" needs the mbarrier transaction counts of sm_90); `max_shared_bytes` is the opt-in
    maximum of dynamic shared memory per block (what `cuFuncSetAttribute` may raise it to).
    `sm_count` is the streaming multiprocessors of the reference part of that chip (persistent
    grids size themselves by it; on a smaller part the extra blocks run as a second wave);
    `ptx_features` the PTX ISA the chip needs (+ptx80 for sm_90a, 8.6 for sm_100a, 8.7 for
    sm_120a).

    AMD chips (family "amd") call a warp a wavefront (64 lanes on CDNA), shared memory the LDS
    (`shared_banks` banks of 4 bytes) and multiprocessors compute units; `mma` is "mfma" and
    `mma_elements` the operand types its matrix cores take. `max_vgprs` is the registers one
    thread may hold (255 on NVIDIA; on CDNA2/3 the unified file of 512 per lane, VGPRs and
    AGPRs together).

    SPIR-V devices (family "spirv": Vulkan, Metal through spirv-cross, WebGPU) address memory
    logically (`logical_addressing`): every buffer is a typed array, so there are no pointer
    casts, no byte arena of shared memory and no vector reinterpretation of a scalar buffer.
    Their `warp_size` is the subgroup width the kernel assumes, a lower bound of the device's
    (lanes combine by shuffles within it, the rest through workgroup memory); 1 means no
    subgroup operations at all.

    `max_block` is the threads a block may have along x, y and z (and `max_threads_per_block`
    in all), `max_grid` the blocks a launch may have along x, y and z, `max_grid_threads` the
    threads (blocks times the block's threads) along one axis where the API counts those
    (HIP's work-items and Metal's thread positions are 32-bit), 0 where it does not.
    """

    name: str
    family: str
    chip: str
    warp_size: int
    max_threads_per_block: int
    max_shared_bytes: int
    registers_per_block: int
    sm_count: int
    mma: str
    async_copies: tuple[str, ...]
    ptx_features: str
    mma_elements: tuple[str, ...] = ()
    shared_banks: int = 32
    max_vgprs: int = 255
    logical_addressing: bool = False
    max_block: tuple[int, int, int] = (1024, 1024, 64)
    max_grid: tuple[int, int, int] = (2**31 - 1, 65535, 65535)
    max_grid_threads: int = 0

    @property
    def is_spirv(self) -> bool:
        return self.family == "spirv"

    @property
    def is_amd(self) -> bool:
        return self.family == "amd"

    @property
    def has_tma(self) -> bool:
        return "tma" in self.async_copies

    @property
    def has_wgmma(self) -> bool:
        return self.mma == "wgmma"

    @property
    def has_l2_prefetch(self) -> bool:
        """`prefetch.global.L2` from the NVVM intrinsic: LLVM's NVPTX backend selects it for
        sm_90 and later only (on sm_80 / sm_89: "Cannot select" and an abort)."""
        return self.family == "nvidia" and int(self.chip[3:].rstrip("a")) >= 90

    @property
    def has_float8_conversions(self) -> bool:
        """cvt between f32 / f16 and e4m3 / e5m2 pairs: sm_89 (Ada) and later."""
        return self.family == "nvidia" and int(self.chip[3:].rstrip("a")) >= 89


def _nvidia(name: str, max_shared_bytes: int, sm_count: int, mma: str,
            async_copies: tuple[str, ...], ptx: str = "+ptx80") -> TargetDescription:
    return TargetDescription(
        name=name, family="nvidia", chip=name, warp_size=32, max_threads_per_block=1024,
        max_shared_bytes=max_shared_bytes, registers_per_block=65536, sm_count=sm_count,
        mma=mma, async_copies=async_copies, ptx_features=ptx,
    )


# Shared memory: 163 KB on sm_80 / sm_87, 99 KB on sm_86 / sm_89 / sm_120, 227 KB on sm_90 and
# sm_100 (CUDA programming guide, compute capabilities table). Reference parts: A100 (108 SMs),
# RTX 3090 (82), Orin (16), L40S (142), H100/H200 SXM (132), B200 (148), RTX 5090 (170).
# sm_90 without the `a` suffix has no wgmma / setmaxnreg, so it runs the mma.sync family;
# Blackwell keeps mma.sync and TMA but has no wgmma (its tcgen05 MMAs are not lowered).
DESCRIPTIONS: dict[str, TargetDescription] = {
    description.name: description
    for description in (
        _nvidia("sm_80", 166912, 108, "mma.sync", ("cp.async",)),
        _nvidia("sm_86", 101376, 82, "mma.sync", ("cp.async",)),
        _nvidia("sm_87", 166912, 16, "mma.sync", ("cp.async",)),
        _nvidia("sm_89", 101376, 142, "mma.sync", ("cp.async",)),
        _nvidia("sm_90", 232448, 132, "mma.sync", ("cp.async",)),
        _nvidia("sm_90a", 232448, 132, "wgmma", ("cp.async", "tma")),
        _nvidia("sm_100a", 232448, 148, "mma.sync", ("cp.async",), "+ptx86"),
        _nvidia("sm_120a", 101376, 170, "mma.sync", ("cp.async",), "+ptx87"),
    )
}
DEFAULT_CUDA_ARCH = "sm_90a"  # the project's GPU (H200)


def _amd(name: str, compute_units: int, mma_elements: tuple[str, ...]) -> TargetDescription:
    return TargetDescription(
        name=name, family="amd", chip=name, warp_size=64, max_threads_per_block=1024,
        max_shared_bytes=65536, registers_per_block=131072, sm_count=compute_units,
        mma="mfma", async_copies=(), ptx_features="", mma_elements=mma_elements,
        shared_banks=32, max_vgprs=512, max_block=(1024,) * 3, max_grid=(2**32 - 1,) * 3,
        max_grid_threads=2**32 - 1,
    )


# CDNA2 (gfx90a: MI210 / MI250X, 110 compute units per die) and CDNA3 (gfx942: MI300X, 304):
# 64-lane wavefronts, 64 KiB of LDS per workgroup in 32 banks, 512 registers per lane split
# between VGPRs and AGPRs (AMD Instinct ISA guides). fp8 MFMAs are CDNA3's.
AMD_DESCRIPTIONS: dict[str, TargetDescription] = {
    description.name: description
    for description in (
        _amd("gfx90a", 110, ("f16", "bf16", "i8", "f32")),
        _amd("gfx942", 304, ("f16", "bf16", "i8", "f32", "e4m3", "e5m2")),
    )
}
DEFAULT_HIP_ARCH = "gfx942"  # MI300X


def _spirv(name: str, warp_size: int, max_shared_bytes: int, max_grid: tuple[int, int, int],
           max_grid_threads: int = 0) -> TargetDescription:
    return TargetDescription(
        name=name, family="spirv", chip=name, warp_size=warp_size, max_threads_per_block=1024,
        max_shared_bytes=max_shared_bytes, registers_per_block=65536, sm_count=1, mma="",
        async_copies=(), ptx_features="", logical_addressing=True, max_grid=max_grid,
        max_grid_threads=max_grid_threads,
    )


# The SPIR-V family, one description per API (the device is known only at run time):
# - vulkan: subgroups of at least 8 lanes (Mesa's lavapipe on 256-bit AVX2 has 8, NVIDIA 32,
#   AMD 32 / 64, Intel 8-32; the runtime checks the device's), 32 KiB of workgroup memory
#   (lavapipe's maxComputeSharedMemorySize, and common on desktop GPUs);
# - metal: 32 KiB of threadgroup memory; Apple's SIMD groups have 32 threads, the kernels
#   assume 8 as Vulkan's do (correct on any wider group), so the SPIR-V its MSL comes from is
#   the one CI runs on lavapipe;
# - webgpu: no subgroups (an optional feature that browsers gate), WebGPU's default 16 KiB.
# Grids: Vulkan guarantees 65535 workgroups along each axis (maxComputeWorkGroupCount, lavapipe's
# value), WebGPU's default maxComputeWorkgroupsPerDimension is 65535; Metal's thread positions
# in the grid are 32-bit.
_EVERY_AXIS = (65535, 65535, 65535)
SPIRV_DESCRIPTIONS: dict[str, TargetDescription] = {
    description.name: description
    for description in (
        _spirv("vulkan", 8, 32768, _EVERY_AXIS),
        _spirv("metal", 8, 32768, (2**32 - 1,) * 3, max_grid_threads=2**32 - 1),
        _spirv("webgpu", 1, 16384, _EVERY_AXIS),
    )
}


def describe(arch: str) -> TargetDescription:
    """The description of `arch`; an unknown one is a CompileError listing the known ones of
    its family (AMD names start with "gfx")."""
    found = DESCRIPTIONS.get(arch) or AMD_DESCRIPTIONS.get(arch) or SPIRV_DESCRIPTIONS.get(arch)
    if found is None:
        family, known = ("AMD", AMD_DESCRIPTIONS) if arch.startswith("gfx") else (
            "CUDA", DESCRIPTIONS)
        raise CompileError(f"unsupported {family} arch '{arch}' (supported: {', '.join(known)})")
    return found


@dataclass(frozen=True)
class AscendDescription:
    """One Ascend chip's AI core as the ascend target sees it: the capacities of its local
    memories in bytes (UB for the vector unit; L1, L0A, L0B, L0C for the cube)."""

    name: str
    ub_bytes: int
    l1_bytes: int
    l0a_bytes: int
    l0b_bytes: int
    l0c_bytes: int


# Atlas A2 training series (Ascend 910B): 192 KB UB, 512 KB L1, 64 KB L0A and L0B, 128 KB L0C
# per AI core (CANN's AscendC programming guide, hardware architecture).
ASCEND_DESCRIPTIONS: dict[str, AscendDescription] = {
    "910b": AscendDescription("910b", 196608, 524288, 65536, 65536, 131072),
}
DEFAULT_ASCEND_CHIP = "910b"
