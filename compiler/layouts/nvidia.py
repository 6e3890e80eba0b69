"""NVIDIA tensor-core fragments as linear layouts (PTX ISA, "Matrix fragments for mma.m16n8k*"
and "Register fragments and shared memory matrix layouts" for wgmma).

Within one warp every fragment has the same shape of map: lane = 4 * groupID + threadID_in_group,
groupID (lane bits 2..4) picks a row, threadID_in_group (lane bits 0..1) a pair (or quad) of
columns, and the registers add the packed elements, the +8 rows and the +8k columns. A 32-bit
register packs `32 / element_bits` elements, which sit side by side along K (operands) or N
(accumulators), so the fragment tables of f16/bf16 (k16), 8-bit types (k32) and tf32 (k8) are
one formula.

Tiles larger than an instruction repeat it: registers first walk the instruction's own bits,
then the repeats row-major over the warp's tile (the last dimension fastest). Warps of an
mma.sync grid own contiguous warp tiles, warp = wm * warps_n + wn (N bits low); an operand is
broadcast over the warps of the other dimension. A wgmma warpgroup owns a contiguous block of
M / warpgroups rows, warp w of it rows 16w..16w+15 of each 64-row slab.
"""

from __future__ import annotations

from tilec.compiler.layouts.linear import Basis, LayoutError, LinearLayout, log2


def _packing(element_bits: int) -> int:
    """Elements per 32-bit register."""
    if element_bits not in (8, 16, 32):
        raise LayoutError(f"no tensor-core fragment for {element_bits}-bit elements")
    return 32 // element_bits


def _along(dim: int, value: int) -> Basis:
    return (value, 0) if dim == 0 else (0, value)


