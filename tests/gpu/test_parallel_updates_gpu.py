"""check-parallel-updates' accepted forms on the GPU: a per-point temporary, shared updates
under `if i == 0` and under `if i % 2 == 0` at i // 2, and a serial sum inside T.Parallel,
against float64, outputs poisoned (NaN) first (tests/test_bad_inputs_parallel_updates.py runs
the same kernel on the CPU target and on lavapipe); and check-scalar-stores' portable forms (a
block's sum added once through `for _ in T.Parallel(1)`, tests/test_bad_inputs_scalar_stores.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from test_bad_inputs_parallel_updates import run_allowed_updates  # noqa: E402
from test_bad_inputs_scalar_stores import run_portable_forms  # noqa: E402


def test_allowed_updates_on_gpu() -> None:
    run_allowed_updates("cuda", "cuda")


def test_portable_scalar_forms_on_gpu() -> None:
    """One atomic per block (its T.Parallel(1) runs on one thread) and stores every thread
    makes alike, against float64."""
    run_portable_forms("cuda", "cuda")
