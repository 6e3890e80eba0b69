"""A linear layout's coordinates as IR: what the GPU lowering emits for one thread.

The thread's shift along each dimension is built from runs of thread-id bits whose bases
double along that dimension (a blocked layout has one run per dimension, so its shift is
`(tid / stride) % count * size`, as before linear layouts); runs whose bits cannot overlap are
added, others XORed. A register's coordinate is then its constant combined with that shift,
by an add when their bits are disjoint (so address arithmetic folds) and an XOR otherwise.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from tilec.compiler.layouts.linear import LinearLayout, is_power_of_two, log2


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _runs(components: list[int]) -> list[tuple[int, int, int]]:
    """(first bit, bit count, value of the first bit) for the runs of consecutive bits whose
    components double, power-of-two components only; other nonzero bits are runs of one."""
    runs: list[tuple[int, int, int]] = []
    for bit, value in enumerate(components):
        if value == 0:
            continue
        if runs and is_power_of_two(value):
            first, count, base = runs[-1]
            if first + count == bit and is_power_of_two(base) and value == base << count:
                runs[-1] = (first, count + 1, base)
                continue
        runs.append((bit, 1, value))
    return runs


def _span(value: int, count: int) -> int:
    """The bits a run of `count` doubling bits starting at `value` can set."""
    if not is_power_of_two(value):
        return value
    return ((1 << count) - 1) << log2(value)


def thread_coordinates(layout: LinearLayout, tid: ir.Value) -> list[ir.Value]:
    """Per dimension, the coordinate shift of thread `tid` (an index value)."""
    result = []
    for dim in range(layout.rank):
        components = [vector[dim] for vector in layout.thread_bases]
        value, used = None, 0
        for first, count, base in _runs(components):
            term = arith.remui(arith.divui(tid, _index(1 << first)), _index(1 << count))
            if base != 1:
                term = arith.muli(term, _index(base))
            span = _span(base, count)
            if value is None:
                value = term
            elif used & span:
                value = arith.xori(value, term)
            else:
                value = arith.addi(value, term)
            used |= span
        result.append(_index(0) if value is None else value)
    return result


def register_coordinates(layout: LinearLayout, register: int, shift: list[ir.Value]
                         ) -> list[ir.Value]:
    """The coordinate `register` holds in the thread whose `thread_coordinates` are `shift`."""
    span = layout.thread_span()
    result = []
    for dim, constant in enumerate(layout.register_coordinate(register)):
        if constant == 0:
            result.append(shift[dim])
        elif constant & span[dim]:
            result.append(arith.xori(shift[dim], _index(constant)))
        else:
            result.append(arith.addi(shift[dim], _index(constant)))
    return result
