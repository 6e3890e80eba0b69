"""tests/gpu/slice_kernels.py on the GPU (sm_90a): gemms reading column slices of shared tiles
in place (K-major for the scores, transposed for P V, halves of a cp.async pipeline's slots)
and, with `shift`, slices off a box boundary through copies of their own, and slices of one
stage of a 3-d stage buffer (staged_slices), against float64 with
the outputs poisoned (NaN) first. Compiled in process (the whole compiler on the GPU machine),
or taken from TILEC_CACHE_DIR (precompile_frontend.py calls precompile)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from slice_kernels import (  # noqa: E402
    mla_slices,
    reference,
    sliced_gemm,
    staged_reference,
    staged_slices,
)

HEADS, DIM, TAIL, BLOCK_N = 64, 512, 64, 64
MLA_TOKENS, SHIFTS, STAGED_TOKENS = [64, 300], [0, 32], [128, 200]
SLICED_GEMM = {"M": 1000, "N": 520, "K": 1152}
HOPPER_ONLY = True  # wgmma: precompile_frontend.py compiles these for TMA targets only


def precompile(target: str) -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR."""
    for shift in SHIFTS:
        for tokens in MLA_TOKENS:
            mla_slices.compile(shift=shift, tokens=tokens, target=target)
    sliced_gemm.compile(**SLICED_GEMM, target=target)
    for tokens in STAGED_TOKENS:
        staged_slices.compile(tokens=tokens, target=target)


@pytest.mark.parametrize("tokens", MLA_TOKENS)
@pytest.mark.parametrize("shift", SHIFTS)
def test_mla_slices_on_gpu(shift: int, tokens: int) -> None:
    generator = torch.Generator().manual_seed(11 + shift + tokens)
    q = (torch.randn((HEADS, DIM + TAIL), generator=generator) / 8).half()
    kv = torch.randn((tokens, DIM + TAIL), generator=generator).half()
    compiled = mla_slices.compile(shift=shift, tokens=tokens)
    assert compiled.asm["tile-cuda"].count("tile.read_in_place") == (7 if shift == 0 else 5)
    s, o = compiled.get_profiler().run_poisoned(q.cuda(), kv.cuda())
    torch.cuda.synchronize()
    expected_s, expected_o = reference(q, kv, DIM, BLOCK_N, shift)
    for produced in (s, o):
        assert not produced.isnan().any(), "elements left unwritten"
    torch.testing.assert_close(s.double().cpu(), expected_s, rtol=1e-4, atol=1e-4)
    # P is S rounded to float16: a product near a rounding boundary may round the other way
    torch.testing.assert_close(o.double().cpu(), expected_o, rtol=2e-3, atol=2e-2)


def test_sliced_gemm_on_gpu() -> None:
    generator = torch.Generator().manual_seed(3)
    a = torch.randn((SLICED_GEMM["M"], SLICED_GEMM["K"]), generator=generator).half()
    b = torch.randn((SLICED_GEMM["N"], SLICED_GEMM["K"]), generator=generator).half()
    compiled = sliced_gemm.compile(**SLICED_GEMM)
    assert compiled.asm["tile-cuda"].count("tile.read_in_place") == 4
    c = compiled.get_profiler().run_poisoned(a.cuda(), b.cuda())
    torch.cuda.synchronize()
    assert not c.isnan().any(), "elements left unwritten"
    torch.testing.assert_close(c.double().cpu(), a.double() @ b.double().T, rtol=1e-4, atol=2e-3)


@pytest.mark.parametrize("tokens", STAGED_TOKENS)
def test_staged_slices_on_gpu(tokens: int) -> None:
    """The stage slices' descriptors start at stage * 32 KiB (KV) / 8 KiB (tail) plus their
    column box: a wrong stage offset reads the other stage's block."""
    generator = torch.Generator().manual_seed(5 + tokens)
    q = (torch.randn((HEADS, 256 + TAIL), generator=generator) / 8).half()
    kv = torch.randn((tokens, 256 + TAIL), generator=generator).half()
    compiled = staged_slices.compile(tokens=tokens)
    assert compiled.asm["tile-cuda"].count("tile.read_in_place") == 6
    s, o = compiled.get_profiler().run_poisoned(q.cuda(), kv.cuda())
    torch.cuda.synchronize()
    expected_s, expected_o = staged_reference(q, kv)
    for produced in (s, o):
        assert not produced.isnan().any(), "elements left unwritten"
    torch.testing.assert_close(s.double().cpu(), expected_s, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(o.double().cpu(), expected_o, rtol=2e-3, atol=2e-2)
