"""infer-fragment-layout: give every fragment and every T.Parallel one thread/register mapping.

A fragment lives in registers spread over the block's threads, so every op that touches it
(copy, T.Parallel, reduce, gemm) must agree on which thread holds which element. This pass
records that agreement as `tile.layout` on each fragment's tile.alloc and on each tile.parallel
(the mapping of its iteration points onto threads):

- a gemm accumulator gets a near-square per-thread block (`gemm_layout`); a fragment A or B
  operand gets the rows (columns) of C its threads own, whole along K;
- a reduce destination is the source's layout without the reduced dimension (replicated over
  the threads that held it);
- a T.Parallel takes the layout of a fragment it indexes with all its loop variables, and lends
  its own to fragments it indexes that have none yet;
- any fragment left is laid out for 16-byte accesses along its last dimension.
"""

from __future__ import annotations

import math

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._fragment_layout import (
    LAYOUT_ATTR,
    FragmentLayout,
    default_layout,
    extend_layout,
    gemm_layout,
    layout_of,
)
from tilec.compiler.passes._ir_walk import (
    block_arg_index,
    defining_op,
    kernels,
    op_error,
    scope,
    walk,
)
from tilec.compiler.passes._wgmma import WGMMA_ATTR


def kernel_threads(kernel: ir.Operation) -> int:
    return math.prod(ir.DenseI64ArrayAttr(kernel.attributes["threads"]))


def fragment_accesses(parallel: ir.Operation) -> list[tuple[ir.Value, list[int | None]]]:
    """(fragment, loop dimension of each index or None) for each load/store in the body."""
    body = parallel.regions[0].blocks[0]
    found = []
    for op in walk(parallel):
        if op.name == "memref.load":
            buffer, indices = op.operands[0], list(op.operands)[1:]
        elif op.name == "memref.store":
            buffer, indices = op.operands[1], list(op.operands)[2:]
        else:
            continue
        if scope(buffer) == "fragment":
            found.append((buffer, [block_arg_index(i, body) for i in indices]))
    return found


def _describe(layout: FragmentLayout) -> str:
    return f"spt={list(layout.spt)} tpb={list(layout.tpb)} tstride={list(layout.tstride)}"


def set_layout(holder: ir.Operation, layout: FragmentLayout) -> None:
    holder.attributes[LAYOUT_ATTR] = layout.to_attr()


