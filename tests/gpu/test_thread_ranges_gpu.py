"""tests/gpu/thread_range_kernels.py and range_chain_kernels.py on the GPU: blocks of 96 (and
160) threads, warp 0 and warps 1-2 running the two branches of `if T.get_thread_binding() <
32:`, and a block of 256 split four ways by an `elif` chain of two-sided ranges, against
float64, the outputs poisoned (NaN) first. Compiled in process (the whole compiler on the GPU
machine), or taken from TILEC_CACHE_DIR (precompile_frontend.py calls precompile)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from range_chain_kernels import PARTS, SPELLINGS, WIDTH, middle_range, range_chain  # noqa: E402
from range_chain_kernels import reference as chain_reference  # noqa: E402
from thread_range_kernels import MIXES, mix_rows_split, mix_rows_whole, reference  # noqa: E402

ROWS, HIDDEN = 37, 512
BLOCKS = [(mix_rows_split, 96), (mix_rows_split, 160), (mix_rows_split, 128),
          (mix_rows_whole, 96), (mix_rows_whole, 160)]


CHAIN_ROWS = 67
CHAIN_ARCHS = ("sm_90a", "sm_80")
MIDDLE_RANGES = [(64, 192), (224, 256), (0, 96)]


def precompile(target: str) -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR."""
    for kernel, threads in BLOCKS:
        kernel.compile(hidden=HIDDEN, threads=threads, target=target)
    for spelling in SPELLINGS:
        for arch in CHAIN_ARCHS:
            range_chain.compile(rows=CHAIN_ROWS, spelling=spelling, target=f"cuda:{arch}")
    for first, end in MIDDLE_RANGES:
        middle_range.compile(rows=CHAIN_ROWS, first=first, end=end, target=target)


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


def _check_chain(kernel, x: torch.Tensor) -> None:
    out = torch.full((x.shape[0], PARTS, WIDTH), float("nan"), device="cuda")
    sums = torch.full((x.shape[0], PARTS), float("nan"), device="cuda")
    kernel(x, out, sums)
    torch.cuda.synchronize()
    expected_out, expected_sums = chain_reference(x.double().cpu())
    for produced, expected in ((out, expected_out), (sums, expected_sums)):
        produced = produced.double().cpu()
        assert not produced.isnan().any(), "elements left unwritten"
        torch.testing.assert_close(produced, expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("arch", CHAIN_ARCHS)
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_range_chain_on_gpu(spelling: str, arch: str) -> None:
    """`if tx < 64 ... elif tx >= 64 and tx < 160 ... elif 160 <= tx < 192 ... else` and its
    other spellings: each range's fragments, reduction and named barrier over its threads."""
    if arch == "sm_90a" and torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("sm_90a needs a Hopper GPU")
    x = torch.randn((CHAIN_ROWS, PARTS, WIDTH), generator=torch.Generator().manual_seed(9))
    kernel = range_chain.compile(rows=CHAIN_ROWS, spelling=spelling, target=f"cuda:{arch}")
    _check_chain(kernel, x.cuda())


@pytest.mark.parametrize(("first", "end"), MIDDLE_RANGES)
def test_middle_range_on_gpu(first: int, end: int) -> None:
    x = torch.randn((CHAIN_ROWS, PARTS, WIDTH), generator=torch.Generator().manual_seed(10))
    kernel = middle_range.compile(rows=CHAIN_ROWS, first=first, end=end)
    _check_chain(kernel, x.cuda())
