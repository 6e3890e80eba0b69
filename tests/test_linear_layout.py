"""The linear-layout model: round trips, the PTX ISA's fragment tables, slices, conversions."""

from itertools import product

import pytest

from tilec.compiler.layouts.linear import LayoutError, LinearLayout, blocked, whole_tile
from tilec.compiler.layouts.nvidia import (
    mma_accumulator,
    mma_operand_a,
    mma_operand_b,
    wgmma_accumulator,
    wgmma_operand_a,
)


def holders(layout: LinearLayout) -> dict[tuple[int, ...], set[int]]:
    """coordinate -> the thread ids holding it (elements inside the tile only)."""
    found: dict[tuple[int, ...], set[int]] = {}
    for register, thread in product(range(layout.num_registers), range(layout.threads)):
        point = layout.apply(register, thread % layout.lanes, thread // layout.lanes)
        if layout.in_tile(point):
            found.setdefault(point, set()).add(thread)
    return found


def blocked_reference(shape, spt, tpb, tstride, threads):
    """The blocked mapping written out: x_d = (r // spt) * spt * tpb + t_d * spt + r % spt."""
    found: dict[tuple[int, ...], set[int]] = {}
    regs = [-(-extent // t) for extent, t in zip(shape, tpb, strict=True)]
    for tid in range(threads):
        t = [(tid // s) % p for s, p in zip(tstride, tpb, strict=True)]
        for r in product(*(range(n) for n in regs)):
            x = tuple((r[d] // spt[d]) * spt[d] * tpb[d] + t[d] * spt[d] + r[d] % spt[d]
                      for d in range(len(shape)))
            if all(v < e for v, e in zip(x, shape, strict=True)):
                found.setdefault(x, set()).add(tid)
    return found


@pytest.mark.parametrize("shape, spt, tpb, tstride, threads", [
    ((64, 64), (1, 4), (8, 16), (16, 1), 128),
    ((64, 64), (4, 4), (8, 16), (16, 1), 128),
    ((16,), (1,), (8,), (16,), 128),          # a reduced fragment: copies over 16 threads
    ((48, 24), (1, 4), (16, 2), (2, 1), 32),  # ragged extents: padded, masked registers
    ((128, 128), (4, 4), (16, 16), (16, 1), 256),
    ((8, 4), (1, 4), (4, 1), (1, 1), 4),      # fewer threads than a warp
])
def test_blocked_keeps_the_thread_mapping(shape, spt, tpb, tstride, threads):
    layout = blocked(shape, spt, tpb, tstride, threads)
    assert layout.threads == threads
    assert holders(layout) == blocked_reference(shape, spt, tpb, tstride, threads)


def test_blocked_register_order_is_row_major():
    layout = blocked((8, 8), (2, 2), (4, 4), (4, 1), 16)
    assert [layout.register_coordinate(r) for r in range(4)] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert layout.contiguous_registers() == 2
    assert layout.contiguous_registers(0) == 1


def test_text_round_trip_and_rejects():
    layout = wgmma_accumulator(128, 256, 2)
    assert LinearLayout.parse(str(layout)) == layout
    assert LinearLayout.parse(" #tile.linear<[4], register = [], lane = [[1], [2]], warp = []>"
                              ) == LinearLayout((4,), (), ((1,), (2,)), ())
    with pytest.raises(LayoutError, match="leaves the tile"):
        LinearLayout((4, 4), ((4, 0),), (), ())
    with pytest.raises(LayoutError, match="coordinates"):
        LinearLayout((4, 4), ((1,),), (), ())
    with pytest.raises(LayoutError, match="not a #tile.linear"):
        LinearLayout.parse("#tile.linear<[4]>")


def test_locate_inverts_apply():
    for layout in (mma_accumulator(64, 32, 2, 2), wgmma_accumulator(128, 64, 2),
                   blocked((32, 16), (1, 4), (8, 4), (4, 1), 32)):
        for register, thread in product(range(layout.num_registers), range(layout.threads)):
            lane, warp = thread % layout.lanes, thread // layout.lanes
            assert layout.locate(layout.apply(register, lane, warp)) == (register, lane, warp)
        table = layout.inverse()
        assert len(table) == layout.num_registers * layout.threads


def test_locate_picks_the_canonical_copy():
    layout = blocked((16,), (1,), (8,), (16,), 128)  # tid bits 4-6 pick the element
    assert layout.locate((5,)) == (0, 16, 2)  # tids 80..95 hold it: 80 is the lowest
    assert layout.replicated_thread_bits() == [0, 1, 2, 3]
    assert layout.replicated and not layout.is_injective()
    with pytest.raises(LayoutError, match="not invertible"):
        layout.inverse()
    assert layout.locate((16,)) is None


def fragment(layout, lane, warp=0):
    return [layout.apply(r, lane, warp) for r in range(layout.num_registers)]


@pytest.mark.parametrize("bits", [16, 8, 32])
def test_mma_operands_match_the_ptx_tables(bits):
    """PTX ISA, mma.m16n8k16 (.f16/.bf16), m16n8k32 (.s8/.e4m3) and m16n8k8 (.tf32)."""
    a, b = mma_operand_a(16, 256 // bits, bits), mma_operand_b(256 // bits, 8, bits)
    for lane in range(32):
        g, t = lane // 4, lane % 4
        if bits == 16:
            expect_a = [(g + 8 * (i // 2 % 2), 2 * t + (i % 2) + 8 * (i // 4)) for i in range(8)]
            expect_b = [(2 * t + (i % 2) + 8 * (i // 2), g) for i in range(4)]
        elif bits == 8:
            expect_a = [(g + 8 * (i // 4 % 2), 4 * t + (i % 4) + 16 * (i // 8))
                        for i in range(16)]
            expect_b = [(4 * t + (i % 4) + 16 * (i // 4), g) for i in range(8)]
        else:
            expect_a = [(g + 8 * (i % 2), t + 4 * (i // 2)) for i in range(4)]
            expect_b = [(t + 4 * i, g) for i in range(2)]
        assert fragment(a, lane) == expect_a
        assert fragment(b, lane) == expect_b


def test_mma_accumulator_matches_the_ptx_table_and_the_warp_grid():
    one = mma_accumulator(16, 8)
    for lane in range(32):
        g, t = lane // 4, lane % 4
        assert fragment(one, lane) == [(g + 8 * (i // 2), 2 * t + i % 2) for i in range(4)]
    grid = mma_accumulator(64, 64, 2, 2)  # warp tiles of 32 x 32, warp = wm * 2 + wn
    assert grid.num_registers == 32 and grid.is_injective() and grid.is_surjective()
    for warp in range(4):
        wm, wn = divmod(warp, 2)
        rows = {p[0] for p in fragment(grid, 0, warp)}
        cols = {p[1] for p in fragment(grid, 0, warp)}
        assert min(rows) == 32 * wm and max(rows) < 32 * (wm + 1)
        assert min(cols) == 32 * wn and max(cols) < 32 * (wn + 1)
    # operands: A is shared by the warps of one row of the grid, B by those of one column
    a, b = mma_operand_a(64, 32, 16, 2, 2), mma_operand_b(32, 64, 16, 2, 2)
    assert fragment(a, 5, 0) == fragment(a, 5, 1) != fragment(a, 5, 2)
    assert fragment(b, 5, 0) == fragment(b, 5, 2) != fragment(b, 5, 1)
    assert a.covers_tile() and b.covers_tile()


def test_wgmma_accumulator_matches_the_ptx_table():
    """m64nNk16 D: d[i] at (16 w + g + 8 (i % 4 >= 2), 8 (i // 4) + 2 t + i % 2)."""
    layout = wgmma_accumulator(64, 256)
    assert layout.num_registers == 128 and layout.threads == 128
    for warp, lane in product(range(4), range(32)):
        g, t = lane // 4, lane % 4
        assert fragment(layout, lane, warp) == [
            (16 * warp + g + 8 * (i % 4 // 2), 8 * (i // 4) + 2 * t + i % 2) for i in range(128)]


def test_wgmma_warpgroups_own_contiguous_slabs():
    layout = wgmma_accumulator(256, 64, 2)  # 2 warpgroups x 128 rows = 2 slabs of 64 each
    assert layout.warps == 8 and layout.num_registers == 64
    rows = {warp: {p[0] for p in fragment(layout, 0, warp)} for warp in range(8)}
    assert rows[0] == {0, 8, 64, 72} and rows[1] == {16, 24, 80, 88}
    assert rows[4] == {128, 136, 192, 200}
    assert layout.is_injective() and layout.is_surjective()


def test_wgmma_register_a_matches_the_ptx_table():
    """A from registers, m64k16 f16: warp w rows 16w.., mma.sync's A fragment within."""
    layout = wgmma_operand_a(64, 32, 16)
    for warp, lane in product(range(4), range(32)):
        g, t = lane // 4, lane % 4
        assert fragment(layout, lane, warp) == [
            (16 * warp + g + 8 * (i // 2 % 2), 2 * t + (i % 2) + 8 * (i // 4 % 2) + 16 * (i // 8))
            for i in range(16)]
    eight_bit = wgmma_operand_a(128, 32, 8, 2)
    assert eight_bit.is_injective() and eight_bit.is_surjective()
    with pytest.raises(LayoutError, match="64-row slabs"):
        wgmma_operand_a(96, 16, 16)


def test_slice_makes_reduced_threads_copies():
    acc = wgmma_accumulator(64, 64)
    rows = acc.slice(1)
    assert rows.shape == (64,)
    assert rows.register == ((8,),)  # the +8 row register stays, the column ones go
    assert rows.lane == ((0,), (0,), (1,), (2,), (4,))
    assert rows.warp == ((16,), (32,))
    assert acc.reduction_bits(1) == ([0, 1], [])
    assert acc.reduction_bits(0) == ([2, 3, 4], [0, 1])
    # a thread reduces its registers pairwise into the sliced layout's
    pairs = acc.slice_registers(1)
    assert [target for _, target in pairs] == [r >> 1 & 1 for r in range(acc.num_registers)]
    for source, target in pairs:
        assert acc.register_coordinate(source)[0] == rows.register_coordinate(target)[0]
    # the blocked slice is the old "layout without the reduced dimension"
    two_d = blocked((16, 64), (1, 4), (8, 16), (16, 1), 128)
    assert two_d.slice(1) == blocked((16,), (1,), (8,), (16,), 128)


def test_reduction_rejects_mixed_thread_bases():
    mixed = LinearLayout((4, 4), ((1, 0), (2, 0)), ((1, 1), (0, 2)), ())
    with pytest.raises(LayoutError, match="convert the layout"):
        mixed.reduction_bits(1)


def test_extend_and_select():
    rows = blocked((64,), (4,), (8,), (16,), 128)
    operand = rows.extend([0], (64, 32))  # A rows where C's threads need them, whole along K
    assert operand.select([0]) == rows
    for register, thread in product(range(operand.num_registers), (0, 3, 17, 64, 127)):
        point = operand.apply(register, thread % 32, thread // 32)
        assert rows.apply(rows.locate((point[0],))[0], thread % 32, thread // 32)[0] == point[0]
    transposed = operand.select([1, 0])
    assert transposed.shape == (32, 64)


def test_whole_tile_gives_every_thread_every_element_row_major():
    layout = whole_tile((3, 5), 64)
    assert layout.padded_shape == (4, 8) and layout.num_registers == 32
    for register, thread in product(range(32), range(64)):
        point = layout.apply(register, thread % 32, thread // 32)
        assert point == (register // 8, register % 8)
    assert holders(layout) == {(i, j): set(range(64)) for i in range(3) for j in range(5)}
    assert layout.holds_whole_tile() and whole_tile((1,), 8).holds_whole_tile()
    assert not blocked((4, 8), (1, 1), (4, 8), (8, 1), 32).holds_whole_tile()
    # a register renaming of the whole tile is not the row-major form the lowering indexes
    renamed = LinearLayout((4, 8), layout.register[::-1], layout.lane, layout.warp)
    assert not renamed.holds_whole_tile()


def test_conversions():
    acc = mma_accumulator(32, 32)
    assert acc.conversion(acc) == "none"
    swapped = LinearLayout(acc.shape, (acc.register[1], acc.register[0], *acc.register[2:]),
                           acc.lane, acc.warp)
    assert acc.conversion(swapped) == "registers"
    assert acc.register_permutation(swapped)[:4] == [0, 2, 1, 3]
    other = blocked((32, 32), (1, 4), (4, 8), (8, 1), 32)
    assert acc.conversion(other) == "shared"


def test_padding_masks():
    layout = blocked((48, 8), (1, 8), (16, 1), (1, 1), 16)  # 3 register rows of 16 live
    assert layout.num_registers == 32
    assert [layout.register_mask(r) for r in range(0, 32, 8)] == [True, True, True, False]
    assert len(layout.live_registers()) == 24
    assert layout.covers_tile()
    thread_dependent = LinearLayout((3,), ((1,),), ((2,),), ())
    assert thread_dependent.register_mask(0) is True
    assert thread_dependent.register_mask(1) is None


def emitted(layout: LinearLayout, register: int, tid: int) -> tuple[int, ...]:
    """The coordinates register_coordinates emits, folded for a constant thread id."""
    from mlir import ir
    from mlir.dialects import arith, func
    from mlir.passmanager import PassManager

    from tilec.compiler.layouts.emit import register_coordinates, thread_coordinates

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        index = ir.IndexType.get()
        with ir.InsertionPoint(module.body):
            function = func.FuncOp("f", ([], [index] * layout.rank))
            with ir.InsertionPoint(function.add_entry_block()):
                shift = thread_coordinates(layout, arith.constant(index, tid))
                func.ReturnOp(register_coordinates(layout, register, shift))
        PassManager.parse("builtin.module(canonicalize)").run(module.operation)
        returned = function.entry_block.operations[len(function.entry_block.operations) - 1]
        return tuple(ir.IntegerAttr(v.owner.attributes["value"]).value
                     for v in returned.operands)


@pytest.mark.parametrize("layout", [
    blocked((64, 64), (4, 4), (8, 16), (16, 1), 128),
    wgmma_accumulator(128, 16, 2),
    mma_operand_b(32, 32, 8, 2, 2),
    LinearLayout((8, 8), ((1, 1), (4, 0)), ((2, 3), (0, 4)), ((1, 0),)),  # xor-swizzled
], ids=["blocked", "wgmma", "mma-b", "swizzled"])
def test_emitted_coordinates_match_apply(layout):
    for register in (0, 1, layout.num_registers - 1):
        for tid in (0, 1, 5, 37, layout.threads - 1):
            assert emitted(layout, register, tid) == layout.apply(
                register, tid % layout.lanes, tid // layout.lanes)


def test_from_holders_reads_a_table_back_and_rejects_what_is_not_linear():
    layout = mma_accumulator(32, 16, 1, 1)
    table = {(r, t): layout.apply(r, t % 32, t // 32)
             for r in range(layout.num_registers) for t in range(32)}
    assert LinearLayout.from_holders((32, 16), table, 32) == layout
    # a replicated table over more threads than it names: the others hold copies
    rows = {(r, t): (r,) for r in range(4) for t in range(8)}
    wide = LinearLayout.from_holders((4,), rows, 64)
    assert wide.lane == ((0,),) * 5 and wide.warp == ((0,),)
    rotated = {(0, t): ((t + 1) % 4,) for t in range(4)}
    with pytest.raises(LayoutError, match="not the origin"):
        LinearLayout.from_holders((4,), rotated, 4)
    swapped = {(0, 0): (0,), (0, 1): (1,), (0, 2): (2,), (0, 3): (0,)}  # 1 ^ 2 is not 0
    with pytest.raises(LayoutError, match="not linear over GF"):
        LinearLayout.from_holders((4,), swapped, 4)


def test_swizzle_text_and_offsets():
    from tilec.compiler.layouts.shared import Swizzle

    for text in ("#tile.swizzle<128B>", "#tile.swizzle<32B>", "#tile.swizzle<none, pad = 8>"):
        assert str(Swizzle.parse(text)) == text
    with pytest.raises(LayoutError, match="32, 64 or 128"):
        Swizzle(16)
    with pytest.raises(LayoutError, match="not padded"):
        Swizzle(64, 8)
    wide = Swizzle(128)  # f16 rows of 64 elements: 8 chunks, chunk ^= row % 8
    for row in range(16):
        chunks = [wide.byte_offset(row, 8 * c, 64, 2) % 128 // 16 for c in range(8)]
        assert chunks == [c ^ (row % 8) for c in range(8)]
        offsets = {wide.byte_offset(row, col, 64, 2) for col in range(64)}
        assert offsets == set(range(128 * row, 128 * row + 128, 2))  # a row stays in its row
    # a 32-byte swizzle over 32-byte rows: the odd row of each 64-byte pair swaps its chunks
    narrow = Swizzle(32)
    assert [narrow.byte_offset(r, 0, 16, 2) for r in range(4)] == [0, 48, 64, 112]
    assert Swizzle(0, 8).byte_offset(1, 3, 64, 2) == (72 + 3) * 2