def elem_bytes(value: ir.Value) -> int:
    element = ir.MemRefType(value.type).element_type
    return max(1, getattr(element, "width", 32) // 8)


class _KernelInference:
    def __init__(self, kernel: ir.Operation):
        self.kernel = kernel
        self.threads = kernel_threads(kernel)
        ops = list(walk(kernel))
        self.allocs = [op for op in ops if op.name == "tile.alloc"
                       and scope(op.results[0]) == "fragment"]
        self.gemms = [op for op in ops if op.name == "tile.gemm"]
        self.reduces = [op for op in ops if op.name == "tile.reduce"]
        self.parallels = [op for op in ops if op.name == "tile.parallel"]

    def assign(self, fragment: ir.Value, layout: FragmentLayout, where: ir.Operation) -> bool:
        owner = defining_op(fragment)
        if owner is None or owner.name != "tile.alloc":
            raise op_error(where, "fragment is not a tile.alloc result")
        current = layout_of(fragment)
        if current is None:
            set_layout(owner, layout)
            return True
        if current != layout:
            raise op_error(where, "a fragment is used with two different thread layouts ("
                           f"{_describe(current)} and {_describe(layout)}); give it its own buffer")
        return False

    def run(self) -> None:
        for gemm in self.gemms:
            self.constrain_gemm(gemm)
        while True:
            while self.propagate():
                pass
            pending = [op for op in self.allocs if LAYOUT_ATTR not in op.attributes]
            if not pending:
                break
            pending.sort(key=lambda op: any(r.operands[1] == op.results[0]
                                            for r in self.reduces))
            value = pending[0].results[0]
            shape = tuple(ir.MemRefType(value.type).shape)
            set_layout(pending[0], default_layout(shape, self.threads, elem_bytes(value)))
        for parallel in self.parallels:
            if LAYOUT_ATTR not in parallel.attributes:
                self.fallback_parallel(parallel)

    def constrain_gemm(self, gemm: ir.Operation) -> None:
        if WGMMA_ATTR in gemm.attributes:
            return  # plan-wgmma-gemms laid out its accumulator for the instruction
        a, b, c = gemm.operands[0], gemm.operands[1], gemm.operands[2]
        if scope(c) != "fragment":
            raise op_error(gemm, "T.gemm accumulates into a fragment only")
        m, n = ir.MemRefType(c.type).shape
        layout = gemm_layout(m, n, self.threads)
        self.assign(c, layout, gemm)
        transpose_a = ir.BoolAttr(gemm.attributes["transpose_a"]).value
        transpose_b = ir.BoolAttr(gemm.attributes["transpose_b"]).value
        if scope(a) == "fragment":
            k = ir.MemRefType(a.type).shape[0 if transpose_a else 1]
            dims = [1, 0] if transpose_a else [0, 1]
            self.assign(a, self.operand_layout(layout, 0, k, dims), gemm)
        if scope(b) == "fragment":
            k = ir.MemRefType(b.type).shape[1 if transpose_b else 0]
            dims = [0, 1] if transpose_b else [1, 0]
            self.assign(b, self.operand_layout(layout, 1, k, dims), gemm)

    def operand_layout(self, c_layout: FragmentLayout, c_dim: int, k: int, dims: list[int]
                       ) -> FragmentLayout:
        """Operand rows (or columns) where C's threads need them, whole along K."""
        keep = c_layout.keep_dims([c_dim])
        shape = [0, 0]
        shape[dims[0]], shape[dims[1]] = keep.shape[0], k
        return extend_layout(keep, [dims[0]], tuple(shape))

    def propagate(self) -> bool:
        changed = False
        for reduce in self.reduces:
            src, dst = reduce.operands[0], reduce.operands[1]
            dim = ir.IntegerAttr(reduce.attributes["dim"]).value
            source = layout_of(src) if scope(src) == "fragment" else None
            if source is not None and scope(dst) == "fragment" and layout_of(dst) is None:
                keep = [d for d in range(source.rank) if d != dim]
                changed |= self.assign(dst, source.keep_dims(keep), reduce)
        for parallel in self.parallels:
            changed |= self.propagate_parallel(parallel)
        return changed

    def propagate_parallel(self, parallel: ir.Operation) -> bool:
        extents = tuple(ir.DenseI64ArrayAttr(parallel.attributes["extents"]))
        accesses = fragment_accesses(parallel)
        changed = False
        if LAYOUT_ATTR not in parallel.attributes:
            for fragment, dims in accesses:
                layout = layout_of(fragment)
                if layout is None or None in dims or sorted(dims) != list(range(len(extents))):
                    continue
                set_layout(parallel, extend_layout(layout, dims, extents))
                changed = True
                break
        if LAYOUT_ATTR not in parallel.attributes:
            return changed
        loop = FragmentLayout.from_attr(parallel.attributes[LAYOUT_ATTR], extents)
        for fragment, dims in accesses:
            if layout_of(fragment) is not None or None in dims or len(set(dims)) != len(dims):
                continue
            if tuple(loop.shape[d] for d in dims) != tuple(ir.MemRefType(fragment.type).shape):
                continue
            changed |= self.assign(fragment, loop.keep_dims(dims), parallel)
        return changed

    def fallback_parallel(self, parallel: ir.Operation) -> None:
        """No fragment fixes this loop's mapping: follow a partially indexed fragment if any,
        else spread the points over the threads."""
        extents = tuple(ir.DenseI64ArrayAttr(parallel.attributes["extents"]))
        for fragment, dims in fragment_accesses(parallel):
            layout = layout_of(fragment)
            if layout is not None and None not in dims and len(set(dims)) == len(dims):
                set_layout(parallel, extend_layout(layout, dims, extents))
                return
        # one point per thread per step: scalar accesses of consecutive threads coalesce
        set_layout(parallel, default_layout(extents, self.threads, 16))


@register
class InferFragmentLayout(TilePass):
    """Record a thread/register layout on every fragment alloc and T.Parallel."""

    name = "infer-fragment-layout"
    summary = "thread/register mapping of fragments and T.Parallel loops (tile.layout)"

    def run(self, module: ir.Module) -> None:
        for kernel in kernels(module):
            _KernelInference(kernel).run()
