"""ring-loop-loads: a loop's streamed global loads are issued iterations ahead by cp.async into a
ring of shared-memory slots private to each thread, and read back from the slot in their own
iteration.

A memory-bound step loop (the int4 GEMV's: each step loads a warp's weights, scales and zeros
and uses them at once) has DRAM bytes in flight only while its warps wait on their own loads,
then computes with nothing in flight. prefetch-loop-loads carries the next step's values in a
second register set (fewer resident warps, a register cap); prefetch-loop-loads-to-l2 asks L2
for them, and the step's own loads still make an L2 round trip (and a DRAM one for the 2-byte
scales it leaves out). Here the bytes land in shared memory: at the start of iteration i the
thread issues cp.async for iteration i + S - 1 into slot (n + S - 1) % S (n the iteration's
number), commits them as one group and waits until at most S - 1 groups are pending, so
iteration i's group is complete; each load of iteration i then reads its slot (ld.shared, a
few cycles) instead of global memory. The iterations lb .. lb + (S - 2) * step are issued
before the loop; an iteration past the last issues nothing (an empty group). No barrier is
needed: a thread reads only the bytes its own cp.async wrote, after its own wait_group, and
overwrites a slot only in the iteration after the one that read it.

Taken: the loops and loads prefetch-loop-loads takes (`_loop_loads.py`), each load read by at
most MAX_SHARERS blocks of the known grid (the GEMV's weights, scales and zeros; not the
activations every block reads, which stay in L1 / L2) and not in a bounds-checked copy's
element-wise else branch (its whole-run branch is issued under the same check: the slot is
filled exactly where the branch reads it). A load of 4, 8 or 16 bytes aligned to its size is
one cp.async of its bytes (16: .cg, past L1); a 1- or 2-byte load one 4-byte cp.async of the
aligned word holding it (inside the same aligned word, so on the tensor's pages), read back at
its byte in the slot. Slots lie past the function's shared memory (`tile.shared_bytes` grows),
laid out slot, load, thread: a warp's 16-byte reads of one load are 512 contiguous bytes, free
of bank conflicts. A loop whose ring would take more than MAX_RING_BYTES a block, or past the
chip's shared memory, is left alone. S is the module's `tile.loop_load_ring_slots`
(TILEC_LOOP_LOAD_RING=S on CUDA); without it (=1), one slot more than the iterations that make
AHEAD_BYTES of a thread's ringed loads (the int4 GEMV's 96-byte steps: 2 slots; TileLang's GEMV
example, 4 bytes of weights a step: MAX_SLOTS), at most the loop's trips.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref, nvvm, scf, ub

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import as_operation, enclosing, walk
from tilec.compiler.passes._loop_loads import (
    LoopLoads,
    clone_ops,
    element_address,
    in_else_branch,
    is_far_load,
    known_grid,
    loaded_bytes,
    read_by_few_blocks,
    take_loop,
)
from tilec.compiler.passes._scalar import bit_width
from tilec.compiler.passes._scheduling import ARCH_ATTR
from tilec.compiler.targets.description import describe

SLOTS_ATTR = "tile.loop_load_ring_slots"  # on the module: the ring's slots (S)
AHEAD_BYTES = 64  # without a slot count: the bytes of a thread's ringed loads to run ahead by
MAX_SLOTS = 8
MAX_RING_BYTES = 48 * 1024  # a block's ring, at most (shared memory is occupancy too)
SHARED_BYTES_ATTR = "tile.shared_bytes"
RING_ALIGN = 16
WORD = 4  # the cp.async a 1- or 2-byte load is widened to
# element types llvm.load takes as they are (the others, float8, go through an integer)
LLVM_LOADABLE = (ir.IntegerType, ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)


@dataclass
class RingedLoad:
    """A load the ring serves: the bytes a thread copies for it into a slot, and where its
    threads' shares start in each slot (bytes past the slot's start)."""

    load: ir.Operation
    copy_bytes: int  # 4, 8 or 16
    region: int


def _ringable(load: ir.Operation, root: ir.Operation, grid: list[int] | None) -> bool:
    if not is_far_load(load) or in_else_branch(load, root) or not read_by_few_blocks(load, grid):
        return False
    size = loaded_bytes(load)
    if size in (1, 2):
        return True
    if size not in (4, 8, 16):
        return False
    if load.name == "memref.load":
        return True  # a scalar's natural alignment
    alignment = load.attributes["alignment"] if "alignment" in load.attributes else None
    return alignment is not None and ir.IntegerAttr(alignment).value >= size


def _loads_of(roots: list[ir.Operation], grid: list[int] | None) -> list[list[ir.Operation]]:
    """Per root, the loads in it (or it) the ring takes, in walk order."""
    return [[load for load in [root, *walk(root)] if _ringable(load, root, grid)]
            for root in roots]


def _thread_index(function: ir.Operation) -> ir.Value:
    """The thread's linear index in its block (x fastest), from the known block size."""
    sizes = list(ir.DenseI32ArrayAttr(function.attributes["known_block_size"]))
    index = ir.IndexType.get()
    linear, scale = None, 1
    for axis, size in zip((gpu.Dimension.x, gpu.Dimension.y, gpu.Dimension.z), sizes,
                          strict=True):
        if size == 1:
            continue
        term = gpu.thread_id(axis)
        if scale != 1:
            term = arith.muli(term, arith.constant(index, scale))
        linear = term if linear is None else arith.addi(linear, term)
        scale *= size
    return linear if linear is not None else arith.constant(index, 0)


