"""check-thread-branches' accepted forms on the GPU: tile statements under conditions every
thread agrees on (a block index, a shared flag thread 0 set before a barrier), per-thread
stores under `tx % 2 == 0` and per-thread local copies under `tx < 100`, against float64,
outputs poisoned (NaN) first (tests/test_bad_inputs_thread_branches.py runs the same kernel on
lavapipe). Compiled in process, or taken from TILEC_CACHE_DIR (precompile_frontend.py
calls precompile)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from test_bad_inputs_thread_branches import N, uniform_conditions, uniform_reference  # noqa: E402

import tilec  # noqa: E402


def precompile(target: str) -> None:
    """The kernel this test compiles, into TILEC_CACHE_DIR."""
    tilec.compile(uniform_conditions(), target=target)


def test_uniform_conditions_on_gpu() -> None:
    kernel = tilec.compile(uniform_conditions(), target="cuda")
    a = torch.randn((4, N), generator=torch.Generator().manual_seed(5)).cuda()
    outputs = [torch.full((4, N), float("nan"), device="cuda") for _ in range(3)]
    kernel(a, *outputs)
    torch.cuda.synchronize()
    for produced, expected in zip(outputs, uniform_reference(a.double().cpu()), strict=True):
        produced = produced.double().cpu()
        assert not produced.isnan().any(), "elements left unwritten"
        torch.testing.assert_close(produced, expected, rtol=1e-6, atol=1e-6)
