"""T.alloc_local buffers filled from a block's tiles: each thread's own whole copy.

A T.alloc_local row is every thread's own, so whatever fills it must give each thread every
element, as the CPU target's one thread has them (compiler/passes/infer_fragment_layout.py).
`T.copy(fragment[i, 0], row)` once moved only the elements of the thread's own fragment
registers, and a T.Parallel storing `row[j]` only the thread's own points: the rest of the row
kept what it held before, and `T.copy(row, out[...])`, which every thread makes, wrote it (a
silent wrong result on vulkan, webgpu and CUDA alike, float32 too); a T.reduce_sum into one
was refused on the GPU targets. Each way of filling the row here is read back at other
points' indices (reversed), so a thread missing any element of it shows.

Run on the CPU target against float64 with NaN-poisoned outputs, on vulkan and webgpu through
tests/test_spirv_cpu_suite.py, on CUDA by tests/gpu/test_per_thread_buffers_gpu.py, for sm_90a
through ptxas and for gfx942 to a code object.
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
# how the row is filled from row i of the block's tile: a copy out of the fragment, or a
# T.Parallel computing it from the fragment, from the shared tile or from the tensor
FILLS = ("copy", "fragment", "shared", "tensor")
DTYPES = ("float32", "float16")


@tilec.jit(target=TARGET)
def reversed_rows(X, Out, fill="copy", dtype=T.float32, block_M=8, block_N=32, threads=64):
    """Out[r, c] = f(X[r, block's last column - c]): each row of the block's tile through a
    T.alloc_local row, filled by `fill` (f doubles, but for `copy`), read back reversed."""
    M, N = T.const("M, N")
    X: T.Tensor((M, N), dtype)
    Out: T.Tensor((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        shared = T.alloc_shared((block_M, block_N), dtype)
        fragment = T.alloc_fragment((block_M, block_N), dtype)
        row = T.alloc_local((block_N,), dtype)
        T.copy(X[by * block_M, bx * block_N], shared)
        T.copy(shared, fragment)
        for i in T.serial(block_M):
            if fill == "copy":
                T.copy(fragment[i, 0], row)
            elif fill == "fragment":
                for j in T.Parallel(block_N):
                    row[j] = fragment[i, j] * 2
            elif fill == "shared":
                for j in T.Parallel(block_N):
                    row[j] = shared[i, j] * 2
            else:
                for j in T.Parallel(block_N):
                    row[j] = X[by * block_M + i, bx * block_N + j] * 2
            for j in T.Parallel(block_N):
                Out[by * block_M + i, bx * block_N + j] = row[block_N - 1 - j]


def expected_rows(x: torch.Tensor, fill: str, block_N: int = 32) -> torch.Tensor:
    """reversed_rows' result in float64: within each block of columns, reversed (columns past
    the tensor's edge read as zero)."""
    rows, columns = x.shape
    padded = -(-columns // block_N) * block_N
    wide = torch.zeros(rows, padded, dtype=torch.float64)
    wide[:, :columns] = x.double() * (1 if fill == "copy" else 2)
    return wide.reshape(rows, -1, block_N).flip(-1).reshape(rows, padded)[:, :columns]


def run_reversed_rows(target: str, fill: str, dtype: str, rng: torch.Generator,
                      device: str = "cpu") -> None:
    """reversed_rows for `target` on `device` against float64, its output poisoned first
    (the tensor's ragged edge included: 20 rows, 48 columns over 8 x 32 blocks)."""
    x = randn((20, 48), getattr(torch, dtype), rng)
    out = poisoned(x.shape, x.dtype)
    kernel = reversed_rows.compile(x, out, fill=fill, dtype=dtype, target=target)
    out = out.to(device)
    kernel(x.to(device), out)
    torch.testing.assert_close(out.cpu().double(), expected_rows(x, fill), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fill", FILLS)
def test_local_rows_hold_the_whole_row(fill: str, dtype: str, rng: torch.Generator) -> None:
    run_reversed_rows(TARGET, fill, dtype, rng)


@tilec.jit(target=TARGET)
def reversed_row_sums(X, Out, clear=True, block_M=16, threads=64):
    """Out[r] = the sum of X's row at the block's mirror of r (its last row for its first), plus
    one when the reduce accumulates onto ones: T.reduce_sum of the block's fragment into a
    T.alloc_local buffer (a reduce into a fragment copied into it on the GPU targets)."""
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    Out: T.Tensor((M,), T.float32)
    with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
        fragment = T.alloc_fragment((block_M, N), T.float32)
        sums = T.alloc_local((block_M,), T.float32)
        T.copy(X[bx * block_M, 0], fragment)
        T.fill(sums, 1.0)
        T.reduce_sum(fragment, sums, dim=1, clear=clear)
        for i in T.Parallel(block_M):
            Out[bx * block_M + i] = sums[block_M - 1 - i]


def run_reversed_row_sums(target: str, clear: bool, rng: torch.Generator,
                          device: str = "cpu") -> None:
    """reversed_row_sums for `target` on `device` against float64, its output poisoned first
    (40 rows over blocks of 16: the last block's mirrored rows past the edge sum to zero)."""
    x = randn((40, 32), torch.float32, rng)
    out = poisoned((40,), torch.float32)
    kernel = reversed_row_sums.compile(x, out, clear=clear, target=target)
    out = out.to(device)
    kernel(x.to(device), out)
    sums = torch.zeros(48, dtype=torch.float64)
    sums[:40] = x.double().sum(dim=1)
    expected = sums.reshape(3, 16).flip(-1).reshape(48)[:40] + (0 if clear else 1)
    assert_close(out.cpu(), expected, torch.float32)


@pytest.mark.parametrize("clear", [True, False])
def test_reduce_into_a_local_buffer(clear: bool, rng: torch.Generator) -> None:
    run_reversed_row_sums(TARGET, clear, rng)


@pytest.mark.skipif(TARGET != "cpu" or ptxas_path() is None,
                    reason="the CPU suite's run checks sm_90a; ptxas (CUDA toolkit) needed")
def test_kernels_assemble_for_sm90a(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy out of the fragment reads a shared copy of it on CUDA too (the same
    infer-fragment-layout), and every fill assembles."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    for fill in FILLS:
        kernel = reversed_rows.compile(M=20, N=48, fill=fill, dtype=T.float16,
                                       target="cuda:sm_90a")
        assert kernel.artifact.binary.startswith(b"\x7fELF")
        if fill == "copy":
            assert "bar.sync" in kernel.get_kernel_source()
    kernel = reversed_row_sums.compile(M=40, N=32, clear=False, target="cuda:sm_90a")
    assert kernel.artifact.binary.startswith(b"\x7fELF")


@pytest.mark.skipif(TARGET != "cpu" or hip.toolchain_missing() is not None,
                    reason="the CPU suite's run checks gfx942; Debian's llvm-22 / lld-22 needed")
def test_kernels_build_for_gfx942(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    kernels = [reversed_rows.compile(M=20, N=48, fill=fill, target="hip:gfx942")
               for fill in FILLS]
    kernels.append(reversed_row_sums.compile(M=40, N=32, target="hip:gfx942"))
    for kernel in kernels:
        assert kernel.artifact.binary.startswith(b"\x7fELF")
