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
    return bit_coordinates(layout.thread_bases, layout.rank, tid)


def bit_coordinates(bases: tuple[tuple[int, ...], ...], rank: int, value: ir.Value
                    ) -> list[ir.Value]:
    """Per dimension, the XOR of the `bases` of the bits set in `value` (an index value: a
    thread id, or a register number in a loop over registers)."""
    result = []
    for dim in range(rank):
        components = [vector[dim] for vector in bases]
        total, used = None, 0
        for first, count, base in _runs(components):
            term = arith.remui(arith.divui(value, _index(1 << first)), _index(1 << count))
            if base != 1:
                term = arith.muli(term, _index(base))
            span = _span(base, count)
            if total is None:
                total = term
            elif used & span:
                total = arith.xori(total, term)
            else:
                total = arith.addi(total, term)
            used |= span
        result.append(_index(0) if total is None else total)
    return result


def combine_coordinates(layout: LinearLayout, registers: list[ir.Value], shift: list[ir.Value]
                        ) -> list[ir.Value]:
    """A register's coordinates (bit_coordinates of a register number) combined with a
    thread's shift: added where their bits cannot overlap, else XORed."""
    span = layout.thread_span()
    register_span = [0] * layout.rank
    for vector in layout.register:
        for dim, component in enumerate(vector):
            register_span[dim] |= component
    return [arith.xori(r, t) if register_span[dim] & span[dim] else arith.addi(r, t)
            for dim, (r, t) in enumerate(zip(registers, shift, strict=True))]


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
