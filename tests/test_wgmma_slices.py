"""Gemms on column slices of shared tiles, read in place on sm_90a (plan-wgmma-gemms'
tile.read_in_place, compiler/passes/_wgmma.py): a slice's own tile is the larger tile's bytes
from the slice's first column box on, element for element; TileLang's MLA layout (Q K^T over
512 + 64 columns, P V on the KV tile read transposed) runs on the CPU target against float64,
and on sm_90a its slices take no shared memory of their own and its PTX assembles (ptxas);
so does its variant with the KV blocks in 3-d stage buffers, sliced per stage.
The GPU suite runs the same kernel (tests/gpu/test_wgmma_slices_gpu.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import randn
from mlir import ir
from test_wgmma_per_op import element_indices

from tilec.compiler.passes._scalar import index
from tilec.compiler.passes._wgmma import SharedOperandLayout, StackedOperandLayout
from tilec.compiler.targets.cuda import ptxas_path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from slice_kernels import (  # noqa: E402
    mla_slices,
    reference,
    sliced_gemm,
    staged_reference,
    staged_slices,
)

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
HEADS, DIM, TAIL, BLOCK_N = 64, 512, 64, 64
TOKENS = 100  # one whole block of 64 tokens and a ragged one


@pytest.mark.parametrize("whole,part,column,k_major,span,element_bytes", [
    ((64, 576), (64, 256), 256, True, 128, 2), ((64, 576), (64, 64), 512, True, 128, 2),
    ((64, 576), (64, 256), 0, False, 128, 2), ((128, 192), (128, 32), 64, True, 64, 2),
    ((64, 256), (64, 128), 128, True, 128, 1),
])
def test_slice_tile_is_the_larger_tiles_bytes(whole: tuple[int, int], part: tuple[int, int],
                                              column: int, k_major: bool, span: int,
                                              element_bytes: int) -> None:
    """Element (r, c) of the slice's tile lies where element (r, column + c) of the larger
    tile does, less the whole column boxes before the slice (what the descriptors skip)."""
    larger = SharedOperandLayout(whole, element_bytes, k_major, span)
    slice_ = SharedOperandLayout(part, element_bytes, k_major, span)
    points = [(r, c) for r in range(part[0]) for c in range(part[1])]
    skipped = column // (span // element_bytes) * slice_.box_bytes // element_bytes
    inside = element_indices(larger, [(r, column + c) for r, c in points])
    assert [index - skipped for index in inside] == element_indices(slice_, points)


class _Stage:
    """Stage `stage` of a stacked layout, indexed as a 2-d tile (what element_indices reads)."""

    def __init__(self, stacked: StackedOperandLayout, stage: int) -> None:
        self.stacked, self.stage = stacked, stage

    def element_index(self, row: ir.Value, column: ir.Value) -> ir.Value:
        return self.stacked.element_index(index(self.stage), row, column)


@pytest.mark.parametrize("stages,rows,columns,part,column,k_major", [
    (3, 16, 128, 64, 64, True), (2, 8, 64, 64, 0, True), (2, 64, 256, 128, 128, False),
])
def test_stage_slice_is_the_stage_buffers_bytes(stages: int, rows: int, columns: int,
                                                part: int, column: int, k_major: bool) -> None:
    """Element (r, c) of a stage slice's tile lies where element (s, r, column + c) of the
    stage buffer does, less s whole stages and the column boxes before the slice: every stage
    swizzles alike (a stage is whole 1 KiB patterns)."""
    stacked = StackedOperandLayout(stages, SharedOperandLayout((rows, columns), 2, k_major, 128))
    slice_ = SharedOperandLayout((rows, part), 2, k_major, 128)
    points = [(r, c) for r in range(rows) for c in range(part)]
    expected = element_indices(slice_, points)
    for stage in range(stages):
        skipped = stage * stacked.stage_bytes // 2 + column // 64 * slice_.box_bytes // 2
        inside = element_indices(_Stage(stacked, stage), [(r, column + c) for r, c in points])
        assert [at - skipped for at in inside] == expected


@pytest.mark.parametrize("shift", [0, 32])
def test_mla_slices_on_cpu(shift: int, rng: torch.Generator) -> None:
    q = (randn((HEADS, DIM + TAIL), torch.float32, rng) / 8).half()
    kv = randn((TOKENS, DIM + TAIL), torch.float16, rng)
    kernel = mla_slices.compile(shift=shift, tokens=TOKENS, target="cpu")
    s, o = kernel.get_profiler().run_poisoned(q, kv)
    expected_s, expected_o = reference(q, kv, DIM, BLOCK_N, shift)
    torch.testing.assert_close(s.double(), expected_s, rtol=1e-4, atol=1e-4)
    # P is S rounded to float16: a product near a rounding boundary may round the other way
    torch.testing.assert_close(o.double(), expected_o, rtol=2e-3, atol=2e-2)


@needs_ptxas
def test_mla_slices_read_in_place_on_sm90a() -> None:
    """Every slice on a 64-column boundary is read in place: Q and KV's three column parts
    for the scores, KV's two halves transposed for P V (one copy in the unrolled loop); the
    arena holds Q and KV only (P takes Q's bytes once the scores are done), and each gemm is
    wgmma."""
    kernel = mla_slices.compile(tokens=TOKENS, target="cuda:sm_90a")
    tile = kernel.asm["tile-cuda"]
    assert tile.count("tile.read_in_place") == 7
    assert tile.count("tile.wgmma =") == 4
    arena = int(re.search(r"tile.shared_arena = \{align = \d+ : i64, bytes = (\d+)", tile)[1])
    assert arena == 2 * HEADS * (DIM + TAIL) * 2
    ptx = kernel.asm["ptx"]
    assert "wgmma.mma_async" in ptx and ".local" not in ptx


@needs_ptxas
def test_slices_off_a_box_boundary_keep_their_copies() -> None:
    """Columns [32, 224) start inside a 128-byte box: that gemm's Q and KV slices get tiles
    of their own (filled by copies), the others are still read in place."""
    kernel = mla_slices.compile(shift=32, tokens=TOKENS, target="cuda:sm_90a")
    tile = kernel.asm["tile-cuda"]
    assert tile.count("tile.read_in_place") == 5
    assert tile.count("tile.wgmma =") == 4
    copied = re.findall(r"tile.copy %\d+\[%c0\w*, %c32\w*\] \[64, 192\] to %\d+\[[^]]*\] "
                        r"\[64, 192\] :", tile)
    assert len(copied) == 2
    assert "wgmma.mma_async" in kernel.asm["ptx"]


def test_sliced_gemm_on_cpu(rng: torch.Generator) -> None:
    a, b = randn((200, 384), torch.float16, rng), randn((136, 384), torch.float16, rng)
    kernel = sliced_gemm.compile(M=200, N=136, K=384, target="cpu")
    c = kernel.get_profiler().run_poisoned(a, b)
    torch.testing.assert_close(c.double(), a.double() @ b.double().T, rtol=1e-4, atol=1e-3)


@needs_ptxas
def test_sliced_gemm_reads_the_pipelines_slots_in_place() -> None:
    """The halves of the cp.async pipeline's slots are read in place: the arena holds the
    slots only (3 stages of two 32 KiB tiles)."""
    kernel = sliced_gemm.compile(M=200, N=136, K=384, target="cuda:sm_90a")
    tile = kernel.asm["tile-cuda"]
    assert tile.count("tile.read_in_place") == 4 and tile.count("tile.wgmma =") == 2
    assert 'mechanism = "cp.async"' in tile
    arena = int(re.search(r"tile.shared_arena = \{align = \d+ : i64, bytes = (\d+)", tile)[1])
    assert arena == 3 * 2 * 128 * 128 * 2
    assert "wgmma.mma_async" in kernel.asm["ptx"]


STAGED_TOKENS = 200  # two blocks of two stages, the last stage's block ragged


def test_staged_slices_on_cpu(rng: torch.Generator) -> None:
    """Stage slices (`KV_shared[stage, :, :128]`, the stage a loop value) against float64."""
    q = (randn((HEADS, 256 + TAIL), torch.float32, rng) / 8).half()
    kv = randn((STAGED_TOKENS, 256 + TAIL), torch.float16, rng)
    kernel = staged_slices.compile(tokens=STAGED_TOKENS, target="cpu")
    s, o = kernel.get_profiler().run_poisoned(q, kv)
    expected_s, expected_o = staged_reference(q, kv)
    torch.testing.assert_close(s.double(), expected_s, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(o.double(), expected_o, rtol=2e-3, atol=2e-2)


@needs_ptxas
def test_staged_slices_read_in_place_on_sm90a() -> None:
    """Every stage slice is read in place (Q's halves, KV's halves and whole first half for
    P V, the tail's whole stage): the stage buffers get the slices' layout stacked over their
    stages, and the arena holds Q, its tail, the two stage buffers and P only (128 KiB; the
    copies took 200 KiB)."""
    kernel = staged_slices.compile(tokens=STAGED_TOKENS, target="cuda:sm_90a")
    tile = kernel.asm["tile-cuda"]
    assert tile.count("tile.read_in_place") == 6 and tile.count("tile.wgmma =") == 4
    stage_buffers = [line for line in tile.splitlines() if "tile.alloc" in line and
                     re.search(r': memref<2x64x(256|64)xf16, "shared">$', line)]
    assert len(stage_buffers) == 2
    assert all("tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64"
               in line for line in stage_buffers)
    arena = int(re.search(r"tile.shared_arena = \{align = \d+ : i64, bytes = (\d+)", tile)[1])
    assert arena == (HEADS * (256 + TAIL) + 2 * BLOCK_N * (256 + TAIL) + HEADS * BLOCK_N) * 2
    ptx = kernel.asm["ptx"]
    assert "wgmma.mma_async" in ptx and ".local" not in ptx
