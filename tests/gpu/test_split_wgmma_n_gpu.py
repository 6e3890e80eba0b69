"""tests/gpu/split_n_kernels.py on the GPU (sm_90a) with TILEC_SPLIT_WGMMA_N=1: a 64-row gemm
whose N is split between the block's warpgroups (each an m64n(N / warpgroups) wgmma reading
its share of B), then a row max and sum across both warpgroups' columns, and MLA decode's
block (those scores, P cast into registers that each warpgroup holds whole, P V split over
the value columns), against float64 with the outputs poisoned (NaN) first. A warpgroup
reading the wrong share of B, or a reduction missing the other warpgroup's columns, gives
wrong P or maxima. Compiled in process (the whole compiler on the GPU machine), or taken from
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

from split_n_kernels import (  # noqa: E402
    decode_reference,
    decode_step,
    reference,
    scores_softmax,
)

SHAPE = {"M": 200, "N": 300}
CONFIGS = [
    {"block_N": 64},
    {"block_N": 128, "transpose_K": False},
    {"block_N": 128, "threads": 512},
    {"block_N": 64, "threads": 384},
    {"block_N": 256, "stages": 3},
]
TOKENS = [64, 300]
HOPPER_ONLY = True  # wgmma: precompile_frontend.py compiles these for TMA targets only


def precompile(target: str) -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR (the caller restores os.environ)."""
    os.environ["TILEC_SPLIT_WGMMA_N"] = "1"
    for config in CONFIGS:
        scores_softmax.compile(**SHAPE, **config, target=target)
    for tokens in TOKENS:
        decode_step.compile(N=tokens, target=target)


@pytest.mark.parametrize("config", CONFIGS,
                         ids=["k_major", "mn_major", "four_warpgroups", "384_threads", "n256"])
def test_split_n_scores_softmax_on_gpu(monkeypatch, config: dict) -> None:
    monkeypatch.setenv("TILEC_SPLIT_WGMMA_N", "1")
    transpose_k = config.get("transpose_K", True)
    generator = torch.Generator().manual_seed(7 + config["block_N"] + config.get("threads", 0))
    q = torch.randn((SHAPE["M"], 128), generator=generator).half()
    k = torch.randn((SHAPE["N"], 128) if transpose_k else (128, SHAPE["N"]),
                    generator=generator).half()
    compiled = scores_softmax.compile(**SHAPE, **config)
    assert "split_n = true" in compiled.asm["tile-cuda"]
    p, maxima = compiled.get_profiler().run_poisoned(q.cuda(), k.cuda())
    torch.cuda.synchronize()
    assert not p.isnan().any() and not maxima.isnan().any(), "elements left unwritten"
    expected_p, expected_max = reference(q, k, config["block_N"], transpose_k)
    torch.testing.assert_close(maxima.double().cpu(), expected_max, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(p.double().cpu(), expected_p, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("tokens", TOKENS)
def test_split_n_decode_step_on_gpu(monkeypatch, tokens: int) -> None:
    monkeypatch.setenv("TILEC_SPLIT_WGMMA_N", "1")
    generator = torch.Generator().manual_seed(17 + tokens)
    q = torch.randn((64, 256), generator=generator).half()
    kv = torch.randn((tokens, 256), generator=generator).half()
    compiled = decode_step.compile(N=tokens)
    assert compiled.asm["tile-cuda"].count("split_n = true") == 2
    o = compiled.get_profiler().run_poisoned(q.cuda(), kv.cuda())
    torch.cuda.synchronize()
    assert not o.isnan().any(), "elements left unwritten"
    torch.testing.assert_close(o.double().cpu(), decode_reference(q, kv), rtol=2e-3, atol=2e-3)