def _repeats(tile: tuple[int, int], unit: tuple[int, int]) -> list[Basis]:
    """Register bases walking `unit`-sized steps over `tile`, row-major (dimension 1 fastest)."""
    bases = []
    for dim in (1, 0):
        if tile[dim] % unit[dim]:
            raise LayoutError(f"a {tile[0]}x{tile[1]} tile is not a whole number of "
                              f"{unit[0]}x{unit[1]} fragments")
        bases += [_along(dim, unit[dim] << i) for i in range(log2(tile[dim] // unit[dim]))]
    return bases


def _grid(tile: tuple[int, int], warps: tuple[int, int], broadcast: int | None
          ) -> tuple[tuple[int, int], list[Basis]]:
    """The warp tile and the warp bases of a warps[0] x warps[1] grid (N bits low); the warps
    along dimension `broadcast` (an operand's K: None for the accumulator) hold copies."""
    warp_tile = tuple(extent if dim == broadcast else extent // warps[dim]
                      for dim, extent in enumerate(tile))
    if any(warp_tile[d] * warps[d] != tile[d] for d in (0, 1) if d != broadcast):
        raise LayoutError(f"a {tile[0]}x{tile[1]} tile does not split over {warps[0]}x{warps[1]}"
                          " warps")
    bases = []
    for dim in (1, 0):
        for i in range(log2(warps[dim])):
            bases.append((0, 0) if broadcast == dim else _along(dim, warp_tile[dim] << i))
    return warp_tile, bases


# lane bits 2..4 are groupID: rows (or B's columns) 1, 2, 4
_GROUP = [1, 2, 4]


def mma_accumulator(m: int, n: int, warps_m: int = 1, warps_n: int = 1) -> LinearLayout:
    """mma.sync m16n8 C/D over an m x n tile: c0,c1 at (g, 2t + {0,1}), c2,c3 at row g + 8."""
    warp_tile, warp = _grid((m, n), (warps_m, warps_n), None)
    register = [(0, 1), (8, 0)] + _repeats(warp_tile, (16, 8))
    lane = [(0, 2), (0, 4)] + [(g, 0) for g in _GROUP]
    return LinearLayout((m, n), tuple(register), tuple(lane), tuple(warp))


def _operand_a_warp(element_bits: int) -> tuple[list[Basis], list[Basis], tuple[int, int]]:
    """One warp's A fragment (16 x k_step): packed elements along K, then +8 rows, then
    +k_step/2 columns; lanes: threadID_in_group along K, groupID along M."""
    pack = _packing(element_bits)
    register = [(0, 1 << i) for i in range(log2(pack))] + [(8, 0), (0, 4 * pack)]
    lane = [(0, pack), (0, 2 * pack)] + [(g, 0) for g in _GROUP]
    return register, lane, (16, 8 * pack)


def mma_operand_a(m: int, k: int, element_bits: int, warps_m: int = 1, warps_n: int = 1
                  ) -> LinearLayout:
    """mma.sync A (m x k, row-major fragment): f16 a0..a7 at (g, 2t + {0,1}), +8 rows,
    +8 columns; 8-bit and tf32 the same with 4 or 1 elements per register."""
    inner, lane, step = _operand_a_warp(element_bits)
    warp_tile, warp = _grid((m, k), (warps_m, warps_n), 1)
    return LinearLayout((m, k), tuple(inner + _repeats(warp_tile, step)), tuple(lane),
                        tuple(warp))


def mma_operand_b(k: int, n: int, element_bits: int, warps_m: int = 1, warps_n: int = 1
                  ) -> LinearLayout:
    """mma.sync B (k x n): f16 b0,b1 at (2t + {0,1}, g), b2,b3 at +8 along K."""
    pack = _packing(element_bits)
    inner = [(1 << i, 0) for i in range(log2(pack))] + [(4 * pack, 0)]
    lane = [(pack, 0), (2 * pack, 0)] + [(0, g) for g in _GROUP]
    warp_tile, warp = _grid((k, n), (warps_m, warps_n), 0)
    return LinearLayout((k, n), tuple(inner + _repeats(warp_tile, (8 * pack, 8))),
                        tuple(lane), tuple(warp))


def _warpgroup_rows(m: int, warpgroups: int) -> int:
    rows = m // warpgroups
    if rows * warpgroups != m or rows % 64:
        raise LayoutError(f"{m} rows do not split into 64-row slabs over {warpgroups} "
                          "warpgroups")
    return rows


def wgmma_accumulator(m: int, n: int, warpgroups: int = 1, split_n: bool = False
                      ) -> LinearLayout:
    """wgmma m64nN D over an m x n tile: d[4j + {0,1}] at (16w + g, 8j + 2t + {0,1}),
    d[4j + {2,3}] at row + 8; further 64-row slabs of the warpgroup's rows follow in
    registers; warpgroup g owns rows [g * m / warpgroups, (g + 1) * m / warpgroups), or with
    `split_n` all rows of columns [g * n / warpgroups, (g + 1) * n / warpgroups) (each
    warpgroup's instruction is m64n(n / warpgroups))."""
    if split_n:
        rows, columns = m, n // warpgroups
        if columns * warpgroups != n or m % 64:
            raise LayoutError(f"a {m}x{n} tile does not split into {warpgroups} column "
                              "slabs of 64-row atoms")
    else:
        rows, columns = _warpgroup_rows(m, warpgroups), n
    if columns % 8 or not 8 <= columns <= 256:
        raise LayoutError(f"wgmma has no N = {columns}")
    register = [(0, 1), (8, 0)] + _repeats((rows, columns), (64, 8))
    lane = [(0, 2), (0, 4)] + [(g, 0) for g in _GROUP]
    slab = (0, columns) if split_n else (rows, 0)
    warp = [(16, 0), (32, 0)] + [(slab[0] << i, slab[1] << i) for i in range(log2(warpgroups))]
    return LinearLayout((m, n), tuple(register), tuple(lane), tuple(warp))


def wgmma_operand_a(m: int, k: int, element_bits: int, warpgroups: int = 1,
                    split_n: bool = False) -> LinearLayout:
    """wgmma A from registers (m x k): each warp holds mma.sync's A fragment of its 16 rows
    of a 64-row slab; K steps, then further slabs, in registers. Warpgroup g holds the rows
    of its slab, or with `split_n` (the warpgroups splitting N) a copy of the whole tile."""
    rows = m if split_n else _warpgroup_rows(m, warpgroups)
    if rows % 64:
        raise LayoutError(f"{m} rows are no whole number of 64-row slabs")
    inner, lane, step = _operand_a_warp(element_bits)
    register = inner + _repeats((rows, k), (64, step[1]))
    slab = 0 if split_n else rows
    warp = [(16, 0), (32, 0)] + [(slab << i, 0) for i in range(log2(warpgroups))]
    return LinearLayout((m, k), tuple(register), tuple(lane), tuple(warp))
