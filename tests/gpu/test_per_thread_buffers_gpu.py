"""T.alloc_local rows filled from a fragment (T.copy, T.Parallel, T.reduce_sum), a shared tile
and a tensor, read back reversed, on the GPU against float64 with outputs poisoned (NaN)
first: each thread's row must be whole (tests/test_per_thread_buffers.py runs the same
kernels on the CPU target and on lavapipe). Compiles at run time."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]
# the CPU module it shares kernels with imports the compiler, which a runtime-only install lacks
pytest.importorskip("tilec.compiler.targets", reason="compiles at run time: needs the compiler")

from test_per_thread_buffers import (  # noqa: E402
    DTYPES,
    FILLS,
    run_reversed_row_sums,
    run_reversed_rows,
)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fill", FILLS)
def test_local_rows_hold_the_whole_row_on_gpu(fill: str, dtype: str) -> None:
    run_reversed_rows("cuda", fill, dtype, torch.Generator().manual_seed(7), device="cuda")


@pytest.mark.parametrize("clear", [True, False])
def test_reduce_into_a_local_buffer_on_gpu(clear: bool) -> None:
    run_reversed_row_sums("cuda", clear, torch.Generator().manual_seed(8), device="cuda")
