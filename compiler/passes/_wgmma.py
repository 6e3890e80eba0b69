"""One tile.gemm as wgmma instructions (sm_90a), wherever it stands in a SIMT-lowered kernel.

plan-wgmma-gemms decides which gemms go this way and records, as attributes, what the ops
around the gemm must agree on; lower-tile-to-gpu then calls `lower_wgmma` for each such gemm
(and `SharedOperandLayout.element_index` for every access of an operand tile):

- `tile.wgmma = {warpgroups = G, m_atoms = A, n = N, k = Kst, dtype, reordered, split_n}` on
  the gemm: G warpgroups (the block's threads, 128 each) split block_M into G slabs of A
  64-row atoms, one `wgmma.mma_async m64nNkKst` per atom and 32-byte K step; with `split_n`
  they split block_N instead (N = block_N / G): every warpgroup reads all of A and its own N
  columns of B, its descriptors for B starting `mn_offset(g * N)` bytes into B's tile; a
  fragment A is then held whole by every warpgroup (`operand_a_layout`'s copies).
- `tile.layout` on the accumulator: wgmma's own fragment (compiler/layouts/nvidia.py's
  `wgmma_accumulator`: lane l of warp w holds rows 16 w + l / 4 (+ 8) of an atom and columns
  8 j + 2 (l % 4) + {0, 1}; register i of atom a's instruction is fragment register
  a * N / 2 + i), which T.Parallel epilogues, reductions and copies follow as any linear
  layout. Where that fragment does not cover the tile (`reordered`: an extent that is no
  power of two), the accumulator is the blocked layout (`compiler/layouts/linear.py`'s
  `blocked`: runs [1, 2], threads [32 G, 4], thread strides [4, 1], padded) and A's rows are
  stored reordered (next item): the instruction's row 64 a + 16 w + 8 h + g of slab s holds
  the user's row 32 G (2 a + h) + 32 s + 8 w + g, which is where that blocked layout puts
  thread (s, w, g)'s register (2 a + h); register i = 4 j + 2 h + c of atom a is fragment
  register (2 a + h) * N / 4 + 2 j + c.
- `tile.shared_layout = {k_major, span, warpgroups, m_atoms}` on each operand's tile.alloc:
  the layout wgmma's descriptors read (compiler/tensorcore/wgmma_ptx.py): rows of `span` bytes
  (the swizzle) in column boxes of `span` bytes, 16-byte chunks XOR-ed with the row's place in
  the 1 KiB atom (as TMA's 128B swizzle writes a 128-byte-row box: plan-tma-pipelines feeds such
  tiles by TMA); for a reordered A (warpgroups > 0) the rows reordered as above. Every copy
  into or out of the tile, and every load or store of it, goes through `element_index`.

A gemm may read its operand tile in place from a column slice of a larger shared tile
(`T.gemm(Q_shared[:, 0:64], ...)`): the frontend fills the slice's own tile by a tile.copy,
and where the slice starts at a whole column box of the larger tile laid out with the same
rows and span, plan-wgmma-gemms marks that copy `tile.read_in_place = {columns, box_bytes}`
and gives the larger tile the same layout: its boxes from the slice's first column on are the
slice's tile byte for byte, so the copy moves nothing and the gemm's descriptors start
`column / columns * box_bytes` bytes into the larger tile (`read_in_place`). One 128-byte
span tile is the same bytes whether a gemm reads it K-major or MN-major (transposed), so
both may read it; each gemm's orientation comes from its own transpose flags. A slice of
one stage of a 3-d stage buffer (`KV_shared[stage, :, 256:]`) is read alike: the buffer's
stages are each one such tile (`StackedOperandLayout`), and the view starts a further
stage * stage bytes in.

A may instead be a fragment (`tile.wgmma`'s a_registers): it is laid out as wgmma's A
operand (`operand_a_layout`, rows as the accumulator's), and each instruction takes its four
32-bit registers packed from the fragment's (`operand_a_registers`).

The rule (`lower_wgmma`): wgmma.fence, per K step and atom one descriptor pair and one
`wgmma.mma_async` (inline PTX over the accumulator registers), commit_group and wait_group 0,
so the accumulator is final when the next op reads it; a gemm that is the only work of a
cp.async pipeline or a TMA ring (`_tma_ring`) leaves its group in flight instead, and the
loop waits for it one iteration later (`_async_pipeline`); a register-A gemm whose A a
`tile.a_step_loads` copy fills (an opt-in of plan-tma-pipelines) loads each K step's A
registers right before that step's wgmmas, after waiting for the same step's group of the
iteration before (or, with the module's `tile.register_a_step_groups` = N, from
TILEC_REGISTER_A_STEP_GROUPS, until N groups are left in flight), and commits each step as a
group of its own. Tiles a TMA ring filled need no fence (TMA writes through the async
proxy). Shared memory the generic proxy wrote (cp.async, st.shared) must be fenced for the
async proxy that wgmma reads through: a cp.async pipeline does it before its per-iteration
barrier; other operand tiles get a fence.proxy.async and a barrier here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref, nvvm, vector

from tilec.compiler.layouts.linear import LayoutError, LinearLayout, blocked, padded
from tilec.compiler.layouts.nvidia import wgmma_accumulator, wgmma_operand_a
from tilec.compiler.passes._ir_walk import (
    as_operation,
    copy_parts,
    enclosing,
    op_error,
    walk,
)
from tilec.compiler.passes._scalar import constant, index
from tilec.compiler.passes._scheduling import (
    REGISTER_A_STEP_GROUPS_ATTR,
    decision_attr,
    read_decision,
)
from tilec.compiler.tensorcore.dtypes import K_STEP_BYTES, accumulator
from tilec.compiler.tensorcore.wgmma_ptx import k_major_bits, mma_async_asm, mn_major_bits

if TYPE_CHECKING:
    from tilec.compiler.passes.lower_tile_to_gpu import KernelLowering

WGMMA_ATTR = "tile.wgmma"
SHARED_LAYOUT_ATTR = "tile.shared_layout"
# on a copy of a ring tile into a gemm's whole A fragment (plan-tma-pipelines, opt-in): the
# gemm loads each K step's A registers right before that step's wgmmas, which it commits as a
# group of their own after waiting for the same step's group of the iteration before
STEP_LOADS_ATTR = "tile.a_step_loads"
# on the tile.copy filling a gemm's operand tile from a column slice of a larger shared tile
# (plan-wgmma-gemms): the copy moves nothing, the gemm reads the larger tile's bytes in place
IN_PLACE_ATTR = "tile.read_in_place"
# on a gemm of a TMA ring loop's body (fold-accumulator-clears, opt-in): its first K step's
# scale-d is 0 in the loop's first iteration, so it overwrites the accumulator there
CLEAR_FIRST_ATTR = "tile.clear_first_iteration"
WARPGROUP_THREADS = 128
ATOM_ROWS = 64
SWIZZLE_ATOM_BYTES = 1024  # the span of one swizzle pattern: tiles start at a multiple of it
CHUNK_BYTES = 16


@dataclass(frozen=True)
class WgmmaPlan:
    """What tile.wgmma records: the warpgroup split and the instruction."""

    warpgroups: int
    m_atoms: int
    n: int
    k: int  # K elements of one instruction (32 bytes)
    dtype: str  # dtypes' operand type name
    a_registers: bool = False  # A is a fragment in wgmma's A-operand layout
    reordered: bool = False  # the blocked accumulator, A's rows reordered for it
    split_n: bool = False  # the warpgroups split N (each all of M) instead of M

    def to_attr(self, context: ir.Context) -> ir.Attribute:
        fields = {"warpgroups": self.warpgroups, "m_atoms": self.m_atoms, "n": self.n,
                  "k": self.k, "dtype": self.dtype, "a_registers": self.a_registers,
                  "reordered": self.reordered}
        if self.split_n:
            fields["split_n"] = True
        return decision_attr(fields, context)

    @classmethod
    def of(cls, op: ir.Operation) -> WgmmaPlan:
        fields = read_decision(op, WGMMA_ATTR) or {}
        needed = ("warpgroups", "m_atoms", "n", "k", "dtype")
        if any(name not in fields for name in needed):
            raise op_error(op, f"{WGMMA_ATTR} needs {', '.join(needed)} (plan-wgmma-gemms "
                               "writes it)")
        return cls(int(fields["warpgroups"]), int(fields["m_atoms"]), int(fields["n"]),
                   int(fields["k"]), str(fields["dtype"]), bool(fields.get("a_registers")),
                   bool(fields.get("reordered")), bool(fields.get("split_n")))


def needs_reordering(block_m: int, block_n: int, block_k: int, warpgroups: int,
                     element_bytes: int, a_registers: bool) -> bool:
    """Whether the instruction's own fragments do not cover the tiles (an extent that is no
    power of two): then the accumulator is blocked and A's rows are reordered for it."""
    try:
        wgmma_accumulator(block_m, block_n, warpgroups)
        if a_registers:
            wgmma_operand_a(block_m, block_k, 8 * element_bytes, warpgroups)
    except LayoutError:
        return True
    return False


