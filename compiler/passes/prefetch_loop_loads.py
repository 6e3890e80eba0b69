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
from tilec.compiler.passes._ir_walk import (
    as_operation,
    constant_index,
    defining_op,
    enclosing,
    walk,
)

MAX_REGISTERS_ATTR = "tile.prefetch_max_registers"  # on the module: the cap the pass sets
DEFAULT_MAX_REGISTERS = 128

PURE_PREFIXES = ("arith.", "index.", "math.", "affine.apply")
PURE_OPS = ("llvm.freeze", "llvm.bitcast", "llvm.mlir.constant", "llvm.mlir.poison",
            "llvm.mlir.undef", "ub.poison", "nvvm.prmt", "builtin.unrealized_conversion_cast")
# vector ops that touch memory (the others compute on values)
VECTOR_MEMORY = ("vector.load", "vector.store", "vector.transfer_read", "vector.transfer_write",
                 "vector.maskedload", "vector.maskedstore", "vector.gather", "vector.scatter",
                 "vector.expandload", "vector.compressstore", "vector.print")
# ops a loop may hold besides pure ones and private stores: they neither write shared or
# global memory nor order other threads' accesses
HARMLESS_OPS = ("scf.for", "scf.if", "scf.yield", "memref.load", "vector.load",
                "vector.transfer_read", "vector.maskedload", "vector.gather",
                "memref.alloca", "gpu.thread_id", "gpu.block_id", "gpu.block_dim",
                "gpu.grid_dim", "gpu.lane_id", "gpu.shuffle", "nvvm.shfl.sync",
                "nvvm.read.ptx.sreg.tid.x", "nvvm.read.ptx.sreg.tid.y",
                "nvvm.read.ptx.sreg.tid.z", "nvvm.read.ptx.sreg.laneid")
STORES = ("memref.store", "vector.store", "vector.transfer_write")  # memref operand 1
LOADS = ("memref.load", "vector.load", "vector.transfer_read")  # memref operand 0
VIEWS = ("memref.subview", "memref.cast", "memref.reinterpret_cast", "memref.collapse_shape",
         "memref.expand_shape", "memref.view", "memref.memory_space_cast")
# memory another thread of the block may write (shared) or this thread writes (private)
NEAR_SPACES = ("3", "5", "#gpu.address_space<workgroup>", "#gpu.address_space<private>")


def _is_pure(op: ir.Operation) -> bool:
    if op.name == "llvm.inline_asm":
        return "has_side_effects" not in op.attributes
    if op.name.startswith("vector."):
        return op.name not in VECTOR_MEMORY
    return op.name.startswith(PURE_PREFIXES) or op.name in PURE_OPS


def _origin(memref: ir.Value) -> ir.Operation | None:
    """The op a memref is a view of (through subviews and casts); None for an argument."""
    op = defining_op(memref)
    while op is not None and op.name in VIEWS:
        op = defining_op(op.operands[0])
    return op


def _is_far(memref: ir.Value) -> bool:
    """Memory no thread of the block writes inside the loop once it stores only privately:
    not a private or shared buffer (kernel arguments, their casts and views)."""
    space = ir.MemRefType(memref.type).memory_space
    if space is not None and str(space).split(":")[0].strip() in NEAR_SPACES:
        return False
    origin = _origin(memref)
    return origin is None or origin.name not in ("memref.alloca", "memref.alloc",
                                                 "memref.get_global")


def _is_private(memref: ir.Value) -> bool:
    origin = _origin(memref)
    return origin is not None and origin.name == "memref.alloca"


def _writes_nothing_shared(loop: ir.Operation) -> bool:
    """Whether every op of the loop is pure, a load, a private store or harmless."""
    for op in walk(loop):
        if op.name in STORES:
            if not _is_private(op.operands[1]):
                return False
        elif not (_is_pure(op) or op.name in HARMLESS_OPS):
            return False
    return True


def _is_far_load(op: ir.Operation) -> bool:
    return op.name in LOADS and _is_far(op.operands[0])


