"""T.Pipelined as a cp.async software pipeline on the SIMT path (sm_80, sm_90a).

pipeline-async-copies marks a `tile.pipelined` loop with `tile.pipeline = {stages = S,
mechanism = "cp.async", ...}` and its global -> shared copies with `tile.async = "cp.async"`.
`plan_pipeline` decides which of those copies can really run ahead of the loop's compute (the
decision insert-shared-barriers and lower-tile-to-gpu must share: the barriers of one are placed
for the code the other emits); `PipelinedLoop` emits the loop:

    slot p <- copies of iteration p, commit                  (p < S - 1: the prologue)
    for each iteration i:
      cp.async.wait_group S-2; barrier                       (iteration i's group has landed)
      slot (i+S-1) mod S <- copies of iteration i+S-1, commit (predicated off past the end)
      compute on slot i mod S
    cp.async.wait_group 0; barrier                           (the drain)

A loop whose only work is one gemm that lower-tile-to-gpu computes with wgmma (compiler/passes/
_wgmma.py) fences the landed copies for wgmma's async proxy before the barrier, and leaves
each gemm's wgmma group in flight while the next iteration waits for its copies: the ring
gets S + 1 slots, iteration i refills the slot gemm i-2 read, and waits (wgmma.wait_group 1)
for that gemm before its barrier; the drain waits for the last.

Each destination becomes one shared allocation of S slots. Iteration i+S-1 writes the slot that
iteration i-1 read, and every thread finished iteration i-1 before iteration i's barrier, so the
copies can be issued right after that barrier and overlap this iteration's compute. Iteration i
waits for its own group: S-1 prologue groups plus one per iteration before it, of which the S-2
most recent may still be in flight. A copy is pipelined only when that keeps its meaning: the
loop is not nested in divergent or unrolled code, the destination is a shared buffer used only
in this loop, written there only by pipelined copies and read only after them, the source is
global and not written in the loop, and the corners depend on the loop index through pure
arithmetic only (they are recomputed for iteration i+S-1), or through loads marked
`tile.table_load` (pipeline-async-copies' opt-in: a tensor the function only loads from,
a paged cache's block table), loaded again for iteration i+S-1 inside the branch that issues
it only when that iteration exists. Other copies stay synchronous.

A T.Parallel that pipeline-async-copies marked (the opt-in tile.async_gathers) is such a copy
when it is a gather (`gather_of`): one global element per point stored into a shared tile, or
zero where a condition the same for a whole run of the layout's registers fails (the padding
taps of an implicit GEMM's patch tile). Each thread's run is then one cp.async whose src-size
is 0 where the condition fails, so the slot is zero-filled as the T.Parallel would store, and
the values it reads from the loop body are recomputed for the later iteration like corners.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mlir import ir
from mlir.dialects import arith, gpu, memref, nvvm, scf

from tilec.compiler.passes._fragment_layout import depends_on, op_layout, vector_loads
from tilec.compiler.passes._ir_walk import (
    as_operation,
    constant_index,
    copy_parts,
    scope,
    walk,
)
from tilec.compiler.passes._scalar import bit_width, index
from tilec.compiler.passes._scheduling import PIPELINE_ATTR
from tilec.compiler.passes._wgmma import WGMMA_ATTR
from tilec.compiler.passes.pipeline_async_copies import ASYNC_ATTR, TABLE_LOAD_ATTR

if TYPE_CHECKING:
    from tilec.compiler.passes.lower_tile_to_gpu import KernelLowering

CP_ASYNC = "cp.async"
CP_ASYNC_BYTES = (4, 8, 16)  # the sizes one cp.async moves
SLOT_ALIGN = 16  # bytes: every slot starts where a 16-byte cp.async may land
PURE_OPS = ("memref.dim", "affine.apply")
ENCLOSING_LOOPS = ("tile.for", "tile.pipelined")
OVERLAP_SHARED_BYTES = 160 * 1024  # a ring grown for an overlapped wgmma stays below this


@dataclass
class PipelinePlan:
    """The copies of one loop that run ahead (with their elements per cp.async), their
    destinations and the ring depth."""

    stages: int
    copies: list[ir.Operation]
    vectors: list[int]
    buffers: list[ir.Value]
    overlapped: ir.Operation | None = None  # a wgmma gemm left in flight for an iteration
    gathers: list[Gather | None] | None = None  # per copy: what a T.Parallel gather is
    # per copy: the body's ops its corners come from (offset_slice, taken on the tile IR:
    # lowering changes the uses table_load reads)
    slices: list[list[ir.Operation]] = field(default_factory=list)

    def gather(self, at: int) -> Gather | None:
        return None if self.gathers is None else self.gathers[at]

    def source(self, at: int) -> ir.Value:
        """The global tensor copy `at` reads."""
        gather = self.gather(at)
        copy = self.copies[at]
        return copy_parts(copy)[0] if gather is None else gather.source(copy)

    def of_copy(self, loop: ir.Operation, copy: ir.Operation) -> PipelinePlan:
        """The same plan for `copy`, a clone of `loop`: its ops at the same places."""
        ops = [as_operation(op) for op in loop.regions[0].blocks[0].operations]
        clones = [as_operation(op) for op in copy.regions[0].blocks[0].operations]

        def same(op: ir.Operation) -> ir.Operation:
            return clones[next(at for at, known in enumerate(ops) if known == op)]

        return PipelinePlan(self.stages, [same(op) for op in self.copies], self.vectors,
                            self.buffers, None if self.overlapped is None
                            else same(self.overlapped), self.gathers,
                            [[same(op) for op in ops] for ops in self.slices])


@dataclass
class Ring:
    """A destination's S slots in the dynamic shared memory (`offset` bytes past `base`, the
    window's start when None)."""

    offset: int
    slot_bytes: int
    type_: ir.MemRefType
    base: ir.Value | None = None


