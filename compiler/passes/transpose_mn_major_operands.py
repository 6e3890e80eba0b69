"""transpose-mn-major-operands: a gemm whose 8-bit or tf32 operand is stored MN-major in shared
memory reads a K-major copy of it, so it runs on tensor cores instead of CUDA cores.

wgmma transposes 16-bit operands only: an fp8 (e4m3 / e5m2), int8 or tf32 gemm needs A as
M x K and B as N x K in shared memory (K-major). A B stored K x N (TileLang's default
`T.gemm(A_shared, B_shared, C)` over a row-major B) or an A stored K x M (transpose_A) is
therefore left to the CUDA cores by infer-mma-layout. This pass gives such a gemm a K-major
tile of its own: a shared tile of the transposed shape, filled right before the gemm by a
T.Parallel over its elements (`Bt[n, k] = B[k, n]`), which the gemm then reads with the
transpose flag flipped. What the loop around it copies from global memory (by TMA or
cp.async, as before) stays MN-major; the consumers transpose it in shared memory, as
CUTLASS's Hopper collectives transpose an MN-major 8-bit B before its wgmma. Every later
pass sees an ordinary K-major gemm and an ordinary T.Parallel: infer-mma-layout gives the
gemm its wgmma, plan-wgmma-gemms the copy's swizzled operand layout (its stores go through
it), insert-shared-barriers the barriers between the T.Parallel and the gemm.

A gemm is rewritten when the target has wgmma, its operand type is one wgmma reads K-major
only, A and B are 2-d shared tiles (A may be a fragment: only B is copied then), and
infer-mma-layout's rule (types, output, tile shape, threads) takes the gemm once its operands
are K-major. Each MN-major operand of such a gemm gets its own copy, made where the gemm
stands (inside its loop: each iteration's tile is transposed after that iteration's fill).

An opt-in until measured on the H200 (TILEC_TRANSPOSE_MN_MAJOR_OPERANDS=1, module attribute
`tile.transpose_mn_major_operands`, which its lit tests set): neither the GPU result nor the
transposition's shared-memory traffic against the CUDA cores' GEMM is measured yet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import memref

from tilec.compiler.layouts.linear import LinearLayout, blocked, padded
from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._fragment_layout import LAYOUT_ATTR, layout_attr
from tilec.compiler.passes._ir_walk import defining_op, kernels, scope, walk
from tilec.compiler.passes._scalar import bit_width
from tilec.compiler.passes._scheduling import TRANSPOSE_OPERANDS_ATTR, target_description
from tilec.compiler.passes._wgmma import CHUNK_BYTES
from tilec.compiler.passes.infer_fragment_layout import threads_at
from tilec.compiler.passes.infer_mma_layout import gemm_problem, wgmma_decision
from tilec.compiler.tensorcore.dtypes import mn_major_allowed
from tilec.dialect import AllocOp, ParallelOp, YieldOp


def transpose_layout(shape: tuple[int, int], element_bytes: int, threads: int
                     ) -> LinearLayout:
    """Which thread transposes which element of a K-major copy of `shape` (rows: M or N, K
    along the columns): each thread a 16-byte run of one row's K (one vector store into the
    swizzled tile, whose 16-byte chunks stay whole), consecutive threads on consecutive rows
    (their one-byte loads of the MN-major tile then read one contiguous run of a row)."""
    rows, columns = shape
    run = min(CHUNK_BYTES // element_bytes, columns)
    along_rows = math.gcd(threads, padded(rows))
    return blocked(shape, (1, run), (along_rows, threads // along_rows), (1, along_rows),
                   threads)


def _transposed_tile(tile: ir.Value, before: ir.Operation, threads: int) -> ir.Value:
    """A new shared tile of `tile`'s transposed shape, allocated beside it, and filled from it
    by a T.Parallel placed before `before`."""
    alloc = defining_op(tile)
    tile_type = ir.MemRefType(tile.type)
    rows, columns = tile_type.shape
    with alloc.location, ir.InsertionPoint.after(alloc):
        copy = AllocOp(ir.MemRefType.get([columns, rows], tile_type.element_type,
                                         memory_space=tile_type.memory_space)).result
    element_bytes = max(1, bit_width(tile_type.element_type) // 8)
    with before.location, ir.InsertionPoint(before):
        loop = ParallelOp(ir.DenseI64ArrayAttr.get([columns, rows]))
        loop.operation.attributes[LAYOUT_ATTR] = layout_attr(
            transpose_layout((columns, rows), element_bytes, threads))
        body = loop.regions[0].blocks.append(ir.IndexType.get(), ir.IndexType.get())
        with ir.InsertionPoint(body):
            row, column = body.arguments
            memref.store(memref.load(tile, [column, row]), copy, [row, column])
            YieldOp()
    return copy


def _flag(gemm: ir.Operation, name: str) -> bool:
    return ir.BoolAttr(gemm.attributes[name]).value


def _shared_tile(value: ir.Value) -> bool:
    alloc = defining_op(value)
    return alloc is not None and alloc.name == "tile.alloc" and scope(value) == "shared" and \
        ir.MemRefType(value.type).rank == 2


def rewrite(gemm: ir.Operation, kernel: ir.Operation) -> bool:
    """Give the gemm K-major copies of its MN-major operands when that puts it on wgmma
    (module docstring); False when it is left as it is."""
    if gemm_problem(gemm, kernel) is not None:
        return False  # the tensor cores read it as it stands
    problem = gemm_problem(gemm, kernel, k_major=True)
    threads = threads_at(gemm, kernel)
    if problem is None or mn_major_allowed(problem.dtype) or \
            wgmma_decision(problem, threads) is None:
        return False
    a, b = gemm.operands[0], gemm.operands[1]
    moves = []
    if _flag(gemm, "transpose_a"):
        moves.append((0, "transpose_a", False))
    if not _flag(gemm, "transpose_b"):
        moves.append((1, "transpose_b", True))
    if any(not _shared_tile(gemm.operands[n]) for n, _, _ in moves) or a == b:
        return False
    for number, flag, value in moves:
        gemm.operands[number] = _transposed_tile(gemm.operands[number], gemm, threads)
        gemm.attributes[flag] = ir.BoolAttr.get(value)
    return True


@register
@dataclass
class TransposeMnMajorOperands(TilePass):
    """8-bit / tf32 gemms with MN-major shared operands read K-major copies made before them."""

    name = "transpose-mn-major-operands"
    summary = "8-bit / tf32 gemm on a K x N B (K x M A) -> T.Parallel transpose, K-major gemm"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        if not target_description(module, self.arch, self.name).has_wgmma:
            return
        if TRANSPOSE_OPERANDS_ATTR not in module.operation.attributes:
            return
        for kernel in kernels(module):
            for gemm in [op for op in walk(kernel) if op.name == "tile.gemm"]:
                rewrite(gemm, kernel)
