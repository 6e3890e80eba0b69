"""T.reduce_* over and into shared buffers, as TileLang's kda and mHC examples write them:
on CUDA stage-reduce-operands routes them through fragments; the CPU target reduces in place.

CPU numerics against float64, the tile IR the pass leaves (copies through fragments, the
destination filled first when the reduction accumulates) and cubins for sm_80 / sm_90a.
"""

from __future__ import annotations

import pytest
import torch
from conftest import poisoned, randn

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path

ROWS, COLS = 64, 32


@tilec.jit
def shared_reductions(A, clear_rows=True):
    """rows: sum over a shared tile's columns into a fragment; cols: max over its rows into a
    shared buffer; total: rows again, accumulated into a shared buffer holding the column
    maxima (clear=False)."""
    A: T.Tensor((ROWS, COLS), T.float32)
    rows = T.empty((ROWS,), T.float32)
    cols = T.empty((COLS,), T.float32)
    both = T.empty((COLS,), T.float32)
    with T.Kernel(1, threads=128):
        tile = T.alloc_shared((ROWS, COLS), T.float32)
        frag = T.alloc_fragment((ROWS, COLS), T.float32)
        row_sums = T.alloc_fragment((ROWS,), T.float32)
        col_max = T.alloc_shared((COLS,), T.float32)
        acc = T.alloc_shared((COLS,), T.float32)
        T.copy(A, tile)
        T.copy(A, frag)
        T.reduce_sum(tile, row_sums, dim=1, clear=clear_rows)
        T.reduce_max(frag, col_max, dim=0)
        T.copy(col_max, acc)
        T.reduce_sum(tile, acc, dim=0, clear=False)
        T.copy(row_sums, rows)
        T.copy(col_max, cols)
        T.copy(acc, both)
    return rows, cols, both


def test_cpu_numerics(rng: torch.Generator) -> None:
    a = randn((ROWS, COLS), torch.float32, rng)
    rows, cols, both = (poisoned((ROWS,), torch.float32), poisoned((COLS,), torch.float32),
                        poisoned((COLS,), torch.float32))
    for out, got in zip((rows, cols, both), shared_reductions(a), strict=True):
        out.copy_(got)
    ref = a.double()
    torch.testing.assert_close(rows.double(), ref.sum(1), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(cols.double(), ref.amax(0), rtol=0, atol=0)
    torch.testing.assert_close(both.double(), ref.amax(0) + ref.sum(0), rtol=1e-5, atol=1e-4)


def test_the_pass_stages_shared_operands_through_fragments() -> None:
    kernel = shared_reductions.compile(torch.empty(ROWS, COLS), target="cuda:sm_90a")
    ir_text = kernel.asm["tile-cuda"]
    reduces = [line for line in ir_text.splitlines() if "tile.reduce" in line]
    assert len(reduces) == 3
    for line in reduces:
        assert '"shared">' not in line.split(":")[-1], line  # both operands are fragments now


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_assembles(arch: str) -> None:
    kernel = shared_reductions.compile(torch.empty(ROWS, COLS), target=f"cuda:{arch}")
    assert kernel.artifact.binary_kind == "cubin"
    assert "shfl.sync" in kernel.asm["ptx"]


def test_gpu_suite_case_on_cpu(rng: torch.Generator) -> None:
    """The GPU suite's shared_row_sum (ragged rows), checked here on the CPU target."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
    from frontend_kernels import cases

    case = next(case for case in cases() if case.name == "shared_row_sum_500x128")
    kernel = tilec.compile(case.factory(), out_idx=case.out_idx, target="cpu")
    x = randn(case.input_shapes[0], torch.float32, rng)
    torch.testing.assert_close(kernel(x).double(), case.reference(x.double()),
                               rtol=1e-5, atol=1e-4)