def _attribute(op: ir.Operation, name: str) -> ir.Attribute | None:
    return op.attributes[name] if name in op.attributes else None


def _string(attribute: ir.Attribute | None) -> str | None:
    return ir.StringAttr(attribute).value if isinstance(attribute, ir.StringAttr) else None


def _parent(op: ir.Operation) -> ir.Operation | None:
    parent = op.parent
    return None if parent is None else as_operation(parent)


def _inside(op: ir.Operation, ancestor: ir.Operation) -> bool:
    while op is not None:
        if op == ancestor:
            return True
        op = _parent(op)
    return False


def _stages(loop: ir.Operation) -> int | None:
    """S of a loop marked for cp.async, None for any other loop."""
    if loop.name != "tile.pipelined":
        return None
    attribute = _attribute(loop, PIPELINE_ATTR)
    if not isinstance(attribute, ir.DictAttr):
        return None
    schedule = ir.DictAttr(attribute)
    if "mechanism" not in schedule or _string(schedule["mechanism"]) != CP_ASYNC:
        return None
    if "stages" not in schedule or not isinstance(schedule["stages"], ir.IntegerAttr):
        return None
    stages = ir.IntegerAttr(schedule["stages"]).value
    return stages if stages >= 2 else None


def _straight_line(loop: ir.Operation) -> bool:
    """Whether every thread of the block runs the loop once per enclosing iteration (no
    T.Parallel, unrolled loop or branch around it)."""
    op = _parent(loop)
    while op is not None and op.name != "tile.kernel":
        if op.name not in ENCLOSING_LOOPS or "unroll" in op.attributes:
            return False
        op = _parent(op)
    return op is not None


