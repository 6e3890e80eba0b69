"""One thread's own cp.async (T.ptx_cp_async + T.cp_async_barrier_noinc) on the GPU, checked
against float32 references on fresh random inputs with NaN-poisoned outputs: a tile every
thread fills, and a producer warpgroup filling a ring of swizzled wgmma operand tiles for a
consumer warpgroup's gemm (TileLang's MLA producer pattern). The kernels:
tests/gpu/thread_copy_kernels.py; compiled in process, or taken from TILEC_CACHE_DIR."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

sys.path.insert(0, str(Path(__file__).resolve().parent))

from thread_copy_kernels import cp_async_gemm, cp_async_scale  # noqa: E402


@pytest.mark.parametrize(("M", "K"), [(256, 512), (100, 200)])
def test_cp_async_tile(M: int, K: int) -> None:  # noqa: N803
    a = torch.randn(M, K, device="cuda").half()
    b = cp_async_scale.compile(M=M, K=K, scale=3.0).get_profiler().run_poisoned(a)
    torch.testing.assert_close(b.float(), a.float() * 3.0, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(("M", "N", "K"), [(256, 256, 512), (128, 192, 320)])
def test_cp_async_ring_feeds_wgmma(M: int, N: int, K: int) -> None:  # noqa: N803
    a = torch.randn(M, K, device="cuda").half()
    b = torch.randn(N, K, device="cuda").half()
    c = cp_async_gemm.compile(M=M, N=N, K=K).get_profiler().run_poisoned(a, b)
    torch.testing.assert_close(c, a.float() @ b.float().T, rtol=1e-3, atol=2e-2)