def _shared_base(offset: int) -> ir.Value:
    """The address of byte `offset` of the dynamic shared memory window, as an index."""
    window = gpu.DynamicSharedMemoryOp(ir.MemRefType.get(
        [ir.ShapedType.get_dynamic_size()], ir.IntegerType.get_signless(8),
        memory_space=ir.Attribute.parse("#gpu.address_space<workgroup>"))).result
    start = memref.extract_aligned_pointer_as_index(window)
    return arith.addi(start, arith.constant(ir.IndexType.get(), offset))


def _pointer(address: ir.Value, space: int) -> ir.Value:
    return llvm.inttoptr(llvm.PointerType.get(space),
                         arith.index_cast(ir.IntegerType.get_signless(64), address))


def _as_index(pointer: ir.Value) -> ir.Value:
    return arith.index_cast(ir.IndexType.get(),
                            llvm.ptrtoint(ir.IntegerType.get_signless(64), pointer))


class _Ring:
    """The slots of one loop: where a thread's share of a load lies in slot `slot`."""

    def __init__(self, base: ir.Value, thread: ir.Value, slot_bytes: int):
        self.base, self.thread, self.slot_bytes = base, thread, slot_bytes

    def where(self, slot: ir.Value, entry: RingedLoad) -> ir.Value:
        index = ir.IndexType.get()
        start = arith.addi(self.base, arith.muli(slot, arith.constant(index, self.slot_bytes)))
        start = arith.addi(start, arith.constant(index, entry.region))
        return arith.addi(start, arith.muli(self.thread,
                                            arith.constant(index, entry.copy_bytes)))


def _issue(load: ir.Operation, entry: RingedLoad, destination: ir.Value) -> None:
    """cp.async of the load's bytes (or of the aligned word holding them) to `destination`."""
    source = _as_index(element_address(load.operands[0], list(load.operands[1:])))
    index = ir.IndexType.get()
    if loaded_bytes(load) < WORD:
        source = arith.andi(source, arith.constant(index, -WORD))
    modifier = nvvm.LoadCacheModifierKind.CG if entry.copy_bytes == 16 \
        else nvvm.LoadCacheModifierKind.CA
    nvvm.cp_async_shared_global(_pointer(destination, 3), _pointer(source, 1),
                                entry.copy_bytes, modifier)


