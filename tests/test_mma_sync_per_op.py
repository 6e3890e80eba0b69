"""tile.gemm lowered one op at a time to ldmatrix + mma.sync on sm_80 (plan-mma-sync-gemms,
compiler/passes/_mma_sync.py).

The kernels of tests/gpu/mma_sync_kernels.py (a T.Parallel epilogue, A from registers,
transposed operands, a batched grid in bf16, int8 and tf32, attention's two gemms) compile for
sm_80 to PTX whose gemms are mma.sync fed by ldmatrix (.trans for an MN-major operand) with no
CUDA-core multiply-add loop left, ptxas assembles it, and their CPU numerics match float64.
Numerics of the sm_80 PTX itself: tests/gpu/test_mma_sync_kernels.py on the GPU.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch
from mlir import ir
from mlir.dialects import func
from mlir.passmanager import PassManager

import tilec
from tilec.compiler.layouts.nvidia import mma_accumulator, mma_operand_a
from tilec.compiler.passes._mma_sync import (
    MmaSyncPlan,
    _translation,
    a_fragment_element,
    ldmatrix_row,
    operand_a_layout,
    shared_operand_layout,
)
from tilec.compiler.passes._scalar import index
from tilec.compiler.targets.cuda import ptxas_path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from mma_sync_kernels import CASES, TARGET, MmaSyncCase  # noqa: E402

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
# a SIMT gemm is block_M * block_N * block_K / threads multiply-adds per thread and K tile
SIMT_FMA_FLOOR = 256


def folded(build) -> list[int]:
    """The index values `build()` emits, folded to constants."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            values_of = []
            function = func.FuncOp("points", ir.FunctionType.get([], []))
            with ir.InsertionPoint(function.add_entry_block()):
                values_of = build()
                function.attributes["function_type"] = ir.TypeAttr.get(
                    ir.FunctionType.get([], [ir.IndexType.get()] * len(values_of)))
                func.ReturnOp(values_of)
        PassManager.parse("builtin.module(canonicalize)").run(module.operation)
        returned = function.entry_block.operations[len(function.entry_block.operations) - 1]
        return [ir.IntegerAttr(operand.owner.attributes["value"]).value
                for operand in returned.operands]


