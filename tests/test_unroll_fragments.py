"""Fragments allocated inside a T.unroll body, and reductions over blocks whose thread count is
not a multiple of the warp (or subgroup) width, written as TileLang users write them.

TileLang's MLA decode allocates a float16 fragment inside `for stage in T.unroll(stages)`: every
copy of the body uses the one fragment, as the iterations of a loop do. A reduction into a
one-element fragment read outside T.Parallel is held by every thread of the block: the threads
past its layout's span (5 threads over a layout of 4) must get the sum too, not a partial one
from shuffles with lanes the block does not have.

Run on the CPU target against torch (float64 references, NaN-poisoned outputs), on vulkan and
webgpu through tests/test_spirv_cpu_suite.py, for sm_90a through ptxas and for gfx942 to a
code object.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import assert_close, poisoned, randn, suite_target

import tilec
import tilec.language as T
from tilec.compiler.targets import hip
from tilec.compiler.targets.cuda import ptxas_path

TARGET = suite_target()


@tilec.jit(target=TARGET)
def staged_halves(X, Y, S, stages=2, block_M=16, block_N=32):
    """Per stage of an unrolled loop: the stage's columns cast to float16 through a fragment
    the body allocates (MLA decode's P), and its row sums weighted by the stage, kept."""
    M = T.const("M")
    X: T.Tensor((M, stages * block_N), T.float32)
    Y: T.Tensor((M, stages * block_N), T.float16)
    S: T.Tensor((M,), T.float32)
    with T.Kernel(T.ceildiv(M, block_M), threads=64) as bx:
        acc = T.alloc_fragment((block_M,), T.float32)
        T.clear(acc)
        for stage in T.unroll(stages):
            scores = T.alloc_fragment((block_M, block_N), T.float32)
            half = T.alloc_fragment((block_M, block_N), T.float16)
            row = T.alloc_fragment((block_M,), T.float32)
            T.copy(X[bx * block_M, stage * block_N], scores)
            T.copy(scores, half)
            T.copy(half, Y[bx * block_M, stage * block_N])
            T.reduce_sum(scores, row, dim=1)
            for i in T.Parallel(block_M):
                acc[i] += row[i] * (stage + 1)
        T.copy(acc, S[bx * block_M])


@pytest.mark.parametrize("stages", [1, 2, 3])
def test_fragments_allocated_in_an_unrolled_body(stages: int, rng: torch.Generator) -> None:
    rows, block_N = 40, 32
    x = randn((rows, stages * block_N), torch.float32, rng)
    y, s = poisoned(x.shape, torch.float16), poisoned((rows,), torch.float32)
    staged_halves(x, y, s, stages=stages)
    assert_close(y, x.half(), torch.float16)
    weights = torch.arange(1, stages + 1, dtype=torch.float64).repeat_interleave(block_N)
    assert_close(s, (x.double() * weights).sum(dim=1), torch.float32)


@tilec.jit(target=TARGET)
def chunked_extremes(X, Sums, Maxes, threads=5, width=8):
    """Each row's sum and maximum, a chunk of `width` columns per copy of an unrolled body:
    T.reduce_sum / T.reduce_max of the chunk into one-element fragments the body allocates,
    combined outside T.Parallel."""
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    Sums: T.Tensor((M,), T.float32)
    Maxes: T.Tensor((M,), T.float32)
    with T.Kernel(M, threads=threads) as row:
        total = T.alloc_fragment((1,), T.float32)
        most = T.alloc_fragment((1,), T.float32)
        T.clear(total)
        T.fill(most, -T.infinity(T.float32))
        for chunk in T.unroll(N // width):
            tile = T.alloc_fragment((width,), T.float32)
            part = T.alloc_fragment((1,), T.float32)
            peak = T.alloc_fragment((1,), T.float32)
            T.copy(X[row, chunk * width], tile)
            T.reduce_sum(tile, part, dim=0)
            T.reduce_max(tile, peak, dim=0)
            total[0] += part[0]
            most[0] = T.max(most[0], peak[0])
        Sums[row] = total[0]
        Maxes[row] = most[0]


# (threads, chunk width): blocks of 5, 6, 20, 24, 48 threads hold 4, 4, 16, 16, 32 threads'
# layouts and copies past them, some in a last partial warp (of 32 lanes; of 8 on vulkan)
SHAPES = [(5, 8), (6, 4), (20, 64), (24, 32), (48, 64), (96, 128), (32, 16)]


@pytest.mark.parametrize(("threads", "width"), SHAPES)
def test_reductions_over_blocks_of_any_thread_count(threads: int, width: int,
                                                    rng: torch.Generator) -> None:
    x = randn((6, 3 * width), torch.float32, rng) - 3.0  # every element negative or near
    sums, maxes = poisoned((6,), torch.float32), poisoned((6,), torch.float32)
    chunked_extremes(x, sums, maxes, threads=threads, width=width)
    assert_close(sums, x.double().sum(dim=1), torch.float32)
    assert_close(maxes, x.double().amax(dim=1), torch.float32)


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
    kernels = [staged_halves.compile(M=40, stages=2, target="cuda:sm_90a")]
    kernels += [row_block_maxes.compile(M=12, threads=threads, target="cuda:sm_90a")
                for threads in (5, 20, 40)]
    kernels += [chunked_extremes.compile(M=6, N=3 * width, threads=threads, width=width,
                                         target="cuda:sm_90a") for threads, width in SHAPES]
    for kernel in kernels:
        assert kernel.artifact.binary.startswith(b"\x7fELF")


@pytest.mark.skipif(TARGET != "cpu" or hip.toolchain_missing() is not None,
                    reason="the CPU suite's run checks gfx942; Debian's llvm-22 / lld-22 needed")
def test_kernels_build_for_gfx942(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    kernels = [staged_halves.compile(M=40, stages=2, target="hip"),
               row_block_maxes.compile(M=12, threads=20, target="hip")]
    kernels += [chunked_extremes.compile(M=6, N=3 * width, threads=threads, width=width,
                                         target="hip") for threads, width in SHAPES]
    for kernel in kernels:
        assert kernel.artifact.binary.startswith(b"\x7fELF")
