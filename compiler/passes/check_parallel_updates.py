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
nested T.Parallel loops; or at an index computed from every variable that still gives two
points one element (`acc[i // 2] += x[i]`), found where the index comes from the loops'
variables and constants alone by evaluating it at every point (and the conditions around the
store, into shared memory or a tensor).

A plain store (no read) at an index that leaves out a variable its value is computed from,
`out[j] = x[i, j]` over T.Parallel(M, N), is an error too: the points along `i` store different
values into one element, and which lands depends on the schedule (on a GPU, each thread's copy
of a fragment keeps its own point's value; the CPU target keeps the last).

What stays allowed: an index one-to-one in the points (as evaluated), or computed through a
gather or a loop bound; a variable of extent 1; a per-thread buffer (T.alloc_var, local,
fragment) a point stores and then reads (a per-point temporary); a plain store whose value
does not depend on the variables its index leaves out (every point stores the same value);
and, into shared memory or a tensor, a store under `if v == c` on the variable it leaves out
(one point along it writes; a fragment's other copies would keep their old value, so there it
stays an error). So is a plain store at an index computed from every variable that still
gives two points one element, `out[i // 2] = x[i]`, where what its value is computed from (the
variables it uses, the indices of its loads, evaluated at every point) differs between them;
`out[i // 2] = x[i // 2]` stores one value and stays. Not seen: collisions through loaded
indices (`out[idx[i]] += v`, or a value loaded at one, `out[i // 2] = x[idx[i]]`), and values
read from a per-point temporary: see README's unchecked list.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._integer_storage import root_of
from tilec.compiler.passes._ir_walk import (
    LOCATION,
    as_operation,
    defining_op,
    kernels,
    op_error,
    scope,
    walk,
)
from tilec.errors import CompileError

SCOPE_WORDS = {"global": "tensor", "shared": "shared buffer", "fragment": "fragment",
               "local": "T.alloc_local buffer", "var": "T.alloc_var"}
# one copy of each element for the whole block: a store by one point is seen by all (a
# fragment's, a local's or a var's element is each thread's own copy: one point's store under
# `if i == 0` leaves the other threads' copies as they were)
MEMORY_SCOPES = ("shared", "global")
PER_THREAD_SCOPES = ("fragment", "local", "var")
# on T.rng_init's state (frontend/random_ops.py): each thread's own stream, left alone here
THREAD_STREAM_ATTR = "tile.thread_stream"
MAX_POINTS = 1 << 16  # loop nests evaluated point by point (vectorized) up to this size
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


def _pins(store: ir.Operation, variable: ir.Value, outermost: ir.Operation,
          dependence: _Dependence) -> bool:
    """Whether `store` stands in the `then` branch of `if variable == c` (c not computed from
    the variable): one point along the variable runs it."""
    for condition, taken in conditions_around(store, outermost):
        compare = defining_op(condition)
        if (not taken or compare is None or compare.name != "arith.cmpi"
                or ir.IntegerAttr(compare.attributes["predicate"]).value != 0):
            continue
        lhs, rhs = compare.operands
        if any(side == variable and variable not in dependence.of(other)
               for side, other in ((lhs, rhs), (rhs, lhs))):
            return True
    return False


def _is_thread_stream(buffer: ir.Value) -> bool:
    """T.rng_init's state: each thread's own generator, which its draws in every point it runs
    advance (cuRAND's stream per thread, as in TileLang)."""
    op = defining_op(buffer)
    return op is not None and THREAD_STREAM_ATTR in op.attributes


def _read_before_written(buffer: ir.Value, body: list[ir.Operation]) -> bool:
    """Whether the point's body loads `buffer` before any store to it (the value a point reads
    is then another point's, or the one before the loop)."""
    for op in body:
        if op.name == "memref.store" and root_of(op.operands[1]) == buffer:
            return False
        if op.name == "memref.load" and root_of(op.operands[0]) == buffer:
            return True
    return False


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
            buffer = root_of(store.operands[1])
            if _is_thread_stream(buffer):
                continue
            update = _read_before_written(buffer, body)
            if not update and _temporary(buffer, body):
                continue
            loops = [outermost, *_enclosing_parallels(store, outermost)]
            named = [(position, argument, extent, loop)
                     for loop in loops
                     for position, (argument, extent) in enumerate(zip(
                         loop.regions[0].blocks[0].arguments,
                         ir.DenseI64ArrayAttr(loop.attributes["extents"]), strict=True))]
            dependence = _Dependence({argument for _, argument, _, _ in named})
            used = frozenset().union(*(dependence.of(index) for index in store.operands[2:]))
            # a plain store races only where its value differs along the variables left out
            stored = dependence.of(store.operands[0]) if not update else None
            shared_memory = scope(buffer) in MEMORY_SCOPES
            missing = [(position, extent, loop) for position, argument, extent, loop in named
                       if extent > 1 and argument not in used
                       and (stored is None or argument in stored)
                       and not (shared_memory and _pins(store, argument, outermost, dependence))]
            if missing:
                left_out = _left_out(missing, len(loops) > 1, update)
                raise (_error(store, scope(buffer), left_out) if update
                       else _store_error(store, scope(buffer), left_out))
            if not update:
                clash = _clashing_store(store, outermost, named, shared_memory, body)
                if clash is not None:
                    raise _store_error(store, scope(buffer), _stored_by(*clash))
                continue
            shared = _shared_element(store, outermost, named, shared_memory)
            if shared is not None:
                raise _error(store, scope(buffer), _shared_by(*shared))


def _left_out(missing: list[tuple[int, int, ir.Operation]], nested: bool, update: bool
              ) -> str:
    """The variables as the user wrote them: by position, and in nested T.Parallel loops by
    the line of the loop that binds them."""
    def name(position: int, loop: ir.Operation) -> str:
        ordinal = ORDINALS[position] if position < len(ORDINALS) else f"#{position}"
        return (f"the {ordinal} variable of the T.Parallel at {_line(loop)}" if nested
                else f"its {ordinal} variable")

    variables = " and ".join(f"{name(position, loop)} (extent {extent})"
                             for position, extent, loop in missing)
    if update:
        return (f"at an index that leaves out {variables}: the points that differ only there "
                f"update the same element")
    return (f"at an index that leaves out {variables}, a value computed from it: the points "
            f"that differ only there store different values into the same element")


def _line(op: ir.Operation) -> str:
    found = LOCATION.search(str(op.location))
    return f"line {found.group(2)}" if found else "an unknown line"


def _shared_by(first: tuple[int, ...], second: tuple[int, ...], element: tuple[int, ...]
               ) -> str:
    return (f"at an index two of its points share: points {first} and {second} both update "
            f"element {element}")


def _stored_by(first: tuple[int, ...], second: tuple[int, ...], element: tuple[int, ...]
               ) -> str:
    return (f"at an index two of its points share, of values that differ between them: "
            f"points {first} and {second} both store element {element}")


def _error(store: ir.Operation, buffer_scope: str, why: str) -> CompileError:
    return op_error(store, (
        f"T.Parallel updates a {SCOPE_WORDS.get(buffer_scope, buffer_scope)} element it reads "
        f"{why}, and T.Parallel runs its points independently (on a GPU, on different "
        f"threads: each would keep its own partial result). This is a reduction: use "
        f"T.reduce_sum / T.reduce_max (over a fragment), or accumulate in a T.serial loop"))


def _store_error(store: ir.Operation, buffer_scope: str, why: str) -> CompileError:
    return op_error(store, (
        f"T.Parallel stores into a {SCOPE_WORDS.get(buffer_scope, buffer_scope)} element "
        f"{why}, and T.Parallel runs its points independently: which value lands depends on "
        f"the schedule (on a GPU each thread keeps its own copy of a fragment or variable). "
        f"Index the element by that variable too, reduce over it with T.reduce_sum / "
        f"T.reduce_max, or store one point's value under `if v == c` (into shared memory or "
        f"a tensor)"))


def _temporary(buffer: ir.Value, body: list[ir.Operation]) -> bool:
    """A per-thread buffer (T.alloc_var, T.alloc_local, a fragment) a point stores and then
    reads: each point's own temporary, on its thread's copy."""
    return scope(buffer) in PER_THREAD_SCOPES and any(
        op.name == "memref.load" and root_of(op.operands[0]) == buffer for op in body)


Clash = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # two points, their element


@dataclass
class _Points:
    """Every point of a T.Parallel nest that runs a store, and the element each stores to."""

    coordinates: np.ndarray  # [variables, points of the whole nest]
    evaluate: PointValues
    points: np.ndarray  # the points that run the store
    elements: np.ndarray  # [points that run it, rank]

    def clash(self, one: int, other: int) -> Clash:
        """Points number `one` and `other` of those that run the store, and their element."""
        first, second = self.points[one], self.points[other]
        return (tuple(int(c) for c in self.coordinates[:, first]),
                tuple(int(c) for c in self.coordinates[:, second]),
                tuple(int(e) for e in self.elements[one]))


def _store_points(store: ir.Operation, outermost: ir.Operation,
                  named: list[tuple[int, ir.Value, int, ir.Operation]], shared_memory: bool
                  ) -> _Points | None:
    """Where the store's index is computed from the loops' variables and constants only,
    every point's index, evaluated at once over the loops' whole extent. Into shared memory or
    a tensor, only the points whose conditions (as computable) hold count; a per-thread
    buffer's copies on the threads that skip the store would keep their old values."""
    extents = [extent for _, _, extent, _ in named]
    total = math.prod(extents)
    if total < 2 or total > MAX_POINTS:
        return None
    coordinates = np.indices(extents).reshape(len(extents), total)
    evaluate = PointValues({argument: coordinates[k]
                             for k, (_, argument, _, _) in enumerate(named)})
    indices = [evaluate.of(index) for index in store.operands[2:]]
    if not indices or any(index is None for index in indices):
        return None
    runs = np.ones(total, dtype=bool)
    if shared_memory:
        for condition, taken in conditions_around(store, outermost):
            holds = evaluate.of(condition)
            if holds is not None:
                runs &= np.broadcast_to(holds.astype(bool) == taken, (total,))
    elements = np.stack([np.broadcast_to(index, (total,)) for index in indices], axis=1)
    points = np.flatnonzero(runs)
    return _Points(coordinates, evaluate, points, elements[points])


def _shared_element(store: ir.Operation, outermost: ir.Operation,
                    named: list[tuple[int, ir.Value, int, ir.Operation]], shared_memory: bool
                    ) -> Clash | None:
    """Two points of the loops and the element they both update (`acc[i // 2]` over
    T.Parallel(8))."""
    found = _store_points(store, outermost, named, shared_memory)
    if found is None:
        return None
    _, inverse, counts = np.unique(found.elements, axis=0, return_inverse=True,
                                   return_counts=True)
    repeated = np.flatnonzero(counts > 1)
    if not len(repeated):
        return None
    one, other = np.flatnonzero(inverse.reshape(-1) == repeated[0])[:2]
    return found.clash(one, other)


def _clashing_store(store: ir.Operation, outermost: ir.Operation,
                    named: list[tuple[int, ir.Value, int, ir.Operation]], shared_memory: bool,
                    body: list[ir.Operation]) -> Clash | None:
    """Two points of a plain store at one element (`out[i // 2] = x[i]`) whose values differ:
    the value's inputs (the loops' variables it uses, the indices of the loads it is computed
    from) evaluated at every point differ between them. None where they are the same
    everywhere an element is shared, or are not all computable (a load at a loaded index, a
    per-point temporary, another loop's variable)."""
    found = _store_points(store, outermost, named, shared_memory)
    if found is None:
        return None
    inputs = _value_inputs(store.operands[0], outermost, found.evaluate, body)
    if inputs is None:
        return None
    total = found.coordinates.shape[1]
    columns = [np.broadcast_to(values, (total,))[found.points] for values in inputs]
    keyed = np.concatenate([found.elements, np.stack(columns, axis=1)], axis=1) \
        if columns else found.elements
    elements, element_of = np.unique(found.elements, axis=0, return_inverse=True)
    stored, stored_of = np.unique(keyed, axis=0, return_index=True)[0:2]
    if len(stored) == len(elements):
        return None
    element_of = element_of.reshape(-1)
    first = {}
    for point in np.sort(stored_of):  # the first point storing each (element, value) pair
        element = int(element_of[point])
        if element in first:
            return found.clash(first[element], int(point))
        first[element] = int(point)
    return None


def _value_inputs(value: ir.Value, outermost: ir.Operation, evaluate: PointValues,
                  body: list[ir.Operation]) -> list[np.ndarray] | None:
    """What a stored value is computed from, per point: the loops' variables and the indices
    of its loads (values from outside the loop are the same at every point); None where one
    is not computable."""
    written = {root_of(op.operands[1]) for op in body if op.name == "memref.store"}
    inputs: list[np.ndarray] = []
    seen: set[ir.Value] = set()
    pending = [value]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        known = evaluate.known.get(current)
        if known is not None and defining_op(current) is None:  # a T.Parallel variable
            inputs.append(known)
            continue
        op = defining_op(current)
        if op is None or not _inside(op, outermost):
            if op is None and _inside(as_operation(current.owner.owner), outermost):
                return None  # a variable of a loop inside the T.Parallel
            continue
        if op.name == "memref.load":
            buffer = root_of(op.operands[0])
            indices = [evaluate.of(index) for index in op.operands[1:]]
            if (scope(buffer) in PER_THREAD_SCOPES and buffer in written) or \
                    any(index is None for index in indices):
                return None
            inputs.extend(indices)
            continue
        if len(op.regions):
            return None
        pending.extend(op.operands)
    return inputs


def _inside(op: ir.Operation, outermost: ir.Operation) -> bool:
    while op.parent is not None:
        op = as_operation(op.parent)
        if op == outermost:
            return True
    return False


def conditions_around(op: ir.Operation, outermost: ir.Operation) -> list[tuple[ir.Value, bool]]:
    """The conditions of the scf.if ops around `op` inside `outermost`, each with whether
    `op` stands in its `then` branch."""
    found = []
    child, parent = op, op.parent
    while parent is not None:
        parent = as_operation(parent)
        if parent == outermost:
            break
        if parent.name == "scf.if":
            taken = any(as_operation(then) == child
                        for then in parent.regions[0].blocks[0].operations)
            found.append((parent.operands[0], taken))
        child, parent = parent, parent.parent
    return found


def _truncated_division(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    quotient = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -quotient, quotient)


# integer ops on every point's values at once (index arithmetic: no overflow at these sizes)
BINARY = {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.floordivsi": np.floor_divide, "arith.divui": np.floor_divide,
    "arith.divsi": _truncated_division,
    "arith.ceildivsi": lambda a, b: -np.floor_divide(-a, b),
    "arith.remsi": np.fmod, "arith.remui": np.mod,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
    "arith.shli": np.left_shift, "arith.shrsi": np.right_shift, "arith.shrui": np.right_shift,
    "arith.minsi": np.minimum, "arith.maxsi": np.maximum,
    "arith.minui": np.minimum, "arith.maxui": np.maximum,
}
DIVISIONS = ("arith.floordivsi", "arith.divui", "arith.divsi", "arith.ceildivsi",
             "arith.remsi", "arith.remui")
CASTS = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui")
# arith.cmpi's predicates by number (unsigned ones on values known non-negative here)
COMPARISONS = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
               np.less, np.less_equal, np.greater, np.greater_equal)