def _load_only(op: ir.Operation) -> bool:
    """A far load, or an scf.if whose regions hold only far loads, pure ops and yields, at
    least one load among them."""
    if _is_far_load(op):
        return True
    if op.name != "scf.if" or not len(op.results):
        return False
    nested = walk(op)
    allowed = all(_is_far_load(inner) or _is_pure(inner) or inner.name in ("scf.if", "scf.yield")
                  for inner in nested)
    return allowed and any(_is_far_load(inner) for inner in nested)


@dataclass
class _Plan:
    """A loop's prefetched ops (roots) and the pure body ops their operands need (slice), both
    in program order."""

    roots: list[ir.Operation]
    slice: list[ir.Operation]


def _plan(loop: ir.Operation) -> _Plan | None:
    body = loop.regions[0].blocks[0]
    induction = body.arguments[0]
    body_ops = [as_operation(op) for op in body.operations]
    position = {op: n for n, op in enumerate(body_ops)}

    def available(value: ir.Value, taken: set[int], needed: dict[ir.Value, bool]) -> bool:
        """Computable at the iteration's start from the loop variable and earlier values."""
        if value == induction:
            return True
        owner = value.owner
        if isinstance(owner, ir.Block):
            return owner != body  # an iteration value is not; an enclosing block's is
        op = as_operation(owner)
        if op.parent is None or as_operation(op.parent) != loop:
            return not _inside(op, loop)
        if value in needed:
            return needed[value]
        needed[value] = False
        ok = _is_pure(op) and not len(op.regions) and all(
            available(operand, taken, needed) for operand in op.operands)
        if ok:
            taken.add(position[op])
        needed[value] = ok
        return ok

    roots, taken = [], set()
    for op in body_ops:
        trial: set[int] = set()
        needed: dict[ir.Value, bool] = {}  # per root: a rejected root's ops stay out
        if _load_only(op) and all(available(operand, trial, needed)
                                  for operand in _external_operands(op)):
            roots.append(op)
            taken |= trial
    if not roots:
        return None
    return _Plan(roots, [body_ops[n] for n in sorted(taken)])


def _external_operands(op: ir.Operation) -> list[ir.Value]:
    """The operands of `op` and of the ops nested in it that are defined outside it."""
    found = list(op.operands)
    for inner in walk(op):
        for operand in inner.operands:
            owner = operand.owner
            defined = as_operation(owner.owner if isinstance(owner, ir.Block) else owner)
            if defined != op and not _inside(defined, op):
                found.append(operand)
    return found


def _inside(op: ir.Operation, outer: ir.Operation) -> bool:
    while op.parent is not None:
        op = as_operation(op.parent)
        if op == outer:
            return True
    return False


def _clone(ops: list[ir.Operation], mapping: dict[ir.Value, ir.Value],
           point: ir.InsertionPoint) -> None:
    """Clones `ops` at `point` in order, their operands (and their regions') renamed by
    `mapping`, which gains each clone's results."""
    for op in ops:
        copy = as_operation(op.clone(ip=point))
        for inner in [copy, *walk(copy)]:
            for n, operand in enumerate(inner.operands):
                if operand in mapping:
                    inner.operands[n] = mapping[operand]
        for old, new in zip(op.results, copy.results, strict=True):
            mapping[old] = new


def _prefetch(loop: ir.Operation, plan: _Plan, last: int) -> None:
    old = loop.opview
    body = loop.regions[0].blocks[0]
    induction = body.arguments[0]
    results = [result for root in plan.roots for result in root.results]
    with ir.InsertionPoint(loop), loop.location:
        first: dict[ir.Value, ir.Value] = {induction: old.lowerBound}
        _clone(plan.slice + plan.roots, first, ir.InsertionPoint(loop))
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
        _clone(plan.slice + plan.roots, ahead, first_moved)
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
            lower, upper, step = (constant_index(value) for value in loop.operands[:3])
            if lower is None or upper is None or step is None or step <= 0:
                continue
            trips = (upper - lower + step - 1) // step
            if trips < 2 or not _writes_nothing_shared(loop):
                continue
            plan = _plan(loop)
            if plan is None:
                continue
            function = enclosing(loop, "gpu.func")
            _prefetch(loop, plan, lower + (trips - 1) * step)
            if function is not None and "nvvm.maxnreg" not in function.attributes:
                function.attributes["nvvm.maxnreg"] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(32), cap)
