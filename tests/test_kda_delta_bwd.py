"""TileLang's kda backward state kernel (kda/chunk_delta_bwd.py, as the example writes it:
tests/gpu/kda_kernels.py) on the CPU target against its float64 reference, with block_DV 32
(the example's own configuration: gemms of N = 32) and 64, over several chunks so that the
state carried from chunk to chunk is checked. tests/gpu/test_kda_delta_bwd_gpu.py runs it on the
GPU. Why the inputs are not the example's: see kda_kernels (its recurrence overflows to NaN at
the example's S = 8192 in float64 too)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from kda_kernels import delta_bwd_dhu, reference, stable_inputs  # noqa: E402

SIZES = dict(B=1, S=256, H=2, DK=64, DV=64)


@pytest.mark.parametrize("block_dv", [32, 64])
def test_kda_delta_bwd_on_cpu(block_dv: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_TARGET", "cpu")
    scale = SIZES["DK"] ** -0.5
    inputs = stable_inputs(**SIZES, seed=block_dv)
    kernel = delta_bwd_dhu(**SIZES, scale=scale, block_DV=block_dv, threads=128, num_stages=1)
    outputs = kernel(*inputs)
    for name, got, expected in zip(("dh", "dh0", "dv2"), outputs, reference(*inputs, scale),
                                   strict=True):
        got = got.double()
        assert got.isfinite().all(), name
        # bfloat16 outputs (dh, dv2): 2^-8 of the largest magnitude; dh0 is float32
        tolerance = (2e-3 if name == "dh0" else 8e-3) * expected.abs().max().item()
        torch.testing.assert_close(got, expected, rtol=0, atol=tolerance, msg=name)
