"""wgmma with A from registers (HopperGemmConfig.a_registers): ldmatrix from the swizzled TMA
slot, then the RS form of wgmma.mma_async. CPU only: MLIR text, PTX, ptxas when present."""

from __future__ import annotations

import shutil

import pytest

from tilec.compiler.tensorcore import build_kernel
from tilec.compiler.tensorcore.hopper import HopperGemmConfig, hopper_gemm_mlir

needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")

RS_CONFIGS = [
    HopperGemmConfig(dtype="f16", a_registers=True),  # 128 x 256, two consumer warpgroups
    HopperGemmConfig(dtype="bf16", block_n=128, consumers=1, a_registers=True),  # 128 x 128
    HopperGemmConfig(  # 64-byte K rows: 64B swizzle
        dtype="f16", block_n=128, block_k=32, consumers=1, stages=3, a_registers=True
    ),
    HopperGemmConfig(dtype="f16", trans_b=True, a_registers=True),
    HopperGemmConfig(dtype="bf16", block_m=256, block_n=128, epilogue_n=64, a_registers=True),
    HopperGemmConfig(dtype="e4m3", block_n=128, block_k=128, trans_b=True, a_registers=True),
    HopperGemmConfig(dtype="s8", block_n=128, block_k=128, trans_b=True, a_registers=True),
    HopperGemmConfig(dtype="tf32", block_n=128, block_k=32, trans_b=True, a_registers=True),
]


def test_a_registers_off_is_the_default_and_names_stay() -> None:
    plain = HopperGemmConfig()
    assert not plain.a_registers
    assert plain.name == "gemm_sm90_f16_128x256x64_s4_c2_p_e128"
    assert HopperGemmConfig(a_registers=True).name == plain.name + "_ra"


def test_transposed_a_from_registers_is_rejected() -> None:
    with pytest.raises(ValueError, match="K-major"):
        HopperGemmConfig(dtype="f16", trans_a=True, a_registers=True)
    with pytest.raises(ValueError):  # 8-bit stays K-major whatever the A source
        HopperGemmConfig(dtype="e4m3", trans_a=True, trans_b=True, a_registers=True)


def test_register_form_in_mlir() -> None:
    text = hopper_gemm_mlir(HopperGemmConfig(dtype="f16", a_registers=True))
    assert text.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 4  # one per 32-byte K step
    # RS form: four A registers, B's descriptor, scale-d, scale-a/b, transpose-B only (B K x N)
    assert "}, {$256, $257, $258, $259}, $260, p, 1, 1, 1;" in text
    assert text.count("wgmma.fence.sync.aligned") == 4
    shared = hopper_gemm_mlir(HopperGemmConfig(dtype="f16"))
    assert "ldmatrix" not in shared and "$256, $257, p, 1, 1, 0, 1;" in shared


def test_two_atoms_load_at_an_immediate_offset() -> None:
    text = hopper_gemm_mlir(
        HopperGemmConfig(dtype="bf16", block_n=128, consumers=1, a_registers=True)
    )
    assert "[$4+0];" in text and "[$4+8192];" in text  # second 64-row atom: 64 rows x 128 B


@needs_ptxas
@pytest.mark.parametrize("cfg", RS_CONFIGS, ids=lambda cfg: cfg.name)
def test_ptxas_accepts_register_a_without_spills(cfg: HopperGemmConfig) -> None:
    kernel = build_kernel(cfg, "sm_90a")
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in kernel.ptx
    assert f"wgmma.mma_async.sync.aligned.m64n{cfg.block_n}k" in kernel.ptx
    assert kernel.spill_bytes == 0
    assert 0 < kernel.registers <= min(255, 65536 // cfg.threads)
