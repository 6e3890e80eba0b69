"""The attention defaults on the GPU: with fast math, sm_90a flushes f32 denormals and rotates
the attention loop (mask-scores-after-gemm first), so tilec's flash_fwd and TileLang's form of
attention (scores initialised to 0 / -inf, Q K^T added) run rotated at the benchmark's tiles
(128 x 128, 2 stages, 256 threads). Each is checked against float32 attention on ragged
lengths, causal and not, its output NaN-poisoned, beside the loop as written
(TILEC_ROTATE_ATTENTION_LOOP=0 TILEC_FAST_MATH_FTZ=0), so a failure tells whether the default
caused it. The opt-in ping-pong on the rotated loop (TILEC_WARPGROUP_PINGPONG=1: the two
consumer warpgroups take turns issuing both gemms of an iteration, on named barriers) runs the
same checks, at 32 heads too, so each block of the persistent grid runs several tiles (the
turns' barriers must be left balanced between them: a wrong count hangs or races).

The kernels compile here, in process (the compiler must be installed: a device job's
stage.sh); `python tests/gpu/test_attention_defaults_gpu.py precompile N` compiles case N
into TILEC_CACHE_DIR first, so a job can compile the cases side by side. Each case's error goes
to the JSON file TILEC_ATTENTION_DEFAULTS_RESULTS names, if set.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS.parent / "benchmarks"))

torch = pytest.importorskip("torch")
pytest.importorskip("tilec.compiler")  # compiles at run time

from device_cli import compile_settings  # noqa: E402
from test_attention_kernels import flash_fwd, mask_initialised_attention  # noqa: E402

TILES = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}
AS_WRITTEN = {"TILEC_ROTATE_ATTENTION_LOOP": "0", "TILEC_FAST_MATH_FTZ": "0"}
PINGPONG = {"TILEC_WARPGROUP_PINGPONG": "1"}
BATCH, HEADS, MANY_HEADS = 2, 4, 32
# (source, head dim, causal, sequence length, settings, heads): ragged lengths end inside a
# key tile; at MANY_HEADS 2 x 32 x 8 = 512 query tiles, more than the persistent grid's blocks
CASES = [
    ("flash_fwd", 128, False, 1000, {}, HEADS),
    ("flash_fwd", 128, True, 1000, {}, HEADS),
    ("flash_fwd", 64, True, 777, {}, HEADS),
    ("tilelang_form", 128, False, 1000, {}, HEADS),
    ("tilelang_form", 128, True, 1000, {}, HEADS),
    ("flash_fwd", 128, True, 1000, AS_WRITTEN, HEADS),
    ("flash_fwd", 128, False, 1000, PINGPONG, MANY_HEADS),
    ("flash_fwd", 128, True, 1000, PINGPONG, MANY_HEADS),
    ("flash_fwd", 64, True, 777, PINGPONG, HEADS),
    ("tilelang_form", 128, True, 1000, PINGPONG, MANY_HEADS),
]


RESULTS: list[dict] = []


@pytest.fixture(scope="module", autouse=True)
def write_results() -> Iterator[None]:
    yield
    path = os.environ.get("TILEC_ATTENTION_DEFAULTS_RESULTS")
    if path:
        device = torch.cuda.get_device_name() if torch.cuda.is_available() else None
        Path(path).write_text(json.dumps({"device": device, "cases": RESULTS}, indent=1))


def compile_case(source: str, dim: int, causal: bool, seq: int, settings: dict[str, str],
                 heads: int):
    """The case's kernel, checked to be rotated with exp2 flushed unless written as is, and to
    take turns where the ping-pong is opted in."""
    with compile_settings(settings):
        if source == "flash_fwd":
            kernel = flash_fwd.flash_fwd(BATCH, heads, seq, dim, causal, **TILES)
        else:
            kernel = mask_initialised_attention(BATCH, heads, seq, dim, causal, **TILES)
    default = settings != AS_WRITTEN
    assert kernel.asm["tile-cuda"].count("tile.deferred_wait") == (2 if default else 0)
    assert ("ex2.approx.ftz.f32" in kernel.get_kernel_source()) == default
    assert ("together = true" in kernel.asm["tile-cuda"]) == (settings == PINGPONG)
    return kernel


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")
@pytest.mark.parametrize(("source", "dim", "causal", "seq", "settings", "heads"), CASES,
                         ids=[f"{c[0]}-d{c[1]}-{'causal' if c[2] else 'full'}-s{c[3]}-h{c[5]}"
                              f"{'-as_written' if c[4] == AS_WRITTEN else ''}"
                              f"{'-pingpong' if c[4] == PINGPONG else ''}" for c in CASES])
def test_attention_default_matches_float32(source, dim, causal, seq, settings, heads) -> None:
    torch.manual_seed(seq + dim + causal)
    q, k, v = (torch.randn(BATCH, seq, heads, dim, device="cuda").half() for _ in range(3))
    kernel = compile_case(source, dim, causal, seq, settings, heads)
    result = kernel.get_profiler().run_poisoned(q, k, v)
    out = result[0] if isinstance(result, (tuple, list)) else result
    torch.cuda.synchronize()
    expected = flash_fwd.reference(q.cpu(), k.cpu(), v.cpu(), causal)
    error = (out.float().cpu() - expected).abs().max().item()
    RESULTS.append({"source": source, "dim": dim, "causal": causal, "seq": seq, "heads": heads,
                    "settings": settings or "default", "max_error": error})
    assert error < 1e-2, f"max error {error}"  # fp16 output and P; a wrong tile is O(0.1)


if __name__ == "__main__" and sys.argv[1:2] == ["precompile"]:
    compile_case(*CASES[int(sys.argv[2])])
