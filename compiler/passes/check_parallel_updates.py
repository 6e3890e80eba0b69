"""check-parallel-updates: no T.Parallel read-modify-write shared between its points.

T.Parallel promises that its points are independent: a GPU target spreads them over the block's
threads, and a buffer a point updates at an index that does not depend on some of the loop's
variables is updated by all the points that differ only in those variables at once.
`acc[j] += tile[i, j]` over `T.Parallel(block_M, dim)` is a reduction over `i` written as a
loop-carried update: the CPU target, running the points in order, sums every row, but a GPU
target keeps `acc` replicated over the threads of the `i` points, each replica sums its own
rows, and the stored result is one replica's partial sum (a silent wrong result), or a race
between threads for a shared buffer, a tensor or a T.alloc_var.

Such an update is an error at its line on every target (the CPU one included, so that a kernel
that runs there runs the same everywhere), pointing to T.reduce_sum / T.reduce_max or a
T.serial loop. An update is a load of a buffer followed, in the same point, by a store to it
at an index that leaves out a variable of extent > 1 (`+=`, `-=`, `acc[j] = T.max(acc[j], x)`,
`acc[j] = acc[j] * s + x`), in fragments, shared, local and global buffers alike, through
nested T.Parallel loops. What stays allowed: an index that depends on every variable (through
any arithmetic, a gather or a loop bound), a variable of extent 1, a buffer written before it
is read in the same point (a per-point temporary), a plain store without a read (as TileLang:
one of the points' values lands), and, into shared memory or a tensor, a store under
`if v == c` on the variable it leaves out (one point along it writes; a fragment's other
copies would keep their old value, so there it stays an error).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._integer_storage import root_of
from tilec.compiler.passes._ir_walk import as_operation, defining_op, kernels, op_error, scope, walk
from tilec.errors import CompileError

SCOPE_WORDS = {"global": "tensor", "shared": "shared buffer", "fragment": "fragment",
               "local": "T.alloc_local buffer", "var": "T.alloc_var"}
# one copy of each element for the whole block: a store by one point is seen by all (a
# fragment's, a local's or a var's element is each thread's own copy: one point's store under
# `if i == 0` leaves the other threads' copies as they were)
MEMORY_SCOPES = ("shared", "global")
LOOPS = ("scf.for", "tile.for", "tile.pipelined")  # a variable of theirs follows the bounds
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")


def _enclosing_parallels(op: ir.Operation, stop: ir.Operation) -> list[ir.Operation]:
    """The tile.parallel ops around `op` inside `stop`, outermost first."""
    found = []
    parent = op.parent
    while parent is not None:
        parent = as_operation(parent)
        if parent == stop:
            break
        if parent.name == "tile.parallel":
            found.append(parent)
        parent = parent.parent
    return found[::-1]


class _Dependence:
    """Which of a set of loop variables each value is computed from (SSA operands, the bounds
    of a loop whose variable it is, the indices of a load)."""

    def __init__(self, variables: set[ir.Value]) -> None:
        self.variables = variables
        self.known: dict[ir.Value, frozenset[ir.Value]] = {}

    def of(self, value: ir.Value) -> frozenset[ir.Value]:
        if value in self.known:
            return self.known[value]
        self.known[value] = frozenset()  # a cycle through a loop's block arguments adds nothing
        if value in self.variables:
            found = frozenset([value])
        else:
            op = defining_op(value)
            if op is None:  # another loop's variable: what its bounds depend on
                op = as_operation(value.owner.owner)
                operands = list(op.operands) if op.name in LOOPS else []
            else:
                operands = list(op.operands)
            found = frozenset().union(*(self.of(operand) for operand in operands))
        self.known[value] = found
        return found


def _pins(op: ir.Operation, variable: ir.Value, parallel: ir.Operation,
          dependence: _Dependence) -> bool:
    """Whether `op` stands in the `then` branch of `if variable == c` (c not computed from
    the variable) inside `parallel`: one point along the variable runs it."""
    child, parent = op, op.parent
    while parent is not None:
        parent = as_operation(parent)
        if parent == parallel:
            return False
        if parent.name == "scf.if" and any(
                as_operation(then) == child for then in parent.regions[0].blocks[0].operations):
            condition = defining_op(parent.operands[0])
            if (condition is not None and condition.name == "arith.cmpi"
                    and ir.IntegerAttr(condition.attributes["predicate"]).value == 0):
                lhs, rhs = condition.operands
                for side, other in ((lhs, rhs), (rhs, lhs)):
                    if side == variable and variable not in dependence.of(other):
                        return True
        child, parent = parent, parent.parent
    return False


def _loads_before(store: ir.Operation, buffer: ir.Value, body: list[ir.Operation]
                  ) -> ir.Operation | None:
    """The first load of `buffer` in the point's body that comes before any store to it (the
    value a point reads is then another point's, or the one before the loop)."""
    for op in body:
        if op.name == "memref.store" and root_of(op.operands[1]) == buffer:
            return None
        if op.name == "memref.load" and root_of(op.operands[0]) == buffer:
            return op
        if op == store:
            return None
    return None


@register
@dataclass
class CheckParallelUpdates(TilePass):
    """Reject T.Parallel updates of an element shared by several of its points."""

    name = "check-parallel-updates"
    summary = "error: `acc[j] += x[i, j]` in T.Parallel(i, j), a reduction over i"

    def run(self, module: ir.Module) -> None:
        for kernel in kernels(module):
            for parallel in walk(kernel):
                if parallel.name != "tile.parallel" or _enclosing_parallels(parallel, kernel):
                    continue
                self._check(parallel)

    def _check(self, outermost: ir.Operation) -> None:
        body = walk(outermost)
        for store in body:
            if store.name != "memref.store":
                continue
            loops = [outermost, *_enclosing_parallels(store, outermost)]
            named = [(loop, position, argument, extent)
                     for loop in loops
                     for position, (argument, extent) in enumerate(zip(
                         loop.regions[0].blocks[0].arguments,
                         ir.DenseI64ArrayAttr(loop.attributes["extents"]), strict=True))]
            dependence = _Dependence({argument for _, _, argument, _ in named})
            used = frozenset().union(*(dependence.of(index) for index in store.operands[2:]))
            buffer = root_of(store.operands[1])
            shared_memory = scope(buffer) in MEMORY_SCOPES
            missing = [(loop, position, extent) for loop, position, argument, extent in named
                       if extent > 1 and argument not in used
                       and not (shared_memory and _pins(store, argument, loop, dependence))]
            if missing and _loads_before(store, buffer, body) is not None:
                raise _error(store, scope(buffer), missing)


def _error(store: ir.Operation, buffer_scope: str,
           missing: list[tuple[ir.Operation, int, int]]) -> CompileError:
    variables = " and ".join(
        f"its {ORDINALS[position] if position < len(ORDINALS) else f'#{position}'} variable "
        f"(extent {extent})" for _, position, extent in missing)
    return op_error(store, (
        f"T.Parallel updates a {SCOPE_WORDS.get(buffer_scope, buffer_scope)} element it reads "
        f"at an index that leaves out {variables}: the points that differ only there update "
        f"the same element, and T.Parallel runs its points independently (on a GPU, on "
        f"different threads: each would keep its own partial result). This is a reduction: "
        f"use T.reduce_sum / T.reduce_max (over a fragment), or accumulate in a T.serial loop"))
