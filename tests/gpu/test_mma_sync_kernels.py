"""The sm_80 per-op tensor-core kernels (tests/gpu/mma_sync_kernels.py) on the GPU: ldmatrix +
mma.sync where each gemm stands, against float64 references, outputs poisoned first.

They come from the cache tests/gpu/precompile_frontend.py filled (compiled for cuda:sm_80 on
the compiler machine) and launch as sm_80 PTX, so a Hopper GPU runs them too. Each result goes
to the JSON file TILEC_GPU_MMA_SYNC_RESULTS names, if set.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from mma_sync_kernels import CASES, TARGET, MmaSyncCase  # noqa: E402

import tilec  # noqa: E402

RESULTS: list[dict] = []


@pytest.fixture(scope="module", autouse=True)
def write_results():
    yield
    path = os.environ.get("TILEC_GPU_MMA_SYNC_RESULTS")
    if path:
        Path(path).write_text(json.dumps(RESULTS, indent=1))


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_mma_sync_kernel(case: MmaSyncCase) -> None:
    kernel = tilec.compile(case.factory(), out_idx=[-1], target=TARGET)
    assert case.instruction in kernel.get_kernel_source()
    inputs = case.make_inputs(torch.Generator().manual_seed(11), "cuda")
    produced = kernel.get_profiler().run_poisoned(*inputs)
    torch.cuda.synchronize()
    expected = case.reference(*[x.double().cpu() for x in inputs])
    produced = produced.double().cpu()
    error = ((produced - expected).norm() / expected.norm().clamp_min(1e-30)).item()
    unwritten = int(produced.isnan().sum().item())
    passed = unwritten == 0 and error <= case.tolerance
    RESULTS.append({"kernel": case.name, "relative_error": error, "unwritten": unwritten,
                    "passed": passed})
    assert unwritten == 0, f"{unwritten} output elements are NaN"
    assert error <= case.tolerance, f"relative error {error:.3g} > {case.tolerance}"
