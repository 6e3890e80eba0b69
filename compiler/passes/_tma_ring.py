"""The decisions of plan-tma-pipelines and their CUDA lowering (lower-tile-to-gpu's part).

A `tile.pipelined` loop marked `tile.tma_ring = {stages = S, consumers = G, overlap,
persistent, lag = L (1 when absent), groups = W (1 when absent)}` runs as a warp-specialized
TMA ring; each of its copies carries `tile.tma_load = {box, boxes, swizzle}`: the TMA box
(innermost dimension first) of one column box of the operand tile and how many such boxes the
tile has (`SharedOperandLayout`'s column boxes, each `rows x swizzle` bytes, swizzled (128B or
64B) as wgmma's descriptors read them).

The kernel is launched with one warpgroup more than it was written for; that warpgroup (G) is
the producer, warpgroups 0..G-1 are the kernel as written (their thread indices unchanged):

    thread 0: mbarrier.init full[s] (1 arrival), empty[s] (one per consumer warp), s < S;
      prefetch.tensormap of every map the kernel loads or stores through (its first TMA
      copy then finds the 128-byte map cached, not in DRAM after the kernels before it)
    barrier (all threads)
    if warpgroup == G (warp-uniform: shuffled from lane 0):
      its first thread, for each iteration i of the loop (slot s = i mod S, n = i / S):
        wait empty[s] for phase n - 1 (parity (n & 1) ^ 1: a fresh barrier passes)
        arrive.expect_tx full[s] (the bytes of every copy), then every copy's boxes with
        cp.async.bulk.tensor into slot s, completing on full[s]
    else: the kernel's statements, its block barriers named ones over the G warpgroups; the
      loop becomes (after a barrier over the consumers: the statements before it may have
      filled shared tiles its gemms read; none where the statements touch no shared memory
      but the ring's slots, read in the loop, and TMA stores' staging tiles: `private_tiles`)
        for each iteration i: wait full[s] (parity n & 1); the body on slot s; then
          overlap: wgmma.wait_group L * W (gemm i-L, its W groups, has read its slot;
          W > 1: the gemm loads its A registers from the slot per K step and commits each
          step's wgmmas as a group, `_wgmma`'s `step_loads`), lane 0 of each warp
          arrives on empty[(i-L) mod S] (i >= L); else lane 0 arrives on empty[s]
        overlap: wgmma.wait_group 0, lane 0 of each warp hands the last L slots back; a
        barrier over the consumers (the drain; none with `private_tiles`)

Persistent: the launch has min(tiles, multiprocessors) blocks; both roles loop over tiles
block index, + blocks launched, ... (`tile_ids`: z outermost, x and y in grouped order), the
slot and phase of an iteration counted from the ring iterations of the block's earlier tiles,
and the consumers meet at a barrier after each tile (its shared memory is free then; not
with `private_tiles`: a GEMM's consumers then meet only at its TMA store's two barriers per
pass, as the whole-kernel GEMM's do).

The producer recomputes the loop bounds and the copies' corners: the pure arithmetic they
are made of (`recomputable`), cloned with the iteration's index. TMA and wgmma both go
through the async proxy, so the operand tiles need no proxy fence; zero fill past the
tensor's edges comes from the tensor map (python/tilec/runtime/tma.py encodes one per copy,
`tile.tensor_maps` on the gpu.func lists them for the launch). The producer hands its
registers to the consumers (setmaxnreg) where they gain by it (two or more consumer
warpgroups), and a 2-d grid runs in rasterize-blocks' grouped
order (`grouped_order`), as the whole-kernel GEMM does: a ring kernel is a GEMM's main loop.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref, nvvm, scf, vector

from tilec.compiler.layouts.emit import register_coordinates, thread_coordinates
from tilec.compiler.layouts.linear import LinearLayout, is_power_of_two, log2
from tilec.compiler.passes._async_pipeline import table_load
from tilec.compiler.passes._ir_walk import (
    as_operation,
    constant_index,
    copy_parts,
    enclosing,
    is_memref,
    op_error,
    scope,
    walk,
)
from tilec.compiler.passes._scalar import bit_width, cast, constant, index
from tilec.compiler.passes._scheduling import (
    RING_PRIVATE_TILES_ATTR,
    decision_attr,
    read_decision,
)
from tilec.compiler.passes._warpgroup_pingpong import PingPong, Turns
from tilec.compiler.passes._wgmma import (
    CHUNK_BYTES,
    SWIZZLE_ATOM_BYTES,
    WARPGROUP_THREADS,
    SharedOperandLayout,
    operands_fenced,
    warpgroup_index,
)

if TYPE_CHECKING:
    from tilec.compiler.passes.lower_tile_to_gpu import Fragment, KernelLowering

RING_ATTR = "tile.tma_ring"
LOAD_ATTR = "tile.tma_load"
# stage-epilogue-source: the copy after a ring loop whose tile the producer loads into the
# ring's next iterations' slots (its TMA boxes, as LOAD_ATTR's), and that tile (no bytes of
# its own)
SOURCE_ATTR = "tile.epilogue_source"
SOURCE_TILE_ATTR = "tile.ring_source"
STORE_ATTR = "tile.tma_store"
MAPS_ATTR = "tile.tensor_maps"
# on a shared tile a ring loop's T.Parallel writes for its gemm (a slot's K-major copy,
# plan-tma-pipelines): its slots, the iterations taking turns, so the next iteration's copy
# is made while the gemm of this one is in flight
COPY_SLOTS_ATTR = "tile.ring_copy_slots"
COPY_SLOTS = 2
TILES_ATTR = "tile.persistent_tiles"  # on the gpu.func: the grid's blocks a persistent one runs
SWIZZLE_BYTES = 128  # the column box of a 128B-swizzled operand tile
BARRIER_BYTES = 8
WAIT_TICKS = 10_000_000  # try_wait's suspend-time hint, as CUTLASS
CONSUMER_BARRIER = 1  # the named barrier the consumer warpgroups use for block barriers
SLAB_BARRIER = 2  # + g: consumer warpgroup g's own, around its slab of a TMA store
PURE_OPS = ("memref.dim", "affine.apply")
REGISTER_FILE = 65536  # 32-bit registers of a multiprocessor
MAX_REGISTERS = 240  # per thread, a multiple of 8 (setmaxnreg's unit) below 256
PRODUCER_REGISTERS = 40  # what the producer's address arithmetic needs
# a consumer thread's registers beside its fragments' (addresses, descriptors, loop counters,
# the epilogue's indices): ptxas gave the 128x256x64 and 128x64x64 GEMMs 26 more than their
# accumulators (154 for 128, 58 for 32)
OTHER_REGISTERS = 32


def copies_and_gemms(loop: ir.Operation) -> bool:
    """Whether the loop's body holds nothing but copies, gemms and index arithmetic: a GEMM's
    main loop, where a T.Parallel, a reduction or a branch (an epilogue tile's preload) would
    hold registers of their own."""
    return all(op.name in ("tile.copy", "tile.gemm", "tile.yield", "affine.apply")
               or op.name.split(".")[0] in ("arith", "index")
               for op in loop.regions[0].blocks[0].operations)


@dataclass(frozen=True)
class TmaRing:
    """tile.tma_ring of a loop."""

    stages: int
    consumers: int  # warpgroups of the kernel as written; the producer is the next one
    overlap: bool  # the loop's last gemm leaves its wgmma groups in flight for `lag` iterations
    persistent: bool = False  # one block per multiprocessor runs the grid's blocks in turn
    lag: int = 1  # iterations an overlapped gemm leaves its wgmma groups in flight (< stages)
    groups: int = 1  # wgmma groups the overlapped gemm commits per iteration (one per K step
    # where its A registers are loaded step by step: REGISTER_A_STEPS_ATTR)

    def to_attr(self, context: ir.Context) -> ir.Attribute:
        fields = {"stages": self.stages, "consumers": self.consumers, "overlap": self.overlap,
                  "persistent": self.persistent}
        if self.lag != 1:
            fields["lag"] = self.lag
        if self.groups != 1:
            fields["groups"] = self.groups
        return decision_attr(fields, context)

    @classmethod
    def of(cls, loop: ir.Operation) -> TmaRing | None:
        fields = read_decision(loop, RING_ATTR)
        if fields is None:
            return None
        if any(name not in fields for name in ("stages", "consumers", "overlap")):
            raise op_error(loop, f"{RING_ATTR} needs stages, consumers and overlap "
                                 "(plan-tma-pipelines writes it)")
        ring = cls(int(fields["stages"]), int(fields["consumers"]), bool(fields["overlap"]),
                   bool(fields.get("persistent")), int(fields.get("lag", 1)),
                   int(fields.get("groups", 1)))
        if not 1 <= ring.lag < ring.stages:
            raise op_error(loop, f"{RING_ATTR} lag = {ring.lag} must be at least 1 and less "
                                 f"than its {ring.stages} stages")
        return ring


@dataclass(frozen=True)
class TmaLoad:
    """tile.tma_load of a copy."""

    box: tuple[int, ...]  # elements per dimension of the source, innermost first
    boxes: int  # 128-byte column boxes of the destination tile
    swizzle: int

    def to_attr(self, context: ir.Context) -> ir.Attribute:
        return decision_attr({"box": self.box, "boxes": self.boxes, "swizzle": self.swizzle},
                             context)

    @classmethod
    def of(cls, copy: ir.Operation, attribute: str = LOAD_ATTR) -> TmaLoad:
        """The boxes recorded on `copy` as `attribute`: a ring copy's LOAD_ATTR, or the
        epilogue source's (stage-epilogue-source)."""
        fields = read_decision(copy, attribute) or {}
        if any(name not in fields for name in ("box", "boxes", "swizzle")):
            writer = "plan-tma-pipelines" if attribute == LOAD_ATTR else "stage-epilogue-source"
            where = f"a copy of a {RING_ATTR} loop" if attribute == LOAD_ATTR else \
                "an epilogue source copy"
            raise op_error(copy, f"{where} needs {attribute} = {{box, boxes, swizzle}} "
                                 f"({writer} writes it)")
        return cls(tuple(int(v) for v in fields["box"]), int(fields["boxes"]),
                   int(fields["swizzle"]))

    def bytes(self, element_bytes: int) -> int:
        return math.prod(self.box) * self.boxes * element_bytes


@dataclass(frozen=True)
class TmaStore:
    """tile.tma_store of the accumulator's fragment -> global copy after a ring loop."""

    box: tuple[int, ...]  # one 128-byte column box of one slab's rows, innermost first
    columns: int  # columns of the tile staged in shared memory at a time
    swizzle: int
    slabs: int = 1  # row slabs, one per consumer warpgroup, each staged and stored apart

    def to_attr(self, context: ir.Context) -> ir.Attribute:
        return decision_attr({"box": self.box, "columns": self.columns,
                              "swizzle": self.swizzle, "slabs": self.slabs}, context)

    @classmethod
    def of(cls, copy: ir.Operation) -> TmaStore:
        fields = read_decision(copy, STORE_ATTR) or {}
        if any(name not in fields for name in ("box", "columns", "swizzle")):
            raise op_error(copy, f"{STORE_ATTR} needs box, columns and swizzle "
                                 "(plan-tma-pipelines writes it)")
        return cls(tuple(int(v) for v in fields["box"]), int(fields["columns"]),
                   int(fields["swizzle"]), int(fields.get("slabs", 1)))


@dataclass(frozen=True)
class SourceTileLayout:
    """The accesses of a SOURCE_TILE_ATTR tile (a flat view of the shared window): column
    box b of its rows lies 128B-swizzled from element `bases[b]` on, where the ring's
    lowering puts it (`RingLowering.wait_source`, before the tile's first read)."""

    shape: tuple[int, int]
    element_bytes: int
    lowering: KernelLowering  # its ring_lowering places the boxes

    def element_index(self, row: ir.Value, column: ir.Value) -> ir.Value:
        ring = self.lowering.ring_lowering
        bases = ring.source_bases if ring is not None else []
        if not bases:
            raise ValueError("the epilogue source tile is read before its copy")
        per_box = SWIZZLE_BYTES // self.element_bytes
        box_layout = SharedOperandLayout((self.shape[0], per_box), self.element_bytes, True,
                                         SWIZZLE_BYTES)
        box = arith.divui(column, index(per_box))
        base = bases[-1]
        for number in reversed(range(len(bases) - 1)):  # folds where the column is known
            base = arith.select(arith.cmpi(arith.CmpIPredicate.eq, box, index(number)),
                                bases[number], base)
        return arith.addi(base, box_layout.element_index(
            row, arith.remui(column, index(per_box))))


def _pure(op: ir.Operation) -> bool:
    return (op.name.split(".")[0] in ("arith", "math", "index") or op.name in PURE_OPS) \
        and not len(op.regions)


def recomputable(values: list[ir.Value], candidates: list[ir.Operation]
                 ) -> list[ir.Operation] | None:
    """The ops among `candidates` (in program order) that `values` are computed from, in that
    order; None when one of them is not pure arithmetic or a read-only table's load
    (_async_pipeline.table_load). Values from elsewhere (block arguments, ops that are no
    candidates) are used as they are."""
    needed: list[ir.Operation] = []
    pending = list(values)
    while pending:
        owner = pending.pop().owner
        if isinstance(owner, ir.Block):
            continue
        owner = as_operation(owner)
        if not any(owner == op for op in candidates) or any(owner == op for op in needed):
            continue
        if not _pure(owner) and not table_load(owner):
            return None
        needed.append(owner)
        pending += list(owner.operands)
    return [op for op in candidates if any(op == known for known in needed)]


def clone_ops(ops: list[ir.Operation], mapping: dict[ir.Value, ir.Value]) -> None:
    """Clone `ops` at the current insertion point, operands through (and results into)
    `mapping`."""
    for op in ops:
        clone = as_operation(op.clone())
        for number, operand in enumerate(clone.operands):
            if operand in mapping:
                clone.operands[number] = mapping[operand]
        for old, new in zip(op.results, clone.results, strict=True):
            mapping[old] = new


def _i32(value: int) -> ir.Value:
    return constant(ir.IntegerType.get_signless(32), value)


def _to_i32(value: ir.Value) -> ir.Value:
    return arith.index_cast(ir.IntegerType.get_signless(32), value)


def _shared_pointer(view: ir.Value, byte_offset: ir.Value | int) -> ir.Value:
    base = memref.ExtractAlignedPointerAsIndexOp(view).result
    if isinstance(byte_offset, int):
        byte_offset = index(byte_offset)
    address = arith.index_cast(ir.IntegerType.get_signless(64), arith.addi(base, byte_offset))
    return llvm.inttoptr(llvm.PointerType.get(3), address)


def grouped_order(launched: ir.Value, width: ir.Value, height: ir.Value, group_m: int
                  ) -> list[ir.Value]:
    """(x, y) block indices of the `launched`-th block of a width x height grid in
    rasterize-blocks' grouped order: the launch order walks `group_m` rows of tiles down each
    column before moving right, so the blocks that run together share their A rows and B
    columns in L2. A bijection of the grid (the last group may have fewer rows)."""
    per_group = arith.muli(width, index(group_m))
    first_row = arith.muli(arith.divui(launched, per_group), index(group_m))
    rows = arith.minui(arith.subi(height, first_row), index(group_m))
    within = arith.remui(launched, per_group)
    return [arith.divui(within, rows), arith.addi(first_row, arith.remui(within, rows))]


class RingLowering:
    """Emits one tile.tma_ring loop through the kernel's lowering (module docstring)."""

    def __init__(self, lowering: KernelLowering, loop: ir.Operation, ring: TmaRing,
                 maps: list[tuple[ir.Operation, ir.Value]],
                 store_maps: list[tuple[ir.Operation, ir.Value]],
                 source_maps: list[tuple[ir.Operation, ir.Value]]):
        self.lowering = lowering
        self.loop = loop
        self.ring = ring
        self.maps = maps  # (copy, its tensor map's pointer: a kernel argument)
        self.store_maps = store_maps  # the same for the tile.tma_store copies
        self.source_maps = source_maps  # and for the SOURCE_ATTR copy (at most one)
        self.staging: list[tuple[ir.Operation, ir.Value, int]] = []  # (copy, view, columns)
        self.stored = False  # a TMA store was issued: the kernel waits for it before exiting
        self.body = loop.regions[0].blocks[0]
        self.copies = [copy for copy, _ in maps]
        self.buffers: list[ir.Value] = []
        for copy in self.copies:
            dst = copy_parts(copy)[3]
            if not any(dst == known for known in self.buffers):
                self.buffers.append(dst)
        self.barriers: ir.Value | None = None
        self.done: ir.Value | None = None  # the consumers' ring iterations of earlier tiles
        # the consumers' iteration of the tile's loop, 0 first (a tile.clear_first_iteration
        # gemm's scale-d), while the loop's body is lowered
        self.iteration: ir.Value | None = None
        self.tile_yield: ir.Operation | None = None  # their tile loop's, given the new count
        # the consumers need no block barrier around the loop or between tiles (`private_tiles`)
        self.private = False
        # the epilogue source's column boxes: (ring iteration after the tile's K tiles, ring
        # tile whose slot holds the box, byte offset in the slot)
        self.source_boxes = self.place_source()
        self.loop_end: ir.Value | None = None  # the consumers' ring iterations after the loop
        self.source_bases: list[ir.Value] = []  # each box's first element in the window
        self.source_slots: list[ir.Value] = []  # the slots of the source's iterations

    # ----- set-up and roles ------------------------------------------------------------
    def barrier(self, full: bool, slot: ir.Value) -> ir.Value:
        """The shared address of full[slot] or empty[slot]."""
        first = 0 if full else self.ring.stages
        return _shared_pointer(self.barriers, arith.muli(arith.addi(slot, index(first)),
                                                         index(BARRIER_BYTES)))

    def init_barriers(self) -> None:
        """Thread 0 initializes the ring's mbarriers and prefetches the tensor maps; every
        thread waits for it."""
        stages = self.ring.stages
        self.barriers = self.lowering.shared_view([2 * stages], ir.IntegerType.get_signless(64),
                                                  BARRIER_BYTES)
        first = arith.cmpi(arith.CmpIPredicate.eq, self.lowering.tid, index(0))
        branch = scf.IfOp(first)
        with ir.InsertionPoint(branch.then_block):
            for slot in range(stages):
                nvvm.MBarrierInitOp(self.barrier(True, index(slot)), _i32(1))
                nvvm.MBarrierInitOp(self.barrier(False, index(slot)),
                                    _i32(4 * self.ring.consumers))
            for _, pointer in self.maps + self.source_maps + self.store_maps:
                nvvm.PrefetchOp(pointer, tensormap=True)
            scf.YieldOp([])
        nvvm.FenceMbarrierInitOp()
        gpu.BarrierOp()

    def registers(self) -> tuple[int, int]:
        """(the kernel's register cap per thread, the consumers' after setmaxnreg): the
        producer keeps PRODUCER_REGISTERS, the consumers share what the file has left."""
        launched = WARPGROUP_THREADS * (self.ring.consumers + 1)
        cap = min(MAX_REGISTERS, REGISTER_FILE // launched // 8 * 8)
        left = (REGISTER_FILE - PRODUCER_REGISTERS * WARPGROUP_THREADS) // (
            WARPGROUP_THREADS * self.ring.consumers)
        return cap, min(MAX_REGISTERS, left // 8 * 8)

    def needs_registers(self, statements: list[ir.Operation]) -> bool:
        """Whether the consumers may need more registers than the kernel's cap: the ring loop
        does more than copies and gemms (attention's softmax, a transpose, a preload), the
        fragments its ops touch (the accumulators, register A) and OTHER_REGISTERS are more
        than it, or a statement after the loop loads from memory (a bias, a residual: bias +
        ReLU spilled 172 bytes under 168 registers). An epilogue only on fragments is not
        counted: a cast of the accumulator frees its registers as it fills the cast's (154
        registers for the 128x256 f16 GEMM's 128 + 64)."""
        cap = self.registers()[0]
        after = statements[next(i for i, op in enumerate(statements)
                                if as_operation(op) == as_operation(self.loop)) + 1:]
        if not copies_and_gemms(as_operation(self.loop)) or any(
                op.name == "memref.load" and scope(op.operands[0]) != "fragment"
                for statement in after for op in walk(statement)):
            return True
        touched = {value for op in walk(self.loop) for value in op.operands}
        return sum(-(-fragment.layout.num_registers * bit_width(
            ir.MemRefType(fragment.registers.type).element_type) // 32)
            for value, fragment in self.lowering.fragments.items()
            if value in touched) + OTHER_REGISTERS > cap

    def split(self, statements: list[ir.Operation], block_ids: list[ir.Value],
              grid: list[int] | None, group_m: int) -> scf.IfOp:
        """if producer { the producer loop } else { `statements` } (moved there); the
        producer gives registers back to the consumers (setmaxnreg, which needs the kernel's
        register cap: nvvm.maxnreg) where that gives them more than the cap and they may need
        more than it (`needs_registers`): not in a block of one consumer
        warpgroup, whose 256 threads may each hold 255 registers anyway, nor in a GEMM whose
        accumulator leaves room under the cap (the whole-kernel GEMM moves none either: its
        128x64x64 tiles took 58 registers, the per-op kernel's setmaxnreg 168). With a
        persistent `grid` (its extents) both sides loop
        over the grid's tiles from the block's index in steps of the launched blocks, the
        ring's slots and phases counted on across tiles; `block_ids` (the values the kernel
        reads as its block indices) become the tile's."""
        cap, consumer_registers = self.registers()
        self.group_m = group_m
        module = enclosing(self.lowering.kernel, "builtin.module")
        self.private = (module is not None and RING_PRIVATE_TILES_ATTR in module.attributes
                        and self.private_tiles(statements))
        moves = consumer_registers > cap and self.needs_registers(statements)
        if moves:
            self.lowering.gpu_func.attributes["nvvm.maxnreg"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(32), cap)
        role = warpgroup_index(self.lowering.tid)
        producer = arith.cmpi(arith.CmpIPredicate.eq, role, index(self.ring.consumers))
        branch = scf.IfOp(producer, has_else=True)
        with ir.InsertionPoint(branch.then_block):
            if moves:
                nvvm.SetMaxRegisterOp(PRODUCER_REGISTERS, nvvm.SetMaxRegisterAction.decrease)
            self.producer(block_ids, grid)
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            if moves:
                nvvm.SetMaxRegisterOp(consumer_registers, nvvm.SetMaxRegisterAction.increase)
            if grid is None:
                self.done = index(0)
                end = as_operation(scf.YieldOp([]))
            else:
                tiles = self.tile_loop(grid)
                with ir.InsertionPoint(tiles.body):
                    for old, new in zip(block_ids, self.tile_ids(tiles.induction_variable,
                                                                 grid), strict=True):
                        old.replace_all_uses_with(new)
                    # the statements go here; then the tile's shared memory is free
                    self.tile_yield = as_operation(scf.YieldOp([tiles.inner_iter_args[0]]))
                    end = self.tile_yield
                    if not self.private:
                        with ir.InsertionPoint(self.tile_yield):
                            end = as_operation(gpu.BarrierOp())
                self.done = tiles.inner_iter_args[0]
                scf.YieldOp([])
        for op in statements:
            op.move_before(end)
        return branch

    def private_tiles(self, statements: list[ir.Operation]) -> bool:
        """(Asked only where the module has RING_PRIVATE_TILES_ATTR, the CUDA target's
        default.) Whether the kernel's statements touch no shared memory but the ring's slots, read
        in the loop by its gemms and by copies into fragments (a register-A chain), and the
        staging tiles of its TMA-stored copies: a GEMM's fill, ring loop, register epilogue
        (T.Parallel on fragments) and store. The consumers then need no block barrier ahead
        of the loop, after its drain or between persistent tiles: the ring's mbarriers order
        the slots, and each TMA store waits for its staging tile's earlier reads and meets
        its threads at barriers of its own. Anything else (a shared tile filled before the
        loop, a reduction or layout conversion through scratch, an op this does not know)
        keeps the barriers. The epilogue source (stage-epilogue-source) is the ring's too: its
        copy and reads are ordered by its slots' mbarriers."""
        return all(self._private(op, in_loop=False) for op in statements)

    def _private(self, op: ir.Operation, in_loop: bool) -> bool:
        op = as_operation(op)
        name = op.name
        if op == as_operation(self.loop):
            return all(self._private(inner, in_loop=True) for inner in self.body.operations)
        # shared tiles are workgroup views by now, the ring's slots still tile.alloc's
        shared = [v for v in op.operands if is_memref(v) and scope(v) in ("shared",
                                                                             SHARED_SPACE)]
        ring = lambda value: any(value == buffer for buffer in self.buffers)  # noqa: E731
        if name == "tile.copy":
            src, dst = copy_parts(op)[0], copy_parts(op)[3]
            if in_loop and any(op == copy for copy in self.copies):
                return True
            if any(op == staged for staged, _, _ in self.staging) or \
                    SOURCE_ATTR in op.attributes:
                return True  # a TMA store's, or the epilogue source the mbarriers order
            if in_loop and shared and all(map(ring, shared)) and scope(dst) == "fragment":
                return True  # a register-A chain's A registers, loaded from the slot
            # a fragment -> fragment copy may convert layouts through scratch; a store
            # decision (tile.store) without a staging tile stages through shared memory
            return not shared and "tile.store" not in op.attributes and \
                not (scope(src) == "fragment" and scope(dst) == "fragment")
        if name == "tile.gemm":
            return in_loop and all(map(ring, shared))
        if name in ("tile.parallel", "scf.if"):  # scf.if: prefetch-epilogue-operands' branches
            return not shared and all(self._private(inner, in_loop) for inner in walk(op))
        if name == "memref.load" and shared and all(map(self.source_tile, shared)):
            return True  # a read of the epilogue source, after its full barriers' waits
        if name in ("tile.alloc", "tile.fill", "memref.load", "memref.store", "memref.prefetch",
                    "memref.dim") or _pure(op):
            return not shared or name == "tile.alloc"
        return name in ("scf.yield", "tile.yield") and not shared

    def source_tile(self, value: ir.Value) -> bool:
        """Whether `value` is the epilogue source tile (its view, SourceTileLayout's)."""
        layout = self.lowering.shared_layouts.get(value)
        return layout is not None and isinstance(layout[0], SourceTileLayout)

    def tile_loop(self, grid: list[int]) -> scf.ForOp:
        """for tile = block index; tile < tiles; tile += launched blocks, counting the
        ring's iterations."""
        start = gpu.BlockIdOp(gpu.Dimension.x).result
        launched = gpu.GridDimOp(gpu.Dimension.x).result
        return scf.ForOp(start, index(math.prod(grid)), launched, [index(0)])

    def tile_ids(self, tile: ir.Value, grid: list[int]) -> list[ir.Value]:
        """The block indices of tile number `tile`: a 3-d grid's z outermost, its x and y in
        grouped order."""
        plane = grid[0] * grid[1] if len(grid) > 1 else grid[0]
        within = arith.remui(tile, index(plane)) if len(grid) > 2 else tile
        if len(grid) == 1:
            return [tile]
        ids = grouped_order(within, index(grid[0]), index(grid[1]), self.group_m)
        return ids + ([arith.divui(tile, index(plane))] if len(grid) > 2 else [])

    # ----- the producer -------------------------------------------------------------------
    def recompute(self, values: list[ir.Value], mapping: dict[ir.Value, ir.Value]) -> None:
        """Clone what `values` are computed from among the kernel's statements and the loop's
        body (the consumers' side) here; the rest of the kernel's values dominate the
        producer."""
        candidates = list(self.lowering.body_ops) + list(map(as_operation,
                                                             self.body.operations))
        ops = recomputable(values, candidates)
        if ops is None:
            raise op_error(self.loop, f"a {RING_ATTR} loop's bounds and copy corners must be "
                                      "pure arithmetic (plan-tma-pipelines checks it)")
        clone_ops(ops, mapping)

    def producer(self, block_ids: list[ir.Value], grid: list[int] | None) -> None:
        lowering = self.lowering
        leader = arith.cmpi(arith.CmpIPredicate.eq, lowering.tid,
                            index(WARPGROUP_THREADS * self.ring.consumers))
        branch = scf.IfOp(leader)
        with ir.InsertionPoint(branch.then_block):
            if grid is None:
                self.produce_tile({}, index(0))
            else:
                tiles = self.tile_loop(grid)
                with ir.InsertionPoint(tiles.body):
                    ids = self.tile_ids(tiles.induction_variable, grid)
                    done = self.produce_tile(dict(zip(block_ids, ids, strict=True)),
                                             tiles.inner_iter_args[0])
                    scf.YieldOp([done])
            scf.YieldOp([])

    def trip_count(self, lower: ir.Value, upper: ir.Value, step: ir.Value) -> ir.Value:
        """The iterations of a loop from lower to upper by step (0 when upper <= lower)."""
        span = arith.subi(upper, lower)
        count = arith.divui(arith.addi(span, arith.subi(step, index(1))), step)
        return arith.select(arith.cmpi(arith.CmpIPredicate.sgt, upper, lower), count,
                            index(0))

    def produce_tile(self, mapping: dict[ir.Value, ir.Value], done: ir.Value) -> ir.Value:
        """The producer's loop for one tile (`mapping`: the tile's block indices), its ring
        iterations counted from `done`; returns the count after it."""
        bounds = list(self.loop.operands)[:3]
        self.recompute(bounds, mapping)
        lower, upper, step = (mapping.get(v, v) for v in bounds)
        loop = scf.ForOp(lower, upper, step)
        with ir.InsertionPoint(loop.body):
            iteration, slot, phase = self.position(loop.induction_variable, lower, step,
                                                   done)
            nvvm.MBarrierTryWaitParityOp(self.barrier(False, slot),
                                         _to_i32(arith.xori(phase, index(1))),
                                         _i32(WAIT_TICKS))
            total = sum(TmaLoad.of(copy).bytes(self.element_bytes(copy))
                        for copy in self.copies)
            full = self.barrier(True, slot)
            nvvm.MBarrierArriveExpectTxOp(ir.IntegerType.get_signless(64), full,
                                          _i32(total))
            inner = dict(mapping)
            inner[self.body.arguments[0]] = loop.induction_variable
            self.recompute([v for copy in self.copies for v in copy_parts(copy)[1]], inner)
            for copy in self.copies:
                self.load(copy, inner, slot, full)
            scf.YieldOp([])
        end = arith.addi(done, self.trip_count(lower, upper, step))
        if not self.source_maps:
            return end
        self.produce_source(mapping, end)
        return arith.addi(end, index(self.source_iterations))

    @staticmethod
    def element_bytes(copy: ir.Operation) -> int:
        return max(1, bit_width(ir.MemRefType(copy.operands[0].type).element_type) // 8)

    def position(self, iv: ir.Value, lower: ir.Value, step: ir.Value, done: ir.Value
                 ) -> tuple[ir.Value, ir.Value, ir.Value]:
        """(iteration of the tile, slot, phase bit) of loop index `iv`, after `done` ring
        iterations of earlier tiles."""
        iteration = iv if constant_index(lower) == 0 else arith.subi(iv, lower)
        if constant_index(step) != 1:
            iteration = arith.divui(iteration, step)
        running = iteration if constant_index(done) == 0 else arith.addi(done, iteration)
        return (iteration, *self.slot_phase(running))

    def slot_phase(self, running: ir.Value) -> tuple[ir.Value, ir.Value]:
        """(slot, phase bit) of the block's `running`-th ring iteration."""
        stages = index(self.ring.stages)
        return arith.remui(running, stages), arith.andi(arith.divui(running, stages), index(1))

    def slot_offset(self, buffer: ir.Value, slot: ir.Value) -> ir.Value:
        """The slot's byte offset in the dynamic shared window."""
        ring = self.lowering.rings[buffer]
        offset = arith.addi(arith.muli(slot, index(ring.slot_bytes)), index(ring.offset))
        return offset if ring.base is None else arith.addi(ring.base, offset)

    def load(self, copy: ir.Operation, mapping: dict[ir.Value, ir.Value], slot: ir.Value,
             full: ir.Value) -> None:
        """The copy's column boxes for one iteration: box b at slot + b * rows * 128 bytes,
        its innermost coordinate 128 bytes further along the tensor's last dimension."""
        _, src_offsets, _, dst, _, _ = copy_parts(copy)
        load = TmaLoad.of(copy)
        corner = [mapping.get(v, v) for v in reversed(src_offsets)]  # innermost first
        rows = ir.MemRefType(dst.type).shape[0] if dst not in self.lowering.shared_layouts \
            else self.lowering.shared_layouts[dst][0].rows
        start = self.slot_offset(dst, slot)
        for box in range(load.boxes):
            coordinates = [_to_i32(arith.addi(corner[0], index(box * load.box[0])))] + \
                [_to_i32(value) for value in corner[1:]]
            target = _shared_pointer(self.lowering.smem, arith.addi(
                start, index(box * rows * load.swizzle)))
            nvvm.CpAsyncBulkTensorGlobalToSharedClusterOp(
                llvm.addrspacecast(llvm.PointerType.get(7), target),
                next(pointer for known, pointer in self.maps if known == copy),
                coordinates, full, [])

    # ----- the consumers ------------------------------------------------------------------
    def lower_loop(self) -> tuple[ir.Value, ir.Operation]:
        """The consumers' loop; the caller moves the body in before the returned anchor."""
        loop = self.loop
        lower, upper, step = loop.operands[0], loop.operands[1], loop.operands[2]
        # overlapped: the body's last gemm (its only one, or attention's P V: overlap-ring-gemms)
        gemm = [op for op in map(as_operation, self.body.operations)
                if op.name == "tile.gemm"][-1] if self.ring.overlap else None
        self.lowering.overlapped_gemm = gemm
        with loop.location, ir.InsertionPoint(loop):
            # what the statements before the loop wrote to shared memory (attention's Q tile)
            # is read in it: insert-shared-barriers leaves that to the barrier a cp.async
            # pipeline has atop its loop, which the ring's mbarrier waits do not replace
            if not self.private:
                gpu.BarrierOp()
            pingpong = PingPong.of(loop)
            if pingpong is not None:  # the consumers take turns issuing the body's gemms
                self.lowering.turns = Turns(pingpong, [
                    op for op in map(as_operation, self.body.operations)
                    if op.name == "tile.gemm"])
                self.lowering.turns.begin(self.lowering.tid)
            consumer = scf.ForOp(lower, upper, step)
            with ir.InsertionPoint(consumer.body):
                iteration, slot, phase = self.position(consumer.induction_variable, lower,
                                                       step, self.done)
                self.iteration = iteration
                nvvm.MBarrierTryWaitParityOp(self.barrier(True, slot), _to_i32(phase),
                                             _i32(WAIT_TICKS))
                views = {buffer: self.slot_view(buffer, slot) for buffer in self.buffers}
                turn = arith.addi(self.done, iteration) if constant_index(self.done) != 0 \
                    else iteration
                views.update({tile: self.copy_view(tile, turn) for tile in self.copy_tiles()})
                anchor = self.release(iteration, slot)
                scf.YieldOp([])
            if pingpong is not None:
                self.lowering.turns.end()
            trips = self.trip_count(lower, upper, step)
            done = arith.addi(self.done, trips)
            self.loop_end = done
            if gemm is not None:  # the last gemms have read their slots: hand them back too
                nvvm.wgmma_wait_group_sync_aligned(0)
                stages = index(self.ring.stages)
                for back in range(1, self.ring.lag + 1):
                    last = arith.remui(arith.addi(done, arith.subi(stages, index(back))),
                                       stages)
                    ran = arith.cmpi(arith.CmpIPredicate.uge, trips, index(back))
                    branch = scf.IfOp(arith.andi(self.lane_zero()[0], ran))
                    with ir.InsertionPoint(branch.then_block):
                        nvvm.MBarrierArriveOp(ir.IntegerType.get_signless(64),
                                              self.barrier(False, last))
                        scf.YieldOp([])
            if not self.private:
                gpu.BarrierOp()
        if self.tile_yield is not None:  # the epilogue source's iterations come after
            with ir.InsertionPoint(self.tile_yield):
                self.tile_yield.operands[0] = done if not self.source_maps else arith.addi(
                    done, index(self.source_iterations))
        for copy in self.copies:
            copy.erase()
        for buffer, view in views.items():
            placeholder = as_operation(buffer.owner)
            buffer.replace_all_uses_with(view)
            placeholder.erase()
        return consumer.induction_variable, anchor

    def operands_fenced(self) -> contextlib.AbstractContextManager[None]:
        """While the body is lowered: its gemms' shared operand tiles outside the ring count
        as fenced (`_wgmma.operands_fenced`: the barrier ahead of the loop made the writes
        of each writer, fencing for the async proxy, visible)."""
        return operands_fenced(self.lowering.shared_layouts, self.body)

    def release(self, iteration: ir.Value, slot: ir.Value) -> ir.Operation:
        """Lane 0 of each warp hands the slot its warp's wgmmas finished reading back; returns
        the first op emitted (the body goes before it)."""
        lane_zero, first = self.lane_zero()
        if self.ring.overlap:
            lag = self.ring.lag
            nvvm.wgmma_wait_group_sync_aligned(lag * self.ring.groups)
            stages = index(self.ring.stages)
            previous = arith.remui(arith.addi(slot, arith.subi(stages, index(lag))), stages)
            started = arith.cmpi(arith.CmpIPredicate.uge, iteration, index(lag))
            condition, slot = arith.andi(lane_zero, started), previous
        else:
            condition = lane_zero
        branch = scf.IfOp(condition)
        with ir.InsertionPoint(branch.then_block):
            nvvm.MBarrierArriveOp(ir.IntegerType.get_signless(64), self.barrier(False, slot))
            scf.YieldOp([])
        return first

    def lane_zero(self) -> tuple[ir.Value, ir.Operation]:
        """Whether this thread is lane 0 of its warp, and the first op that asks it."""
        warp_size = index(32)
        return arith.cmpi(arith.CmpIPredicate.eq, arith.remui(self.lowering.tid, warp_size),
                          index(0)), as_operation(warp_size.owner)

    def copy_tiles(self) -> list[ir.Value]:
        """The shared tiles the body writes that have slots of their own (COPY_SLOTS_ATTR:
        the lowering made them rings of that many slots)."""
        found: list[ir.Value] = []
        for op in self.body.operations:
            for inner in walk(as_operation(op)):
                tile = inner.operands[1] if inner.name == "memref.store" else None
                if tile is not None and tile in self.lowering.rings and not any(
                        tile == known for known in [*found, *self.buffers]):
                    found.append(tile)
        return found

    def copy_view(self, tile: ir.Value, turn: ir.Value) -> ir.Value:
        """The slot of a copy tile that ring iteration `turn` writes and its gemm reads, written
        by the generic proxy: the gemm fences it for wgmma."""
        view = memref.ViewOp(self.lowering.rings[tile].type_, self.lowering.smem,
                             self.slot_offset(tile, arith.remui(turn, index(COPY_SLOTS))),
                             []).result
        layouts = self.lowering.shared_layouts
        if tile in layouts:
            layouts[view] = (layouts[tile][0], False)
        return view

    def slot_view(self, buffer: ir.Value, slot: ir.Value) -> ir.Value:
        ring = self.lowering.rings[buffer]
        view = memref.ViewOp(ring.type_, self.lowering.smem, self.slot_offset(buffer, slot),
                             []).result
        layouts = self.lowering.shared_layouts
        if buffer in layouts:  # filled through the async proxy, as wgmma reads it
            layouts[view] = (layouts[buffer][0], True)
        return view

    # ----- the epilogue source: a tile loaded into the drained slots (SOURCE_ATTR) ----------
    def place_source(self) -> list[tuple[int, ir.Value, int]]:
        """Where each column box of the SOURCE_ATTR copy lands: the ring iterations after
        the tile's K tiles take the boxes in order, each iteration's slots (the ring's tiles
        in order) as many boxes as they hold whole; each box a whole number of 1 KiB
        swizzle patterns (its rows a multiple of 8), so its pattern starts where it does."""
        if not self.source_maps:
            return []
        copy = self.source_maps[0][0]
        load = TmaLoad.of(copy, SOURCE_ATTR)
        box_bytes = load.box[1] * load.swizzle
        slots = [(buffer, self.lowering.rings[buffer].slot_bytes // box_bytes)
                 for buffer in self.buffers if buffer in self.lowering.rings]
        per_iteration = sum(count for _, count in slots)
        if box_bytes % SWIZZLE_ATOM_BYTES or not per_iteration or \
                -(-load.boxes // per_iteration) > self.ring.stages:
            raise op_error(copy, f"the {SOURCE_ATTR} copy's {load.boxes} boxes of {box_bytes} "
                                 f"bytes do not fit the ring's {self.ring.stages} stages' slots "
                                 "(stage-epilogue-source checks it)")
        placed = []
        for number in range(load.boxes):
            iteration, within = divmod(number, per_iteration)
            for buffer, count in slots:
                if within < count:
                    placed.append((iteration, buffer, within * box_bytes))
                    break
                within -= count
        return placed

    @property
    def source_iterations(self) -> int:
        """The ring iterations the epilogue source takes after each tile's K tiles."""
        return self.source_boxes[-1][0] + 1 if self.source_boxes else 0

    def produce_source(self, mapping: dict[ir.Value, ir.Value], end: ir.Value) -> None:
        """The producer's loads of the epilogue source after the tile's K tiles (`end`: the
        ring iterations before it): each of its iterations waits for its slot to be released
        (the K tile there read), expects its boxes' bytes and loads them."""
        copy, pointer = self.source_maps[0]
        load = TmaLoad.of(copy, SOURCE_ATTR)
        src_offsets = copy_parts(copy)[1]
        inner = dict(mapping)
        self.recompute(list(src_offsets), inner)
        corner = [inner.get(v, v) for v in reversed(src_offsets)]  # innermost first
        for iteration in range(self.source_iterations):
            slot, phase = self.slot_phase(arith.addi(end, index(iteration)))
            nvvm.MBarrierTryWaitParityOp(self.barrier(False, slot),
                                         _to_i32(arith.xori(phase, index(1))),
                                         _i32(WAIT_TICKS))
            boxes = [(number, buffer, offset) for number, (at, buffer, offset)
                     in enumerate(self.source_boxes) if at == iteration]
            full = self.barrier(True, slot)
            nvvm.MBarrierArriveExpectTxOp(ir.IntegerType.get_signless(64), full, _i32(
                len(boxes) * load.bytes(self.element_bytes(copy)) // load.boxes))
            for number, buffer, offset in boxes:
                coordinates = [_to_i32(arith.addi(corner[0], index(number * load.box[0])))] + \
                    [_to_i32(value) for value in corner[1:]]
                target = _shared_pointer(self.lowering.smem, arith.addi(
                    self.slot_offset(buffer, slot), index(offset)))
                nvvm.CpAsyncBulkTensorGlobalToSharedClusterOp(
                    llvm.addrspacecast(llvm.PointerType.get(7), target), pointer, coordinates,
                    full, [])

    def wait_source(self, copy: ir.Operation) -> None:
        """The consumers' side of the SOURCE_ATTR copy: wait for its iterations' full
        barriers, after the loop's; its boxes' places in the slots are the tile's layout."""
        if self.loop_end is None:
            raise op_error(copy, f"a {SOURCE_ATTR} copy must follow its {RING_ATTR} loop")
        element_bytes = self.element_bytes(copy)
        self.source_slots = []
        for iteration in range(self.source_iterations):
            slot, phase = self.slot_phase(arith.addi(self.loop_end, index(iteration)))
            nvvm.MBarrierTryWaitParityOp(self.barrier(True, slot), _to_i32(phase),
                                         _i32(WAIT_TICKS))
            self.source_slots.append(slot)
        self.source_bases = [
            arith.divui(arith.addi(self.slot_offset(buffer, self.source_slots[iteration]),
                                   index(offset)), index(element_bytes))
            for iteration, buffer, offset in self.source_boxes]

    def release_source(self) -> None:
        """After the epilogue's last read of the source tile: its slots back to the producer
        (the reads ordered before its TMA writes there by a proxy fence, each warp's lanes
        before its lane 0 by a warp barrier), lane 0 of each consumer warp arriving on each
        slot's empty barrier."""
        nvvm.fence_proxy(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)
        nvvm.SyncWarpOp(_i32(-1))  # every lane's reads before its lane 0's arrival
        lane_zero, _ = self.lane_zero()
        branch = scf.IfOp(lane_zero)
        with ir.InsertionPoint(branch.then_block):
            for slot in self.source_slots:
                nvvm.MBarrierArriveOp(ir.IntegerType.get_signless(64),
                                      self.barrier(False, slot))
            scf.YieldOp([])

    # ----- the epilogue: a TMA store of the accumulator -----------------------------------
    def reserve_staging(self, fragments: dict[ir.Value, Fragment], limit: int) -> None:
        """Shared memory for each tile.tma_store copy's staging tile, right after the arena
        (1 KiB-aligned, as TMA's swizzle needs; before anything else is reserved) while the
        block stays within `limit` bytes: `columns` of the tile, halved until it fits. A copy
        whose fragment layout spreads a register over passes (a thread's column bits past
        the pass), or that does not fit, gets none and takes the plain lowering."""
        lowering = self.lowering
        if lowering.swizzle_base is None:
            return
        for copy, _ in self.store_maps:
            src, _, _, dst, _, _ = copy_parts(copy)
            layout = fragments[src].layout if src in fragments else None
            element_bytes = max(1, bit_width(ir.MemRefType(dst.type).element_type) // 8)
            if layout is None or store_vector(layout, element_bytes) is None:
                continue
            store = TmaStore.of(copy)
            per_box = store.swizzle // element_bytes
            rows, columns = layout.shape
            # the arena's end, relative to its aligned start (open_arena adds 1 KiB of slack)
            start = -(-(lowering.shared_bytes - SWIZZLE_ATOM_BYTES) // SWIZZLE_ATOM_BYTES) * \
                SWIZZLE_ATOM_BYTES
            staged = store.columns
            while staged > per_box and start + rows * staged * element_bytes + \
                    SWIZZLE_ATOM_BYTES > limit:
                staged //= 2  # a narrower staging tile, more passes
            size = rows * staged * element_bytes
            if columns % staged or staged % per_box or layout.thread_span()[-1] >= staged or \
                    start + size + SWIZZLE_ATOM_BYTES > limit:
                continue
            view_type = ir.MemRefType.get([rows * staged], ir.MemRefType(dst.type).element_type,
                                          memory_space=ir.Attribute.parse(SHARED_SPACE))
            view = memref.ViewOp(view_type, lowering.smem,
                                 arith.addi(lowering.swizzle_base, index(start)), []).result
            self.staging.append((copy, view, staged))
            lowering.shared_bytes = start + size + SWIZZLE_ATOM_BYTES

    def store(self, copy: ir.Operation, fragment: Fragment) -> bool:
        """The fragment -> global copy through its staging tile (128B-swizzled, one per row
        slab), `columns` of the tile at a time: each thread writes its registers of the pass
        there (converted, in vectors of consecutive registers), a barrier, a leader stores
        the pass's column boxes by TMA (clipped at the tensor's edges) and goes on without
        waiting: the stores overlap what follows (a persistent grid's next tile). Before the
        staging tile is written again, the leader waits until the stores issued have read
        it. Where each consumer warpgroup holds the rows of its own slab (wgmma's
        accumulator), each warpgroup does this on its own: its barriers are named ones over
        its 128 threads and its first thread stores its slab; else the barriers are over
        every consumer and thread 0 stores every slab. False, with nothing emitted, when the
        copy has no staging tile (`reserve_staging`)."""
        found = [(view, staged) for known, view, staged in self.staging if known == copy]
        if not found:
            return False
        lowering = self.lowering
        layout = fragment.layout
        view, staged = found[0]
        store = TmaStore.of(copy)
        _, _, _, dst, dst_offsets, dst_shape = copy_parts(copy)
        element = ir.MemRefType(dst.type).element_type
        element_bytes = max(1, bit_width(element) // 8)
        per_box = store.swizzle // element_bytes
        vec = store_vector(layout, element_bytes)
        rows, columns = layout.shape
        slab_rows = rows // store.slabs
        slab_elements = slab_rows * staged
        staging = SharedOperandLayout((slab_rows, staged), element_bytes, True, store.swizzle)
        pointer = next(pointer for known, pointer in self.store_maps if known == copy)
        shift = thread_coordinates(layout, lowering.tid)
        corner = list(reversed(dst_offsets))  # innermost first
        row_dim = len(dst_shape) - 1 - [d for d, extent in enumerate(dst_shape)
                                        if extent != 1][0]
        i32 = ir.IntegerType.get_signless(32)
        if own_slabs(layout, store.slabs):
            group = warpgroup_index(lowering.tid)
            first = arith.remui(lowering.tid, index(WARPGROUP_THREADS))
            leader = arith.cmpi(arith.CmpIPredicate.eq, first, index(0))
            barrier_id = arith.index_cast(i32, arith.addi(group, index(SLAB_BARRIER)))
            slabs = [group]

            def barrier() -> None:
                nvvm.BarrierOp(None, barrierId=barrier_id,
                               numberOfThreads=_i32(WARPGROUP_THREADS))
        else:
            leader = arith.cmpi(arith.CmpIPredicate.eq, lowering.tid, index(0))
            slabs = [index(slab) for slab in range(store.slabs)]

            def barrier() -> None:
                gpu.BarrierOp()
        bases: dict[int, ir.Value] = {}  # staging_index's, shared by the passes
        for part in range(columns // staged):
            _guarded(leader, lambda: nvvm.CpAsyncBulkWaitGroupOp(0, read=True))
            barrier()
            for register in range(0, layout.num_registers, vec):
                mask = layout.register_mask(register)
                if mask is False or layout.register_coordinate(register)[-1] // staged != part:
                    continue
                where = staging_index(layout, register, part * staged, staging, shift, bases)
                values = [fragment.load(register + i) for i in range(vec)]
                packed = vector.FromElementsOp(ir.VectorType.get([vec], values[0].type),
                                               values).result
                value = cast(packed, ir.VectorType.get([vec], element))
                guard = None if mask else lowering.inside_tile(
                    layout, register_coordinates(layout, register, shift))
                _guarded(guard, lambda value=value, where=where: vector.StoreOp(
                    value, view, [where], alignment=vec * element_bytes))
            nvvm.fence_proxy(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)
            barrier()

            def issue(part: int = part) -> None:
                for slab in slabs:
                    start = arith.muli(slab, index(slab_elements * element_bytes))
                    row = arith.addi(corner[row_dim], arith.muli(slab, index(slab_rows)))
                    at = [row if d == row_dim else value for d, value in enumerate(corner)]
                    for box in range(staged // per_box):
                        column = arith.addi(at[0], index(part * staged + box * per_box))
                        nvvm.CpAsyncBulkTensorSharedCTAToGlobalOp(
                            pointer, _shared_pointer(view, arith.addi(
                                start, index(box * slab_rows * store.swizzle))),
                            [_to_i32(column)] + [_to_i32(value) for value in at[1:]])
                nvvm.CpAsyncBulkCommitGroupOp()

            _guarded(leader, issue)
        self.stored = True
        return True

    def drain_stores(self) -> None:
        """Before the kernel exits: the TMA stores have read their staging tiles (only the
        thread that issued them has any to wait for)."""
        if self.stored:
            nvvm.CpAsyncBulkWaitGroupOp(0, read=True)



def _guarded(condition: ir.Value | None, body: Callable[[], object]) -> None:
    """`body` under `condition` (always when None)."""
    if condition is None:
        body()
        return
    branch = scf.IfOp(condition)
    with ir.InsertionPoint(branch.then_block):
        body()
        scf.YieldOp([])


SHARED_SPACE = "#gpu.address_space<workgroup>"


def own_slabs(layout: LinearLayout, slabs: int) -> bool:
    """Whether warpgroup g of the layout's threads holds exactly rows [g, g + 1) * rows /
    slabs of a 2-d tile: its warpgroup bits (the warp bits past a warpgroup's 4 warps) step
    through the slabs, every other bit stays inside one. Never for a count that is no power
    of two (a ring of 3 consumers, layouts over 2 warpgroups and a copy): each warpgroup's
    slab store takes its slab from the unmasked warpgroup index."""
    if layout.rank != 2 or slabs == 1 or not is_power_of_two(slabs) or \
            len(layout.warp) != 2 + log2(slabs):
        return False
    slab_rows = layout.shape[0] // slabs
    inside = layout.register + layout.lane + layout.warp[:2]
    return all(basis[0] < slab_rows for basis in inside) and all(
        tuple(basis) == (slab_rows << k, 0) for k, basis in enumerate(layout.warp[2:]))


def staging_index(layout: LinearLayout, register: int, first_column: int,
                  staging: SharedOperandLayout, shift: list[ir.Value],
                  bases: dict[int, ir.Value]) -> ir.Value:
    """The element index in a TMA store's staging tile (`staging`: one slab's rows, the
    pass's columns from `first_column` on; slabs one after another) of register `register`
    of the thread whose coordinates are `shift`. Where the register's row and column bits
    are none of the thread's and its row is a multiple of 8 (the swizzle's row phase is then
    the thread's), in slabs of a power of two of rows, it is the thread's index with the
    register's chunk bits XORed in (made once per chunk value, kept in `bases`) plus a
    constant: the registers of one chunk value share an address register and the rest folds
    into the store's immediate (8 address registers, as the whole-kernel GEMM keeps; each
    register's full index, hoisted out of a persistent tile loop, held the quickstart's 64).
    Else it is computed from the register's coordinates."""
    rows, columns = staging.shape
    row, column = layout.register_coordinate(register)
    column -= first_column
    span = layout.thread_span()
    if row & span[0] or column & span[1] or row % 8 or not is_power_of_two(rows) or rows % 8:
        point = register_coordinates(layout, register, shift)
        column_value = point[1] if not first_column else arith.subi(point[1],
                                                                    index(first_column))
        slab = arith.divui(point[0], index(rows))
        return arith.addi(arith.muli(slab, index(rows * columns)), staging.element_index(
            arith.remui(point[0], index(rows)), column_value))
    per_row = staging.span // staging.element_bytes  # elements of a row in one column box
    per_chunk = CHUNK_BYTES // staging.element_bytes
    box, within = divmod(column, per_row)
    slab, row = divmod(row, rows)
    chunk_bits = within - within % per_chunk
    if chunk_bits not in bases:
        thread_column = shift[1] if not chunk_bits else arith.xori(shift[1], index(chunk_bits))
        bases[chunk_bits] = arith.addi(
            arith.muli(arith.divui(shift[0], index(rows)), index(rows * columns)),
            staging.element_index(arith.remui(shift[0], index(rows)), thread_column))
    added = (slab * rows * columns + box * rows * per_row + row * per_row
             + within % per_chunk)
    return arith.addi(bases[chunk_bits], index(added)) if added else bases[chunk_bits]


def store_vector(layout: LinearLayout, element_bytes: int) -> int | None:
    """Consecutive registers a thread writes to the staging tile as one vector (within one
    16-byte chunk, so the swizzle keeps them together), None when a register's column is not
    a multiple of it (the vector would straddle chunks)."""
    if layout.rank != 2:
        return None
    vec = math.gcd(layout.contiguous_registers(), CHUNK_BYTES // element_bytes,
                   layout.shape[-1])
    while layout.thread_span()[-1] & (vec - 1):
        vec //= 2
    if any(basis[-1] % vec for basis in layout.register[log2(vec):]):
        return None
    return vec
