"""Blocks that end in a partial warp on the GPU (tests/test_partial_warps.py runs the same tile
kernels on the CPU target and lavapipe): reductions, a broadcast conversion, reduce_sum with
clear=False, T.cumsum and T.gemm on CUDA cores in blocks of 5 to 48 threads, and a user's warp
vote and shuffles in partial warps and under thread conditions (name-live-lanes' masks: the
block's lanes, `tx < 16`, and a ballot of a loaded condition), against float64 with NaN-poisoned
outputs; run under compute-sanitizer's racecheck and synccheck too (the job's run.sh)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from conftest import TOLERANCES, poisoned  # noqa: E402
from test_partial_warps import (  # noqa: E402
    THREADS,
    accumulated_column_sums,
    small_gemm,
    softmax_rows,
)

import tilec  # noqa: E402
import tilec.language as T  # noqa: E402


def _close(actual: torch.Tensor, expected: torch.Tensor) -> None:
    torch.testing.assert_close(actual.cpu().double(), expected.double(),
                               **TOLERANCES[torch.float32])


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(sum(shape)))


def compile_all(target: str) -> dict:
    """Every kernel these tests run, by (name, threads) (precompile_frontend.py fills the AOT
    suite's cache with them)."""
    kernels = {}
    for threads in THREADS:
        kernels["softmax", threads] = softmax_rows.compile(M=12, threads=threads,
                                                           target=target)
        kernels["sums", threads] = accumulated_column_sums.compile(threads=threads,
                                                                   target=target)
        kernels["gemm", threads] = small_gemm.compile(M=32, N=16, K=48, threads=threads,
                                                      target=target)
    for threads in USER_THREADS:
        kernels["lanes", threads] = lane_exchanges.compile(threads=threads, target=target)
    return kernels


@pytest.fixture(scope="module")
def kernels() -> dict:
    return compile_all("cuda")


@pytest.mark.parametrize("threads", THREADS)
def test_tile_kernels_on_partial_warps(threads: int, kernels: dict) -> None:
    x = _randn(12, 16) * 3.0
    y = poisoned(x.shape, torch.float32).cuda()
    kernels["softmax", threads](x.cuda(), y)
    _close(y, torch.softmax(x.double(), dim=1))
    chunks = _randn(12, 8)
    out = poisoned((2, 8), torch.float32).cuda()
    kernels["sums", threads](chunks.cuda(), out)
    sums = chunks.double().sum(dim=0)
    _close(out[0], sums)
    _close(out[1], sums.cumsum(dim=0))
    a, b = _randn(32, 48), _randn(48, 16)
    c = poisoned((32, 16), torch.float32).cuda()
    kernels["gemm", threads](a.cuda(), b.cuda(), c)
    _close(c, a.double() @ b.double())


USER_THREADS = [20, 48]


@tilec.jit(target="cuda")
def lane_exchanges(X, Out, threads=20):
    """Per thread: whether any lane of its warp holds a positive value (T.any_sync over the
    block's lanes), its pair neighbour's value under `tx < 16` (own value elsewhere), and under
    a loaded condition (x > 0) the neighbour's value among the lanes that passed it."""
    X: T.Tensor((threads,), T.float32)
    Out: T.Tensor((3, threads), T.float32)
    with T.Kernel(1, threads=threads):
        tx = T.get_thread_binding()
        v = T.alloc_var(T.float32)
        w = T.alloc_var(T.float32)
        v = X[tx]
        w = X[tx]
        Out[0, tx] = T.Cast(T.float32, T.any_sync(X[tx] > 1.0))
        if tx < 16:
            v = T.shfl_xor(v, 1)
        Out[1, tx] = v
        if X[tx] > 0.0:
            w = T.shfl_sync(w, 0)
        Out[2, tx] = w


@pytest.mark.parametrize("threads", USER_THREADS)
def test_user_cross_lane_ops_on_partial_warps(threads: int, kernels: dict) -> None:
    x = _randn(threads)
    x[0] = 0.5  # lane 0 of warp 0 passes the loaded condition, so it sources its warp's shuffle
    if threads > 32:
        x[32] = 0.5
    out = poisoned((3, threads), torch.float32).cuda()
    kernels["lanes", threads](x.cuda(), out)
    warps = [x[w:w + 32] for w in range(0, threads, 32)]
    any_positive = torch.cat([torch.full((len(lanes),), float((lanes > 1.0).any()))
                              for lanes in warps])
    neighbours = x.clone()
    neighbours[:16] = x[:16].reshape(8, 2).flip(1).reshape(16)
    leaders = torch.cat([torch.full((len(lanes),), float(lanes[0])) for lanes in warps])
    sourced = torch.where(x > 0.0, leaders, x)
    _close(out[0], any_positive)
    _close(out[1], neighbours)
    _close(out[2], sourced)
