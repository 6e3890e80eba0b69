"""check-scalar-stores: no store every thread of a block makes to one element, racing.

A statement outside T.Parallel is scalar code: every thread of the block runs it (as in
TileLang), while the CPU target, which runs a block as one thread, runs it once. Into a
thread's own buffers (T.alloc_var, T.alloc_local, a fragment read outside T.Parallel) that is
what the user means. Into one element of shared memory or a tensor, every thread stores to the
same place, which is harmless only when they all store the same value without reading it:

- `out[bx] += s` (a load of the element, then a store to it) is a race: a thread that reads
  after another's store adds s again, so the result lies anywhere between s and threads * s;
- `T.atomic_add(out[bx], s)` adds s once per thread (threads * s), where the CPU target adds
  it once;
- `out[bx] = v` with v differing between the threads (the thread index, a value computed from
  it, a per-thread buffer written under a condition on it) keeps whichever thread stored last.

Each is an error at its line on every target, naming the number of threads, pointing to
`for _ in T.Parallel(1):` (one point: one thread stores, lower-tile-to-gpu's canonical owner;
the CPU target, which has no thread index, runs it too), `if T.get_thread_binding() == 0:` on
a GPU, or to T.Parallel / T.reduce_*. Left alone: an
index that differs between the threads (each stores its own element), an atomic of a value
that differs between them (a per-thread contribution, TileLang's GEMV), T.atomic_add with
return_prev (each thread's own ticket), and a block of one thread. Under conditions that
differ between the threads, those computed from the thread index and constants are evaluated
for every thread of the block (`_per_thread.py`): `if tx == 0` leaves one thread, which is
fine, and `if tx % 32 == 0` four of 128, which still race; a condition on a loaded value (or
a loop bound that differs between threads) is known at run time only and left unchecked.
The thread ranges of `if T.get_thread_binding() < 32:` still run their scalar code on each
of their threads, so they are no such condition.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._integer_storage import root_of
from tilec.compiler.passes._ir_walk import (
    as_operation,
    constant_index,
    defining_op,
    enclosing,
    kernels,
    op_error,
    scope,
    walk,
)
from tilec.compiler.passes._per_thread import PerThread
from tilec.compiler.passes._scheduling import target_description
from tilec.compiler.passes._thread_range import (
    block_threads,
    is_thread_branch,
    range_warp,
    thread_range_at,
)
from tilec.compiler.passes.check_thread_branches import ThreadValues
from tilec.errors import CompileError

MEMORY_SCOPES = ("shared", "global")  # one copy of each element for the whole block
SCOPE_WORDS = {"global": "tensor", "shared": "shared buffer"}
ONE_THREAD = "`if T.get_thread_binding() == 0:`"


@register
@dataclass
class CheckScalarStores(TilePass):
    """Reject scalar stores and atomics that every thread makes to one shared element."""

    name = "check-scalar-stores"
    summary = "error: `out[bx] += s` outside T.Parallel, run by every thread of the block"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        warp = range_warp(target_description(module, self.arch, self.name))
        for kernel in kernels(module):
            if block_threads(kernel) < 2:
                continue
            thread_values: ThreadValues | None = None
            per_thread = PerThread(list(ir.DenseI64ArrayAttr(kernel.attributes["threads"])))
            for op in walk(kernel):
                if op.name == "memref.store":
                    value, buffer, indices = op.operands[0], op.operands[1], op.operands[2:]
                elif op.name == "tile.atomic_add":
                    buffer, *indices, value = op.operands
                else:
                    continue
                if scope(buffer) not in MEMORY_SCOPES or enclosing(op, "tile.parallel"):
                    continue
                if thread_values is None:
                    thread_values = ThreadValues(kernel, warp)
                if any(map(thread_values.differs, indices)):
                    continue
                threads = _threads(op, kernel, warp)
                conditions = thread_values.conditions(op)
                if any(not is_thread_branch(condition, warp) for condition in conditions):
                    count = _selected(op, conditions, per_thread)
                    if count is None or count < 2:
                        continue
                    threads = f"each of the {count} threads its conditions select"
                why = _race(op, value, buffer, indices, thread_values)
                if why is not None:
                    raise _error(op, scope(buffer), why, threads)


def _race(op: ir.Operation, value: ir.Value, buffer: ir.Value, indices: list[ir.Value],
          thread_values: ThreadValues) -> str | None:
    """Why every thread storing `value` at `indices` gives a wrong result, None if it does
    not."""
    if op.name == "tile.atomic_add":
        return (None if thread_values.differs(value) else
                "adds the same value once per thread (the CPU target, one thread per block, "
                "adds it once)")
    if thread_values.differs(value):
        return ("stores a value that differs between the threads at an index that does not: "
                "the element keeps whichever thread stored last")
    if _reads_element(value, root_of(buffer), indices):
        return ("reads the element and stores it back (a read-modify-write such as `+=`): a "
                "thread that reads after another's store updates it again, so the result "
                "depends on the schedule")
    return None


def _reads_element(value: ir.Value, root: ir.Value, indices: list[ir.Value]) -> bool:
    """Whether `value` is computed (through SSA operands) from a load of `root` at `indices`."""
    seen: set[ir.Value] = set()
    pending = [value]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        op = defining_op(current)
        if op is None:
            continue
        if (op.name == "memref.load" and root_of(op.operands[0]) == root
                and _same_indices(list(op.operands[1:]), indices)):
            return True
        pending.extend(op.operands)
    return False


def _same_indices(first: list[ir.Value], second: list[ir.Value]) -> bool:
    if len(first) != len(second):
        return False
    for a, b in zip(first, second, strict=True):
        if a != b and (constant_index(a) is None or constant_index(a) != constant_index(b)):
            return False
    return True


def _selected(op: ir.Operation, conditions: list[ir.Operation], per_thread: PerThread
              ) -> int | None:
    """How many threads of the block run `op` under `conditions` (the scf.ifs around it whose
    conditions differ between threads), None where one is not computed from the thread index
    and constants alone (a loaded value) or is a loop."""
    selected = np.ones(per_thread.count, dtype=bool)
    for condition in conditions:
        values = per_thread.evaluate(condition.operands[0]) \
            if condition.name == "scf.if" else None
        if values is None:
            return None
        selected &= (values != 0) == _in_then_branch(op, condition)
    return int(selected.sum())


def _in_then_branch(op: ir.Operation, branch: ir.Operation) -> bool:
    while as_operation(op.parent) != branch:
        op = as_operation(op.parent)
    return op.block == branch.regions[0].blocks[0]


def _threads(op: ir.Operation, kernel: ir.Operation, warp: int) -> str:
    found = thread_range_at(op, kernel, warp)
    if found is not None:
        return f"each of the {found[1] - found[0]} threads of its thread range"
    return f"each of the block's {block_threads(kernel)} threads"


def _error(op: ir.Operation, buffer_scope: str, why: str, threads: str) -> CompileError:
    what = "T.atomic_add into" if op.name == "tile.atomic_add" else "a store to"
    return op_error(op, (
        f"{what} one {SCOPE_WORDS[buffer_scope]} element outside T.Parallel runs on {threads}: "
        f"it {why}. Scalar statements run on every thread; let one thread do it (inside "
        f"`for _ in T.Parallel(1):`, on every target, or {ONE_THREAD} on a GPU), or spread "
        f"the work over the threads with T.Parallel and combine it with T.reduce_sum / "
        f"T.reduce_max"))
