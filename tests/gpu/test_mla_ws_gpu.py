"""tests/gpu/mla_ws_kernels.py on the GPU: the warp-specialized MLA decode of TileLang's
example_mla_decode_ws.py, reduced, against its program in float64 (P rounded to float16 where
the program stores it), the output poisoned (NaN) first. A tile handed between warpgroups too
early (P, alpha, a ring slot, the row sums) puts a whole block of keys' weights wrong, far past
the tolerance, and usually differs from run to run: three runs must agree bit for bit."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from mla_ws_kernels import HEADS, PE_DIM, reference, ws_mla_decode  # noqa: E402

HOPPER_ONLY = True  # wgmma: precompile_frontend.py compiles these for TMA targets only
# batch, keys, dim: one round of the two-stage ring per parity, eight rounds, more blocks than
# SMs, halves of two 64-column boxes each (the example's are four)
SHAPES = [(2, 256, 128), (3, 1024, 128), (264, 512, 128), (4, 512, 256)]
# float16 output (half an ulp: 2**-11 relative) and the kernel's float32 sums; an early
# hand-off errs by a block's share of the weights (> 1e-2 here)
ATOL, RTOL = 5e-4, 2.0**-10


def precompile(target: str) -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR."""
    for batch, keys, dim in SHAPES:
        ws_mla_decode.compile(batch, keys, dim, target=target)


@pytest.mark.parametrize(("batch", "keys", "dim"), SHAPES)
def test_ws_mla_decode_on_gpu(batch: int, keys: int, dim: int) -> None:
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("wgmma and mbarrier waits need a Hopper GPU")
    generator = torch.Generator().manual_seed(batch * 1000 + keys)
    q, q_pe, kv, k_pe = (torch.randn(shape, generator=generator).half().cuda() for shape in (
        (batch, HEADS, dim), (batch, HEADS, PE_DIM), (batch, keys, dim), (batch, keys, PE_DIM)))
    kernel = ws_mla_decode.compile(batch, keys, dim)
    expected = reference(q, q_pe, kv, k_pe)
    runs = []
    for _ in range(3):
        out = torch.full((batch, HEADS, dim), float("nan"), dtype=torch.float16, device="cuda")
        kernel(q, q_pe, kv, k_pe, out)
        torch.cuda.synchronize()
        runs.append(out.cpu())
    produced = runs[0].double()
    assert not produced.isnan().any(), "elements left unwritten"
    torch.testing.assert_close(produced, expected, atol=ATOL, rtol=RTOL)
    for number, run in enumerate(runs[1:], 2):
        assert torch.equal(run, runs[0]), f"run {number} differs from run 1: a race"
