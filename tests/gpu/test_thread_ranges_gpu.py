"""tests/gpu/thread_range_kernels.py on the GPU: blocks of 96 (and 160) threads, and warp 0 and
warps 1-2 running the two branches of `if T.get_thread_binding() < 32:`, against float64, the
outputs poisoned (NaN) first. Compiled in process (the whole compiler on the GPU machine), or
taken from TILEC_CACHE_DIR (precompile_frontend.py calls precompile)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from thread_range_kernels import MIXES, mix_rows_split, mix_rows_whole, reference  # noqa: E402

ROWS, HIDDEN = 37, 512
BLOCKS = [(mix_rows_split, 96), (mix_rows_split, 160), (mix_rows_split, 128),
          (mix_rows_whole, 96), (mix_rows_whole, 160)]


def precompile(target: str) -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR."""
    for kernel, threads in BLOCKS:
        kernel.compile(hidden=HIDDEN, threads=threads, target=target)


@pytest.mark.parametrize(("kernel", "threads"), BLOCKS,
                         ids=["split-96", "split-160", "split-128", "whole-96", "whole-160"])
def test_thread_ranges_on_gpu(kernel, threads: int) -> None:
    generator = torch.Generator().manual_seed(5)
    x = torch.randn((ROWS, MIXES, HIDDEN), generator=generator).cuda()
    s = torch.randn((ROWS, MIXES), generator=generator).cuda()
    compiled = kernel.compile(hidden=HIDDEN, threads=threads)
    p, o = compiled.get_profiler().run_poisoned(x, s)
    torch.cuda.synchronize()
    expected_p, expected_o = reference(x.double().cpu(), s.double().cpu())
    for produced, expected in ((p, expected_p), (o, expected_o)):
        produced = produced.double().cpu()
        assert not produced.isnan().any(), "elements left unwritten"
        torch.testing.assert_close(produced, expected, rtol=1e-5, atol=1e-4)
