"""TVM's thread all-reduce as TileLang kernels spell it (a mixin of the KernelBuilder):

    with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, dtype)]), "reduce_scope",
                T.reinterpret(T.uint64(0), dtype="handle")):
        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), value, True, result[0], tk,
                                          dtype="handle"))

Every thread of the block contributes `value`; each gets in `result` the combination of the
values of the threads that differ from it only along the named thread axes (`tk`: the axis
T.get_thread_binding(1) gave). tilec builds it from shared memory: each thread stores its value
at its place in the block, a barrier, then each combines its group's values in axis order from
the identity with the reducer's function, and a second barrier lets the scratch be reused.
"""

from __future__ import annotations

import ast
import itertools
import math
from dataclasses import dataclass
from typing import Any

from mlir.dialects import gpu

from tilec.frontend.values import Scalar


@dataclass
class CommReducer:
    """`T.comm_reducer(combiner, identity)`: the combiner's lambda, built where it is used."""

    combiner: ast.Lambda
    identity: Any


@dataclass
class AttrSpec:
    """`T.attr(node, key, value)`, entered by `with`."""

    node: Any
    key: str


class AllReduceOps:
    """t_attr / t_comm_reducer / t_tvm_thread_allreduce; mixed into KernelBuilder
    (self.reducers: the enclosing reduce scopes' reducers, innermost last)."""

    def t_attr(self, nodes: dict, node: ast.Call) -> AttrSpec:
        key = self.const_arg(nodes, "attr_key", node)
        if key != "reduce_scope":
            self.error(node, f"T.attr({key!r}) is not supported by tilec; it has T.attr's "
                             "'reduce_scope' around T.tvm_thread_allreduce")
        reducer = self.arg(nodes, "node")
        if not isinstance(reducer, CommReducer):
            self.error(node, "T.attr(..., 'reduce_scope', ...) takes a T.comm_reducer")
        return AttrSpec(reducer, key)  # its value, TVM's scope handle, builds nothing

    def attr_block(self, spec: AttrSpec, node: ast.With) -> None:
        self.reducers.append(spec.node)
        try:
            self.body(node.body)
        finally:
            self.reducers.pop()

    def t_comm_reducer(self, nodes: dict, node: ast.Call) -> CommReducer:
        combiner = nodes["combiner"]
        if not isinstance(combiner, ast.Lambda) or len(combiner.args.args) != 2:
            self.error(node, "T.comm_reducer takes a lambda of two values (lambda x, y: x + y)")
        identity = self.arg(nodes, "identity")
        identity = identity if isinstance(identity, (list, tuple)) else [identity]
        if len(identity) != 1:
            self.error(node, "tilec's T.comm_reducer combines one value (one identity)")
        return CommReducer(combiner, identity[0])

    def t_tvm_thread_allreduce(self, nodes: dict, node: ast.Call) -> None:
        self.require_kernel(node, "T.tvm_thread_allreduce")
        if not self.reducers:
            self.error(node, "T.tvm_thread_allreduce needs an enclosing "
                             "`with T.attr(T.comm_reducer(...), 'reduce_scope', ...)`")
        reducer = self.reducers[-1]
        args = list(nodes["args"])
        count = args[0] if args else None
        if isinstance(count, ast.Call) and len(count.args) == 1:  # T.uint32(1)
            count = count.args[0]
        if not isinstance(count, ast.Constant) or count.value != 1 or len(args) < 5:
            self.error(node, "tilec's T.tvm_thread_allreduce reduces one value: "
                             "(T.uint32(1), value, True, result[i], thread_index, ...)")
        value = self.rvalue(self.eval(args[1]), args[1])
        condition = self.rvalue(self.eval(args[2]), args[2])
        if condition is not True and condition != 1:
            self.error(args[2], "T.tvm_thread_allreduce's condition must be True in tilec")
        result = self.reference(args[3])
        axes = [self.thread_axis(self.eval(a), a) for a in args[4:]]
        dtype = result.buffer.dtype
        value = self.cast(value, dtype, node)
        extents = self.block_size()
        strides = [1, extents[0], extents[0] * extents[1]]
        coordinates = [self.thread_index(axis, node) for axis in range(3)]
        own = 0
        for axis in range(3):
            own = self.binop("+", own, self.binop("*", coordinates[axis], strides[axis], node),
                             node)
        scratch = self.allocate("shared", [math.prod(extents)], dtype, node)
        self.store(scratch, [own], value, node)
        gpu.BarrierOp()
        base = own
        for axis in axes:
            base = self.binop("-", base, self.binop("*", coordinates[axis], strides[axis], node),
                              node)
        total = self.allocate("var", [1], dtype, node)
        self.store(total, [0], self.cast(reducer.identity, dtype, node), node)
        self.combine_group(reducer, scratch, total, base, axes, strides, extents, node)
        self.store(result.buffer, result.indices, self.load(total, [0], node), node)
        gpu.BarrierOp()

    def combine_group(self, reducer: CommReducer, scratch: Any, total: Any, base: Any,
                      axes: list[int], strides: list[int], extents: list[int],
                      node: ast.AST) -> None:
        """total = combiner(total, scratch[member]) over the group's members, in order (the
        reduced axes' coordinates unrolled at compile time)."""
        for point in itertools.product(*(range(extents[axis]) for axis in axes)):
            offset = sum(c * strides[axis] for c, axis in zip(point, axes, strict=True))
            member = self.load(scratch, [self.binop("+", base, offset, node)], node)
            combined = self.apply_combiner(reducer, self.load(total, [0], node), member)
            self.store(total, [0], self.cast(combined, total.dtype, node), node)

    def apply_combiner(self, reducer: CommReducer, x: Scalar, y: Scalar) -> Any:
        """The reducer's lambda on two kernel values: its body built with its names bound."""
        names = [a.arg for a in reducer.combiner.args.args]
        with self.scope():
            self.scopes[-1].update(dict(zip(names, (x, y), strict=True)))
            return self.eval(reducer.combiner.body)

    def thread_axis(self, index: Any, node: ast.AST) -> int:
        """Which thread axis `index` (a T.get_thread_binding value) is."""
        if isinstance(index, Scalar):
            for axis, affine in self.thread_affines.items():
                if index.affine == affine:
                    return axis
        self.error(node, "T.tvm_thread_allreduce reduces over thread indices "
                         f"(T.get_thread_binding(axis)), got {index!r}")

