"""The profiler on the CPU target: random inputs from the kernel's parameters, perf_counter
timing, assert_allclose against a reference (and failing against a wrong one)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

import tilec

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from frontend_kernels import row_softmax, scale_shift  # noqa: E402


@pytest.fixture
def softmax_kernel(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    return tilec.compile(row_softmax(8, 64), out_idx=[-1], target="cpu")


def test_assert_allclose_accepts_the_right_reference(softmax_kernel) -> None:
    profiler = softmax_kernel.get_profiler()
    profiler.assert_allclose(lambda x: torch.softmax(x.double(), dim=1), atol=1e-5, rtol=1e-5)


def test_assert_allclose_rejects_a_wrong_reference(softmax_kernel) -> None:
    profiler = softmax_kernel.get_profiler()
    with pytest.raises(AssertionError, match="elements differ"):
        profiler.assert_allclose(lambda x: torch.softmax(x.double(), dim=0))


def test_do_bench_times_the_kernel_and_a_function(softmax_kernel) -> None:
    profiler = softmax_kernel.get_profiler()
    kernel_ms = profiler.do_bench(n_warmup=1, n_repeat=5)
    torch_ms = profiler.do_bench(lambda x: torch.softmax(x, dim=1), warmup=1, rep=5)
    assert kernel_ms > 0 and torch_ms > 0


def test_inputs_follow_the_parameters(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    kernel = tilec.compile(scale_shift(16, 32), out_idx=[-1], target="cpu")
    a, scale, shift = kernel.get_profiler().inputs()
    assert a.shape == (16, 32) and scale.shape == (16,) and shift.shape == (32,)
    assert a.dtype == torch.float32 and a.std() > 0.5  # random normals, never zeros
