"""plan-shared-memory: one arena of shared memory per kernel, reused by buffers that are never
live at once.

Every shared tile.alloc of a kernel gets `tile.shared_offset` (bytes from the arena's start)
and the kernel `tile.shared_arena = {bytes, align}`; lower-tile-to-gpu places each buffer's
view there (reductions' and layout conversions' scratch, and mbarriers, follow the arena).

Footprints are what the lowering gives each buffer: a wgmma operand tile (plan-wgmma-gemms'
`tile.shared_layout`) whole 1 KiB swizzle atoms on a 1 KiB boundary, one per pipeline stage
(the arena then starts at the shared window's first 1 KiB boundary, found at run time); a
cp.async pipeline's or TMA ring's destination one 16-byte aligned slot per stage (1 KiB ones
for an operand tile); any other buffer its
bytes; all on 128-byte boundaries at least.

Lifetimes are counted in the kernel's top-level statements: a buffer lives from the first
statement that touches it (or a view of it) to the last one, a loop or T.Pipelined being one
statement. Where the buffers do not fit a block's shared memory so, they are planned again with
lifetimes inside loops (kept as the exception: bytes shared within a loop's body cost barriers
in every iteration). A buffer touched in one top-level loop only, which every iteration writes
whole before anything reads it (a T.copy or T.clear of the whole tile, a T.Parallel storing each
element at its own point; under no branch, at most inside loops of a constant, nonzero trip
count), carries nothing from one iteration to the next: it lives in the loop's body statements
from its first touch to its last, and buffers alike whose spans there do not meet share bytes
(TileLang's sparse MLA backward: its dKV staging copies, at the body's end, take the bytes of
the KV, P and dP tiles the gemms before them are done with). The loop must run its statements in
turn: no cp.async pipeline or TMA ring (their copies land iterations ahead), no gemm whose wgmma
group stays in flight past its statement (`tile.deferred_wait`), no T.ws block. Buffers a TMA
copy fills or a warp-specialized (T.ws) block touches live through the whole kernel (their
writes land asynchronously, or their threads run apart), and so do the tiles a TMA ring fills
(plan-tma-pipelines: its producer warpgroup runs apart from the statements' order, a persistent
one already into the next tile); the kernel's other buffers are only touched by its own
warpgroups in statement order and are reused as anywhere. A buffer nothing touches (TileLang's
examples allocate a bias tile whether or not the kernel adds a bias) takes no bytes: it lives
with no other buffer and counts nothing towards the arena; neither does a gemm's operand tile
read in place from a larger one (plan-wgmma-gemms' `tile.read_in_place` copy), whose gemms count
as the larger tile's users, nor does an epilogue's source tile loaded into a TMA ring's slots
(stage-epilogue-source's `tile.ring_source`). Buffers are placed largest first, each at the
lowest aligned offset where it overlaps no placed buffer alive at the same time (TileLang's
MergeSharedMemoryAllocations does the same). Where a buffer takes bytes another one used
earlier, a gpu.barrier goes before its first statement unless one stands between them at the top
level: no thread writes there while another still reads the old contents. Two buffers sharing
bytes in a loop's body get one between them there, and one across the back edge (from the later
one's last statement to the earlier one's first in the next iteration), where none stands.

Rejected (CompileError at the kernel): an arena larger than a block's shared memory on the
target (the `arch` option, else the module's `tile.arch`), and shared buffers of run-time
shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import gpu

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._async_pipeline import SLOT_ALIGN, plan_pipeline
from tilec.compiler.passes._integer_storage import VIEWS, root_of
from tilec.compiler.passes._ir_walk import (
    ancestors,
    as_operation,
    constant_index,
    copy_parts,
    kernels,
    op_error,
    scope,
    walk,
)
from tilec.compiler.passes._scheduling import target_description
from tilec.compiler.passes._tma_ring import (
    COPY_SLOTS,
    COPY_SLOTS_ATTR,
    LOAD_ATTR,
    SOURCE_TILE_ATTR,
    TmaRing,
)
from tilec.compiler.passes._wgmma import (
    IN_PLACE_ATTR,
    SWIZZLE_ATOM_BYTES,
    operand_layout_of,
    slice_source,
)
from tilec.compiler.passes._wgmma_waits import DEFERRED_WAIT_ATTR
from tilec.compiler.passes.infer_fragment_layout import overwrites

OFFSET_ATTR = "tile.shared_offset"
ARENA_ATTR = "tile.shared_arena"
SHARED_ALIGN = 128
WHOLE_KERNEL_OPS = ("tile.tma_copy", "tile.warpgroups")
LOOPS = ("tile.for", "tile.pipelined")


def round_up(value: int, align: int) -> int:
    return -(-value // align) * align


@dataclass(frozen=True)
class Footprint:
    """The bytes the lowering gives one shared buffer: `stages` slots of `slot_bytes` (one
    slot for a buffer outside any pipeline), on an `align`-byte boundary."""

    slot_bytes: int
    stages: int
    align: int

    @property
    def bytes(self) -> int:
        return self.slot_bytes * max(self.stages, 1)


def tma_ring_loop(kernel: ir.Operation) -> tuple[ir.Operation, TmaRing] | None:
    """The T.Pipelined loop a TMA ring and a producer warpgroup feed (plan-tma-pipelines)."""
    return next(((op, ring) for op in walk(kernel) if op.name == "tile.pipelined"
                 and (ring := TmaRing.of(op)) is not None), None)


def pipeline_stages(kernel: ir.Operation) -> list[tuple[ir.Value, int]]:
    """(shared buffer, stages) of the destinations of every cp.async pipeline and TMA ring
    in the kernel."""
    found = []
    fed = tma_ring_loop(kernel)
    if fed is not None:
        loop, ring = fed
        found += [(copy_parts(op)[3], ring.stages) for op in map(
            as_operation, loop.regions[0].blocks[0].operations) if LOAD_ATTR in op.attributes]
        found += [(op.results[0], COPY_SLOTS) for op in walk(kernel)
                  if op.name == "tile.alloc" and COPY_SLOTS_ATTR in op.attributes]
    for op in walk(kernel):
        plan = None if fed is not None and op == fed[0] else plan_pipeline(op)
        if plan is not None:
            found += [(buffer, plan.stages) for buffer in plan.buffers]
    return found


def footprint(alloc: ir.Operation, rings: list[tuple[ir.Value, int]]) -> Footprint:
    buffer = alloc.results[0]
    type_ = ir.MemRefType(buffer.type)
    if not type_.has_static_shape:
        raise op_error(alloc, "a shared buffer needs a shape known at compile time")
    stages = next((count for known, count in rings if known == buffer), 0)
    operand = operand_layout_of(alloc)
    if operand is not None:
        return Footprint(round_up(operand.bytes, SWIZZLE_ATOM_BYTES), stages, SWIZZLE_ATOM_BYTES)
    size = math.prod(type_.shape) * max(1, getattr(type_.element_type, "width", 8) // 8)
    if stages:
        return Footprint(round_up(size, SLOT_ALIGN), stages, SHARED_ALIGN)
    return Footprint(size, 0, SHARED_ALIGN)


def top_level(op: ir.Operation, holder: ir.Operation) -> ir.Operation:
    """The statement of the body of `holder` (the kernel, a loop) holding `op`."""
    while as_operation(op.parent) != holder:
        op = as_operation(op.parent)
    return op


def body_statements(loop: ir.Operation) -> list[ir.Operation]:
    return [as_operation(op) for op in loop.regions[0].blocks[0].operations]


def runs_in_turn(loop: ir.Operation) -> bool:
    """Whether `loop` runs its body's statements one after the other, each done when the next
    starts (see the module docstring)."""
    inside = walk(loop)
    return loop.name in LOOPS and plan_pipeline(loop) is None and TmaRing.of(loop) is None \
        and not any(DEFERRED_WAIT_ATTR in op.attributes or op.name in WHOLE_KERNEL_OPS
                    for op in inside)


def runs_at_least_once(loop: ir.Operation) -> bool:
    """A tile.for of constant bounds and a nonzero trip count."""
    if loop.name != "tile.for":
        return False
    lower, upper, step = (constant_index(value) for value in list(loop.operands)[:3])
    return None not in (lower, upper, step) and upper > lower and step > 0


def whole_write(access: ir.Operation, buffer: ir.Value, touched: list[ir.Operation]
                ) -> ir.Operation | None:
    """The statement writing every element of `buffer` and reading none, if `access` (an op
    touching it) is or stands in one: a tile.fill or tile.copy of the whole buffer, or the
    T.Parallel `access` stores in (infer-fragment-layout's `overwrites`) touching the buffer
    nowhere else."""
    if access.name == "tile.fill":
        return access if access.operands[0] == buffer else None
    if access.name == "tile.copy":
        source, _, _, destination, offsets, shape = copy_parts(access)
        whole = destination == buffer and root_of(source) != buffer and \
            IN_PLACE_ATTR not in access.attributes and \
            all(constant_index(offset) == 0 for offset in offsets) and \
            shape == list(ir.MemRefType(buffer.type).shape)
        return access if whole else None
    parallel = as_operation(access.parent)
    if access.name != "memref.store" or parallel.name != "tile.parallel" or \
            not overwrites(parallel, buffer):
        return None
    inside = [op for op in touched if parallel in ancestors(op)]
    return parallel if inside == [access] else None


def iteration_span(buffer: ir.Value, touched: list[ir.Operation], loop: ir.Operation
                   ) -> tuple[int, int] | None:
    """The body statements of `loop` (the one top-level statement touching `buffer`) from the
    first touching it to the last, where every iteration writes the whole buffer before
    anything reads it (see the module docstring); None where it may carry a value across."""
    if not runs_in_turn(loop):
        return None
    order = {op: n for n, op in enumerate(walk(loop))}
    accesses = sorted((op for op in touched if op.name not in VIEWS), key=order.__getitem__)
    writer = whole_write(accesses[0], buffer, touched) if accesses else None
    if writer is None:
        return None
    for parent in ancestors(writer):
        if parent == loop:
            break
        if not runs_at_least_once(parent):
            return None
    at = {op: n for n, op in enumerate(body_statements(loop))}
    spots = [at[top_level(op, loop)] for op in touched]
    return min(spots), max(spots)


def users(value: ir.Value) -> list[ir.Operation]:
    """Ops using `value` or a memref view made from it."""
    found, pending = [], [value]
    while pending:
        for use in list(pending.pop().uses):
            owner = as_operation(use.owner)
            found.append(owner)
            pending += [r for r in owner.results if isinstance(r.type, ir.MemRefType)]
    return found


@dataclass
class Buffer:
    alloc: ir.Operation
    footprint: Footprint
    first: int
    last: int
    offset: int = -1
    inner: tuple[int, int] | None = None  # its span in the body of the loop at `first`

    @property
    def used(self) -> bool:
        return self.first <= self.last

    def lives_with(self, other: Buffer) -> bool:
        if not (self.first <= other.last and other.first <= self.last):
            return False
        if self.inner is None or other.inner is None:
            return True
        return self.inner[0] <= other.inner[1] and other.inner[0] <= self.inner[1]

    def shares_bytes(self, other: Buffer) -> bool:
        return self.offset < other.offset + other.footprint.bytes and \
            other.offset < self.offset + self.footprint.bytes


def lifetimes(kernel: ir.Operation, statements: list[ir.Operation],
              rings: list[tuple[ir.Value, int]], in_loops: bool = False) -> list[Buffer]:
    position = {op: n for n, op in enumerate(statements)}
    read_in_place_by: dict[ir.Value, list[ir.Value]] = {}  # a tile -> its slices read in place
    for copy in walk(kernel):
        if copy.name == "tile.copy" and IN_PLACE_ATTR in copy.attributes:
            read_in_place_by.setdefault(copy.operands[0], []).append(copy_parts(copy)[3])
    found = []
    for alloc in [op for op in walk(kernel) if op.name == "tile.alloc"
                  and scope(op.results[0]) == "shared"]:
        if slice_source(alloc.results[0]) is not None or SOURCE_TILE_ATTR in alloc.attributes:
            # the bytes of a larger tile, or of the ring's slots (stage-epilogue-source)
            found.append(Buffer(alloc, Footprint(0, 0, SHARED_ALIGN), len(statements), -1))
            continue
        touched = users(alloc.results[0]) + [op for tile in read_in_place_by.get(
            alloc.results[0], []) for op in users(tile)]
        spots = [position[top_level(op, kernel)] for op in touched]
        whole = any(op.name in WHOLE_KERNEL_OPS or any(
            parent.name in WHOLE_KERNEL_OPS for parent in ancestors(op)) for op in touched)
        whole = whole or any(LOAD_ATTR in op.attributes for op in touched)
        inner = None
        if not touched:  # lives nowhere: with no other buffer
            first, last = len(statements), -1
        elif whole:
            first, last = 0, len(statements)
        else:
            first, last = min(spots), max(spots)
            if in_loops and first == last and statements[first].name in LOOPS:
                inner = iteration_span(alloc.results[0], touched, statements[first])
        found.append(Buffer(alloc, footprint(alloc, rings), first, last, inner=inner))
    return found


def place(buffers: list[Buffer]) -> int:
    """Offsets, largest buffer first, each as low as its live neighbours allow; the arena's
    size."""
    placed: list[Buffer] = []
    for buffer in sorted(buffers, key=lambda b: (-b.footprint.bytes, b.first)):
        align = buffer.footprint.align
        rivals = sorted((p for p in placed if p.lives_with(buffer)), key=lambda p: p.offset)
        offset = 0
        for rival in rivals:
            if offset + buffer.footprint.bytes <= rival.offset:
                break
            offset = max(offset, round_up(rival.offset + rival.footprint.bytes, align))
        buffer.offset = offset
        placed.append(buffer)
    return max((b.offset + b.footprint.bytes for b in buffers if b.used), default=0)


def separate_reuses(buffers: list[Buffer], statements: list[ir.Operation]) -> None:
    """A barrier before the first statement of a buffer taking bytes an earlier one used,
    unless one stands at the top level between the two; in a loop's body, between two
    buffers sharing bytes there and across its back edge."""
    needed: list[ir.Operation] = []

    def separate(between: list[ir.Operation], before: ir.Operation) -> None:
        if before not in needed and not any(op.name == "gpu.barrier" for op in between):
            needed.append(before)

    used = [buffer for buffer in buffers if buffer.used]
    for later in used:
        for earlier in used:
            if not earlier.shares_bytes(later):
                continue
            if earlier.last < later.first:
                separate(statements[earlier.last + 1:later.first], statements[later.first])
            elif earlier.inner is not None and later.inner is not None and \
                    earlier.inner[1] < later.inner[0]:
                body = body_statements(statements[later.first])
                separate(body[earlier.inner[1] + 1:later.inner[0]], body[later.inner[0]])
                separate(body[later.inner[1] + 1:] + body[:earlier.inner[0]],
                         body[earlier.inner[0]])
    for statement in needed:
        with statement.location, ir.InsertionPoint(statement):
            gpu.BarrierOp()


def arena_bytes(kernel: ir.Operation) -> int:
    """The arena the kernel's shared buffers would take as they stand, nothing recorded
    (plan-tma-pipelines asks it of a ring it considers)."""
    statements = [as_operation(op) for op in kernel.regions[0].blocks[0].operations]
    return place(lifetimes(kernel, statements, pipeline_stages(kernel)))


def plan_kernel(kernel: ir.Operation, limit: int | None = None) -> int:
    """Offsets for the kernel's shared buffers, barriers where bytes are reused; the arena's
    size (recorded on the kernel). Lifetimes inside loops only where the arena would pass
    `limit` (if any) without them."""
    body = kernel.regions[0].blocks[0]
    statements = [as_operation(op) for op in body.operations]
    rings = pipeline_stages(kernel)
    buffers = lifetimes(kernel, statements, rings)
    size = place(buffers)
    if limit is not None and size > limit:
        finer = lifetimes(kernel, statements, rings, in_loops=True)
        if (finer_size := place(finer)) < size:
            buffers, size = finer, finer_size
    separate_reuses(buffers, statements)
    i64 = ir.IntegerType.get_signless(64)
    for buffer in buffers:
        buffer.alloc.attributes[OFFSET_ATTR] = ir.IntegerAttr.get(i64, buffer.offset)
    align = max((b.footprint.align for b in buffers), default=SHARED_ALIGN)
    kernel.attributes[ARENA_ATTR] = ir.DictAttr.get({
        "bytes": ir.IntegerAttr.get(i64, size), "align": ir.IntegerAttr.get(i64, align)})
    return size


@register
@dataclass
class PlanSharedMemory(TilePass):
    """Give every shared buffer an offset in one arena, reusing bytes across lifetimes."""

    name = "plan-shared-memory"
    summary = "tile.shared_offset per shared buffer in one arena, reused where lifetimes allow"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        limit = target_description(module, self.arch, self.name).max_shared_bytes
        for kernel in kernels(module):
            with kernel.context:
                size = plan_kernel(kernel, limit)
            if size > limit:
                raise op_error(kernel, f"the kernel needs {size} bytes of shared memory (its "
                                       f"buffers planned with reuse); a block on "
                                       f"{target_description(module, self.arch, self.name).name}"
                                       f" has at most {limit} (use smaller tiles or fewer "
                                       "stages)")
