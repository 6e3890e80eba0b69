"""Hostile inputs against the newest features (T.unroll bodies, thread ranges, T.sync_grid,
T.ptx_cp_async, dtype-changing T.view): each is a clear error at the kernel's line or runs
right, never an abort in the user's process.

A fragment allocated inside a T.unroll body (TileLang's MLA decode casts through one) aborted
the process in lower-tile-to-gpu on every GPU target; it runs (lower-tile-to-gpu shares the
original's registers between the copies), as do reductions in blocks ending in a partial warp,
checked here against torch on the CPU target and lavapipe.

An index computed from loops of constant bounds that leaves a block buffer (`f[k, i]` over
`for k in T.unroll(8)` on a fragment of 4 rows) wrote past it: a segfault on the CPU target, a
silent wrong result on a GPU; it is check-static-indices' error at its line on every target.
A T.sync_grid under a condition on the block index (`if bx == 0`) or in a loop whose bounds
depend on it compiled, and the blocks that never reach it leave the others waiting forever: a
hang; it is an error at its line.
"""

from __future__ import annotations

from pathlib import Path

import error_tags
import pytest
import torch
from conftest import poisoned, randn

import tilec
import tilec.language as T
from tilec.errors import CompileError

THIS_FILE = Path(__file__).resolve()
GPU_TARGETS = ["cuda:sm_90a", "cuda:sm_80", "hip:gfx942", "vulkan", "webgpu"]
TARGETS = ["cpu", *GPU_TARGETS, "ascend"]
N = 64


def fragment_in_unroll():
    @T.prim_func
    def main(X: T.Tensor((N, N), "float32"), Y: T.Tensor((N, N), "float16")):
        with T.Kernel(1, threads=128):
            acc = T.alloc_fragment((N, N), "float32")
            tile = T.alloc_shared((N, N), "float16")
            T.copy(X[0, 0], acc)
            for stage in T.unroll(2):
                half = T.alloc_fragment((N, N), "float16")
                for i, j in T.Parallel(N, N):
                    half[i, j] = acc[i, j] * (stage + 1)
                T.copy(half, tile)
            T.copy(tile, Y[0, 0])
    return main


def run_fragment_in_unroll(target: str) -> None:
    kernel = tilec.compile(fragment_in_unroll(), target=target)
    x = randn((N, N), torch.float32, torch.Generator().manual_seed(5))
    y = poisoned((N, N), torch.float16)
    kernel(x, y)
    torch.testing.assert_close(y.double(), (x * 2).half().double(), rtol=1e-3, atol=1e-3)


def test_a_fragment_allocated_in_an_unroll_body_runs_on_the_cpu() -> None:
    run_fragment_in_unroll("cpu")


def _lavapipe(target: str) -> None:
    from test_spirv_targets import require, require_device, require_naga

    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()


@pytest.mark.parametrize("target", ["vulkan", "webgpu"])
def test_a_fragment_allocated_in_an_unroll_body_runs_on_lavapipe(target: str) -> None:
    _lavapipe(target)
    run_fragment_in_unroll(target)


@pytest.mark.parametrize("target", ["cuda:sm_90a", "cuda:sm_80", "hip:gfx942"])
def test_a_fragment_allocated_in_an_unroll_body_compiles(target: str) -> None:
    if target.startswith("hip"):
        from tilec.compiler.targets.hip import toolchain_missing

        if toolchain_missing():
            pytest.skip("no LLVM 22 / ROCm device libraries for the HIP target")
    tilec.compile(fragment_in_unroll(), target=target)


