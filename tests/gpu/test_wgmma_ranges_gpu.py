"""tests/gpu/wgmma_range_kernels.py on the GPU (sm_90a): a GEMM run by a thread range off the
hardware's warpgroups (threads 32..287 and 64..191: mma.sync) and by warpgroups 1 and 2
(wgmma), the threads before the range scaling a vector meanwhile, ragged sizes, against
float64 with the outputs poisoned (NaN) first. Planned on wgmma, the first two left every
element of C undefined (or hung: wgmma by warps that are no warpgroup). Compiled in process
(the whole compiler on the GPU machine), or taken from TILEC_CACHE_DIR (`precompile`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from wgmma_range_kernels import RANGES, VECTOR, gemm_in_a_range, reference  # noqa: E402

SIZES = {"M": 200, "N": 300, "K": 520}  # ragged M and N, K not a multiple of block_K
HOPPER_ONLY = True  # wgmma: precompile_frontend.py compiles these for TMA targets only


def _compile(name: str, target: str | None = None):
    first, end, threads = RANGES[name]
    extra = {} if target is None else {"target": target}
    return gemm_in_a_range.compile(**SIZES, first=first, end=end, threads=threads, **extra)


def precompile(target: str) -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR."""
    for name in RANGES:
        _compile(name, target)


@pytest.mark.parametrize("name", list(RANGES))
def test_range_gemm_on_gpu(name: str) -> None:
    generator = torch.Generator().manual_seed(RANGES[name][0] + RANGES[name][2])
    a = torch.randn((SIZES["M"], SIZES["K"]), generator=generator).half()
    b = torch.randn((SIZES["K"], SIZES["N"]), generator=generator).half()
    x = torch.randn((VECTOR,), generator=generator)
    blocks = (-(-SIZES["M"] // 128), -(-SIZES["N"] // 128))
    c = torch.full((SIZES["M"], SIZES["N"]), float("nan"), device="cuda")
    y = torch.full((*blocks, VECTOR), float("nan"), device="cuda")
    kernel = _compile(name)
    assert ("wgmma.mma_async" in kernel.asm["ptx"]) == (RANGES[name][0] % 128 == 0)
    kernel(a.cuda(), b.cuda(), x.cuda(), c, y)
    torch.cuda.synchronize()
    assert not c.isnan().any() and not y.isnan().any(), "elements left unwritten"
    expected_c, expected_y = reference(a, b, x, blocks)
    torch.testing.assert_close(c.double().cpu(), expected_c, rtol=1e-3, atol=2e-3)
    torch.testing.assert_close(y.double().cpu(), expected_y, rtol=0, atol=0)
