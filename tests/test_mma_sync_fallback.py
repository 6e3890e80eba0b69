"""The opt-in TILEC_MMA_SYNC_FALLBACK=1 on sm_90a: gemms that wgmma cannot take (N = 32, 32-row
tiles, one warp) run on ldmatrix + mma.sync instead of the CUDA cores, as TileLang runs them,
and their column-slice operands (`Q_shared[:, :512]`) are read in place.

Written as TileLang's sparse MLA backward (deepseek_v32/sparse_mla_bwd.py: 64 x 32 scores over
K = 512 on 256 threads) and its kda kernels (threads=32) write them
(tests/gpu/mma_sync_fallback_kernels.py). Checked here through the tile IR and ptxas (sm_90a):
the CPU target does not take these paths; tests/gpu/test_mma_sync_fallback_gpu.py runs them
against float64 on the GPU.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tilec.compiler.targets.cuda import ptxas_path
from tilec.jit import JITFunction, JITKernel

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from mma_sync_fallback_kernels import one_warp_product, sliced_scores  # noqa: E402

pytestmark = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) needed")


def _compile(kernel: JITFunction, **sizes) -> JITKernel:
    return kernel.compile(**sizes, target="cuda:sm_90a")


@pytest.mark.parametrize("opt_in", [False, True])
def test_narrow_gemms_on_mma_sync(opt_in: bool, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    if opt_in:
        monkeypatch.setenv("TILEC_MMA_SYNC_FALLBACK", "1")
    scores = _compile(sliced_scores)
    product = _compile(one_warp_product, M=96)
    for kernel in (scores, product):
        ptx = kernel.get_kernel_source()
        assert "wgmma" not in ptx
        assert ("mma.sync.aligned.m16n8k16" in ptx) == opt_in
        assert ("ldmatrix" in ptx) == opt_in
        assert kernel.artifact.binary.startswith(b"\x7fELF")
    tile_ir = scores.artifact.asm["tile-cuda"]
    # the slice read in place: no 64 x 512 tile of its own in the arena
    assert ("tile.read_in_place" in tile_ir) == opt_in
    arena = 64 * 576 * 2 + 32 * 512 * 2 + (0 if opt_in else 64 * 512 * 2)
    assert f"bytes = {arena}" in tile_ir


def _body(ptx: str) -> list[str]:
    """PTX without its header lines (.version, .target) and comments."""
    return [line for line in ptx.splitlines()
            if not line.startswith((".version", ".target", "//"))]


def test_one_warp_product_is_the_sm80_kernel(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """With the opt-in, the one-warp product's sm_90a PTX is its sm_80 PTX (the mma.sync
    kernels tests/gpu/test_mma_sync_kernels.py runs) but for the header."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    sm80 = one_warp_product.compile(M=96, target="cuda:sm_80").get_kernel_source()
    monkeypatch.setenv("TILEC_MMA_SYNC_FALLBACK", "1")
    sm90a = _compile(one_warp_product, M=96).get_kernel_source()
    assert ".target sm_90a" in sm90a and ".target sm_80" in sm80
    assert _body(sm90a) == _body(sm80)


def test_slices_in_place_on_the_cuda_cores(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """TILEC_SIMT_SLICES_IN_PLACE=1 without the fallback: the CUDA cores' gemms read the slice
    from the larger tile (lower-gemm-simt), so the arena has no copy of it either."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_SIMT_SLICES_IN_PLACE", "1")
    scores = _compile(sliced_scores)
    assert "mma.sync" not in scores.get_kernel_source()
    assert f"bytes = {64 * 576 * 2 + 32 * 512 * 2}" in scores.artifact.asm["tile-cuda"]
