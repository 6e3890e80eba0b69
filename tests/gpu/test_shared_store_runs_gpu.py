"""The tile-style quantized GEMMs (examples/quantized: gemm_int4, gemm_mxfp4) on the GPU with
and without TILEC_SHARED_STORE_RUNS=1 (infer-fragment-layout's 16-byte runs of each row per
thread for their dequantize-into-shared decode), their packed weight tiles on the cp.async
pipeline in both. Each result, its output poisoned (NaN) first, is checked against float64
and must equal the other layout's bit for bit: the layout moves which thread decodes which
weight, not the arithmetic. Ragged shapes: N past the last 128-row tile, a batch past and
below block_M. Compiled in process, or from the job's cache (`precompile`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "quantized"))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from gemm_fp4 import gemm_mxfp4  # noqa: E402
from gemm_int4 import gemm_int4  # noqa: E402
from gemv import meta_weights, weights  # noqa: E402

VARIABLE = "TILEC_SHARED_STORE_RUNS"
KERNELS = {"uint4": gemm_int4, "mxfp4": gemm_mxfp4}
SHAPES = [(3, 514, 2048), (70, 256, 1024)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fmt", list(KERNELS))
def test_runs_equal_points(fmt: str, shape: tuple[int, int, int],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    m, n, k = shape
    torch.manual_seed(11)
    a = torch.randn(m, k, device="cuda").half()
    args, weight = weights(fmt, n, k, "cuda")
    results = {}
    for setting in ("1", "0"):
        monkeypatch.setenv(VARIABLE, setting)
        kernel = KERNELS[fmt].compile(a, *args, target="cuda")
        results[setting] = kernel.get_profiler().run_poisoned(a, *args)
        torch.cuda.synchronize()
    runs = results["1"]
    assert not runs.isnan().any(), "elements left unwritten"
    expected = a.double() @ weight.double().t()
    error = ((runs.double() - expected).norm() / expected.norm()).item()
    assert error < 2e-3, f"relative error {error:.2e} against float64"
    assert torch.equal(runs, results["0"]), "the runs' decode differs from the points'"


def precompile(target: str = "cuda:sm_90a") -> None:
    """Compile every kernel the test runs into TILEC_CACHE_DIR (on the compiler machine)."""
    import os

    for fmt, kernel in KERNELS.items():
        for m, n, k in SHAPES:
            a = torch.empty(m, k, dtype=torch.float16, device="meta")
            for setting in ("1", "0"):
                os.environ[VARIABLE] = setting
                kernel.compile(a, *meta_weights(fmt, n, k), target=target)


if __name__ == "__main__":
    precompile()
