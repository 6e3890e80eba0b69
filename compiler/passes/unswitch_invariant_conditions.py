"""unswitch-invariant-conditions: a loop whose branches test conditions fixed before it runs, the
same on every thread, runs in two versions: one where they all hold, with the branches
folded, and the loop as it was where one fails.

lower-tile-to-gpu guards each vectorized global copy by its tensors' 16-byte alignment (the
base pointers, checked once per copy) with an element-by-element fallback. The check is
computed once at the kernel's start, but it is tested inside every loop that copies: in the int4
GEMV's step loop a uniform branch around the activations' 16-byte loads and, for the weights,
16 predicated-off 4-byte loads that ptxas if-converted the fallback into, issued on every step.
LLVM does not unswitch such loops on GPU targets (non-trivial unswitching is off where branches
may diverge), so it is done here, on the scf form the gpu stage holds:

    scf.if (c1 and c2 ...) { the loop with c1, c2 ... replaced by true } else { the loop }

The conditions taken are the leaves of the `arith.andi` trees of the loop's `scf.if`
conditions (at any depth in it) that are defined before the loop and uniform: computed only
from the kernel's arguments, block indices, grid and block sizes and constants by pure ops, so
every thread of a block takes the same version and a barrier or shuffle in the loop is met by
all of them. canonicalize then folds the branches of the first version. Results are those of
the loop as it was in both versions: where the conditions hold, each folded branch is the one
that would have run. Each loop is versioned once (the outermost with such conditions; loops
inside it are left as they are), so the code grows by one copy of each versioned loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import ancestors, as_operation, defining_op, walk

# ops whose result is the same on every thread of a block when their operands are
UNIFORM_OPS = ("gpu.block_id", "gpu.grid_dim", "gpu.block_dim", "gpu.cluster_id",
               "gpu.cluster_dim", "memref.extract_aligned_pointer_as_index", "memref.dim",
               "memref.extract_strided_metadata", "builtin.unrealized_conversion_cast",
               "llvm.insertvalue", "llvm.extractvalue", "llvm.mlir.poison",
               "llvm.mlir.undef", "llvm.mlir.constant", "llvm.ptrtoint")
FUNCTIONS = ("gpu.func", "func.func", "llvm.func")


def _is_uniform(value: ir.Value, seen: dict[ir.Value, bool]) -> bool:
    """Whether `value` is computed from function arguments, block-level indices and sizes and
    constants only, through pure ops (no memory read, no thread index, no loop variable)."""
    if value in seen:
        return seen[value]
    owner = value.owner
    if isinstance(owner, ir.Block):
        parent = owner.owner
        uniform = parent is not None and as_operation(parent).name in FUNCTIONS
    else:
        op = as_operation(owner)
        pure = op.name.startswith("arith.") or op.name.startswith("index.")
        uniform = (pure or op.name in UNIFORM_OPS) and not len(op.regions)
        seen[value] = False  # a cycle is not uniform (none in SSA outside regions)
        uniform = uniform and all(_is_uniform(operand, seen) for operand in op.operands)
    seen[value] = uniform
    return uniform


def _defined_outside(value: ir.Value, loop: ir.Operation) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block):
        parent = owner.owner
        return parent is not None and not _inside(as_operation(parent), loop, True)
    return not _inside(as_operation(owner), loop, False)


def _inside(op: ir.Operation, loop: ir.Operation, inclusive: bool) -> bool:
    return (inclusive and op == loop) or any(parent == loop for parent in ancestors(op))


def _leaves(condition: ir.Value) -> list[ir.Value]:
    """The operands of the `arith.andi` tree that computes `condition` (itself if none)."""
    op = defining_op(condition)
    if op is None or op.name != "arith.andi":
        return [condition]
    return [leaf for operand in op.operands for leaf in _leaves(operand)]


def _invariant_conditions(loop: ir.Operation) -> list[ir.Value]:
    """The uniform, non-constant conditions defined before `loop` that its branches test."""
    found: list[ir.Value] = []
    seen: dict[ir.Value, bool] = {}
    for op in walk(loop):
        if op.name != "scf.if":
            continue
        for leaf in _leaves(op.operands[0]):
            constant = defining_op(leaf)
            if constant is not None and constant.name == "arith.constant":
                continue
            if any(leaf == known for known in found):
                continue
            if _defined_outside(leaf, loop) and _is_uniform(leaf, seen):
                found.append(leaf)
    return found


def _unswitch(loop: ir.Operation, conditions: list[ir.Value]) -> None:
    """scf.if (all conditions) {loop, each condition true in it} else {loop}."""
    with ir.InsertionPoint(loop), loop.location:
        condition = conditions[0]
        for other in conditions[1:]:
            condition = arith.andi(condition, other)
        branch = scf.IfOp(condition, [result.type for result in loop.results], has_else=True)
    for result, new in zip(loop.results, branch.results, strict=True):
        result.replace_all_uses_with(new)
    then = ir.InsertionPoint(branch.then_block)
    with then, loop.location:
        true = arith.constant(ir.IntegerType.get_signless(1), 1)
        version = as_operation(loop.clone(ip=then))
        scf.YieldOp(list(version.results))
    for op in [version, *walk(version)]:
        for n, operand in enumerate(op.operands):
            if any(operand == known for known in conditions):
                op.operands[n] = true
    with ir.InsertionPoint(branch.else_block), loop.location:
        scf.YieldOp(list(loop.results))
    loop.move_before(as_operation(branch.else_block.operations[0]))


@register
@dataclass
class UnswitchInvariantConditions(TilePass):
    """Loops testing uniform conditions fixed before them: a version where all hold."""

    name = "unswitch-invariant-conditions"
    summary = "scf.for testing uniform loop-invariant conditions -> scf.if over two versions"

    def run(self, module: ir.Module) -> None:
        versioned: list[ir.Operation] = []
        for loop in walk(module.operation):  # outer loops first
            if loop.name != "scf.for" or any(_inside(loop, done, False) for done in versioned):
                continue
            conditions = _invariant_conditions(loop)
            if conditions:
                _unswitch(loop, conditions)
                versioned.append(loop)
