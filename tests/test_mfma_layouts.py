"""The MFMA layouts of compiler/layouts/amd.py against a numpy model of the instructions.

No AMD GPU runs here, so a wrong lane or register mapping would only show as wrong numbers on
an MI300X. The model below is written from the ISA guides' operand tables (AMD Instinct
MI300 / MI200 ISA, "Dependent arithmetic: matrix FMA"; AMD's matrix instruction calculator),
independently of the GF(2) bases: per lane it reads A and B items and C registers the way the
hardware does, multiplies, and writes D back. Each wave's operand registers are filled through
the operand layouts, every block instruction of the wave grid is run on them, and the product
assembled through the accumulator layout must be numpy's A @ B (+ C).
"""

from __future__ import annotations

import numpy as np
import pytest

from tilec.compiler.layouts.amd import (
    MFMA_INSTRUCTIONS,
    WAVE_LANES,
    MfmaInstruction,
    WaveGrid,
    instructions_for,
    wave_grid,
)
from tilec.compiler.layouts.linear import LayoutError


def isa_a(instr: MfmaInstruction, row: int, k: int) -> tuple[int, int]:
    """(lane, item) holding A[row][k] in the ISA's table: lane = i + m * (k / per_lane)."""
    return row + instr.m * (k // instr.per_lane), k % instr.per_lane


def isa_b(instr: MfmaInstruction, k: int, column: int) -> tuple[int, int]:
    """(lane, item) holding B[k][column]: lane = j + n * (k / per_lane)."""
    return column + instr.n * (k // instr.per_lane), k % instr.per_lane


def isa_d(instr: MfmaInstruction, row: int, column: int) -> tuple[int, int]:
    """(lane, register) holding D[row][column]: 32 x 32: lane = j + 32 ((i / 4) % 2),
    register = i % 4 + 4 (i / 8); 16 x 16: lane = j + 16 (i / 4), register = i % 4."""
    if instr.m == 32:
        return column + 32 * ((row // 4) % 2), row % 4 + 4 * (row // 8)
    return column + 16 * (row // 4), row % 4


def run_instruction(instr: MfmaInstruction, a_items: np.ndarray, b_items: np.ndarray,
                    c_registers: np.ndarray) -> np.ndarray:
    """One wave's MFMA: (64, per_lane) A and B items and (64, registers) C -> D registers."""
    a = np.empty((instr.m, instr.k))
    b = np.empty((instr.k, instr.n))
    c = np.empty((instr.m, instr.n))
    for row in range(instr.m):
        for k in range(instr.k):
            a[row, k] = a_items[isa_a(instr, row, k)]
    for k in range(instr.k):
        for column in range(instr.n):
            b[k, column] = b_items[isa_b(instr, k, column)]
    for row in range(instr.m):
        for column in range(instr.n):
            c[row, column] = c_registers[isa_d(instr, row, column)]
    d = a @ b + c
    result = np.empty_like(c_registers)
    for row in range(instr.m):
        for column in range(instr.n):
            result[isa_d(instr, row, column)] = d[row, column]
    return result


def gemm_through_layouts(grid: WaveGrid, a: np.ndarray, b: np.ndarray, c: np.ndarray
                         ) -> np.ndarray:
    """C + A @ B computed the way the lowering does: registers filled by the layouts, one
    instruction per wave, block and K step, the result read back by the accumulator layout."""
    instr = grid.instruction
    a_layout, b_layout, c_layout = grid.operand_a(), grid.operand_b(), grid.accumulator()
    waves = grid.waves_m * grid.waves_n
    assert a_layout.warps == b_layout.warps == c_layout.warps == waves
    assert a_layout.lanes == b_layout.lanes == c_layout.lanes == WAVE_LANES

    def registers(layout, values: np.ndarray) -> np.ndarray:  # (waves, lanes, registers)
        held = np.empty((waves, WAVE_LANES, layout.num_registers))
        for wave in range(waves):
            for lane in range(WAVE_LANES):
                for register in range(layout.num_registers):
                    held[wave, lane, register] = values[layout.apply(register, lane, wave)]
        return held

    a_held, b_held, c_held = registers(a_layout, a), registers(b_layout, b), registers(
        c_layout, c)
    for wave in range(waves):
        for i in range(grid.blocks_m):
            for j in range(grid.blocks_n):
                accumulator = [grid.accumulator_register(i, j, r) for r in range(instr.registers)]
                for step in range(grid.steps):
                    a_items = a_held[wave][:, [grid.operand_register(i, step, e)
                                               for e in range(instr.per_lane)]]
                    b_items = b_held[wave][:, [grid.operand_register(j, step, e)
                                               for e in range(instr.per_lane)]]
                    c_held[wave][:, accumulator] = run_instruction(
                        instr, a_items, b_items, c_held[wave][:, accumulator])
    result = np.full(c.shape, np.nan)
    for wave in range(waves):
        for lane in range(WAVE_LANES):
            for register in range(c_layout.num_registers):
                result[c_layout.apply(register, lane, wave)] = c_held[wave, lane, register]
    return result


ALL = sorted({instr for table in MFMA_INSTRUCTIONS.values() for instr in table},
             key=lambda instr: instr.name)  # each chip's spelling: gfx90a's and gfx942's


@pytest.mark.parametrize("instr", ALL, ids=lambda instr: instr.name)
def test_one_block_matches_numpy(instr: MfmaInstruction) -> None:
    rng = np.random.default_rng(1)
    grid = WaveGrid(instr, 1, 1, instr.m, instr.n, instr.k)
    a, b = rng.standard_normal((instr.m, instr.k)), rng.standard_normal((instr.k, instr.n))
    c = rng.standard_normal((instr.m, instr.n))
    np.testing.assert_allclose(gemm_through_layouts(grid, a, b, c), a @ b + c, rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize(("name", "shape", "waves", "policy"), [
    ("v_mfma_f32_32x32x8_f16", (128, 128, 32), 4, "square"),
    ("v_mfma_f32_16x16x16_f16", (64, 32, 64), 4, "full_row"),
    ("v_mfma_i32_32x32x16_i8", (64, 128, 64), 2, "full_col"),
    ("v_mfma_f32_16x16x32_bf8_bf8", (32, 64, 64), 8, "square"),
    ("v_mfma_f32_32x32x2f32", (64, 64, 8), 4, "square"),
])
def test_wave_grids_match_numpy(name: str, shape: tuple[int, int, int], waves: int,
                                policy: str) -> None:
    """Several waves, blocks and K steps: every lane bit, register repeat and wave bit."""
    instr = next(instr for instr in ALL if instr.name == name)
    grid = wave_grid(instr, *shape, waves, policy)
    assert grid is not None
    rng = np.random.default_rng(2)
    m, n, k = shape
    a, b, c = (rng.standard_normal(s) for s in ((m, k), (k, n), (m, n)))
    np.testing.assert_allclose(gemm_through_layouts(grid, a, b, c), a @ b + c, rtol=1e-12,
                               atol=1e-12)


def test_layouts_are_bijective_where_they_must_be() -> None:
    """The accumulator holds each element once; an operand once per wave of the other
    dimension (its copies)."""
    grid = wave_grid(instructions_for("gfx942", "f16")[0], 128, 128, 32, 4)
    assert (grid.waves_m, grid.waves_n) == (2, 2)
    assert grid.accumulator().is_injective() and grid.accumulator().is_surjective()
    a, b = grid.operand_a(), grid.operand_b()
    assert a.covers_tile() and b.covers_tile()
    # thread bits: 6 lane bits, then the wave's N bit (6) and M bit (7)
    assert a.replicated_thread_bits() == [6] and b.replicated_thread_bits() == [7]


def test_wrong_layout_is_caught() -> None:
    """The model sees a layout with two lane bits swapped (the check can fail)."""
    instr = instructions_for("gfx942", "f16")[0]
    grid = WaveGrid(instr, 1, 1, 32, 32, 8)
    good = grid.accumulator()
    swapped = type(good)(good.shape, good.register, (good.lane[1], good.lane[0], *good.lane[2:]),
                         good.warp)
    rng = np.random.default_rng(3)
    a, b, c = rng.standard_normal((32, 8)), rng.standard_normal((8, 32)), np.zeros((32, 32))

    class Swapped(WaveGrid):
        def accumulator(self):
            return swapped

    wrong = gemm_through_layouts(Swapped(instr, 1, 1, 32, 32, 8), a, b, c)
    assert not np.allclose(wrong, a @ b)


def test_chip_instruction_tables() -> None:
    assert instructions_for("gfx90a", "e4m3fnuz") == ()  # fp8 is CDNA3's
    assert instructions_for("gfx942", "e4m3") == ()  # OCP fp8 is CDNA4's
    assert [i.name for i in instructions_for("gfx942", "s8")] == [
        "v_mfma_i32_32x32x16_i8", "v_mfma_i32_16x16x32_i8"]
    assert [i.k for i in instructions_for("gfx90a", "s8")] == [8, 16]
    assert wave_grid(instructions_for("gfx942", "f16")[0], 16, 16, 16, 1) is None
    with pytest.raises(LayoutError, match="not a whole number"):
        WaveGrid(instructions_for("gfx942", "f16")[0], 2, 1, 32, 32, 8)