def row_sum(threads: int, columns: int):
    @T.prim_func
    def main(X: T.Tensor((6, columns), "float32"), Y: T.Tensor((6,), "float32")):
        with T.Kernel(6, threads=threads) as row:
            tile = T.alloc_fragment((columns,), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.copy(X[row, 0], tile)
            T.reduce_sum(tile, total, dim=0)
            Y[row] = total[0]
    return main


@pytest.mark.parametrize(("threads", "columns"), [(5, 5), (5, 8), (6, 6), (3, 3), (12, 12)])
def test_a_reduction_in_a_partial_warp_of_copies_sums_right(threads: int, columns: int
                                                            ) -> None:
    """More threads than the layout's power of two, ending in a partial 8-lane subgroup."""
    _lavapipe("vulkan")
    kernel = tilec.compile(row_sum(threads, columns), target="vulkan")
    x = randn((6, columns), torch.float32, torch.Generator().manual_seed(threads + columns))
    y = poisoned((6,), torch.float32)
    kernel(x, y)
    torch.testing.assert_close(y.double(), x.double().sum(1), rtol=1e-5, atol=1e-5)


def unrolled_rows():
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            rows = T.alloc_fragment((4, N), "float32")
            for k in T.unroll(8):
                for i in T.Parallel(N):
                    rows[k, i] = X[i] * k  # error: unrolled-rows
            T.copy(rows[0, :], Y[0])
    return main


@pytest.mark.parametrize("target", TARGETS)
def test_an_index_known_when_compiling_outside_its_buffer_is_an_error(target: str) -> None:
    with pytest.raises(CompileError) as info:
        tilec.compile(unrolled_rows(), target=target)
    error_tags.check_error(info.value, THIS_FILE, "unrolled-rows",
                           "writes element [4, 0] of a fragment of shape [4, 64]",
                           "the T.unroll variable at line", "= 4", kind=CompileError)


def guarded_rows():
    """The same loop, its rows past the fragment skipped by a condition on k."""
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((4, N), "float32")):
        with T.Kernel(1, threads=32):
            rows = T.alloc_fragment((4, N), "float32")
            for k in T.unroll(8):
                if k < 4:
                    for i in T.Parallel(N):
                        rows[k, i] = X[i] * k
            T.copy(rows, Y[0, 0])
    return main


def test_an_index_kept_inside_by_its_condition_runs() -> None:
    kernel = tilec.compile(guarded_rows(), target="cpu")
    x = randn((N,), torch.float32, torch.Generator().manual_seed(6))
    y = poisoned((4, N), torch.float32)
    kernel(x, y)
    expected = x.double()[None, :] * torch.arange(4, dtype=torch.float64)[:, None]
    torch.testing.assert_close(y.double(), expected, rtol=1e-6, atol=1e-6)


def grid_barrier_in_block_branch():
    @T.prim_func
    def main(X: T.Tensor((4,), "float32"), Y: T.Tensor((4,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            if bx == 0:
                T.sync_grid()  # error: grid-barrier-in-block-branch
            for _ in T.Parallel(1):
                Y[bx] = X[bx]
    return main


def grid_barrier_in_block_loop():
    @T.prim_func
    def main(X: T.Tensor((4,), "float32"), Y: T.Tensor((4,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            for _ in T.serial(bx + 1):
                T.sync_grid()  # error: grid-barrier-in-block-loop
            for _ in T.Parallel(1):
                Y[bx] = X[bx]
    return main


@pytest.mark.parametrize("target", ["cuda:sm_90a", "cuda:sm_80"])
@pytest.mark.parametrize(("factory", "tag", "around"), [
    (grid_barrier_in_block_branch, "grid-barrier-in-block-branch", "under a condition that"),
    (grid_barrier_in_block_loop, "grid-barrier-in-block-loop", "in a loop whose bounds"),
])
def test_a_grid_barrier_some_blocks_skip_is_an_error(factory, tag: str, around: str,
                                                      target: str) -> None:
    with pytest.raises(CompileError) as info:
        tilec.compile(factory(), target=target)
    error_tags.check_error(info.value, THIS_FILE, tag, "T.sync_grid waits for every block",
                           around, "the grid waits forever", kind=CompileError)