@pytest.mark.parametrize("is_a", [True, False])
@pytest.mark.parametrize("element_bytes,k_major,shape", [
    (2, True, (64, 32)), (2, True, (32, 64)), (2, True, (64, 128)), (2, False, (32, 64)),
    (2, False, (32, 256)), (1, True, (64, 64)), (1, True, (32, 128)), (4, True, (64, 32)),
])
def test_ldmatrix_gives_each_lane_its_mma_fragment(is_a: bool, element_bytes: int,
                                                   k_major: bool, shape: tuple[int, int]
                                                   ) -> None:
    """Simulate each x4 ldmatrix (PTX ISA: lane l receives row l / 4, bytes 4 (l % 4)..+3 of
    matrix i, whose rows lanes 8 i..8 i + 7 address; .trans: the transposed 16-bit matrix)
    over the swizzled tile, and compare what each lane's register i holds with mma.sync's
    A fragment (a_i: rows g + 8 (i % 2), K t * pack + 16 (i / 2) bytes) or the B fragments
    (register i: fragment i / 2, b_{i % 2}: column g, K t * pack + 16 (i % 2) bytes)."""
    layout = shared_operand_layout(shape, element_bytes, k_major)
    k, pack = 32 // element_bytes, 4 // element_bytes
    rows, columns = shape
    mn_extent = rows if k_major else columns
    k_extent = columns if k_major else rows
    points = [(r, c) for r in range(rows) for c in range(columns)]
    stored = folded(lambda: [layout.element_index(index(r), index(c)) for r, c in points])
    byte_of = {}  # (storage row, column, byte) -> address
    for (r, c), element in zip(points, stored, strict=True):
        for b in range(element_bytes):
            byte_of[r, c, b] = element * element_bytes + b
    assert len(set(byte_of.values())) == len(byte_of)  # the swizzle is a permutation
    content = {address: key for key, address in byte_of.items()}
    jobs = [(origin, piece, step) for origin in (0, 16) for piece in range(
        (mn_extent - origin) // 16)[:2] for step in range(k_extent // k)[:2]]
    for origin, piece, step in jobs:
        starts = folded(lambda o=origin, p=piece, s=step: [
            ldmatrix_row(layout, is_a, k, index(lane), index(o), p, s) for lane in range(32)])
        for lane in range(32):
            g, t = lane // 4, lane % 4
            for matrix in range(4):
                row_address = [element_bytes * starts[8 * matrix + r] for r in range(8)]
                if k_major:
                    loaded = [content[row_address[g] + 4 * t + b] for b in range(4)]
                else:  # .trans of 16-bit elements: column g of rows 2t, 2t + 1
                    loaded = [content[row_address[2 * t + e] + 2 * g + b]
                              for e in range(2) for b in range(2)]
                if is_a:
                    mn = origin + 16 * piece + g + 8 * (matrix % 2)
                    kk = step * k + t * pack + (matrix // 2) * 4 * pack
                else:
                    mn = origin + 16 * piece + 8 * (matrix // 2) + g
                    kk = step * k + t * pack + (matrix % 2) * 4 * pack
                expected = [((mn, kk + c) if k_major else (kk + c, mn)) + (b,)
                            for c in range(pack) for b in range(element_bytes)]
                assert loaded == expected, (origin, piece, step, lane, matrix)


@pytest.mark.parametrize("element_bytes,k_major,shape", [
    (2, True, (64, 32)), (2, True, (128, 64)), (2, False, (32, 128)), (2, False, (32, 256)),
    (1, True, (64, 128)), (4, True, (64, 32)), (2, True, (64, 16)),
])
def test_ldmatrix_immediates_are_the_swizzled_offsets(element_bytes: int, k_major: bool,
                                                      shape: tuple[int, int]) -> None:
    """The ldmatrix of one piece and step addresses an immediate past another's lane address
    where _translation gives the move as a constant: element_index moved by (rows, columns)
    must then be element_index plus that constant at every coordinate of the tile, and moves
    the swizzle changes must get no constant."""
    layout = shared_operand_layout(shape, element_bytes, k_major)
    rows, columns = shape
    points = [(r, c) for r in range(rows) for c in range(columns)]
    stored = dict(zip(points, folded(lambda: [layout.element_index(index(r), index(c))
                                              for r, c in points]), strict=True))
    constants = 0
    for move in [(r, c) for r in (0, 8, 16, 4, 2) for c in (0, 8, 16, 32, 64, 128)]:
        deltas = {stored[r + move[0], c + move[1]] - stored[r, c] for r, c in points
                  if (r + move[0], c + move[1]) in stored}
        delta = _translation(layout, *move)
        if delta is not None:
            constants += 1
            assert deltas <= {delta}, (move, deltas, delta)
        else:
            assert len(deltas) > 1 or move[0] % 8, move
    assert constants > 1


@pytest.mark.parametrize("block_m,block_k,element_bytes,warps", [
    (128, 32, 2, (2, 2)), (64, 64, 2, (4, 1)), (128, 64, 2, (4, 2)), (64, 64, 1, (2, 2)),
    (64, 32, 4, (2, 2)),
])
def test_register_a_ldmatrix_fills_the_a_fragment(block_m: int, block_k: int,
                                                  element_bytes: int,
                                                  warps: tuple[int, int]) -> None:
    """Simulate lower_mma_sync_load (the register-A chain's T.copy(A_shared, A_frag)): each
    warp's x4 ldmatrix loads over the swizzled K-major tile (lane l receives row l / 4, bytes
    4 (l % 4)..+3 of matrix q, whose rows lanes 8 q..8 q + 7 address), each register's
    elements stored into the fragment register a_fragment_element names. Every register of
    every thread must then hold the tile element mma.sync's A fragment layout gives it."""
    dtype = {1: "s8", 2: "f16", 4: "tf32"}[element_bytes]
    k, pack = 32 // element_bytes, 4 // element_bytes
    plan = MmaSyncPlan(warps[0], warps[1], k, dtype, True)
    tile = shared_operand_layout((block_m, block_k), element_bytes, True)
    fragment = operand_a_layout(block_m, block_k, plan)
    register_of = {fragment.register_coordinate(r): r for r in range(fragment.num_registers)}
    points = [(r, c) for r in range(block_m) for c in range(block_k)]
    stored = folded(lambda: [tile.element_index(index(r), index(c)) for r, c in points])
    element_at = {element: point for point, element in zip(points, stored, strict=True)}
    warp_m = block_m // warps[0]
    held: dict[tuple[int, int], tuple[int, int]] = {}
    for warp in range(warps[0] * warps[1]):
        origin = (warp // warps[1]) * warp_m
        for step in range(block_k // k):
            for piece in range(warp_m // 16):
                starts = folded(lambda o=origin, p=piece, s=step: [
                    ldmatrix_row(tile, True, k, index(lane), index(o), p, s)
                    for lane in range(32)])
                for lane in range(32):
                    g, t = lane // 4, lane % 4
                    for q in range(4):
                        first = starts[8 * q + g] + t * pack  # the lane's 4 bytes, in elements
                        for c in range(pack):
                            register = register_of[a_fragment_element(plan, piece, step, q, c)]
                            held[warp * 32 + lane, register] = element_at[first + c]
    for thread in range(fragment.threads):
        for register in range(fragment.num_registers):
            expected = fragment.apply(register, thread % 32, thread // 32)
            assert held[thread, register] == tuple(expected), (thread, register)


def test_accumulator_is_the_a_operand_over_a_warp_column() -> None:
    """Over a warps x 1 grid mma.sync's C fragment of an M x N tile is its A fragment of the
    same tile for the next gemm (attention's P), so the cast scores need no conversion."""
    for m, n, warps in [(64, 64, 4), (128, 64, 4), (64, 128, 2)]:
        assert mma_accumulator(m, n, warps, 1) == mma_operand_a(m, n, 16, warps, 1)


@needs_ptxas
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_sm80_ptx_runs_the_gemms_on_mma_sync(case: MmaSyncCase) -> None:
    kernel = tilec.compile(case.factory(), out_idx=[-1], target=TARGET)
    assert kernel.artifact.binary_kind == "cubin"
    assert "tile.tensorcore" not in kernel.asm["tile-cuda"]  # not the whole-kernel generator
    gemms = kernel.asm["tile-schedule"].count("tile.gemm ")
    assert kernel.asm["tile-cuda"].count("tile.mma_sync =") == gemms
    ptx = kernel.asm["ptx"]
    assert case.instruction in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx or case.transposed_loads
    assert ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx) == case.transposed_loads
    assert ptx.count("fma.rn.f32") < SIMT_FMA_FLOOR
    assert "wgmma" not in ptx and "fence.proxy.async" not in ptx


PIPELINED_3_STAGES = ("sm80_bias_relu", "sm80_register_a")  # T.Pipelined(num_stages=3)


@needs_ptxas
@pytest.mark.parametrize("case", [case for case in CASES
                                  if case.name.startswith(PIPELINED_3_STAGES)],
                         ids=lambda case: case.name)
def test_sm80_ptx_copies_issue_straight_and_load_a_by_ldmatrix(case: MmaSyncCase) -> None:
    """The cp.async of one pipelined iteration lie in one basic block (the sources' alignment
    is checked once before the loop, not per chunk; ptxas schedules within blocks): a third
    of them issue each iteration (two in the prologue, one in the loop), and every block
    holds whole iterations' copies; a register-A chain's fragment A is filled by ldmatrix,
    with no shared load per element."""
    ptx = tilec.compile(case.factory(), out_idx=[-1], target=TARGET).asm["ptx"]
    blocks = re.split(r"\n\$L__BB\d+_\d+:", ptx)
    copies = "cp.async.cg.shared.global"
    total = ptx.count(copies)
    assert total > 0 and total % 3 == 0
    assert all(block.count(copies) % (total // 3) == 0 for block in blocks)
    if "register_a" in case.name:
        assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
        assert "ld.shared" not in ptx


OPT_IN_CASES = ("sm80_bias_relu_misaligned_200x136x96", "sm80_register_a_200x136x96",
                "sm80_attention_1x2x150x64")


@needs_ptxas
@pytest.mark.parametrize("case", [case for case in CASES if case.name in OPT_IN_CASES],
                         ids=lambda case: case.name)
def test_sm80_staged_epilogue_assembles(case: MmaSyncCase, monkeypatch: pytest.MonkeyPatch) -> None:
    """TILEC_STAGED_EPILOGUE=1 (the accumulator's store through a padded shared tile): the
    kernels still compile and assemble, and the f16 C tile of the bias + ReLU epilogue
    leaves in 16-byte vectors instead of pairs (attention: its loop of two gemms, lowered
    twice as every loop of mma.sync gemms whose alignment is not known, holds fragments of
    its own, which both versions use). (Numerics: tests/gpu/test_mma_sync_kernels.py, built
    with it.)"""
    monkeypatch.setenv("TILEC_STAGED_EPILOGUE", "1")
    kernel = tilec.compile(case.factory(), out_idx=[-1], target=TARGET)
    assert kernel.artifact.binary_kind == "cubin"
    ptx = kernel.asm["ptx"]
    assert case.instruction in ptx and "cp.async.cg.shared.global" in ptx
    if "bias_relu" in case.name:  # its f16 C tile goes out through shared memory
        assert "st.global.v4.b32" in ptx and "st.global.v2.b16" not in ptx


@pytest.mark.parametrize("case", [case for case in CASES if "512" not in case.name],
                         ids=lambda case: case.name)
def test_cpu_numerics(case: MmaSyncCase, rng: torch.Generator) -> None:
    inputs = case.make_inputs(rng)
    out = tilec.compile(case.factory(), out_idx=[-1], target="cpu").get_profiler() \
        .run_poisoned(*inputs)
    expected = case.reference(*[x.double() for x in inputs])
    error = ((out.double() - expected).norm() / expected.norm()).item()
    assert error <= max(case.tolerance, 1e-12), error
