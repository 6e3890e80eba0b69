"""Grids sized by integer scalar parameters, as TileLang's varlen kernels launch
`T.Kernel(T.ceildiv(max_seqlen_q, block_M), heads, batch)`: the launch computes the grid on the
host from the argument values (the artifact's launch metadata keeps the expression), on the CPU
target (numerics against numpy) and in the CUDA launch packer.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import poisoned, randn, suite_target

import tilec
import tilec.language as T
from tilec.errors import TilecError
from tilec.runtime import launch_grid
from tilec.runtime.cuda import build_packer

TARGET = suite_target()


def varlen_row_copy(total, dim, batch, block_M=4):
    """Out = X + 1 for each sequence's rows CuSeqlens[b] : CuSeqlens[b + 1], blocks of block_M
    rows over the longest sequence (max_seqlen, a kernel argument) in grid x."""

    @T.prim_func
    def main(X: T.Tensor((total, dim), "float32"), CuSeqlens: T.Tensor((batch + 1,), "int32"),
             max_seqlen: T.int32, Out: T.Tensor((total, dim), "float32")):
        with T.Kernel(T.ceildiv(max_seqlen, block_M), batch, threads=32) as (bx, by):
            start, end = CuSeqlens[by], CuSeqlens[by + 1]
            tile = T.alloc_fragment((block_M, dim), "float32")
            T.copy(X[start + bx * block_M : start + (bx + 1) * block_M, :], tile)
            for i, j in T.Parallel(block_M, dim):
                row = start + bx * block_M + i
                if row < end:
                    Out[row, j] = tile[i, j] + 1.0

    return main


@pytest.mark.parametrize("lengths", [[3, 9, 1], [4, 4, 4], [11, 2, 5]])
def test_grid_from_scalar_argument(lengths: list[int], rng: torch.Generator) -> None:
    """One compiled kernel, launched with the longest length of each batch: every row is written
    exactly when the grid covers the longest sequence."""
    dim, block = 3, 4
    total = 30
    kernel = tilec.compile(varlen_row_copy(total, dim, len(lengths), block), target=TARGET)
    bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    x = randn((total, dim), torch.float32, rng)
    out = poisoned((total, dim), torch.float32)
    kernel(x, torch.from_numpy(bounds), max(lengths), out)
    expected = np.full((total, dim), np.nan, dtype=np.float32)
    expected[:bounds[-1]] = x.numpy()[:bounds[-1]] + 1.0
    np.testing.assert_array_equal(out.numpy(), expected)


def test_grid_too_small_for_the_argument_leaves_rows(rng: torch.Generator) -> None:
    """The grid follows the argument: a max_seqlen below the longest length covers fewer rows
    (the test that the argument, not a compile-time value, sizes the launch)."""
    kernel = tilec.compile(varlen_row_copy(16, 2, 1), target=TARGET)
    x = randn((16, 2), torch.float32, rng)
    out = poisoned((16, 2), torch.float32)
    kernel(x, torch.tensor([0, 16], dtype=torch.int32), 8, out)
    assert not out[:8].isnan().any() and out[8:].isnan().all()


def test_cuda_launch_metadata_and_packer_compute_the_grid(tmp_path, monkeypatch) -> None:
    from tilec.compiler.targets.cuda import ptxas_path  # the compiler: not on a GPU machine

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    if ptxas_path() is None:
        pytest.skip("ptxas (CUDA toolkit) not found")
    kernel = tilec.compile(varlen_row_copy(30, 3, 5), out_idx=[-1], target="cuda:sm_90a")
    artifact = kernel.artifact
    assert artifact.launch["grid"] == ["((max_seqlen + 4 - 1) // 4)", 5]
    x, bounds = torch.zeros(30, 3), torch.zeros(6, dtype=torch.int32)
    args = [x, bounds, 13, torch.zeros(30, 3)]
    assert launch_grid(artifact, {}, args) == [4, 5]
    _, grid = build_packer(artifact)(args, {})
    assert grid == (4, 5, 1)


def test_dynamic_size_and_scalar_in_one_grid(rng: torch.Generator) -> None:
    """A grid over a tensor's dynamic length divided among `parts` (a kernel argument)."""
    M = T.dynamic("M")

    @T.prim_func
    def main(X: T.Tensor((M,), "float32"), parts: T.int32, Y: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, 8) * parts, threads=32) as bx:
            for i in T.Parallel(8):
                row = T.floordiv(bx, parts) * 8 + i
                if row < M and T.floormod(bx, parts) == 0:
                    Y[row] = X[row] * 2.0

    kernel = tilec.compile(main, out_idx=[-1], target=TARGET)
    x = randn((21,), torch.float32, rng)
    y = kernel(x, 3)
    np.testing.assert_array_equal(y.numpy(), x.numpy() * 2.0)
    artifact = kernel.artifact
    assert launch_grid(artifact, {"M": 21}, [x, 3, y]) == [9]


def test_grid_from_a_value_the_kernel_computes_is_an_error() -> None:
    @T.prim_func
    def main(Lengths: T.Tensor((4,), "int32"), scale: T.float32):
        with T.Kernel(T.cast(scale, "int32"), threads=32) as _:
            Lengths[0] = 0

    with pytest.raises(TilecError, match="grid sizes are computed from tensor sizes, integer "
                                         "scalar parameters"):
        tilec.compile(main, target=TARGET)
