"""plan-shared-memory through the frontend: shared tiles never alive at once share bytes, so a
kernel whose tiles together exceed a block's shared memory compiles (TileLang's MLA decode
keeps its output tile apart from the loop's); the wgmma operand tiles of the per-op GEMM path
keep their 1 KiB-aligned layouts; tiles a loop's iterations each write whole before reading
share bytes inside the loop where the kernel would not fit otherwise. Numerics of the reused
kernels on the CPU target; the GPU suite runs them too (tests/gpu/frontend_kernels.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch

import tilec
from tilec.compiler.targets.cuda import ptxas_path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from frontend_kernels import (  # noqa: E402
    gemm_bias_relu,
    loop_local_reference,
    loop_local_tiles,
    reused_shared_tiles,
)

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")


def test_reused_tiles_cpu_numerics() -> None:
    torch.manual_seed(5)
    x, z = torch.randn(100, 1024), torch.randn(100, 1024)
    y = tilec.compile(reused_shared_tiles(100), out_idx=[-1], target="cpu")(x, z)
    torch.testing.assert_close(y.double(), 2 * x.double() + z.double(), rtol=1e-6, atol=1e-6)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_tiles_never_alive_together_share_bytes(arch: str) -> None:
    kernel = tilec.compile(reused_shared_tiles(100), out_idx=[-1], target=f"cuda:{arch}")
    assert kernel.artifact.binary_kind == "cubin"
    text = kernel.asm["tile-cuda"]
    assert "tile.shared_arena = {align = 128 : i64, bytes = 131072 : i64}" in text
    assert re.findall(r"tile\.shared_offset = (\d+)", text) == ["0", "0"]
    # the second tile's copy waits for every thread to be done reading the first
    assert re.search(r"gpu\.barrier\n\s*tile\.copy %arg1", text)
    assert kernel.artifact.launch["shared_bytes"] == 131072


@needs_ptxas
def test_wgmma_operand_tiles_keep_their_atoms() -> None:
    kernel = tilec.compile(gemm_bias_relu(256, 192, 128), out_idx=[-1], target="cuda:sm_90a")
    text = kernel.asm["tile-cuda"]
    assert "tile.wgmma" in text and "align = 1024 : i64" in text
    offsets = [int(x) for x in re.findall(r"tile\.shared_offset = (\d+)", text)]
    assert offsets and all(offset % 1024 == 0 for offset in offsets)
    assert "wgmma.mma_async" in kernel.get_kernel_source()


def test_loop_local_tiles_cpu_numerics() -> None:
    torch.manual_seed(6)
    x, w = torch.randn(4, 128, 256), torch.randn(128, 256)
    y = tilec.compile(loop_local_tiles(128, 4), out_idx=[-1], target="cpu")(x, w)
    torch.testing.assert_close(y.double(), loop_local_reference(x.double(), w.double()),
                               rtol=1e-5, atol=1e-5)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_loop_local_tiles_share_bytes_inside_the_loop(arch: str) -> None:
    kernel = tilec.compile(loop_local_tiles(128, 4), out_idx=[-1], target=f"cuda:{arch}")
    text = kernel.asm["tile-cuda"]
    # W's tile apart, the three tiles each iteration writes whole in one slot: 128 of 256 KiB
    assert "tile.shared_arena = {align = 128 : i64, bytes = 131072 : i64}" in text
    assert sorted(re.findall(r"tile\.shared_offset = (\d+)", text)) == \
        ["0", "65536", "65536", "65536"]
    assert kernel.artifact.launch["shared_bytes"] == 131072
