"""select-shared-swizzle's "transpose" layout (TransposedTile), simulated on the CPU: the
addresses lower-tile-to-gpu emits for each element (folded from its IR) form a permutation of
the tile that keeps every 16-byte chunk whole and in its row, and the transpose example's
shared reads, lane by lane as its fragment layout places them, meet no bank conflict.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
import torch
from mlir import ir
from mlir.dialects import arith, func
from mlir.passmanager import PassManager

from tilec.compiler.layouts.linear import LinearLayout
from tilec.compiler.passes.select_shared_swizzle import TransposedTile

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "norm"
BANKS, BANK_BYTES = 32, 4


def element_indices(layout: TransposedTile, points: list[tuple[int, int]]) -> list[int]:
    """`layout.element_index` of each (row, column), as the lowering emits it, folded."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        index_type = ir.IndexType.get()
        with ir.InsertionPoint(module.body):
            function = func.FuncOp("points", ir.FunctionType.get([], [index_type] * len(points)))
            with ir.InsertionPoint(function.add_entry_block()):
                func.ReturnOp([layout.element_index(arith.constant(index_type, r),
                                                    arith.constant(index_type, c))
                               for r, c in points])
        PassManager.parse("builtin.module(canonicalize)").run(module.operation)
        returned = function.entry_block.operations[len(function.entry_block.operations) - 1]
        return [ir.IntegerAttr(operand.owner.attributes["value"]).value
                for operand in returned.operands]


def tile_of(shape: tuple[int, int], element: str) -> TransposedTile | None:
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(f'func.func @f() {{ %t = memref.alloca() : memref<{shape[0]}x'
                                 f'{shape[1]}x{element}> return }}')
        alloc = module.body.operations[0].regions[0].blocks[0].operations[0]
        return TransposedTile.of(alloc)


@pytest.mark.parametrize("shape, element, bytes_", [
    ((64, 64), "f16", 2), ((64, 64), "f32", 4), ((32, 64), "i8", 1), ((16, 128), "bf16", 2),
])
def test_layout_permutes_whole_chunks_within_rows(shape, element, bytes_) -> None:
    rows, columns = shape
    layout = tile_of(shape, element)
    assert layout is not None and layout.chunk_elements == 16 // bytes_
    points = [(r, c) for r in range(rows) for c in range(columns)]
    indices = element_indices(layout, points)
    assert sorted(indices) == list(range(rows * columns))  # every element its own place
    chunk = layout.chunk_elements
    where = dict(zip(points, indices, strict=True))
    for (r, c), at in where.items():
        assert at // columns == r  # the element stays in its row
        start = where[(r, c - c % chunk)]
        assert start % chunk == 0 and at == start + c % chunk  # its chunk whole and aligned


@pytest.mark.parametrize("shape, element", [((64, 24), "f16"), ((64, 4), "f16"),
                                            ((8, 8, ), "i1")])
def test_rows_it_cannot_swizzle(shape, element) -> None:
    """3 chunks a row (no power of two), half a chunk, sub-byte elements: no layout."""
    assert tile_of(shape, element) is None


def transpose_example():
    spec = importlib.util.spec_from_file_location("norm_transpose_sim", EXAMPLES / "transpose.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("threads", [128, 256])
def test_transpose_reads_are_free_of_bank_conflicts(threads: int, monkeypatch,
                                                    tmp_path) -> None:
    """Each shared load of the transpose example: the 32 lanes of a warp read tile[i, j] for
    the (j, i) their fragment register holds; through the layout no two lanes touch the same
    bank at different 4-byte words (without it, 8 of them do)."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    module = transpose_example()
    compiled = module.transpose.compile(torch.empty(1024, 2048, dtype=torch.float16,
                                                    device="meta"),
                                        target="cuda:sm_90a", threads=threads)
    schedule = compiled.asm["tile-schedule"]
    assert 'tile.alloc {tile.swizzle = "transpose"} : memref<64x64xf16, "shared">' in schedule
    fragment = next(LinearLayout.parse(text) for text in re.findall(
        r"tile\.alloc \{tile\.layout = (#tile\.linear<[^>]*>)\}", compiled.asm["tile-cuda"])
        if LinearLayout.parse(text).rank == 2)
    layout = tile_of((64, 64), "f16")
    points = [(r, c) for r in range(64) for c in range(64)]
    swizzled = dict(zip(points, element_indices(layout, points), strict=True))
    plain = {(r, c): r * 64 + c for r, c in points}
    for place, worst in ((swizzled, 1), (plain, 8)):
        ways = []
        for warp in range(fragment.warps):
            for register in range(fragment.num_registers):
                words: dict[int, set[int]] = {}
                for lane in range(32):
                    j, i = fragment.apply(register, lane, warp)
                    word = place[(i, j)] * 2 // BANK_BYTES
                    words.setdefault(word % BANKS, set()).add(word)
                ways.append(max(len(w) for w in words.values()))
        assert max(ways) == worst
