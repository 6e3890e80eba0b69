"""insert-shared-barriers: a gpu.barrier wherever threads may read what other threads wrote.

Shared buffers are written and read by different threads, so between a producer and a consumer
of one buffer (read after write), and before overwriting a buffer others may still read (write
after read, e.g. the next iteration's copy into a tile the gemm is reading), every thread must
wait. The pass walks each block's statements in order and tracks, per buffer, whether it was
written or read since the last barrier; a statement that conflicts gets a barrier before it.
Loops (tile.for, tile.pipelined, and a `while`'s scf.while: its condition region then its body)
are walked as if entered from their own end too (the back edge). An scf.if or scf.while whose
condition is the same on every thread of the block (`varies_by_thread` says it is not) is walked
into like a block of statements, so a loop under a run-time `if` or inside a `while` gets its
barriers; one whose condition may differ between threads is one statement, as a T.Parallel or a
copy is: barriers go between statements, never inside divergent code. A T.ws block
(tile.warpgroups) is one statement too, and its body is walked as a block of its own; the
branches of one `if tx < 128: ... elif ...` chain of whole warpgroups (the later ones marked
`tile.else_branch`) are one statement together: each thread runs one of them, side by side
with the others (TileLang's if / else), so no barrier goes between them (their threads order
what they share with mbarriers, and a block barrier there would wait for threads that wait
for the other branch); so are
both branches of an `if` giving each a range of the block's threads (`tid < 32`,
compiler/passes/_thread_range.py), whose barriers lower-tile-to-gpu makes named barriers over
the branch's threads.
A copy plan-wgmma-gemms marks `tile.read_in_place` moves nothing: the gemms after it read the
larger tile it names, and count as its readers.
Shared tiles written by tile.tma_copy are synchronized by the mbarriers the kernel waits on,
and so is the epilogue source tile stage-epilogue-source's copy fills (`tile.epilogue_source`:
a TMA ring's producer loads it, every consumer thread waits for its full barriers where the
copy stands and hands its slots back after the last read): that copy is no statement here.

A TMA ring's loop (plan-tma-pipelines' `tile.tma_ring`) is walked with its back edge, its
copies left out: the producer issues them and the ring's mbarriers order its slots, and the
consumers' iterations start after no barrier (a slot's transposed copy that the body writes is
read by the previous iteration's gemm); its lowering has a barrier ahead of the loop and after
the drain.
A loop lower-tile-to-gpu turns into a cp.async pipeline (compiler/passes/_async_pipeline.py,
whose `plan_pipeline` both passes ask) brings its own barriers: one after the wait at the top of
every iteration and one after the drain behind the loop. Its pipelined copies are issued by that
code, not where they stand, so they are no statements of the body here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import gpu

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._async_pipeline import plan_pipeline
from tilec.compiler.passes._ir_walk import as_operation, copy_parts, kernels, scope, walk
from tilec.compiler.passes._scheduling import target_description
from tilec.compiler.passes._thread_range import is_thread_branch, range_warp
from tilec.compiler.passes._tma_ring import LOAD_ATTR, RING_ATTR, SOURCE_ATTR
from tilec.compiler.passes._user_sync import ELSE_BRANCH_ATTR
from tilec.compiler.passes._wgmma import IN_PLACE_ATTR, slice_source

LOOPS = ("tile.for", "tile.pipelined")
# ops whose block arguments are the same on every thread (kernel parameters, block and loop
# indices)
UNIFORM_ARGUMENTS = ("func.func", "tile.kernel", "tile.for", "tile.pipelined")
# buffers every thread has its own copy of: a load is uniform when every write into them is
PER_THREAD_SCOPES = ("local", "var")


@dataclass
class Pending:
    """Shared buffers touched since the last barrier."""

    written: list[ir.Value] = field(default_factory=list)
    read: list[ir.Value] = field(default_factory=list)

    def merged(self, other: Pending) -> Pending:
        return Pending(_union(self.written, other.written), _union(self.read, other.read))


def _union(left: list[ir.Value], right: list[ir.Value]) -> list[ir.Value]:
    result = list(left)
    for value in right:
        if not any(value == known for known in result):
            result.append(value)
    return result


def _contains(values: list[ir.Value], value: ir.Value) -> bool:
    return any(value == known for known in values)


def shared_effects(op: ir.Operation) -> tuple[list[ir.Value], list[ir.Value]]:
    """(shared buffers read, shared buffers written) by a statement and all it contains."""
    reads: list[ir.Value] = []
    writes: list[ir.Value] = []
    for inner in [op, *walk(op)]:
        name = inner.name
        operands = list(inner.operands)
        if name == "memref.load":
            reads.append(operands[0])
        elif name == "memref.store":
            writes.append(operands[1])
        elif name == "memref.atomic_rmw":
            reads.append(operands[1])
            writes.append(operands[1])
        elif name == "tile.copy" and IN_PLACE_ATTR not in inner.attributes and \
                SOURCE_ATTR not in inner.attributes:
            reads.append(operands[0])
            writes.append(copy_parts(inner)[3])
        elif name == "tile.gemm":  # an operand read in place is its larger tile's bytes
            reads += operands[:2] + [s for s in map(slice_source, operands[:2]) if s is not None]
            reads.append(operands[2])
            writes.append(operands[2])
        elif name in ("tile.fill", "tile.atomic_add"):
            writes.append(operands[0])
        elif name == "tile.reduce":
            reads += operands[:2]
            writes.append(operands[1])
    keep = lambda values: _union([], [v for v in values if scope(v) == "shared"])  # noqa: E731
    return keep(reads), keep(writes)


def varies_by_thread(value: ir.Value) -> bool:
    """Whether `value` may differ between the threads of a block: it derives from a thread
    index, a warp shuffle or vote, an element of a T.Parallel, a fragment element, or a
    per-thread buffer (T.alloc_local / alloc_var) some thread writes such a value into (or
    writes under such a condition). Block and sequential loop indices, constants and loads of
    uniform addresses are uniform. Conservative: what it cannot follow varies."""
    return _Uniformity().varies(value)


class _Uniformity:
    """One query of `varies_by_thread`: a depth-first search that stops at the first
    thread-dependent source. A per-thread buffer being examined counts as uniform on the way
    (its stores are followed from where it is first met, so a dependent one is still found)."""

    def __init__(self) -> None:
        self.known: list[tuple[ir.Value, bool]] = []
        self.buffers_seen: list[ir.Value] = []

    def varies(self, value: ir.Value) -> bool:
        for known, answer in self.known:
            if known == value:
                return answer
        answer = self._varies(value)
        self.known.append((value, answer))
        return answer

    def _varies(self, value: ir.Value) -> bool:
        if isinstance(value, ir.BlockArgument):
            return as_operation(value.owner.owner).name not in UNIFORM_ARGUMENTS
        op = as_operation(value.owner)
        name = op.name
        if name.startswith("nvvm.") or name in ("gpu.thread_id", "gpu.lane_id", "gpu.shuffle"):
            return True
        if op.regions:  # a value an op with regions computes is not followed
            return True
        if name == "memref.load":
            buffer = op.operands[0]
            if scope(buffer) == "fragment" or any(self.varies(v) for v in op.operands[1:]):
                return True
            return scope(buffer) in PER_THREAD_SCOPES and self._buffer_varies(buffer)
        return any(self.varies(operand) for operand in op.operands)

    def _buffer_varies(self, buffer: ir.Value) -> bool:
        if _contains(self.buffers_seen, buffer):
            return False
        self.buffers_seen.append(buffer)
        for use in buffer.uses:
            user = as_operation(use.owner)
            if user.name == "memref.load":
                continue
            if user.name not in ("memref.store", "tile.fill") or self._under_divergence(user):
                return True
            if any(self.varies(operand) for operand in user.operands
                   if not operand == buffer):
                return True
        return False

    def _under_divergence(self, op: ir.Operation) -> bool:
        """Whether `op` runs on some threads only, or per element (inside a T.Parallel)."""
        parent = as_operation(op.parent)
        while parent.name != "tile.kernel":
            if parent.name in ("tile.parallel", "tile.warpgroups"):
                return True
            if parent.name == "scf.if" and self.varies(parent.operands[0]):
                return True
            if parent.name == "scf.while" and self.varies(_while_condition(parent)):
                return True
            parent = as_operation(parent.parent)
        return False


def _while_condition(op: ir.Operation) -> ir.Value:
    return as_operation(op.regions[0].blocks[0].operations[-1]).operands[0]


def _uniform_branches(op: ir.Operation) -> list[ir.Block] | None:
    """The blocks of a uniform scf.if (then, else) or scf.while (condition, body); None for any
    other op or a condition that may differ between threads."""
    if op.name == "scf.if" and not varies_by_thread(op.operands[0]):
        return [region.blocks[0] for region in op.regions if len(region.blocks)]
    if op.name == "scf.while" and not varies_by_thread(_while_condition(op)):
        return [op.regions[0].blocks[0], op.regions[1].blocks[0]]
    return None


def _in_sequence(blocks: list[ir.Block], pending: Pending, insert: bool,
                 range_warp: int, issued_elsewhere: tuple[ir.Operation, ...] = ()) -> Pending:
    for block in blocks:
        pending = process(block, pending, insert, issued_elsewhere, range_warp)
    return pending


def _around_loop(blocks: list[ir.Block], pending: Pending, insert: bool,
                 range_warp: int, issued_elsewhere: tuple[ir.Operation, ...] = ()) -> Pending:
    """A loop's blocks run in order, again and again: walked until what the back edge carries
    is known, inserting on the last walk; what leaves the loop may come from any iteration."""
    end = _in_sequence(blocks, pending, False, range_warp, issued_elsewhere)
    end = _in_sequence(blocks, pending.merged(end), False, range_warp, issued_elsewhere)
    after = _in_sequence(blocks, pending.merged(end), insert, range_warp, issued_elsewhere)
    return pending.merged(after)


def _barrier_before(op: ir.Operation, pending: Pending, insert: bool) -> bool:
    """Whether `op`, with all it contains, conflicts with what is pending (then a barrier goes
    before it when inserting)."""
    return _barrier_before_all([op], pending, insert)


def _barrier_before_all(ops: list[ir.Operation], pending: Pending, insert: bool) -> bool:
    """Whether any of `ops`, statements that do not run one after another (the branches of one
    chain), conflicts with what is pending: then one barrier goes before the first."""
    conflict = False
    for op in ops:
        reads, writes = shared_effects(op)
        conflict = conflict or any(_contains(pending.written, v) for v in reads + writes) or any(
            _contains(pending.read, v) for v in writes)
    if conflict and insert:
        with ops[0].location, ir.InsertionPoint(ops[0]):
            gpu.BarrierOp()
    return conflict


def _branch_chain(statements: list[ir.Operation], first: int) -> list[ir.Operation]:
    """The tile.warpgroups statements[first] and the else branches (`tile.else_branch`) right
    after it."""
    chain = [statements[first]]
    for following in statements[first + 1:]:
        if following.name != "tile.warpgroups" or ELSE_BRANCH_ATTR not in following.attributes:
            break
        chain.append(following)
    return chain


def process(block: ir.Block, pending: Pending, insert: bool,
            issued_elsewhere: tuple[ir.Operation, ...] = (), range_warp: int = 0) -> Pending:
    """Walk `block` (barriers inserted where `insert`); `range_warp`: the warp size branches on
    the thread index take ranges of threads in (0: none, compiler/passes/_thread_range.py)."""
    statements = [op.operation for op in block.operations]
    for number, op in enumerate(statements):
        if any(op == known for known in issued_elsewhere):
            continue
        if op.name == "tile.pipelined" and RING_ATTR in op.attributes:
            # a TMA ring: the producer's copies, ordered by the ring's mbarriers; no barrier
            # atop the consumers' iterations, so the back edge is walked (a tile the body
            # writes, a slot's transposed copy, is read by the previous iteration's gemm);
            # the ring's lowering has a barrier ahead of the loop and after its drain
            body = op.regions[0].blocks[0]
            copies = tuple(inner for inner in map(as_operation, body.operations)
                           if LOAD_ATTR in inner.attributes)
            _around_loop([body], Pending(), insert, range_warp, copies)
            pending = Pending()
            continue
        plan = plan_pipeline(op) if op.name == "tile.pipelined" else None
        if plan is not None:
            # every iteration starts after a barrier; the drain ends with one
            process(op.regions[0].blocks[0], Pending(), insert, tuple(plan.copies), range_warp)
            pending = Pending()
            continue
        branches = [op.regions[0].blocks[0]] if op.name in LOOPS else _uniform_branches(op)
        if branches is not None:
            # a barrier before it if it conflicts as a whole, then barriers inside where its
            # own statements (and, for a loop, its back edge) conflict
            pending = Pending() if _barrier_before(op, pending, insert) else pending
            if op.name in LOOPS or op.name == "scf.while":
                pending = _around_loop(branches, pending, insert, range_warp)
                continue
            ends = [process(branch, pending, insert, range_warp=range_warp)
                    for branch in branches]
            if len(branches) == 1:  # no else: the condition may be false
                ends.append(pending)
            pending = ends[0].merged(ends[1])
            continue
        if op.name == "gpu.barrier":
            pending = Pending()
            continue
        if op.name == "tile.warpgroups":
            if ELSE_BRANCH_ATTR in op.attributes:
                continue  # walked with the chain's first branch
            # its threads alone run the body: barriers there wait for them only (named ones,
            # lower-tile-to-gpu); towards the rest of the block it is one statement, and so
            # is an `if tx < 128: ... elif ...` chain of them: its branches run side by side
            chain = _branch_chain(statements, number)
            for branch in chain:
                process(branch.regions[0].blocks[0], Pending(), insert, range_warp=range_warp)
            if _barrier_before_all(chain, pending, insert):
                pending = Pending()
            for branch in chain:
                reads, writes = shared_effects(branch)
                pending = Pending(_union(pending.written, writes), _union(pending.read, reads))
            continue
        if is_thread_branch(op, range_warp):
            # each branch runs on its range of threads (compiler/passes/_thread_range.py), as a
            # T.ws block does
            for region in op.regions:
                for branch in region.blocks:
                    process(branch, Pending(), insert, range_warp=range_warp)
        if _barrier_before(op, pending, insert):
            pending = Pending()
        reads, writes = shared_effects(op)
        pending = Pending(_union(pending.written, writes), _union(pending.read, reads))
    return pending


@register
@dataclass
class InsertSharedBarriers(TilePass):
    """Insert gpu.barrier between conflicting accesses of shared buffers."""

    name = "insert-shared-barriers"
    summary = "gpu.barrier between producers and consumers of shared buffers"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        warp = range_warp(target_description(module, self.arch, self.name))
        for kernel in kernels(module):
            process(kernel.regions[0].blocks[0], Pending(), insert=True, range_warp=warp)
