"""The attention tile programs of examples/attention/ compute attention (CPU target, small and
ragged shapes, float32 reference, outputs poisoned first), so a speed measured on the GPU by
benchmarks/attention.py is of a right answer."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SMALL_TILE = {"block_M": 64, "block_N": 32, "num_stages": 2, "threads": 128}


def _example(name: str):
    spec = importlib.util.spec_from_file_location(f"attention_{name}",
                                                  ROOT / "examples" / "attention" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


flash_fwd = _example("flash_fwd")


@pytest.mark.parametrize(("dtype", "dim", "causal", "heads_kv", "seq"), [
    ("float16", 64, False, 2, 96),    # whole tiles
    ("float16", 64, True, 2, 80),     # causal, a ragged last tile of queries and keys
    ("bfloat16", 128, True, 1, 72),   # multi-query, bf16
    ("float16", 128, False, 1, 50),   # one ragged key tile, grouped 2:1
])
def test_flash_fwd_matches_float32(dtype, dim, causal, heads_kv, seq, tmp_path,
                                   monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    torch.manual_seed(3)
    heads, batch = 2, 2
    torch_dtype = getattr(torch, dtype)
    q = torch.randn(batch, seq, heads, dim).to(torch_dtype)
    k = torch.randn(batch, seq, heads_kv, dim).to(torch_dtype)
    v = torch.randn(batch, seq, heads_kv, dim).to(torch_dtype)
    kernel = flash_fwd.flash_fwd(batch, heads, seq, dim, causal, heads_kv, dtype, **SMALL_TILE)
    out = kernel.get_profiler().run_poisoned(q, k, v)
    expected = flash_fwd.reference(q, k, v, causal)
    tolerance = 2e-2 if dtype == "bfloat16" else 4e-3
    assert (out.float() - expected).abs().max().item() < tolerance


def test_benchmark_summary_takes_the_lowest_ratio() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import attention

    rows = [{"impl": attention.OWN_FORWARD, "seq_len": s, "causal": c, "ratio_to_cudnn": r,
             "passed": True} for s, c, r in [(1024, False, 0.1), (4096, False, 0.9),
                                             (4096, True, 0.7), (16384, True, 0.8)]]
    rows.append({"impl": attention.EXAMPLE_MAIN, "seq_len": 4096, "causal": False,
                 "tflops": 477.2, "passed": True})
    rows.append({"impl": attention.EXAMPLE_MAIN, "seq_len": 4096, "causal": True,
                 "tflops": 624.3, "passed": True})
    summary = attention.summary(rows)
    assert summary["fwd_d128_vs_cudnn"] == 0.7
    assert summary["tilelang_example_vs_tilelang"] == pytest.approx(2.0, rel=1e-3)
