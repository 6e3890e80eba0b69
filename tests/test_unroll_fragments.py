"""Reductions over blocks whose thread count is not a multiple of the warp (or subgroup)
width, written as TileLang users write them: every thread of the block holds the result, those
past the layout's span (5 threads over a layout of 4) too, not a partial one from shuffles
with lanes the block does not have.

Run on the CPU target against torch (float64 references, NaN-poisoned outputs), on vulkan and
webgpu through tests/test_spirv_cpu_suite.py, and for sm_90a through ptxas.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import assert_close, poisoned, randn, suite_target

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path

TARGET = suite_target()


@tilec.jit(target=TARGET)
def row_block_maxes(X, Out, threads=20, block_M=4, width=64):
    """Rows of a [block_M, width] tile reduced along their columns by a block of `threads`."""
    M = T.const("M")
    X: T.Tensor((M, width), T.float32)
    Out: T.Tensor((M,), T.float32)
    with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
        tile = T.alloc_fragment((block_M, width), T.float32)
        most = T.alloc_fragment((block_M,), T.float32)
        T.copy(X[bx * block_M, 0], tile)
        T.reduce_max(tile, most, dim=1)
        T.copy(most, Out[bx * block_M])


@pytest.mark.parametrize("threads", [5, 20, 40])
def test_row_reductions_over_blocks_of_any_thread_count(threads: int,
                                                        rng: torch.Generator) -> None:
    x = randn((12, 64), torch.float32, rng) - 3.0
    out = poisoned((12,), torch.float32)
    row_block_maxes(x, out, threads=threads)
    assert_close(out, x.double().amax(dim=1), torch.float32)


@pytest.mark.skipif(TARGET != "cpu" or ptxas_path() is None,
                    reason="the CPU suite's run checks sm_90a; ptxas (CUDA toolkit) needed")
def test_kernels_assemble_for_sm90a(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    kernels = [row_block_maxes.compile(M=12, threads=threads, target="cuda:sm_90a")
               for threads in (5, 20, 40)]
    for kernel in kernels:
        assert kernel.artifact.binary.startswith(b"\x7fELF")
