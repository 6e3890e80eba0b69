"""Cross-lane work in blocks whose thread count is not a multiple of the warp width.

A block of 5, 6, 12, 20 or 48 threads ends in a partial warp (of 32 lanes on CUDA, of 8 on
vulkan): every statement whose threads exchange values must still be right there. Layout
conversions between fragments, reductions that add to what the destination holds
(clear=False), T.cumsum over a fragment and T.gemm are run here against float64 references
with NaN-poisoned outputs, on the CPU target and, through tests/test_spirv_cpu_suite.py, on
vulkan and webgpu. For sm_90a and sm_80 the same kernels go through ptxas, and each shuffle's
member mask names only lanes the block has (name-live-lanes); a warp's own butterfly
(T.warp_reduce_sum) that would read a lane the block lacks is an error at its line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from conftest import assert_close, poisoned, randn, suite_target

import tilec
import tilec.language as T
from tilec.errors import CompileError

TARGET = suite_target()
THREADS = [5, 6, 12, 20, 48]


@tilec.jit(target=TARGET)
def softmax_rows(X, Y, threads=5, block_M=4, width=16):
    """Row softmax of [block_M, width] tiles: a row maximum and a row sum (reductions over the
    tile's lanes), the maximum then broadcast back over the tile (a layout conversion where
    the row fragment's layout is not the tile's)."""
    M = T.const("M")
    X: T.Tensor((M, width), T.float32)
    Y: T.Tensor((M, width), T.float32)
    with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
        tile = T.alloc_fragment((block_M, width), T.float32)
        most = T.alloc_fragment((block_M,), T.float32)
        total = T.alloc_fragment((block_M,), T.float32)
        T.copy(X[bx * block_M, 0], tile)
        T.reduce_max(tile, most, dim=1)
        for i, j in T.Parallel(block_M, width):
            tile[i, j] = T.exp(tile[i, j] - most[i])
        T.reduce_sum(tile, total, dim=1)
        for i, j in T.Parallel(block_M, width):
            tile[i, j] = tile[i, j] / total[i]
        T.copy(tile, Y[bx * block_M, 0])


@pytest.mark.parametrize("threads", THREADS)
def test_softmax_rows(threads: int, rng: torch.Generator) -> None:
    x = randn((12, 16), torch.float32, rng) * 3.0
    y = poisoned(x.shape, torch.float32)
    softmax_rows(x, y, threads=threads)
    assert_close(y, torch.softmax(x.double(), dim=1), torch.float32)


@tilec.jit(target=TARGET)
def accumulated_column_sums(X, Out, threads=5, rows=4, width=8, chunks=3):
    """Column sums of `chunks` row tiles, each added to the running sums by T.reduce_sum with
    clear=False, then a T.cumsum of the sums along the columns (through a shared copy)."""
    X: T.Tensor((chunks * rows, width), T.float32)
    Out: T.Tensor((2, width), T.float32)
    with T.Kernel(1, threads=threads):
        tile = T.alloc_fragment((rows, width), T.float32)
        sums = T.alloc_fragment((width,), T.float32)
        running = T.alloc_fragment((width,), T.float32)
        T.clear(sums)
        for c in T.serial(chunks):
            T.copy(X[c * rows, 0], tile)
            T.reduce_sum(tile, sums, dim=0, clear=False)
        T.copy(sums, Out[0, 0])
        T.copy(sums, running)
        T.cumsum(running, dim=0)
        T.copy(running, Out[1, 0])


@pytest.mark.parametrize("threads", THREADS)
def test_accumulated_sums_and_their_scan(threads: int, rng: torch.Generator) -> None:
    x = randn((12, 8), torch.float32, rng)
    out = poisoned((2, 8), torch.float32)
    accumulated_column_sums(x, out, threads=threads)
    sums = x.double().sum(dim=0)
    assert_close(out[0], sums, torch.float32)
    assert_close(out[1], sums.cumsum(dim=0), torch.float32)


@tilec.jit(target=TARGET)
def small_gemm(A, B, C, threads=5, block=16):
    """C = A @ B over [block, block] tiles by one block of `threads` (CUDA cores wherever a
    partial warp runs it: mma.sync and wgmma need whole warps and warpgroups)."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float32)
    B: T.Tensor((K, N), T.float32)
    C: T.Tensor((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=threads) as (bx, by):
        a = T.alloc_shared((block, block), T.float32)
        b = T.alloc_shared((block, block), T.float32)
        c = T.alloc_fragment((block, block), T.float32)
        T.clear(c)
        for k in T.serial(T.ceildiv(K, block)):
            T.copy(A[by * block, k * block], a)
            T.copy(B[k * block, bx * block], b)
            T.gemm(a, b, c)
        T.copy(c, C[by * block, bx * block])


@pytest.mark.parametrize("threads", THREADS)
def test_small_gemm(threads: int, rng: torch.Generator) -> None:
    a, b = randn((32, 48), torch.float32, rng), randn((48, 16), torch.float32, rng)
    c = poisoned((32, 16), torch.float32)
    small_gemm(a, b, c, threads=threads)
    assert_close(c, a.double() @ b.double(), torch.float32)


# ----- CUDA: through ptxas, and the member masks in the PTX ------------------------------------
SHUFFLE = re.compile(r"shfl\.sync\.\w+\.b32\s+[^;]*,\s*(-?\w+|%r\d+);")


def _cuda_kernels(arch: str, threads: int) -> list:
    return [softmax_rows.compile(M=12, threads=threads, target=f"cuda:{arch}"),
            accumulated_column_sums.compile(threads=threads, target=f"cuda:{arch}"),
            small_gemm.compile(M=32, N=16, K=48, threads=threads, target=f"cuda:{arch}")]


@pytest.mark.skipif(TARGET != "cpu", reason="the CPU suite's run checks CUDA")
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("threads", THREADS)
def test_member_masks_name_the_blocks_lanes(arch: str, threads: int, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # here, not at import: tests/gpu/test_partial_warps_gpu.py imports this module on GPU
    # machines that run compiled kernels without the compiler
    from tilec.compiler.targets.cuda import ptxas_path

    if ptxas_path() is None:
        pytest.skip("ptxas (CUDA toolkit) needed")
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    full = (1 << 32) - 1
    shuffles = 0
    for kernel in _cuda_kernels(arch, threads):
        assert kernel.artifact.binary.startswith(b"\x7fELF")
        ptx = kernel.get_kernel_source()
        assert "mma.sync" not in ptx and "wgmma" not in ptx  # a partial warp runs them
        for mask in SHUFFLE.findall(ptx):
            shuffles += 1
            if threads < 32:  # one warp: a constant mask of exactly the block's lanes
                assert int(mask, 0) & full == (1 << threads) - 1, ptx
            else:  # a register chosen by the warp index, never every lane
                assert mask.startswith("%r"), ptx
    assert shuffles > 0


@tilec.jit(target="cuda:sm_90a")
def butterfly_sums(X, Out, threads=48):
    """T.warp_reduce_sum of each thread's element (a 32-lane butterfly)."""
    X: T.Tensor((threads,), T.float32)
    Out: T.Tensor((threads,), T.float32)
    with T.Kernel(1, threads=threads):
        tx = T.get_thread_binding()
        Out[tx] = T.warp_reduce_sum(X[tx])


def test_a_butterfly_over_lanes_the_block_lacks_is_an_error() -> None:
    with pytest.raises(CompileError) as caught:
        butterfly_sums.compile(threads=48)
    assert "reads lane 16 on lane 0 of warp 1, and lane 16 does not run it" in str(caught.value)
    assert caught.value.filename == __file__
    assert caught.value.lineno == butterfly_sums_line()


def butterfly_sums_line() -> int:
    """The line of T.warp_reduce_sum in butterfly_sums."""
    source = Path(__file__).read_text().splitlines()
    return next(n for n, line in enumerate(source, 1) if "Out[tx] = T.warp_reduce_sum" in line)


def test_a_butterfly_over_whole_warps_compiles(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    ptx = butterfly_sums.compile(threads=64).get_kernel_source()
    assert SHUFFLE.findall(ptx) == ["-1"] * 5