def async_vector(copy: ir.Operation) -> int | None:
    """Elements per cp.async of a copy (None: it cannot use cp.async). The chunks are those of
    the synchronous copy: along the contiguous dimension, up to 16 bytes."""
    src, _, src_shape, dst, dst_offsets, dst_shape = copy_parts(copy)
    src_type, dst_type = ir.MemRefType(src.type), ir.MemRefType(dst.type)
    if scope(src) != "global" or scope(dst) != "shared":
        return None
    if src_type.element_type != dst_type.element_type or bit_width(src_type.element_type) < 8:
        return None
    src_dims = [d for d, extent in enumerate(src_shape) if extent != 1] or [len(src_shape) - 1]
    dst_dims = [d for d, extent in enumerate(dst_shape) if extent != 1] or [len(dst_shape) - 1]
    if src_dims[-1] != src_type.rank - 1 or dst_dims[-1] != dst_type.rank - 1:
        return None
    element_bytes = bit_width(src_type.element_type) // 8
    vec = math.gcd(src_shape[-1], max(1, 16 // element_bytes))
    corner = constant_index(dst_offsets[-1])
    if vec * element_bytes not in CP_ASYNC_BYTES or corner is None or corner % vec:
        return None
    return vec if dst_type.shape[-1] % vec == 0 else None


def _statement(op: ir.Operation, body: ir.Block) -> ir.Operation | None:
    """The statement of `body` that holds `op` (None when op is outside the body). The walk
    stops at the module: the bindings assert (abort) on the block of an op that has none."""
    while op is not None:
        parent = _parent(op)
        if parent is None:
            return None
        if op.block == body:
            return op
        op = parent
    return None


def offset_slice(copy: ir.Operation, body: ir.Block) -> list[ir.Operation] | None:
    """The body's ops the copy's corners (a gather's: the values its body reads from outside
    it) are computed from, in order; None when one of them is not pure arithmetic (it could
    not be recomputed for a later iteration)."""
    if copy.name == "tile.parallel":
        pending = [value for inner in walk(copy) for value in inner.operands]
    else:
        src, src_offsets, _, dst, dst_offsets, _ = copy_parts(copy)
        pending = [*src_offsets, *dst_offsets]
    needed: list[ir.Operation] = []
    while pending:
        value = pending.pop()
        owner = value.owner
        if isinstance(owner, ir.Block):
            continue  # the loop index, or a block argument outside the loop
        owner = as_operation(owner)
        if owner.block != body or any(owner == known for known in needed):
            continue
        if not _pure(owner) and not table_load(owner):
            return None
        needed.append(owner)
        pending += list(owner.operands)
    return [op for op in map(as_operation, body.operations) if any(op == n for n in needed)]


def _pure(op: ir.Operation) -> bool:
    """Arithmetic without regions or side effects: recomputable anywhere."""
    return (op.name.split(".")[0] in ("arith", "math", "index") or op.name in PURE_OPS) and \
        not len(op.regions)


def table_load(op: ir.Operation) -> bool:
    """Whether `op` is a load pipeline-async-copies marked as a read-only table's
    (`mark_table_loads`): repeated for a later iteration, it gives the same value."""
    return op.name == "memref.load" and TABLE_LOAD_ATTR in op.attributes


@dataclass(frozen=True)
class Gather:
    """A T.Parallel that fills a shared tile from one global tensor, each run of `vec`
    registers one vector of a row (an implicit GEMM's patch tile): a copy of the pipeline.
    Positions in its body: the global load, the shared store, and the select that stores
    zero where `condition` (free of the last loop variable: the same for a whole run) fails."""

    load: int
    store: int
    select: int | None
    vec: int

    @staticmethod
    def _body_op(op: ir.Operation, at: int) -> ir.Operation:
        return as_operation(op.regions[0].blocks[0].operations[at])

    def source(self, op: ir.Operation) -> ir.Value:
        """The global tensor gather `op` reads (read off the op: lowering replaces values)."""
        return self._body_op(op, self.load).operands[0]

    def destination(self, op: ir.Operation) -> ir.Value:
        """The shared tile gather `op` fills."""
        return self._body_op(op, self.store).operands[1]


def _is_zero(value: ir.Value) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block) or as_operation(owner).name != "arith.constant":
        return False
    attribute = as_operation(owner).attributes["value"]
    if isinstance(attribute, ir.FloatAttr):
        return ir.FloatAttr(attribute).value == 0.0
    return isinstance(attribute, ir.IntegerAttr) and ir.IntegerAttr(attribute).value == 0


def _block_threads(op: ir.Operation) -> int | None:
    while op is not None and op.name != "tile.kernel":
        op = _parent(op)
    return None if op is None else math.prod(ir.DenseI64ArrayAttr(op.attributes["threads"]))


def gather_of(op: ir.Operation) -> Gather | None:
    """The gather a T.Parallel is, or None: its body is arithmetic, one load of a global
    tensor and one store of it (or of select(condition, it, 0)) into a shared tile at (...,
    the last loop variable), its layout gives every thread its own whole runs of 4, 8 or 16
    bytes (no replicas, no masked register), and the tile's rows hold whole runs."""
    layout = op_layout(op) if op.name == "tile.parallel" else None
    if layout is None or layout.replicated_thread_bits() or \
            _block_threads(op) != layout.threads or \
            any(layout.register_mask(reg) is not True for reg in range(layout.num_registers)):
        return None
    body = op.regions[0].blocks[0]
    last = body.arguments[len(body.arguments) - 1]
    ops = [as_operation(inner) for inner in body.operations]
    loads = [at for at, inner in enumerate(ops) if inner.name == "memref.load"]
    stores = [at for at, inner in enumerate(ops) if inner.name == "memref.store"]
    if len(loads) != 1 or len(stores) != 1 or not all(
            _pure(inner) or at in loads + stores or inner.name == "tile.yield"
            for at, inner in enumerate(ops)):
        return None
    load, store = ops[loads[0]], ops[stores[0]]
    source, destination = load.operands[0], store.operands[1]
    indices = list(store.operands)[2:]
    if scope(source) != "global" or scope(destination) != "shared" or indices[-1] != last or \
            any(depends_on(value, last, body) for value in indices[:-1]):
        return None
    widths = dict(vector_loads(op, layout, lambda value: scope(value) == "global"))
    vec = widths.get(loads[0], 0)
    element = ir.MemRefType(source.type).element_type
    if vec * bit_width(element) // 8 not in CP_ASYNC_BYTES or \
            ir.MemRefType(destination.type).element_type != element or \
            ir.MemRefType(destination.type).shape[-1] % vec:
        return None
    stored = store.operands[0]
    if stored == load.results[0]:
        return Gather(loads[0], stores[0], None, vec)
    select = stored.owner
    if isinstance(select, ir.Block) or as_operation(select).name != "arith.select":
        return None
    condition, chosen, other = as_operation(select).operands
    if chosen != load.results[0] or not _is_zero(other) or depends_on(condition, last, body):
        return None
    return Gather(loads[0], stores[0], ops.index(as_operation(select)), vec)


def _reads(use: ir.OpOperand) -> bool:
    """Whether a use of a buffer only reads it."""
    owner = as_operation(use.owner)
    number = use.operand_number
    return (owner.name == "memref.load" or (owner.name in ("tile.copy", "tile.reduce")
            and number == 0) or (owner.name == "tile.gemm" and number in (0, 1)))


def _writes(op: ir.Operation) -> list[ir.Value]:
    """The buffers an op writes (tile ops and stores)."""
    operands = list(op.operands)
    if op.name == "memref.store":
        return [operands[1]]
    if op.name == "tile.copy":
        return [copy_parts(op)[3]]
    if op.name in ("tile.fill", "tile.atomic_add", "memref.atomic_rmw"):
        return [operands[0] if op.name != "memref.atomic_rmw" else operands[1]]
    if op.name == "tile.gemm":
        return [operands[2]]
    if op.name == "tile.reduce":
        return [operands[1]]
    return []


def plan_pipeline(loop: ir.Operation) -> PipelinePlan | None:
    """What of a loop runs as a cp.async pipeline (None: the loop stays as it is)."""
    stages = _stages(loop)
    if stages is None or not _straight_line(loop):
        return None
    body = loop.regions[0].blocks[0]
    statements = [as_operation(op) for op in body.operations]
    written = [value for op in walk(loop) for value in _writes(op)]
    candidates = []
    gathers: dict[int, Gather] = {}
    for at, op in enumerate(statements):
        if op.name not in ("tile.copy", "tile.parallel") or \
                _string(_attribute(op, ASYNC_ATTR)) != CP_ASYNC:
            continue
        if op.name == "tile.parallel":
            gather = gather_of(op)
            if gather is None:
                continue
            gathers[at] = gather
        elif async_vector(op) is None:
            continue
        source = gathers[at].source(op) if at in gathers else copy_parts(op)[0]
        if offset_slice(op, body) is None or any(source == value for value in written):
            continue
        candidates.append(op)

    def destination(op: ir.Operation) -> ir.Value:
        at = statements.index(op)
        return gathers[at].destination(op) if at in gathers else copy_parts(op)[3]

    copies: list[ir.Operation] = []
    buffers: list[ir.Value] = []
    for dst in _unique([destination(op) for op in candidates]):
        writers = [op for op in candidates if destination(op) == dst]
        if _ring_ok(dst, writers, loop, body, statements):
            copies += writers
            buffers.append(dst)
    if not copies:
        return None
    copies.sort(key=statements.index)
    overlapped = _overlapped_gemm(statements, copies, buffers, stages)
    planned = [gathers.get(statements.index(op)) for op in copies]
    return PipelinePlan(stages + (overlapped is not None), copies,
                        [async_vector(op) if gather is None else gather.vec
                         for op, gather in zip(copies, planned, strict=True)],
                        buffers, overlapped, planned,
                        [offset_slice(op, body) or [] for op in copies])


def _overlapped_gemm(statements: list[ir.Operation], copies: list[ir.Operation],
                     buffers: list[ir.Value], stages: int) -> ir.Operation | None:
    """The wgmma gemm that may stay in flight into the next iteration: the loop is only the
    pipelined copies and that gemm. Its group is waited for one iteration later, so the slot
    an iteration refills must be the one read two gemms before: the ring gets one slot more
    than its S (when that fits beside the rest of shared memory)."""
    work = [op for op in statements if op.name != "tile.yield"
            and not any(op == copy for copy in copies)
            and op.name.split(".")[0] not in ("arith", "index")]
    if len(work) != 1 or work[0].name != "tile.gemm" or WGMMA_ATTR not in work[0].attributes:
        return None
    slot_bytes = sum(math.prod(ir.MemRefType(b.type).shape)
                     * bit_width(ir.MemRefType(b.type).element_type) // 8 for b in buffers)
    return work[0] if (stages + 1) * slot_bytes <= OVERLAP_SHARED_BYTES else None


def _unique(values: list[ir.Value]) -> list[ir.Value]:
    unique: list[ir.Value] = []
    for value in values:
        if not any(value == known for known in unique):
            unique.append(value)
    return unique


def _ring_ok(dst: ir.Value, writers: list[ir.Operation], loop: ir.Operation, body: ir.Block,
             statements: list[ir.Operation]) -> bool:
    """A destination can take S slots when it is a shared tile.alloc made outside the loop,
    used only inside it, written there only by `writers`, and read only after all of them."""
    owner = dst.owner
    if isinstance(owner, ir.Block) or as_operation(owner).name != "tile.alloc":
        return False
    if _inside(as_operation(owner), loop):
        return False
    last_write = max(statements.index(op) for op in writers)
    for use in dst.uses:
        user = as_operation(use.owner)
        if any(_inside(user, op) for op in writers) and not _reads(use):
            continue
        statement = _statement(user, body)
        if statement is None or not _reads(use) or statements.index(statement) <= last_write:
            return False
    return True


class PipelinedLoop:
    """Emits one planned loop (see the module docstring) through the kernel's lowering."""

    def __init__(self, lowering: KernelLowering, loop: ir.Operation, plan: PipelinePlan,
                 rings: dict[ir.Value, Ring], aligned: bool | None):
        self.lowering = lowering
        # whether the sources allow cp.async, checked before the loop (None: in each
        # iteration, around its copies)
        self.aligned = aligned
        self.loop = loop
        self.plan = plan
        self.rings = rings
        self.body = loop.regions[0].blocks[0]
        self.slices = plan.slices
        self.feeds_wgmma = any(op.name == "tile.gemm" and WGMMA_ATTR in op.attributes
                               for op in walk(loop))
        self.overlapped = plan.overlapped

    def lower(self) -> tuple[ir.Value, ir.Operation]:
        """Emit the prologue, the loop's own statements and the drain around the loop; the
        caller moves the body in before the returned anchor (index: the returned value)."""
        loop, stages = self.loop, self.plan.stages
        lower, upper, step = loop.operands[0], loop.operands[1], loop.operands[2]
        ahead = stages - 1 if self.overlapped is None else stages - 2  # iterations in flight
        self.lowering.overlapped_gemm = self.overlapped
        with loop.location, ir.InsertionPoint(loop):
            for early in range(ahead):
                self.issue(self.advance(lower, step, early), index(early), upper)
                nvvm.cp_async_commit_group()
            pipelined = scf.ForOp(lower, upper, step)
            with ir.InsertionPoint(pipelined.body):
                nvvm.cp_async_wait_group(ahead - 1)
                if self.feeds_wgmma:  # what the generic proxy wrote, visible to wgmma's
                    nvvm.fence_proxy(nvvm.ProxyKind.async_shared,
                                     space=nvvm.SharedSpace.shared_cta)
                if self.overlapped is not None:  # the gemm before last has read its slot
                    nvvm.wgmma_wait_group_sync_aligned(1)
                gpu.BarrierOp()
                iteration = self.iteration(pipelined.induction_variable, lower, step)
                current = arith.remui(iteration, index(stages))
                views = {buffer: self.slot_view(buffer, current) for buffer in self.plan.buffers}
                later = self.advance(pipelined.induction_variable, step, ahead)
                self.issue(later, arith.remui(arith.addi(iteration, index(ahead)),
                                              index(stages)), upper)
                nvvm.cp_async_commit_group()
                end = as_operation(scf.YieldOp([]))
            if self.overlapped is not None:
                nvvm.wgmma_wait_group_sync_aligned(0)
            nvvm.cp_async_wait_group(0)
            gpu.BarrierOp()
        self.lowering.after_wgmma_drain |= self.feeds_wgmma
        for copy in self.plan.copies:
            copy.erase()
        for buffer, view in views.items():  # the uses in this version of the loop
            for use in list(buffer.uses):
                if _inside(as_operation(use.owner), loop):
                    use.owner.operands[use.operand_number] = view
            if not list(buffer.uses):
                as_operation(buffer.owner).erase()
        return pipelined.induction_variable, end

    @staticmethod
    def advance(start: ir.Value, step: ir.Value, count: int) -> ir.Value:
        """start + count * step."""
        if count == 0:
            return start
        known = constant_index(step)
        delta = index(count * known) if known is not None else arith.muli(step, index(count))
        return delta if constant_index(start) == 0 else arith.addi(start, delta)

    @staticmethod
    def iteration(value: ir.Value, lower: ir.Value, step: ir.Value) -> ir.Value:
        """The iteration number of loop index `value`: (value - lower) / step."""
        if constant_index(lower) != 0:
            value = arith.subi(value, lower)
        return value if constant_index(step) == 1 else arith.divui(value, step)

    def slot_view(self, buffer: ir.Value, slot: ir.Value) -> ir.Value:
        ring = self.rings[buffer]
        known = constant_index(slot)
        if known is not None:
            offset = index(ring.offset + known * ring.slot_bytes)
        else:
            offset = arith.muli(slot, index(ring.slot_bytes))
            if ring.offset:
                offset = arith.addi(offset, index(ring.offset))
        if ring.base is not None:
            offset = arith.addi(ring.base, offset)
        view = memref.ViewOp(ring.type_, self.lowering.smem, offset, []).result
        layouts = self.lowering.shared_layouts
        if buffer in layouts:  # an operand tile, fenced by the loop for wgmma
            layouts[view] = (layouts[buffer][0], self.feeds_wgmma or layouts[buffer][1])
        return view

    def issue(self, at: ir.Value, slot: ir.Value, upper: ir.Value) -> None:
        """The pipelined copies of the iteration with loop index `at` into `slot`, when that
        iteration exists (the group is committed either way, so counts stay uniform): as
        cp.async where the sources' bases and row lengths are aligned, element by element
        where not; known before the loop (lower_pipelined's versions) or checked here once
        for all the copies (on_alignment)."""
        branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.slt, at, upper))
        with ir.InsertionPoint(branch.then_block):
            if self.aligned is not None:
                self.copies(at, slot, self.aligned)
            else:
                sources = [(self.plan.source(at), vec)
                           for at, vec in enumerate(self.plan.vectors)]
                self.lowering.on_alignment(sources,
                                           lambda aligned: self.copies(at, slot, aligned))
            scf.YieldOp([])

    def copies(self, at: ir.Value, slot: ir.Value, vectorized: bool) -> None:
        """The copies of iteration `at` into `slot`, their corners recomputed for it."""
        views = {buffer: self.slot_view(buffer, slot) for buffer in self.plan.buffers}
        mapping: dict[ir.Value, ir.Value] = {self.body.arguments[0]: at}
        for at, (copy, vec, ops) in enumerate(zip(self.plan.copies, self.plan.vectors,
                                                  self.slices, strict=True)):
            for op in ops:
                if op.results[0] in mapping:
                    continue
                clone = as_operation(op.clone())
                for number, operand in enumerate(clone.operands):
                    if operand in mapping:
                        clone.operands[number] = mapping[operand]
                for old, new in zip(op.results, clone.results, strict=True):
                    mapping[old] = new
            gather = self.plan.gather(at)
            if gather is not None:
                self.lowering.gather_async(copy, gather, mapping,
                                           views[gather.destination(copy)], vectorized)
                continue
            _, src_offsets, _, dst, dst_offsets, _ = copy_parts(copy)
            self.lowering.copy_async(copy, vec, [mapping.get(v, v) for v in src_offsets],
                                     views[dst], [mapping.get(v, v) for v in dst_offsets],
                                     vectorized)
