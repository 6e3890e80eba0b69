"""The kernels of benchmarks/fused_gemm.py compute what their torch expressions do (CPU target,
ragged small shapes, float32 reference), so a speed measured on the GPU is of a right answer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import fused_gemm  # noqa: E402


@pytest.mark.parametrize("case", fused_gemm.CASES, ids=lambda case: case.name)
def test_fused_gemm_kernel_matches_torch(case, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    torch.manual_seed(1)
    shape = fused_gemm.CHECK_SHAPES.get(case.name, fused_gemm.DEFAULT_CHECK_SHAPES)[0]
    inputs = case.inputs(torch, shape, "cpu")
    expected = case.reference(*[t.float() for t in inputs])
    kernel = case.kernel.compile(*inputs, target="cpu", **fused_gemm.SMALL_TILE,
                                 **({"per_op": True} if case.per_op else {}))
    result = kernel.get_profiler().run_poisoned(*inputs)
    assert fused_gemm._relative_error(result, expected) < 1e-2
