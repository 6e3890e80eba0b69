"""check-thread-branches' accepted forms on the GPU: tile statements under conditions every
thread agrees on (a block index, a shared flag thread 0 set before a barrier) and per-thread
stores under `tx % 2 == 0`, against float64, outputs poisoned (NaN) first
(tests/test_bad_inputs_thread_branches.py runs the same kernel on lavapipe)."""

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


def test_uniform_conditions_on_gpu() -> None:
    kernel = tilec.compile(uniform_conditions(), target="cuda")
    a = torch.randn((4, N), generator=torch.Generator().manual_seed(5)).cuda()
    b = torch.full((4, N), float("nan"), device="cuda")
    c = torch.full((4, N), float("nan"), device="cuda")
    kernel(a, b, c)
    torch.cuda.synchronize()
    expected_b, expected_c = uniform_reference(a.double().cpu())
    for produced, expected in ((b, expected_b), (c, expected_c)):
        produced = produced.double().cpu()
        assert not produced.isnan().any(), "elements left unwritten"
        torch.testing.assert_close(produced, expected, rtol=1e-6, atol=1e-6)
