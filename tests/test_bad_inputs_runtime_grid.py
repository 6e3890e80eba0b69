"""Grids sized by a call's arguments (`T.Kernel(T.ceildiv(max_seqlen, 4), batch)`): a size
below zero, or past what the target launches, is a LaunchError naming the kernel and the grid's
expression; before, the CPU target ran no block and left the outputs unwritten (a silent wrong
result) and a GPU driver refused with a bare code. A size of 0 launches nothing, on every
target (as the native call does)."""

from __future__ import annotations

import pytest
import torch
from conftest import poisoned, randn
from test_runtime_grid import varlen_row_copy

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path
from tilec.errors import LaunchError
from tilec.runtime import checked_grid
from tilec.runtime.cuda import MAX_GRID, build_packer


def varlen_call(target: str, max_seqlen: int, rng: torch.Generator):
    kernel = tilec.compile(varlen_row_copy(16, 2, 1), target=target)
    x = randn((16, 2), torch.float32, rng)
    out = poisoned((16, 2), torch.float32)
    return kernel, (x, torch.tensor([0, 16], dtype=torch.int32), max_seqlen, out)


def test_negative_grid_on_cpu(rng: torch.Generator) -> None:
    kernel, args = varlen_call("cpu", -8, rng)
    with pytest.raises(LaunchError, match=r"got a grid of \[-2, 1\] blocks from this call's "
                                          r"arguments \(grid: \(\(max_seqlen \+ 4 - 1\) // 4\)"
                                          r", 1\): its size along x, -2, is below 0"):
        kernel(*args)


def test_empty_grid_on_cpu_runs_nothing(rng: torch.Generator) -> None:
    kernel, args = varlen_call("cpu", 0, rng)
    kernel(*args)
    assert args[-1].isnan().all()


def test_grid_checks_of_the_cuda_launch() -> None:
    """The CUDA launcher's check on the grid its packer computes (no GPU needed)."""
    if ptxas_path() is None:
        pytest.skip("ptxas (CUDA toolkit) not found")

    @T.prim_func
    def main(X: T.Tensor((64,), "float32"), rows: T.int32, batch: T.int32):
        with T.Kernel(T.ceildiv(rows, 64), batch, threads=64) as (bx, by):
            for i in T.Parallel(64):
                X[i] = X[i] + 1.0

    artifact = tilec.compile(main, target="cuda:sm_90a").artifact
    pack = build_packer(artifact)
    x = torch.zeros(64)
    assert checked_grid(artifact, pack([x, 640, 3], {})[1], MAX_GRID)
    assert not checked_grid(artifact, pack([x, 0, 3], {})[1], MAX_GRID)
    with pytest.raises(LaunchError, match="its size along x, -1, is below 0"):
        checked_grid(artifact, pack([x, -64, 3], {})[1], MAX_GRID)
    with pytest.raises(LaunchError, match="its size along y, 70000, is past the 65535 blocks"):
        checked_grid(artifact, pack([x, 64, 70000], {})[1], MAX_GRID)


def test_negative_grid_on_lavapipe(rng: torch.Generator) -> None:
    from test_spirv_targets import require, require_device

    require("spirv-val")
    require_device()
    kernel, args = varlen_call("vulkan", -8, rng)
    with pytest.raises(LaunchError, match="its size along x, -2, is below 0"):
        kernel(*args)
