"""flash_bwd_fused on the GPU: dK and dV from the dK / dV kernel and dQ added into a float32 sum
by its atomics (then scaled by flash_bwd_dq_convert), at the benchmark's tiles (128 keys x 64
queries, 256 threads: every gemm wgmma, dQ^T = K^T dS^T reading both MN-major) on ragged
lengths, causal and not, and with 2:1 grouped queries (several query heads' blocks adding into
one KV head's dK / dV and each head's dQ), each also with TILEC_DEFER_PIPELINE_GEMM_WAITS=1
(defer-pipeline-gemm-waits: its wgmma groups in flight until used; opt-in, first run here).
dK, dV and dQ are NaN-poisoned; each gradient is checked against float32 autograd relative to
its largest value, as the CPU test
tests/test_attention_kernels.py::test_fused_flash_bwd_matches_float32_autograd does.

`python tests/gpu/test_flash_bwd_fused_gpu.py precompile CACHE_DIR` compiles every case's
kernels for sm_90a into CACHE_DIR, so a device job runs them without the compiler. Each case's
errors go to the JSON file TILEC_FLASH_BWD_FUSED_RESULTS names, if set.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "attention"
sys.path.insert(0, str(EXAMPLES))

torch = pytest.importorskip("torch")

# the examples themselves, not tests/test_attention_kernels.py's copies: that module imports
# the compiler, which a device job running precompiled kernels leaves off the path
import flash_bwd  # noqa: E402
import flash_fwd  # noqa: E402

sys.path.insert(0, str(EXAMPLES.parents[1] / "benchmarks"))
from device_cli import compile_settings  # noqa: E402

TILES = {"block_M": 128, "block_N": 64, "num_stages": 2, "threads": 256}
FORWARD_TILES = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}
BATCH, DIM = 2, 128
# (causal, sequence length, query heads, KV heads): 1000 and 777 end inside a key and a query
# tile
SHAPES = [(False, 1000, 4, 4), (True, 1000, 4, 4), (True, 777, 4, 2), (False, 1024, 4, 2)]
DEFERRED = {"TILEC_DEFER_PIPELINE_GEMM_WAITS": "1"}
CASES = [(*shape, settings) for settings in ({}, DEFERRED) for shape in SHAPES]
RESULTS: list[dict] = []


def kernels(causal: bool, seq: int, heads: int, heads_kv: int, settings: dict[str, str]
            ) -> list:
    """The forward (O, LSE), preprocess, fused dK / dV / dQ-sum (compiled with `settings`)
    and dQ conversion kernels."""
    with compile_settings(settings):
        fused = flash_bwd.flash_bwd_fused(BATCH, heads, seq, DIM, causal, heads_kv=heads_kv,
                                          **TILES)
    return [flash_fwd.flash_fwd(BATCH, heads, seq, DIM, causal, heads_kv, **FORWARD_TILES),
            flash_bwd.flash_bwd_preprocess(BATCH, heads, seq, DIM), fused,
            flash_bwd.flash_bwd_dq_convert(BATCH, heads, seq, DIM)]


@pytest.fixture(scope="module", autouse=True)
def write_results() -> Iterator[None]:
    yield
    path = os.environ.get("TILEC_FLASH_BWD_FUSED_RESULTS")
    if path:
        device = torch.cuda.get_device_name() if torch.cuda.is_available() else None
        Path(path).write_text(json.dumps({"device": device, "cases": RESULTS}, indent=1))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")
@pytest.mark.parametrize(("causal", "seq", "heads", "heads_kv", "settings"), CASES,
                         ids=[f"{'causal' if c[0] else 'full'}-s{c[1]}-h{c[2]}-kv{c[3]}"
                              f"{'-deferred' if c[4] else ''}" for c in CASES])
def test_fused_flash_bwd_matches_float32_on_gpu(causal, seq, heads, heads_kv, settings) -> None:
    torch.manual_seed(seq + heads_kv + causal)
    q, do = (torch.randn(BATCH, seq, heads, DIM, device="cuda").half() for _ in range(2))
    k, v = (torch.randn(BATCH, seq, heads_kv, DIM, device="cuda").half() for _ in range(2))
    fwd, pre, fused, convert = kernels(causal, seq, heads, heads_kv, settings)
    o, lse = fwd.get_profiler().run_poisoned(q, k, v)
    delta = pre.get_profiler().run_poisoned(o, do)
    # run_poisoned runs a kernel twice: dK and dV from that, the sum from a call of its own
    dk, dv = fused.get_profiler().run_poisoned(q, k, v, do, lse, delta,
                                               torch.zeros(q.shape, device="cuda"))
    dq_sum = torch.zeros(q.shape, device="cuda")
    fused(q, k, v, do, lse, delta, dq_sum)
    dq = convert.get_profiler().run_poisoned(dq_sum)
    torch.cuda.synchronize()
    errors = {}
    for name, got, want in zip(("dq", "dk", "dv"), (dq, dk, dv),
                               flash_bwd.reference(q.cpu(), k.cpu(), v.cpu(), do.cpu(), causal),
                               strict=True):
        errors[name] = ((got.float().cpu() - want).abs().max() / want.abs().max()).item()
    RESULTS.append({"causal": causal, "seq": seq, "heads": heads, "heads_kv": heads_kv,
                    "settings": settings or "default", "relative_errors": errors})
    # fp16 inputs, P and dS: the two-kernel backward's errors were 6e-4 at S 4096
    assert all(error < 1e-2 for error in errors.values()), errors


if __name__ == "__main__" and sys.argv[1:2] == ["precompile"]:
    os.environ["TILEC_CACHE_DIR"] = str(Path(sys.argv[2]).resolve())
    os.environ["TILEC_TARGET"] = "cuda:sm_90a"
    for case in CASES:
        for kernel in kernels(*case):
            kernel.get_kernel_source()
        print("compiled", case, flush=True)