def _read(load: ir.Operation, entry: RingedLoad, slot_start: ir.Value) -> ir.Value:
    """The load's value from its thread's share of the slot."""
    where, size = slot_start, loaded_bytes(load)
    if size < WORD:
        address = _as_index(element_address(load.operands[0], list(load.operands[1:])))
        where = arith.addi(where, arith.andi(address, arith.constant(ir.IndexType.get(),
                                                                     WORD - 1)))
    value_type = load.results[0].type
    vector = isinstance(value_type, ir.VectorType)
    element = value_type.element_type if vector else value_type
    if isinstance(element, LLVM_LOADABLE):
        return llvm.load(value_type, _pointer(where, 3), alignment=size)
    # a float8 (a T.float8_e8m0fnu block scale): loaded as an integer of its width
    bits = ir.IntegerType.get_signless(bit_width(element))
    as_bits = ir.VectorType.get(value_type.shape, bits) if vector else bits
    return arith.bitcast(value_type, llvm.load(as_bits, _pointer(where, 3), alignment=size))


def _ring_loop(loop: ir.Operation, plan: LoopLoads, slots: int | None, lower: int, step: int,
               trips: int, grid: list[int] | None, shared: tuple[int, int]) -> int | None:
    """Rewrites `loop` to read its ringed loads from the slots; the end of its ring in shared
    memory (None where no load qualifies or the ring does not fit). `slots`: None for
    AHEAD_BYTES' count; `shared`: the function's shared bytes before any ring and the chip's
    limit."""
    per_root = _loads_of(plan.roots, grid)
    roots = [root for root, loads in zip(plan.roots, per_root, strict=True) if loads]
    if not roots:
        return None
    function = enclosing(loop, "gpu.func")
    threads = math.prod(ir.DenseI32ArrayAttr(function.attributes["known_block_size"]))
    ringed, region = [], 0
    for loads in per_root:
        for load in loads:
            copy_bytes = max(loaded_bytes(load), WORD)
            region = -(-region // copy_bytes) * copy_bytes  # a 34-thread block's 4-byte share
            ringed.append(RingedLoad(load, copy_bytes, region))
            region += threads * copy_bytes
    slot_bytes = -(-region // RING_ALIGN) * RING_ALIGN
    if slots is None:
        slots = min(1 + -(-AHEAD_BYTES * threads // region), MAX_SLOTS)
    slots = max(2, min(slots, trips))
    used, limit = shared
    offset = -(-used // RING_ALIGN) * RING_ALIGN
    if slots * slot_bytes > MAX_RING_BYTES or offset + slots * slot_bytes > limit:
        return None
    entry_of = {entry.load: entry for entry in ringed}
    index = ir.IndexType.get()
    body = loop.regions[0].blocks[0]
    induction = body.arguments[0]
    last = lower + (trips - 1) * step
    entry_block = function.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(entry_block), loop.location:
        ring = _Ring(_shared_base(offset), _thread_index(function), slot_bytes)

    def clone_of_root(op: ir.Operation) -> bool:
        return op.name == "scf.if" or is_far_load(op)  # the slice's ops are neither

    def issue(iteration: ir.Value, slot: ir.Value, point: ir.InsertionPoint) -> None:
        """The ringed loads of `iteration` issued into `slot` at `point`: the roots cloned,
        their ringed loads made cp.async, their other loads dropped."""
        mapping: dict[ir.Value, ir.Value] = {induction: iteration}
        before = {as_operation(op) for op in point.block.operations}
        clone_ops(plan.slice + roots, mapping, point)
        clones = [op for op in (as_operation(op) for op in point.block.operations)
                  if op not in before and op.name != "scf.yield"]
        for root, clone in zip(roots, [op for op in clones if clone_of_root(op)],
                               strict=True):
            for load, copy in zip([root, *walk(root)], [clone, *walk(clone)], strict=True):
                if not is_far_load(copy):
                    continue
                with ir.InsertionPoint(copy), copy.location:
                    if load in entry_of:
                        _issue(copy, entry_of[load], ring.where(slot, entry_of[load]))
                    poison = ub.poison(copy.results[0].type)
                copy.results[0].replace_all_uses_with(poison)
                copy.erase()

    def slot_of(number: ir.Value) -> ir.Value:
        return arith.remui(number, arith.constant(index, slots))

    with ir.InsertionPoint(loop), loop.location:
        for ahead in range(min(slots - 1, trips)):
            issue(arith.constant(index, lower + ahead * step), arith.constant(index, ahead),
                  ir.InsertionPoint(loop))
            nvvm.cp_async_commit_group()
    first = as_operation(body.operations[0])
    with ir.InsertionPoint(first), loop.location:
        number = arith.divui(arith.subi(induction, arith.constant(index, lower)),
                             arith.constant(index, step))
        target = arith.addi(induction, arith.constant(index, (slots - 1) * step))
        guard = scf.IfOp(arith.cmpi(arith.CmpIPredicate.sle, target,
                                    arith.constant(index, last)))
        with ir.InsertionPoint(guard.then_block):
            scf.YieldOp([])
        yielded = as_operation(guard.then_block.operations[0])
        with ir.InsertionPoint(yielded):
            issue(target, slot_of(arith.addi(number, arith.constant(index, slots - 1))),
                  ir.InsertionPoint(yielded))
        nvvm.cp_async_commit_group()
        nvvm.cp_async_wait_group(slots - 1)
        current = slot_of(number)
    for entry in ringed:
        load = entry.load
        with ir.InsertionPoint(load), load.location:
            value = _read(load, entry, ring.where(current, entry))
        load.results[0].replace_all_uses_with(value)
        load.erase()
    return offset + slots * slot_bytes


@register
@dataclass
class RingLoopLoads(TilePass):
    """A loop's streamed global loads issued iterations ahead by cp.async into per-thread
    shared-memory slots, read back from them."""

    name = "ring-loop-loads"
    summary = "scf.for global loads of iteration i + S - 1 issued by cp.async at iteration i"

    def run(self, module: ir.Module) -> None:
        attributes = module.operation.attributes
        slots = (ir.IntegerAttr(attributes[SLOTS_ATTR]).value if SLOTS_ATTR in attributes
                 else None)
        limit = (describe(ir.StringAttr(attributes[ARCH_ATTR]).value).max_shared_bytes
                 if ARCH_ATTR in attributes else MAX_RING_BYTES)
        for function in [op for op in walk(module.operation) if op.name == "gpu.func"]:
            if "known_block_size" in function.attributes:
                _ring_function(function, slots, limit)


def _ring_function(function: ir.Operation, slots: int | None, limit: int) -> None:
    """Rings the function's loops that qualify. Each ring starts where the function's shared
    memory ends: a ringed loop leaves no copy pending (its last S - 1 groups are empty), so
    loops one after the other (two versions of one loop) share the bytes; a loop nested in a
    ringed one, or around one, is left alone."""
    used = (ir.IntegerAttr(function.attributes[SHARED_BYTES_ATTR]).value
            if SHARED_BYTES_ATTR in function.attributes else 0)
    total, ringed = used, []
    for loop in [op for op in walk(function) if op.name == "scf.for"]:
        if any(_nested(loop, other) or _nested(other, loop) for other in ringed):
            continue
        if not isinstance(loop.operands[0].type, ir.IndexType):
            continue  # the ring's iteration arithmetic is on index values
        taken = take_loop(loop)
        if taken is None:
            continue
        end = _ring_loop(loop, taken.loads, slots, taken.lower, taken.step, taken.trips,
                         known_grid(function), (used, limit))
        if end is not None:
            ringed.append(loop)
            total = max(total, end)
    if total != used:
        function.attributes[SHARED_BYTES_ATTR] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), total)


def _nested(inner: ir.Operation, outer: ir.Operation) -> bool:
    return any(op == inner for op in walk(outer))
