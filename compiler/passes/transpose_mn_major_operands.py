"""transpose-mn-major-operands: a gemm whose 8-bit or tf32 operand is stored MN-major in shared
memory reads a K-major copy of it, so it runs on tensor cores instead of CUDA cores.

wgmma transposes 16-bit operands only, and so does ldmatrix.trans for mma.sync: an fp8 (e4m3 /
e5m2), int8 or tf32 gemm needs A as M x K and B as N x K in shared memory (K-major). A B stored
K x N (TileLang's default `T.gemm(A_shared, B_shared, C)` over a row-major B) or an A stored
K x M (transpose_A) is therefore left to the CUDA cores by infer-mma-layout. This pass gives
such a gemm a K-major tile of its own: a shared tile of the transposed shape, filled right
before the gemm by a T.Parallel over its elements (`Bt[n, k] = B[k, n]`), which the gemm then
reads with the transpose flag flipped. What the loop around it copies from global memory (by
TMA or cp.async, as before) stays MN-major; the consumers transpose it in shared memory, as
CUTLASS's Hopper collectives transpose an MN-major 8-bit B before its wgmma. Every later pass
sees an ordinary K-major gemm and an ordinary T.Parallel: infer-mma-layout gives the gemm its
wgmma (sm_90a) or mma.sync (sm_80 and the other mma.sync chips: int8 and tf32; they have no
fp8 shape), plan-wgmma-gemms / plan-mma-sync-gemms the copy's swizzled operand layout (its
stores go through it), insert-shared-barriers the barriers between the T.Parallel and the gemm.

A gemm is rewritten when the target has wgmma or mma.sync, its operand type is one they read
K-major only, A and B are 2-d shared tiles (A may be a fragment: only B is copied then),
infer-mma-layout's rule (types, output, tile shape, threads) takes the gemm once its operands
are K-major, and the kernel's shared memory with the copies still fits the chip: the tiles of
the T.Pipelined loops' copies at their pipeline depth (max(2, num_stages), pipeline-async-
copies' cp.async schedule) and every other buffer, placed as plan-shared-memory places them
(`planned_shared_bytes`). A gemm whose copies would not fit stays on the CUDA cores, as without
the opt-in (an sm_89 block has 99 KiB: three stages of 128 x 32 tf32 tiles leave no room for
B's copy). Each MN-major operand of such a gemm gets its own copy, made where the gemm stands
(inside its loop: each iteration's tile is transposed after that iteration's fill).

An opt-in (TILEC_TRANSPOSE_MN_MAJOR_OPERANDS=1, module attribute
`tile.transpose_mn_major_operands`, which its lit tests set) until it nears the library: on an
H100 (2026-12-07) its GEMMs were correct and, at 4096^3 with B stored K x N, took 1 / 0.36 (e4m3)
and 1 / 0.60 (int8) of the library's time, against 1 / 0.023 and 1 / 0.037 on the CUDA cores
(benchmarks/results/2026-12-07-h100_gemm-per-op-kxn-4545afa.json): the copy reads its tile one
byte per shared load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import memref

from tilec.compiler.layouts.linear import LinearLayout, blocked, padded
from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._fragment_layout import LAYOUT_ATTR, layout_attr
from tilec.compiler.passes._ir_walk import (
    as_operation,
    copy_parts,
    defining_op,
    kernels,
    scope,
    walk,
)
from tilec.compiler.passes._scalar import bit_width
from tilec.compiler.passes._scheduling import TRANSPOSE_OPERANDS_ATTR, target_description
from tilec.compiler.passes._wgmma import CHUNK_BYTES
from tilec.compiler.passes.infer_fragment_layout import threads_at
from tilec.compiler.passes.infer_mma_layout import (
    GemmProblem,
    gemm_problem,
    mma_sync_decision,
    warp_policy,
    wgmma_decision,
)
from tilec.compiler.passes.pipeline_async_copies import MIN_STAGES, global_copies
from tilec.compiler.passes.plan_shared_memory import lifetimes, place
from tilec.compiler.targets.description import TargetDescription
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


def _transposed_tile(tile: ir.Value, before: ir.Operation, threads: int
                     ) -> tuple[ir.Value, ir.Operation]:
    """A new shared tile of `tile`'s transposed shape, allocated beside it, and the T.Parallel
    placed before `before` that fills it from `tile`."""
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
    return copy, loop.operation


def _flag(gemm: ir.Operation, name: str) -> bool:
    return ir.BoolAttr(gemm.attributes[name]).value


def _shared_tile(value: ir.Value) -> bool:
    alloc = defining_op(value)
    return alloc is not None and alloc.name == "tile.alloc" and scope(value) == "shared" and \
        ir.MemRefType(value.type).rank == 2


def planned_shared_bytes(kernel: ir.Operation) -> int:
    """The shared memory the kernel will need once its T.Pipelined loops are multi-buffered:
    the tile of every global -> shared copy in such a loop takes max(2, num_stages) slots (the
    cp.async schedule pipeline-async-copies gives it; a TMA ring only shrinks to fit), every
    other buffer one, placed as plan-shared-memory places them (bytes reused across
    lifetimes). An upper bound: a copy the pipeline leaves synchronous keeps one slot."""
    depths = []
    for loop in walk(kernel):
        if loop.name == "tile.pipelined":
            stages = max(MIN_STAGES, ir.IntegerAttr(loop.attributes["num_stages"]).value)
            depths += [(copy_parts(copy)[3], stages) for copy in global_copies(loop)]
    statements = [as_operation(op) for op in kernel.regions[0].blocks[0].operations]
    return place(lifetimes(kernel, statements, depths))


def _decision(problem: GemmProblem, gemm: ir.Operation, kernel: ir.Operation,
              target: TargetDescription) -> bool:
    """Whether the target's tensor-core rule (infer-mma-layout's) takes the problem."""
    threads = threads_at(gemm, kernel)
    if target.has_wgmma:
        return wgmma_decision(problem, threads) is not None
    return mma_sync_decision(problem, threads, warp_policy(gemm, kernel)) is not None


def rewrite(gemm: ir.Operation, kernel: ir.Operation, target: TargetDescription) -> bool:
    """Give the gemm K-major copies of its MN-major operands when that puts it on the tensor
    cores and the kernel's shared memory still fits the target (module docstring); False when
    it is left as it is."""
    if gemm_problem(gemm, kernel) is not None:
        return False  # the tensor cores read it as it stands
    problem = gemm_problem(gemm, kernel, k_major=True)
    if problem is None or mn_major_allowed(problem.dtype) or \
            not _decision(problem, gemm, kernel, target):
        return False
    moves = []
    if _flag(gemm, "transpose_a"):
        moves.append((0, "transpose_a", False))
    if not _flag(gemm, "transpose_b"):
        moves.append((1, "transpose_b", True))
    if any(not _shared_tile(gemm.operands[n]) for n, _, _ in moves) or \
            gemm.operands[0] == gemm.operands[1]:
        return False
    threads = threads_at(gemm, kernel)
    made = []
    for number, flag, value in moves:
        stored = gemm.operands[number]
        copy, fill = _transposed_tile(stored, gemm, threads)
        made.append((number, flag, stored, copy, fill))
        gemm.operands[number] = copy
        gemm.attributes[flag] = ir.BoolAttr.get(value)
    if planned_shared_bytes(kernel) <= target.max_shared_bytes:
        return True
    for number, flag, stored, copy, fill in made:  # over the limit: the CUDA cores keep it
        gemm.operands[number] = stored
        gemm.attributes[flag] = ir.BoolAttr.get(not _flag(gemm, flag))
        fill.erase()
        defining_op(copy).erase()
    return False


@register
@dataclass
class TransposeMnMajorOperands(TilePass):
    """8-bit / tf32 gemms with MN-major shared operands read K-major copies made before them,
    where the copies fit the chip's shared memory."""

    name = "transpose-mn-major-operands"
    summary = "8-bit / tf32 gemm on a K x N B (K x M A) -> T.Parallel transpose, K-major gemm"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        target = target_description(module, self.arch, self.name)
        if target.mma not in ("wgmma", "mma.sync") or \
                TRANSPOSE_OPERANDS_ATTR not in module.operation.attributes:
            return
        for kernel in kernels(module):
            for gemm in [op for op in walk(kernel) if op.name == "tile.gemm"]:
                rewrite(gemm, kernel, target)
