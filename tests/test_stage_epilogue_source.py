"""stage-epilogue-source (opt-in, TILEC_EPILOGUE_SHARED_SOURCE=1): scale + residual's R tile
is loaded by the TMA ring's producer into the slots the last K tiles drain and read by the
consumers from shared memory. No CPU check applies (the CPU target has no ring); checked
here: the source tile's addresses against TMA's 128-byte swizzle of the boxes the producer
loads (every element of the 128 x 256 f16 tile, its boxes in the ring's A and B slots), the
sm_90a kernel's PTX (the residual's four boxes loaded by TMA in two more ring iterations, no
global load left, a consumer thread's 128 elements in 64 4-byte shared loads, ptxas without
spills) and its launch
metadata (R's tensor map); the setting takes the tile before the default register preload
would.
The rewrite: lit_tests/passes/stage-epilogue-source.mlir; GPU
numerics (NaN-poisoned, float32) and speed: benchmarks/fused_gemm.py's
scale_residual_tmasource row."""

from __future__ import annotations

import operator
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from mlir import ir
from mlir.dialects import func

from tilec.compiler.passes._tma_ring import SourceTileLayout
from tilec.compiler.tensorcore.ptx import ptxas_check

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import fused_gemm  # noqa: E402

ROWS, COLUMNS, ELEMENT_BYTES = 128, 256, 2
# where the ring's lowering puts the four 16 KiB boxes: the first iteration's A slot and
# both halves of its B slot, the second iteration's A slot (byte offsets in the window)
BOX_BYTES = [1024 * 33, 1024 * 97, 1024 * 113, 1024 * 49]


def _evaluate(value: ir.Value, arguments: dict) -> int:
    """The integer `value` computes from the function's arguments (`arguments`: their
    values), through the arith ops SourceTileLayout emits."""
    if isinstance(value.owner, ir.Block):
        return arguments[value.arg_number]
    op = value.owner
    name = op.name
    if name == "arith.constant":
        return ir.IntegerAttr(op.attributes["value"]).value
    operands = [_evaluate(operand, arguments) for operand in op.operands]
    if name == "arith.select":
        return operands[1] if operands[0] else operands[2]
    if name == "arith.cmpi":
        assert ir.IntegerAttr(op.attributes["predicate"]).value == 0  # eq
        return int(operands[0] == operands[1])
    return {"arith.addi": operator.add, "arith.muli": operator.mul,
            "arith.divui": operator.floordiv, "arith.remui": operator.mod,
            "arith.andi": operator.and_, "arith.xori": operator.xor,
            "arith.shli": operator.lshift, "arith.shrui": operator.rshift}[name](*operands)


def _tma_128b(byte: int) -> int:
    """TMA's 128-byte swizzle of a byte offset from a 1 KiB-aligned box: its 16-byte chunk
    XOR the row within the 1 KiB pattern."""
    return byte ^ (((byte >> 7) & 7) << 4)


def test_source_tile_addresses_are_the_tma_boxes() -> None:
    """Every element (r, c) of the tile is read where TMA wrote it: box c // 64 at its base,
    row r's 128 bytes there, swizzled; so the tile's 32768 elements cover the boxes' bytes
    once each."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        index = ir.IndexType.get()
        with ir.InsertionPoint(module.body):
            function = func.FuncOp("f", ([index] * 2, []))
            block = function.add_entry_block()
        with ir.InsertionPoint(block):
            from tilec.compiler.passes._builders import index as constant

            lowering = SimpleNamespace(ring_lowering=SimpleNamespace(source_bases=[
                constant(byte // ELEMENT_BYTES) for byte in BOX_BYTES]))
            layout = SourceTileLayout((ROWS, COLUMNS), ELEMENT_BYTES, lowering)
            where = layout.element_index(*block.arguments)
            func.ReturnOp([])
        seen = set()
        for row in range(ROWS):
            for column in range(COLUMNS):
                box, within = divmod(column, 64)
                expected = BOX_BYTES[box] + _tma_128b(row * 128 + within * ELEMENT_BYTES)
                got = _evaluate(where, {0: row, 1: column}) * ELEMENT_BYTES
                assert got == expected, (row, column, got, expected)
                seen.add(got)
        assert len(seen) == ROWS * COLUMNS


def _scale_residual(monkeypatch, shared_source: bool, private: bool):
    for variable, wanted in (("TILEC_EPILOGUE_SHARED_SOURCE", shared_source),
                             ("TILEC_RING_PRIVATE_TILES", private)):
        monkeypatch.setenv(variable, "1" if wanted else "0")
    case = next(case for case in fused_gemm.CASES if case.name == "scale_residual")
    meta = case.inputs(fused_gemm._MetaTorch(torch), (1024, 1024, 1024), "meta")
    return case.kernel.compile(*meta, target="cuda:sm_90a", **case.options)


@pytest.mark.parametrize(("shared_source", "private"), [(False, False), (True, False),
                                                        (True, True)])
def test_sm90a_loads_the_residual_through_the_ring(shared_source, private, tmp_path,
                                                   monkeypatch) -> None:
    """Without the setting a consumer thread loads its R elements from global memory (into
    registers under the last K tile, prefetch-epilogue-operands' default preload);
    with it the producer loads R's four 64-column boxes by TMA after the tile's K tiles, in
    two ring iterations (48 KiB, then 16 KiB expected on their full barriers), and the
    consumers read the 128 elements from shared memory, each register pair one 4-byte load,
    with no spill; the kernel takes R's
    tensor map (box 64 x 128, 128B swizzle) after A's and B's and before C's. With private
    ring tiles (the default; TILEC_RING_PRIVATE_TILES=0 here keeps the barriers) the source's
    copy and reads keep the consumers' block barriers out (its slots' mbarriers order them):
    only the TMA store's slab barriers."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    kernel = _scale_residual(monkeypatch, shared_source, private)
    ptx = kernel.get_kernel_source()
    loads = ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global")
    expects = ptx.count("mbarrier.arrive.expect_tx")
    maps = [entry for entry in kernel.artifact.launch["abi"] if entry[0] == "tma"]
    if shared_source:
        assert (loads, expects) == (5 + 4, 1 + 2)
        assert "ld.global" not in ptx
        assert ptx.count("ld.shared.v2.b16") == 64 and "ld.shared.b16" not in ptx
        assert [entry[1] for entry in maps] == [0, 1, 2, 3]
        assert kernel.artifact.launch["tma"][maps[2][2]] == {"box": [64, 128], "swizzle": 128}
    else:
        assert (loads, expects) == (5, 1)
        assert "ld.global" in ptx  # the residual's loads (by default preloaded into registers)
        assert [entry[1] for entry in maps] == [0, 1, 3]
    assert ("bar.sync \t1, 256;" in ptx) != private
    report = ptxas_check(ptx, "sm_90a")
    # the shared reads' kernel spills nothing
    assert report.ok and (report.spill_bytes == 0 or not shared_source), report.log
