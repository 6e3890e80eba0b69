"""Copies that change dtype, and fragments read at shifted rows, as TileLang's sparse MLA
backward (examples/dsa_sparse_finetune/sparse_mla_bwd.py) writes them.

- `T.copy` between two global tensors of different dtypes runs element by element in a
  T.Parallel: its postprocess kernel (a 64 x 576 float32 box with a unit dimension, into
  bfloat16) went through a 64 x 1 x 576 fragment that the T.Parallel, indexing its unit
  dimension by a constant, did not follow: a layout conversion through 256 KiB of shared
  memory, over what a block has.
- A global box with a unit dimension converted into a shared or fragment tile stages through a
  fragment of the box's squeezed shape, which the converting T.Parallel follows (no
  conversion).
- `for s in range(2): for i, j in T.Parallel(BS, D): if i < BS // 2: half[i, j] = acc[i + s
  * (BS // 2), j]`: the fragment read at a shifted row is copied to shared memory for the
  loop, and only the box it reaches (BS // 2 rows) where the whole copy would be large: the
  backward kernel's 32 x 512 float32 accumulator took 64 KiB there.

Run on the CPU target against torch (float64 references, NaN-poisoned outputs), on vulkan and
webgpu through tests/test_spirv_cpu_suite.py (whose lowering lays fragments out as CUDA's
does), and for sm_90a through ptxas, where the tile IR's buffers are checked.
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
def rows_to_bfloat16(X, block_N=16):
    """Each block's rows of a [S, groups, D] float32 tensor as bfloat16 (the backward's
    postprocess: one T.copy between global tensors)."""
    S = T.dynamic("S")
    groups, D = T.const("groups, D")
    X: T.Tensor((S, groups, D), T.float32)
    Y = T.empty((S, groups, D), T.bfloat16)
    with T.Kernel(T.ceildiv(S, block_N), groups, threads=64) as (bx, by):
        T.copy(X[bx * block_N:(bx + 1) * block_N, by, :],
               Y[bx * block_N:(bx + 1) * block_N, by, :])
    return Y


@tilec.jit(target=TARGET)
def rows_through_shared(X, Y, block_N=16):
    """A box of a [S, groups, D] float32 tensor with a unit dimension into a bfloat16 shared
    tile (a conversion through a fragment), then out."""
    S, groups, D = T.const("S, groups, D")
    X: T.Tensor((S, groups, D), T.float32)
    Y: T.Tensor((S, groups, D), T.bfloat16)
    with T.Kernel(T.ceildiv(S, block_N), groups, threads=64) as (bx, by):
        tile = T.alloc_shared((block_N, D), T.bfloat16)
        T.copy(X[bx * block_N:(bx + 1) * block_N, by, :], tile)
        T.copy(tile, Y[bx * block_N:(bx + 1) * block_N, by, :])


@tilec.jit(target=TARGET)
def split_store(P, Q, Out, BS=32, D=128, H=16, split=2, view=False):
    """acc = P^T Q (BS x D, float32), stored BS // split rows at a time through a shared
    tile, each part read from the accumulator at rows shifted by s * BS // split under `if i
    < BS // split` (with `view`, the shared tile is a float32 view of a bfloat16 one, as the
    example's)."""
    P: T.Tensor((H, BS), T.bfloat16)
    Q: T.Tensor((H, D), T.bfloat16)
    Out: T.Tensor((BS, D), T.float32)
    part = BS // split
    with T.Kernel(1, threads=128) as _:
        P_shared = T.alloc_shared((H, BS), T.bfloat16)
        Q_shared = T.alloc_shared((H, D), T.bfloat16)
        acc = T.alloc_fragment((BS, D), T.float32)
        if view:
            scratch = T.alloc_shared((2 * part, D), T.bfloat16)
            half = T.view(scratch, shape=[part, D], dtype=T.float32)
        else:
            half = T.alloc_shared((part, D), T.float32)
        T.copy(P, P_shared)
        T.copy(Q, Q_shared)
        T.gemm(P_shared, Q_shared, acc, transpose_A=True, clear_accum=True)
        for s in range(split):
            for i, j in T.Parallel(BS, D):
                if i < part:
                    half[i, j] = acc[i + s * part, j]
            for i, j in T.Parallel(part, D):
                Out[i + s * part, j] = half[i, j]


@pytest.mark.parametrize(("rows", "groups", "width"), [(100, 1, 576), (37, 2, 64), (16, 1, 8)])
def test_global_copy_changing_dtype(rows: int, groups: int, width: int,
                                    rng: torch.Generator) -> None:
    x = randn((rows, groups, width), torch.float32, rng)
    y = rows_to_bfloat16(x)
    assert torch.equal(y, x.to(torch.bfloat16))


@pytest.mark.parametrize(("rows", "groups", "width"), [(48, 1, 64), (40, 3, 32)])
def test_box_with_a_unit_dimension_into_shared(rows: int, groups: int, width: int,
                                               rng: torch.Generator) -> None:
    x = randn((rows, groups, width), torch.float32, rng)
    y = poisoned(x.shape, torch.bfloat16)
    rows_through_shared(x, y)
    assert torch.equal(y, x.to(torch.bfloat16))


@pytest.mark.parametrize("view", [False, True])
@pytest.mark.parametrize(("BS", "D", "split"), [(32, 128, 2), (32, 128, 4), (16, 64, 2)])
def test_accumulator_stored_in_parts(view: bool, BS: int, D: int, split: int,
                                     rng: torch.Generator) -> None:
    p = randn((16, BS), torch.bfloat16, rng)
    q = randn((16, D), torch.bfloat16, rng)
    out = poisoned((BS, D), torch.float32)
    split_store(p, q, out, BS=BS, D=D, split=split, view=view)
    assert_close(out, p.double().T @ q.double(), torch.float32)


def _tile_ir(kernel: tilec.JITKernel) -> str:
    return kernel.artifact.asm["tile-cuda"]


@pytest.mark.skipif(TARGET != "cpu" or ptxas_path() is None,
                    reason="the CPU suite's run checks sm_90a; ptxas (CUDA toolkit) needed")
def test_sm90a_buffers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    postprocess = rows_to_bfloat16.compile(torch.zeros(100, 1, 576), block_N=64,
                                           target="cuda:sm_90a")
    assert "fragment" not in _tile_ir(postprocess)  # no staging, no conversion
    assert "bytes = 0" in _tile_ir(postprocess)
    through = rows_through_shared.compile(S=48, groups=2, D=64, target="cuda:sm_90a")
    assert "tile.convert_layout" not in _tile_ir(through)
    kernels = [postprocess, through]
    for view in (False, True):
        stored = split_store.compile(BS=32, D=512, H=64, view=view, target="cuda:sm_90a")
        tile_ir = _tile_ir(stored)
        # the box of the accumulator the loop reads, not the whole 32 x 512 (64 KiB)
        assert 'memref<32x512xf32, "fragment"> to memref<16x512xf32, "shared">' in tile_ir
        assert 'memref<32x512xf32, "shared">' not in tile_ir
        kernels.append(stored)
    small = split_store.compile(BS=16, D=64, target="cuda:sm_90a")  # 4 KiB: copied whole
    assert 'memref<16x64xf32, "fragment"> to memref<16x64xf32, "shared">' in _tile_ir(small)
    for kernel in [*kernels, small]:
        assert kernel.artifact.binary.startswith(b"\x7fELF")
