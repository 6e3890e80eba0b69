"""prefetch-loop-loads: a loop's global loads whose addresses follow from the loop variable alone
are issued one iteration ahead, into registers the loop carries.

A GEMV's step loop loads its weights, activations, scales and zeros at the top of each step and
uses them in the same step: a warp has its bytes in flight only while it waits for them, none
while it decodes and multiplies, and the scale and zero reads (DRAM) put a second round trip on
each step's critical path. ptxas does not move loads across the loop's back edge. Here each such
load is issued for the next iteration at the start of the current one (a second set of
registers, the double buffer), the first iteration's before the loop, so the loads of step i + 1
are in flight while step i computes. This is register double-buffering, a `num_stages = 2`
pipeline without shared memory.

Taken, on the scf form the gpu stage holds: an `scf.for` with constant bounds running at least
twice, none of whose ops writes memory other than private buffers (`memref.alloca`), waits or
calls (an allow-list of pure and private ops: a barrier, fence, atomic, global store or call
leaves the loop alone, as a load moved before it could read what it orders). Its prefetched
ops are the top-level loads from memory that is neither a private nor a shared buffer
(`memref.load`, `vector.load`) and the `scf.if`s that hold only such loads and pure ops (the
bounds-checked copies' branches), whose operands are the loop variable, values defined before
the loop, or pure ops of the body computed from those. The next iteration's copies read at
min(i + step, last) so the last iteration re-reads its own addresses instead of reading past
them; the bounds checks in the copies are computed for that iteration too.

Costs registers: each prefetched value is live across the whole iteration, and ptxas, left to
its own register target, sinks the loads back to the end of the iteration, right before their
use (the int4 GEMV's step loop at 72 registers: the 16 loads at instructions 309-332 of 356). A
GPU function holding a prefetched loop therefore gets a register cap (`nvvm.maxnreg`, unless it
has one): the module's `tile.prefetch_max_registers`, else 128, at which ptxas keeps them at
the iteration's start (126 registers: instructions 61-91 of 373; at 96, 110-126 of 395; at 80
they sink again). That is fewer resident warps for bytes in flight through the whole step.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import as_operation, enclosing, walk
from tilec.compiler.passes._loop_loads import (
    LoopLoads,
    cap_registers,
    clone_ops,
    take_loop,
)

MAX_REGISTERS_ATTR = "tile.prefetch_max_registers"  # on the module: the cap the pass sets
DEFAULT_MAX_REGISTERS = 128


def _prefetch(loop: ir.Operation, plan: LoopLoads, last: int) -> None:
    old = loop.opview
    body = loop.regions[0].blocks[0]
    induction = body.arguments[0]
    results = [result for root in plan.roots for result in root.results]
    with ir.InsertionPoint(loop), loop.location:
        first: dict[ir.Value, ir.Value] = {induction: old.lowerBound}
        clone_ops(plan.slice + plan.roots, first, ir.InsertionPoint(loop))
        inits = list(old.initArgs) + [first[result] for result in results]
        new = scf.ForOp(old.lowerBound, old.upperBound, old.step, inits)
    new_body = new.body
    kept = len(old.initArgs)
    for n, argument in enumerate(body.arguments):
        argument.replace_all_uses_with(new_body.arguments[n])
    terminator = as_operation(body.operations[len(body.operations) - 1])
    carried = list(terminator.operands)
    for op in [as_operation(op) for op in body.operations]:
        if op != terminator:
            new_body.append(op.detach_from_parent())
    first_moved = ir.InsertionPoint(as_operation(new_body.operations[0]))
    with first_moved, loop.location:
        following = arith.minsi(arith.addi(new.induction_variable, old.step),
                                arith.constant(ir.IndexType.get(), last))
        ahead: dict[ir.Value, ir.Value] = {new.induction_variable: following}
        clone_ops(plan.slice + plan.roots, ahead, first_moved)
    with ir.InsertionPoint(new_body), loop.location:
        scf.YieldOp(carried + [ahead[result] for result in results])
    current = new_body.arguments[1 + kept:]
    for result, value in zip(results, current, strict=True):
        result.replace_all_uses_with(value)
    for root in reversed(plan.roots):
        root.erase()
    for result, value in zip(loop.results, list(new.results)[:kept], strict=True):
        result.replace_all_uses_with(value)
    loop.erase()


@register
@dataclass
class PrefetchLoopLoads(TilePass):
    """A loop's global loads issued one iteration ahead into loop-carried registers."""

    name = "prefetch-loop-loads"
    summary = "scf.for global loads of iteration i + 1 issued at the start of iteration i"

    def run(self, module: ir.Module) -> None:
        attributes = module.operation.attributes
        cap = (ir.IntegerAttr(attributes[MAX_REGISTERS_ATTR]).value
               if MAX_REGISTERS_ATTR in attributes else DEFAULT_MAX_REGISTERS)
        for loop in [op for op in walk(module.operation) if op.name == "scf.for"]:
            taken = take_loop(loop)
            if taken is None:
                continue
            function = enclosing(loop, "gpu.func")
            _prefetch(loop, taken.loads, taken.last)
            cap_registers(function, cap)
