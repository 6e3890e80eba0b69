"""tests/gpu/mma_sync_fallback_kernels.py on the GPU (sm_90a) with and without
TILEC_MMA_SYNC_FALLBACK=1: the gemms wgmma cannot take, on ldmatrix + mma.sync (the column
slice of Q read in place) or on the CUDA cores, against float64 with the outputs poisoned (NaN)
first. Compiled in process (the whole compiler on the GPU machine), or taken from
TILEC_CACHE_DIR (`precompile`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from mma_sync_fallback_kernels import one_warp_product, sliced_scores  # noqa: E402

ROWS = [96, 100]


def precompile(target: str) -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR (the caller restores os.environ)."""
    for opt_in in (True, False):
        os.environ.pop("TILEC_MMA_SYNC_FALLBACK", None)
        if opt_in:
            os.environ["TILEC_MMA_SYNC_FALLBACK"] = "1"
        sliced_scores.compile(target=target)
        for rows in ROWS:
            one_warp_product.compile(M=rows, target=target)


@pytest.mark.parametrize("opt_in", [True, False], ids=["mma_sync", "cuda_cores"])
def test_sliced_scores_on_gpu(monkeypatch, opt_in: bool) -> None:
    if opt_in:
        monkeypatch.setenv("TILEC_MMA_SYNC_FALLBACK", "1")
    generator = torch.Generator().manual_seed(11)
    q = torch.randn((64, 576), generator=generator).bfloat16()
    kv = torch.randn((32, 512), generator=generator).bfloat16()
    s = torch.full((64, 32), float("nan"), device="cuda")
    kernel = sliced_scores.compile()
    assert ("mma.sync" in kernel.get_kernel_source()) == opt_in
    kernel(q.cuda(), kv.cuda(), s)
    torch.cuda.synchronize()
    expected = q[:, :512].double() @ kv.double().T
    torch.testing.assert_close(s.double().cpu(), expected, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("opt_in", [True, False], ids=["mma_sync", "cuda_cores"])
@pytest.mark.parametrize("rows", ROWS)
def test_one_warp_product_on_gpu(monkeypatch, opt_in: bool, rows: int) -> None:
    if opt_in:
        monkeypatch.setenv("TILEC_MMA_SYNC_FALLBACK", "1")
    generator = torch.Generator().manual_seed(rows)
    a = torch.randn((rows, 32), generator=generator).half()
    b = torch.randn((32, 32), generator=generator).half()
    c = torch.full((rows, 32), float("nan"), device="cuda")
    kernel = one_warp_product.compile(M=rows)
    assert ("mma.sync" in kernel.get_kernel_source()) == opt_in
    kernel(a.cuda(), b.cuda(), c)
    torch.cuda.synchronize()
    torch.testing.assert_close(c.double().cpu(), a.double() @ b.double(), rtol=1e-4, atol=1e-3)
