"""insert-shared-barriers: a gpu.barrier wherever threads may read what other threads wrote.

Shared buffers are written and read by different threads, so between a producer and a consumer
of one buffer (read after write), and before overwriting a buffer others may still read (write
after read, e.g. the next iteration's copy into a tile the gemm is reading), every thread must
wait. The pass walks each block's statements in order and tracks, per buffer, whether it was
written or read since the last barrier; a statement that conflicts gets a barrier before it.
Loops are walked as if entered from their own end too (the back edge). A T.Parallel, a copy or
an scf.if is one statement: barriers go between statements, never inside divergent code. A
T.ws block (tile.warpgroups) is one statement too, and its body is walked as a block of its own.
Shared tiles written by tile.tma_copy are synchronized by the mbarriers the kernel waits on.

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
from tilec.compiler.passes._ir_walk import copy_parts, kernels, scope, walk

LOOPS = ("tile.for", "tile.pipelined")


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
        elif name == "tile.copy":
            reads.append(operands[0])
            writes.append(copy_parts(inner)[3])
        elif name == "tile.gemm":
            reads += operands[:2]
            reads.append(operands[2])
            writes.append(operands[2])
        elif name in ("tile.fill", "tile.atomic_add"):
            writes.append(operands[0])
        elif name == "tile.reduce":
            reads += operands[:2]
            writes.append(operands[1])
    keep = lambda values: _union([], [v for v in values if scope(v) == "shared"])  # noqa: E731
    return keep(reads), keep(writes)


def process(block: ir.Block, pending: Pending, insert: bool,
            issued_elsewhere: tuple[ir.Operation, ...] = ()) -> Pending:
    for op in list(block.operations):
        op = op.operation
        if any(op == known for known in issued_elsewhere):
            continue
        plan = plan_pipeline(op) if op.name == "tile.pipelined" else None
        if plan is not None:
            # every iteration starts after a barrier; the drain ends with one
            process(op.regions[0].blocks[0], Pending(), insert, tuple(plan.copies))
            pending = Pending()
            continue
        if op.name in LOOPS:
            body = op.regions[0].blocks[0]
            end = process(body, pending, insert=False)
            end = process(body, pending.merged(end), insert=False)
            after = process(body, pending.merged(end), insert=insert)
            pending = pending.merged(after)
            continue
        if op.name == "gpu.barrier":
            pending = Pending()
            continue
        if op.name == "tile.warpgroups":
            # its threads alone run the body: barriers there wait for them only (named ones,
            # lower-tile-to-gpu); towards the rest of the block it is one statement
            process(op.regions[0].blocks[0], Pending(), insert)
        reads, writes = shared_effects(op)
        conflict = any(_contains(pending.written, v) for v in reads + writes) or any(
            _contains(pending.read, v) for v in writes)
        if conflict:
            if insert:
                with op.location, ir.InsertionPoint(op):
                    gpu.BarrierOp()
            pending = Pending()
        pending = Pending(_union(pending.written, writes), _union(pending.read, reads))
    return pending


@register
class InsertSharedBarriers(TilePass):
    """Insert gpu.barrier between conflicting accesses of shared buffers."""

    name = "insert-shared-barriers"
    summary = "gpu.barrier between producers and consumers of shared buffers"

    def run(self, module: ir.Module) -> None:
        for kernel in kernels(module):
            process(kernel.regions[0].blocks[0], Pending(), insert=True)