def accumulator_layout(block_m: int, block_n: int, warpgroups: int, reordered: bool,
                       split_n: bool = False) -> LinearLayout:
    """wgmma's accumulator fragment (its warpgroups over N with `split_n`), or the blocked
    layout (module docstring)."""
    if not reordered:
        return wgmma_accumulator(block_m, block_n, warpgroups, split_n)
    return blocked((block_m, block_n), (1, 2), (32 * warpgroups, 4), (4, 1),
                   WARPGROUP_THREADS * warpgroups)


def operand_a_layout(block_m: int, block_k: int, warpgroups: int, element_bytes: int,
                     reordered: bool, split_n: bool = False) -> LinearLayout:
    """A from registers: wgmma's A fragment (every warpgroup a copy of it with `split_n`),
    or (reordered) rows as the blocked accumulator's, K in runs of one 32-bit register
    (4 / element_bytes elements) over 4 threads (a0..a3 at rows g, g + 8 and K offsets 0, 16
    bytes of each 32-byte step)."""
    if not reordered:
        return wgmma_operand_a(block_m, block_k, 8 * element_bytes, warpgroups, split_n)
    return blocked((block_m, block_k), (1, 4 // element_bytes), (32 * warpgroups, 4), (4, 1),
                   WARPGROUP_THREADS * warpgroups)


def operand_a_registers(atom: int, step: int, block_k: int, element_bytes: int,
                        reordered: bool) -> list[list[int]]:
    """The fragment registers packed into wgmma's a0..a3 for 64-row atom `atom` and K step
    `step` (a_{2q+h}: rows + 8h, K + 16q bytes). wgmma's fragment numbers them in that order,
    a step's 4 registers after the previous step's, an atom's steps after the previous atom's."""
    pack = 4 // element_bytes
    if not reordered:
        steps = block_k * element_bytes // K_STEP_BYTES
        first = 4 * pack * (steps * atom + step)
        return [[first + pack * a + c for c in range(pack)] for a in range(4)]
    return [[(2 * atom + h) * (padded(block_k) // 4) + (2 * step + q) * pack + c
             for c in range(pack)]
            for q in (0, 1) for h in (0, 1)]


def accumulator_register(atom: int, register: int, n: int, reordered: bool) -> int:
    """The fragment register that register `register` of atom `atom`'s wgmma result is."""
    if not reordered:
        return atom * (n // 2) + register
    group, half, column = register // 4, (register // 2) % 2, register % 2
    return (2 * atom + half) * (padded(n) // 4) + 2 * group + column


def _log2(value: int) -> int:
    return value.bit_length() - 1


@dataclass(frozen=True)
class SharedOperandLayout:
    """A wgmma operand tile in shared memory (module docstring). `shape` is the tile as the
    kernel allocates it: K-major tiles have K along the columns, MN-major ones M or N."""

    shape: tuple[int, int]
    element_bytes: int
    k_major: bool
    span: int  # swizzle span in bytes: the row length of one column box
    warpgroups: int = 0  # > 0: A's M rows, reordered for the accumulator's blocked layout
    m_atoms: int = 0

    @property
    def rows(self) -> int:
        return self.shape[0]

    @property
    def bytes(self) -> int:
        return self.shape[0] * self.shape[1] * self.element_bytes

    @property
    def box_bytes(self) -> int:
        """Bytes of one column box: every row's `span` bytes of it."""
        return self.rows * self.span

    def descriptor_bits(self) -> int:
        return k_major_bits(self.span) if self.k_major else mn_major_bits(self.box_bytes)

    def step_offset(self, step: int) -> int:
        """Bytes from the tile's start to the `step`-th 32-byte K step."""
        if not self.k_major:
            return step * (K_STEP_BYTES // self.element_bytes) * self.span
        along = step * K_STEP_BYTES
        return (along // self.span) * self.box_bytes + along % self.span

    def atom_offset(self, atom: int) -> int:
        """Bytes from the tile's start to 64-row (M) atom `atom`."""
        return self.mn_offset(atom * ATOM_ROWS)

    def mn_offset(self, elements: int) -> int:
        """Bytes from the tile's start to its M or N element `elements`: that many rows
        down a K-major tile, columns (whole column boxes) along an MN-major one."""
        if not self.k_major:
            return elements * self.element_bytes // self.span * self.box_bytes
        return elements * self.span

    def splits_at(self, elements: int) -> bool:
        """Whether a descriptor may start at M or N element `elements`: on a row of the
        swizzle pattern's first (8 rows: the XOR phase restarts) of a K-major tile, on a
        column box of an MN-major one."""
        if not self.k_major:
            return elements * self.element_bytes % self.span == 0
        return elements % 8 == 0

    @property
    def k_extent(self) -> int:
        """The tile's K: its columns (K-major) or its rows (MN-major)."""
        return self.shape[1] if self.k_major else self.shape[0]

    def same_bytes(self, other: SharedOperandLayout) -> bool:
        """Whether two layouts place every element alike: they differ at most in the
        orientation wgmma reads them in (MN-major layouts have 128-byte spans, as a K-major
        one of 128-byte rows)."""
        return replace(self, k_major=True) == replace(other, k_major=True)

    def oriented(self, k_major: bool) -> SharedOperandLayout:
        """The layout as a gemm reading K along the columns (`k_major`) or rows sees it."""
        return self if k_major == self.k_major else replace(self, k_major=k_major)

    def to_attr(self, context: ir.Context) -> ir.Attribute:
        return decision_attr({"k_major": self.k_major, "span": self.span,
                              "warpgroups": self.warpgroups, "m_atoms": self.m_atoms}, context)

    @staticmethod
    def of(alloc: ir.Operation) -> SharedOperandLayout | None:
        """The layout recorded on a 2-d tile (a 3-d buffer's is a StackedOperandLayout)."""
        layout = operand_layout_of(alloc)
        return layout if isinstance(layout, SharedOperandLayout) else None

    def physical_row(self, row: ir.Value) -> ir.Value:
        """Where the user's row sits among the tile's rows (A: the wgmma order)."""
        if not self.warpgroups:
            return row
        lanes = arith.andi(row, index(7))
        warp = arith.andi(arith.shrui(row, index(3)), index(3))
        slab = arith.andi(arith.shrui(row, index(5)), index(self.warpgroups - 1))
        register = arith.shrui(row, index(5 + _log2(self.warpgroups)))
        half = arith.andi(register, index(1))
        atom = arith.shrui(register, index(1))
        atom_row = arith.addi(arith.muli(slab, index(self.m_atoms)), atom)
        result = arith.addi(arith.muli(atom_row, index(ATOM_ROWS)),
                            arith.muli(warp, index(16)))
        return arith.addi(arith.addi(result, arith.muli(half, index(8))), lanes)

    def element_index(self, row: ir.Value, column: ir.Value) -> ir.Value:
        """The element offset of (row, column) from the tile's start."""
        per_row = self.span // self.element_bytes  # elements of a row in one box
        box = arith.divui(column, index(per_row))
        linear = arith.addi(
            arith.addi(arith.muli(box, index(self.rows * per_row)),
                       arith.muli(self.physical_row(row), index(per_row))),
            arith.remui(column, index(per_row)))
        shift = _log2(self.element_bytes)
        phase = arith.andi(arith.shrui(linear, index(7 - shift)),
                           index(self.span // CHUNK_BYTES - 1))
        return arith.xori(linear, arith.shli(phase, index(_log2(CHUNK_BYTES) - shift)))


@dataclass(frozen=True)
class StackedOperandLayout:
    """A 3-d shared buffer (stages x rows x columns, TileLang's `KV_shared[stage, :, :]`) whose
    every stage is one operand tile laid out as `tile`, stage s from byte s * tile.bytes on:
    gemms read column slices of one stage in place (plan-wgmma-gemms). Its records are
    `tile.shared_layout`'s fields on the 3-d alloc; a stage is a whole number of 1 KiB swizzle
    patterns, so every stage's XOR pattern starts where the stage does."""

    stages: int
    tile: SharedOperandLayout

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.stages, *self.tile.shape)

    @property
    def bytes(self) -> int:
        return self.stages * self.tile.bytes

    @property
    def stage_bytes(self) -> int:
        return self.tile.bytes

    @staticmethod
    def fits(tile: SharedOperandLayout) -> bool:
        """Whether stages of `tile` can be stacked: each a whole number of swizzle patterns."""
        return not tile.warpgroups and tile.bytes % SWIZZLE_ATOM_BYTES == 0

    def element_index(self, stage: ir.Value, row: ir.Value, column: ir.Value) -> ir.Value:
        """The element offset of (stage, row, column) from the buffer's start."""
        per_stage = self.tile.bytes // self.tile.element_bytes
        return arith.addi(arith.muli(stage, index(per_stage)),
                          self.tile.element_index(row, column))

    def to_attr(self, context: ir.Context) -> ir.Attribute:
        return self.tile.to_attr(context)


def operand_layout_of(alloc: ir.Operation) -> SharedOperandLayout | StackedOperandLayout | None:
    """The operand layout recorded on a shared tile (2-d) or stage buffer (3-d: each stage the
    2-d layout of its rows and columns), if any: the one reader of SHARED_LAYOUT_ATTR."""
    fields = read_decision(alloc, SHARED_LAYOUT_ATTR)
    type_ = ir.MemRefType(alloc.results[0].type)
    if fields is None or type_.rank not in (2, 3):
        return None
    *stages, rows, columns = type_.shape
    tile = SharedOperandLayout((rows, columns), max(1, type_.element_type.width // 8),
                               bool(fields["k_major"]), int(fields["span"]),
                               int(fields.get("warpgroups", 0)), int(fields.get("m_atoms", 0)))
    return StackedOperandLayout(stages[0], tile) if stages else tile


def warpgroup_index(tid: ir.Value, warpgroups: int | None = None) -> ir.Value:
    """tid / 128, read from lane 0 so that ptxas sees a warp-uniform value (a divergent one
    serializes wgmma, and roles chosen on one as well); with `warpgroups` (a power of two),
    modulo it, so warpgroups past a layout's span (a block of 384 over 256) run as copies of
    the first."""
    i32 = ir.IntegerType.get_signless(32)
    group = arith.divui(tid, index(WARPGROUP_THREADS))
    if warpgroups is not None:
        group = arith.andi(group, index(warpgroups - 1))
    raw = arith.index_cast(i32, group)
    uniform = gpu.ShuffleOp(raw, constant(i32, 0), constant(i32, 32), gpu.ShuffleMode.IDX)
    return arith.index_cast(ir.IndexType.get(), uniform.results[0])


def gemm_warpgroup(lowering: KernelLowering, plan: WgmmaPlan) -> ir.Value:
    """The warpgroup whose share of the gemm (rows of A, or columns of B with split_n) the
    thread's warpgroup computes. Where more threads run the gemm than its plan's warpgroups
    (a block of 384 over layouts of 256) the index is taken modulo the plan's (a power of
    two), so the copies past them compute as the first ones do and store the same values;
    unmasked, the third warpgroup's descriptors would start past its operand tile (A's rows
    128..191 of a 128-row tile: another buffer's bytes, or past the arena), and its stores
    of the first warpgroup's rows would race them with those."""
    copies = lowering.threads > WARPGROUP_THREADS * plan.warpgroups
    return warpgroup_index(lowering.tid, plan.warpgroups if copies else None)


def _descriptors(address: ir.Value, bits: int) -> Callable[[int], ir.Value]:
    """The descriptor of the operand at shared address `address` + an offset (bytes, a
    multiple of 16), for every offset one gemm reads: the descriptor of `address` made here
    once, kept here by an empty asm with side effects, and the offset >> 4 added to its
    address field (bits 0..13: 228 KB of shared memory >> 4 never carries out of it). Without
    the asm LLVM hoists every step's descriptor of a tile the loop does not rewrite out of the
    loop, and they stay live across it: MLA decode's 36 score wgmmas kept 72 64-bit
    descriptors, 144 registers beside its 128 accumulators (255 registers, 740 bytes of
    spills); now one per tile."""
    i64 = ir.IntegerType.get_signless(64)
    signed = bits - (1 << 64) if bits >= 1 << 63 else bits  # i64 attributes are signed
    start = arith.ori(arith.shrui(arith.index_cast(i64, address), constant(i64, 4)),
                      constant(i64, signed))
    base = llvm.InlineAsmOp(i64, [start], "", "=l,0", has_side_effects=True).result

    def at(offset: int) -> ir.Value:
        if offset % CHUNK_BYTES:
            raise ValueError(f"a wgmma operand offset of {offset} bytes is not 16-byte aligned")
        return base if offset == 0 else arith.addi(base, constant(i64, offset >> 4))

    return at


def _shared_a(lowering: KernelLowering, a: ir.Value, layout: SharedOperandLayout,
              plan: WgmmaPlan) -> Callable[[int, int], list[ir.Value]]:
    """A's descriptor per (atom, step); a warpgroup's rows start `m_atoms` atoms further.
    A copy warpgroup (`gemm_warpgroup`) reads the first's rows."""
    address = memref.ExtractAlignedPointerAsIndexOp(a).result
    if plan.warpgroups > 1 and not plan.split_n:
        slab = layout.atom_offset(plan.m_atoms)
        address = arith.addi(address, arith.muli(gemm_warpgroup(lowering, plan), index(slab)))
    descriptor = _descriptors(address, layout.descriptor_bits())
    return lambda atom, step: [descriptor(layout.atom_offset(atom) + layout.step_offset(step))]


def _register_a(lowering: KernelLowering, op: ir.Operation, plan: WgmmaPlan
                ) -> Callable[[int, int], list[ir.Value]]:
    """A's four 32-bit registers per (atom, step), packed from its fragment.

    A deferred gemm's (`_wgmma_waits`: the rotated attention loop's P V, whose P the softmax
    of the iteration before wrote) reads each register's elements as one vector of the
    fragment's registers: LLVM then holds the fragment as 32-bit words, so P crosses the
    loop's back edge packed. Read one by one, its halves crossed it each in a register of its
    own, the conversion wrote one half a register (64 F2FP with a zero half) and ptxas
    packed them again before the wgmma (94 PRMT): 32 more live registers, and 142 bytes of
    spills at the consumers' 232 once the wgmmas ran unserialized."""
    a = op.operands[0]
    registers = lowering.fragments[a].registers
    element = ir.MemRefType(a.type).element_type
    block_k = ir.MemRefType(a.type).shape[1]
    element_bytes = max(1, element.width // 8)
    i32 = ir.IntegerType.get_signless(32)
    as_words = lowering.pending is not None and lowering.pending.defers(op)

    def pack(atom: int, step: int) -> list[ir.Value]:
        packed = []
        for slots in operand_a_registers(atom, step, block_k, element_bytes, plan.reordered):
            vector_type = ir.VectorType.get([len(slots)], element)
            if len(slots) > 1 and as_words and slots == list(range(slots[0],
                                                                   slots[0] + len(slots))):
                elements = vector.LoadOp(vector_type, registers, [index(slots[0])])
                word = vector.BitCastOp(ir.VectorType.get([1], i32), elements.result).result
                packed.append(vector.extract(word, [], [0]))
                continue
            items = [memref.load(registers, [index(slot)]) for slot in slots]
            if len(items) == 1:
                packed.append(arith.bitcast(i32, items[0]))
                continue
            elements = vector.FromElementsOp(vector_type, items)
            word = vector.BitCastOp(ir.VectorType.get([1], i32), elements.result).result
            packed.append(vector.extract(word, [], [0]))
        return packed

    return pack


def _pinned(values: list[ir.Value]) -> list[ir.Value]:
    """`values` computed here: each through an empty asm with side effects, which LLVM keeps in
    place, so the arithmetic making a wgmma's registers (P's conversion to 16 bits, the
    accumulator's rescaling, a cleared accumulator's zeros) is not sunk past wgmma.fence, where
    ptxas would fence again before every wgmma reading a register written after the fence
    ("warpgroup.arrive is injected"), or, where that register was written on a divergent path,
    serialize the wgmmas (C7520: the per-op plain GEMM's zeros, moved into its first
    iteration)."""
    return [llvm.InlineAsmOp(value.type, [value], "", "=f,0" if isinstance(
        value.type, ir.F32Type) else "=r,0", has_side_effects=True).result for value in values]


def _flag(op: ir.Operation, name: str) -> bool:
    return name in op.attributes and ir.BoolAttr(op.attributes[name]).value


def slice_source(tile: ir.Value) -> ir.Value | None:
    """The larger shared tile a gemm's operand tile is read from in place (IN_PLACE_ATTR on
    the copy filling it), None for a tile of its own."""
    for use in tile.uses:
        fill = as_operation(use.owner)
        if fill.name == "tile.copy" and IN_PLACE_ATTR in fill.attributes and \
                copy_parts(fill)[3] == tile:
            return fill.operands[0]
    return None


def read_in_place(lowering: KernelLowering, op: ir.Operation) -> None:
    """An IN_PLACE_ATTR copy: its destination tile becomes a view of the source's bytes from
    the slice's first column box on, which the gemms after it read; nothing is copied."""
    src, src_offsets, _, dst, _, _ = copy_parts(op)
    fields = read_decision(op, IN_PLACE_ATTR) or {}
    if src not in lowering.shared_layouts or dst not in lowering.shared_layouts or \
            "columns" not in fields:
        raise op_error(op, f"a {IN_PLACE_ATTR} copy needs {SHARED_LAYOUT_ATTR} on both tiles "
                           "(plan-wgmma-gemms)")
    box = arith.divui(src_offsets[-1], index(int(fields["columns"])))
    base = memref.ExtractAlignedPointerAsIndexOp(lowering.smem).result
    start = arith.subi(memref.ExtractAlignedPointerAsIndexOp(src).result, base)
    start = arith.addi(start, arith.muli(box, index(int(fields["box_bytes"]))))
    source_layout = lowering.shared_layouts[src][0]
    if isinstance(source_layout, StackedOperandLayout):  # one stage of a 3-d buffer
        start = arith.addi(start, arith.muli(src_offsets[0], index(source_layout.stage_bytes)))
    view = memref.ViewOp(dst.type, lowering.smem, start, []).result
    lowering.shared_layouts[view] = (lowering.shared_layouts[dst][0],
                                     lowering.shared_layouts[src][1])
    # the gemms after it read the view, up to the tile's next fill (an unrolled loop's next
    # iteration, whose copy gives its own gemms the next slice)
    ops = [as_operation(later) for later in op.block.operations]
    for later in ops[ops.index(op) + 1:]:
        if later.name == "tile.copy" and copy_parts(later)[3] == dst:
            break
        if later.name == "tile.gemm":
            for n, operand in enumerate(later.operands):
                if operand == dst:
                    later.operands[n] = view


_READERS = ("memref.load", "memref.prefetch", "memref.dim", "vector.load")


def _may_write(op: ir.Operation, tile: ir.Value) -> bool:
    """Whether `op` may write `tile`: any use of it but a plain read (a load, a prefetch, its
    sizes, a tile.copy's source, a gemm's A or B). A view of the tile or an op this does not
    know counts as a write: a fence too many costs a little, one too few is a race."""
    for number, operand in enumerate(op.operands):
        if operand != tile or op.name in _READERS:
            continue
        if (op.name == "tile.copy" and number == 0) or (op.name == "tile.gemm" and number < 2):
            continue
        return True
    return False


@contextlib.contextmanager
def operands_fenced(layouts: dict[ir.Value, tuple[Any, bool]], body: ir.Block
                    ) -> Iterator[None]:
    """While a loop's `body` is lowered: its gemms' shared operand tiles that the body does
    not write (filled before the loop) count as fenced in `layouts` (the lowering's
    shared_layouts), where the loop fences the async proxy and barriers before its body runs
    (a TMA ring's loop, a cp.async pipeline feeding wgmma at each iteration's start); each
    wgmma would else fence and barrier again in every iteration. Not a tile the body itself
    writes (dS^T staged for a gemm by a T.copy, a slot's transposed copy by a T.Parallel),
    whose gemm fences the generic proxy's stores of the same iteration; a tile the body only
    reads through the generic proxy needs no fence."""
    statements = [as_operation(op) for op in body.operations]
    inner_ops = [inner for op in statements for inner in [op, *walk(op)]]
    saved = {}
    for gemm in statements:
        if gemm.name != "tile.gemm":
            continue
        for operand in list(gemm.operands)[:2]:
            if any(_may_write(inner, operand) for inner in inner_ops):
                continue
            if operand in layouts and not any(operand == known for known in saved):
                saved[operand] = layouts[operand]
                layouts[operand] = (layouts[operand][0], True)
    try:
        yield
    finally:
        layouts.update(saved)


def lower_wgmma(lowering: KernelLowering, op: ir.Operation) -> None:
    """Emit the gemm at the current insertion point (module docstring)."""
    a, b, c = op.operands[0], op.operands[1], op.operands[2]
    plan = WgmmaPlan.of(op)
    a_known = a in lowering.fragments if plan.a_registers else a in lowering.shared_layouts
    if not (a_known and b in lowering.shared_layouts and c in lowering.fragments):
        raise op_error(op, f"a {WGMMA_ATTR} gemm needs {SHARED_LAYOUT_ATTR} on its shared "
                           "operand tiles and fragments for the others (plan-wgmma-gemms)")
    a_layout, a_fenced = lowering.shared_layouts.get(a, (None, True))
    b_layout, b_fenced = lowering.shared_layouts[b]
    # a tile may be read K-major by one gemm and MN-major by another (same_bytes)
    b_layout = b_layout.oriented(_flag(op, "transpose_b"))
    if a_layout is not None:
        a_layout = a_layout.oriented(not _flag(op, "transpose_a"))
    registers = lowering.fragments[c].registers
    if not (a_fenced and b_fenced):
        nvvm.fence_proxy(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)
        gpu.BarrierOp()
    if a_layout is None:
        a_operands = _register_a(lowering, op, plan)
    else:
        a_operands = _shared_a(lowering, a, a_layout, plan)
    b_address = memref.ExtractAlignedPointerAsIndexOp(b).result
    if plan.split_n:  # each warpgroup's N columns of B
        b_address = arith.addi(b_address, arith.muli(gemm_warpgroup(lowering, plan),
                                                      index(b_layout.mn_offset(plan.n))))
    b_descriptor = _descriptors(b_address, b_layout.descriptor_bits())
    element = ir.IntegerType.get_signless(32) if accumulator(plan.dtype) == "s32" \
        else ir.F32Type.get()
    count = plan.n // 2
    result_type = llvm.StructType.get_literal([element] * count)
    i32 = ir.IntegerType.get_signless(32)
    clear = ir.BoolAttr(op.attributes["clear_accum"]).value
    first_scale = constant(i32, 0 if clear else 1)
    if CLEAR_FIRST_ATTR in op.attributes:  # fold-accumulator-clears: D = A * B in iteration 0
        ring = lowering.ring_lowering
        if ring is None or ring.iteration is None:
            raise op_error(op, f"{CLEAR_FIRST_ATTR} needs its gemm in the body of a TMA ring "
                               "loop (fold-accumulator-clears checks it)")
        first_scale = arith.extui(i32, arith.cmpi(arith.CmpIPredicate.ne, ring.iteration,
                                                  index(0)))
    values = [[memref.load(registers, [index(accumulator_register(atom, i, plan.n,
                                                                  plan.reordered))])
               for i in range(count)] for atom in range(plan.m_atoms)]
    text, constraints = mma_async_asm(plan.dtype, plan.n, plan.k,
                                      None if a_layout is None else not a_layout.k_major,
                                      not b_layout.k_major)
    steps = (ir.MemRefType(op.operands[0].type).shape[1] if a_layout is None else
             a_layout.k_extent) // plan.k
    registers_a = {}
    # every register the wgmmas read is final before the fence: the accumulator's (a T.clear's
    # zeros, an epilogue's writes from the tile before on a persistent grid) and A's
    values = [_pinned(atom_values) for atom_values in values]
    step_load = lowering.step_loads.get(a) if a_layout is None else None
    if a_layout is None and step_load is None:
        registers_a = {(atom, step): _pinned(a_operands(atom, step))
                       for step in range(steps) for atom in range(plan.m_atoms)}
    if lowering.turns is not None:  # its warpgroup's turn on the tensor cores
        lowering.turns.before_issue(op)
    if step_load is None:
        nvvm.wgmma_fence_aligned()
    in_flight = steps - 1  # a step's loads wait for its group of one iteration ago
    module = enclosing(op, "builtin.module")
    if module is not None and REGISTER_A_STEP_GROUPS_ATTR in module.attributes:
        in_flight = min(in_flight, ir.IntegerAttr(
            module.attributes[REGISTER_A_STEP_GROUPS_ATTR]).value)
    for step in range(steps):
        if step_load is not None:  # STEP_LOADS_ATTR: this step's group of one iteration ago
            nvvm.wgmma_wait_group_sync_aligned(in_flight)  # has read the registers
            a_type = ir.MemRefType(a.type)
            step_load([slot for atom in range(plan.m_atoms) for slots in operand_a_registers(
                atom, step, a_type.shape[1], max(1, a_type.element_type.width // 8),
                plan.reordered) for slot in slots])
            registers_a.update({(atom, step): _pinned(a_operands(atom, step))
                                for atom in range(plan.m_atoms)})
            nvvm.wgmma_fence_aligned()
        scale = first_scale if step == 0 else constant(i32, 1)
        b_step = b_descriptor(b_layout.step_offset(step))
        for atom in range(plan.m_atoms):
            operands_a = registers_a.get((atom, step)) or a_operands(atom, step)
            result = llvm.InlineAsmOp(result_type, [*values[atom], *operands_a,
                                                    b_step, scale], text, constraints,
                                      has_side_effects=True).result
            values[atom] = [llvm.extractvalue(element, result, [i]) for i in range(count)]
        if step_load is not None:
            nvvm.wgmma_commit_group_sync_aligned()
    if step_load is None:
        nvvm.wgmma_commit_group_sync_aligned()
    if lowering.turns is not None:
        lowering.turns.after_commit(op)
    overlapped = lowering.overlapped_gemm
    if lowering.pending is not None and lowering.pending.defers(op):  # _wgmma_waits
        lowering.pending.committed(op)
    elif overlapped is None or overlapped != op:  # else its pipeline waits an iteration later
        nvvm.wgmma_wait_group_sync_aligned(0)
    for atom in range(plan.m_atoms):
        for i, value in enumerate(values[atom]):
            memref.store(value, registers,
                         [index(accumulator_register(atom, i, plan.n, plan.reordered))])
