"""TileLang's kda backward state kernel (tests/gpu/kda_kernels.py, kda/chunk_delta_bwd.py as
the example writes it) on the GPU against its float64 reference, outputs NaN-poisoned: the
example's own configuration (block_DV 32, 128 threads, 1 stage: gemms of N = 32, which wgmma
declines) on the CUDA cores and with TILEC_MMA_SYNC_FALLBACK=1 on mma.sync, and block_DV 64
(wgmma). Inputs that keep the recurrence finite (kda_kernels.stable_inputs): the example's
overflow to NaN at S = 8192 in any implementation."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from kda_kernels import delta_bwd_dhu, reference, stable_inputs  # noqa: E402

SIZES = dict(B=1, S=1024, H=4, DK=128, DV=128)
CONFIGS = [(32, 128, 1, "0"), (32, 128, 1, "1"), (32, 256, 0, "1"), (64, 256, 0, "0")]
SCALE = SIZES["DK"] ** -0.5


def precompile(target: str) -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR (the caller restores os.environ)."""
    for block_dv, threads, stages, fallback in CONFIGS:
        os.environ["TILEC_MMA_SYNC_FALLBACK"] = fallback
        delta_bwd_dhu.compile(**SIZES, scale=SCALE, block_DV=block_dv, threads=threads,
                              num_stages=stages, target=target)


@pytest.mark.parametrize(("block_dv", "threads", "stages", "fallback"), CONFIGS)
def test_kda_delta_bwd_on_gpu(monkeypatch, block_dv: int, threads: int, stages: int,
                              fallback: str) -> None:
    monkeypatch.setenv("TILEC_MMA_SYNC_FALLBACK", fallback)
    inputs = stable_inputs(**SIZES, seed=block_dv + threads)
    kernel = delta_bwd_dhu(**SIZES, scale=SCALE, block_DV=block_dv, threads=threads,
                           num_stages=stages)
    if block_dv == 32:
        assert ("mma.sync" in kernel.get_kernel_source()) == (fallback == "1")
    outputs = kernel.get_profiler().run_poisoned(*(x.cuda() for x in inputs))
    torch.cuda.synchronize()
    for name, got, expected in zip(("dh", "dh0", "dv2"), outputs, reference(*inputs, SCALE),
                                   strict=True):
        got = got.double().cpu()
        assert not got.isnan().any(), f"{name}: NaN (unwritten or overflowed)"
        tolerance = (2e-3 if name == "dh0" else 8e-3) * expected.abs().max().item()
        torch.testing.assert_close(got, expected, rtol=0, atol=tolerance, msg=name)