class PointValues:
    """Integer values as arrays over a loop nest's points: computed from the loops' variables
    and constants through arith ops, else None."""

    def __init__(self, variables: dict[ir.Value, np.ndarray]) -> None:
        self.known: dict[ir.Value, np.ndarray | None] = dict(variables)

    def of(self, value: ir.Value) -> np.ndarray | None:
        if value not in self.known:
            self.known[value] = self._compute(value)
        return self.known[value]

    def _compute(self, value: ir.Value) -> np.ndarray | None:
        op = defining_op(value)
        if op is None:
            return None
        if op.name == "arith.constant":
            attribute = op.attributes["value"]
            return (np.int64(ir.IntegerAttr(attribute).value)
                    if isinstance(attribute, ir.IntegerAttr) else None)
        operands = [self.of(operand) for operand in op.operands]
        if any(operand is None for operand in operands):
            return None
        if op.name in CASTS:
            return operands[0]
        if op.name == "arith.cmpi":
            predicate = ir.IntegerAttr(op.attributes["predicate"]).value
            return COMPARISONS[predicate](*operands) if predicate < len(COMPARISONS) else None
        if op.name == "arith.select":
            return np.where(operands[0].astype(bool), operands[1], operands[2])
        function = BINARY.get(op.name)
        if function is None:
            return None
        if op.name in DIVISIONS and np.any(operands[1] == 0):
            return None
        return function(*operands)
