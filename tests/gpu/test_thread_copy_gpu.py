"""One thread's own cp.async (T.ptx_cp_async + T.cp_async_barrier_noinc) on the GPU, checked
against float32 references on fresh random inputs with NaN-poisoned outputs: a tile every
thread fills, and a producer warpgroup filling a ring of swizzled wgmma operand tiles for a
consumer warpgroup's gemm (TileLang's MLA producer pattern); and T.sync_grid between the two
phases of a cooperative kernel, launched three times, and its grid past what the GPU holds at
once refused with a clear error; TileLang's `if tx < 128: ... elif ...` split of a 384-thread
block, each branch on its own warpgroup. The kernels:
tests/gpu/thread_copy_kernels.py; compiled in process, or taken from TILEC_CACHE_DIR
(precompile_frontend.py calls precompile)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

sys.path.insert(0, str(Path(__file__).resolve().parent))

from thread_copy_kernels import (  # noqa: E402
    cp_async_gemm,
    cp_async_scale,
    grid_sum_broadcast,
    thread_range_scale,
)

from tilec.errors import LaunchError  # noqa: E402

TILES = [(256, 512), (100, 200)]
RING_SHAPES = [(256, 256, 512), (128, 192, 320)]
GRIDS = [(100_000, 8), (54_321, 132)]
PAST_RESIDENT = (1000, 8192)  # N, blocks: more blocks than any GPU holds at once
BRANCH_SHAPES = [(192, 128), (200, 100)]
HOPPER_ONLY = True  # wgmma: precompile_frontend.py compiles these for TMA targets only


def precompile(target: str) -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR."""
    for M, K in TILES:  # noqa: N806
        cp_async_scale.compile(M=M, K=K, scale=3.0, target=target)
    for M, N, K in RING_SHAPES:  # noqa: N806
        cp_async_gemm.compile(M=M, N=N, K=K, target=target)
    for N, blocks in [*GRIDS, PAST_RESIDENT]:  # noqa: N806
        grid_sum_broadcast.compile(N=N, blocks=blocks, target=target)
    for M, N in BRANCH_SHAPES:  # noqa: N806
        thread_range_scale.compile(M=M, N=N, target=target)


@pytest.mark.parametrize(("M", "K"), TILES)
def test_cp_async_tile(M: int, K: int) -> None:  # noqa: N803
    a = torch.randn(M, K, device="cuda").half()
    b = cp_async_scale.compile(M=M, K=K, scale=3.0).get_profiler().run_poisoned(a)
    torch.testing.assert_close(b.float(), a.float() * 3.0, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(("M", "N", "K"), RING_SHAPES)
def test_cp_async_ring_feeds_wgmma(M: int, N: int, K: int) -> None:  # noqa: N803
    a = torch.randn(M, K, device="cuda").half()
    b = torch.randn(N, K, device="cuda").half()
    c = cp_async_gemm.compile(M=M, N=N, K=K).get_profiler().run_poisoned(a, b)
    torch.testing.assert_close(c, a.float() @ b.float().T, rtol=1e-3, atol=2e-2)


@pytest.mark.parametrize(("N", "blocks"), GRIDS)
def test_sync_grid_publishes_every_block_writes(N: int, blocks: int) -> None:  # noqa: N803
    a = torch.randn(N, device="cuda")
    kernel = grid_sum_broadcast.compile(N=N, blocks=blocks)
    assert kernel.artifact.launch["cooperative"] is True
    for _ in range(3):  # the barrier's counter carries over from launch to launch
        b = kernel.get_profiler().run_poisoned(a)
        expected = (a.double().sum() * 3).float().expand(N)
        torch.testing.assert_close(b, expected, rtol=1e-4, atol=1e-2)


def test_sync_grid_past_the_resident_blocks_is_a_clear_error() -> None:
    n, blocks = PAST_RESIDENT
    a = torch.randn(n, device="cuda")
    kernel = grid_sum_broadcast.compile(N=n, blocks=blocks)
    with pytest.raises(LaunchError, match=r"synchronizes its whole grid \(T\.sync_grid\), so its "
                                          r"8192 blocks must all be resident at once"):
        kernel(a)


@pytest.mark.parametrize(("M", "N"), BRANCH_SHAPES)
def test_thread_range_branches(M: int, N: int) -> None:  # noqa: N803
    a = torch.randn(M, N, device="cuda")
    b = thread_range_scale.compile(M=M, N=N).get_profiler().run_poisoned(a)
    scale = torch.tensor([1.0, 2.0, 3.0], device="cuda").repeat_interleave(32).repeat(
        (M + 95) // 96)[:M, None]
    torch.testing.assert_close(b, a * scale)
