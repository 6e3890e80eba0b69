"""pipeline-async-copies: how each T.Pipelined loop streams its global -> shared copies.

A `tile.pipelined` loop whose body copies global tiles into shared memory (direct tile.copy
children of the loop) gets `tile.pipeline = {stages = S, k_tile = KT, mechanism = M}` and those
copies get `tile.async`:

- "tma-mbarrier" (sm_90a, the copies are exactly the shared operand tiles of one wgmma gemm of
  the loop, each global tensor's row pitch 16-byte aligned, the operand tiles swizzled alike by
  select-shared-swizzle): copies `tile.async = "tma"`. A gemm reading A from registers that
  the loop fills from a shared tile (`T.copy(A_shared, A_frag)`, infer-mma-layout's
  `register_a_fill`) has that shared tile as its A operand tile: the kernel stages A there by
  TMA and ldmatrix-reads it. One stage holds one swizzle row of K,
  KT = swizzle span / operand bytes elements (128B: 64 f16, 128 fp8; a smaller user block_K is
  merged: a ring slot covers KT / block_K user iterations). The ring keeps at least the user's K
  depth in flight, depth = max(2, ceil(block_K * num_stages / KT)), and grows while shared
  memory allows, up to 8 stages: on the H200 the quickstart's literal 128x128x32 / 3 stages
  leaves TMA latency exposed (0.42x cuBLAS measured) where 128x128x64 / 4 stages reaches 0.93x,
  and the DRAM-bound 128x8192x8192 ran at 0.93x with a 6-stage 128x64 ring, 0.98x with an
  8-stage 64x128 one. S = the most stages in 2..max(depth, 8) whose shared memory fits (1 KiB
  alignment slack + the A/B ring + the epilogue's staged C columns, as the wgmma kernel lays
  them out), then at most one stage per k-tile (a deeper ring has slots that never fill). The
  wgmma kernel needs K at compile time and at least two K tiles: a loop without them (or
  without room for two stages) is scheduled as any other loop, by cp.async.
- "cp.async" (sm_80, and every other loop): copies whose rows move in 16-byte pieces (global
  row pitch, box rows and column offset all 16-byte multiples) get `tile.async = "cp.async"`;
  the others stay synchronous. KT = the user's block_K, S = max(2, num_stages).

With the module's unit attribute `tile.async_gathers` (the CUDA target's default since an H100
ran conv2d 1.2-1.4x faster with it; TILEC_ASYNC_GATHERS=0 leaves it out), a cp.async loop's
T.Parallel that stores into a shared tile (an implicit GEMM's patch gather) gets
`tile.async = "cp.async"` too: the pipeline issues it ahead as cp.async with zero-fill where
its vectors qualify (compiler/passes/_async_pipeline.py, gather_of), and leaves it
synchronous where not.

With the module's unit attribute `tile.pipeline_table_loads` (the CUDA target's default since
an H100 ran MLA decode 3.7x faster with it, right results; TILEC_PIPELINE_TABLE_LOADS=0 leaves
it off), every load of a global tensor the
function only loads from gets `tile.table_load` (`mark_table_loads`): the cp.async pipeline
and the TMA ring's producer may repeat it for a later iteration, so copies whose corners or
loop bounds come from a paged cache's block table or the sequences' lengths run ahead.

A loop none of whose copies can go asynchronously is left alone. A module with the unit
attribute `tile.disable_tma` (the CUDA target sets it when the user's pass configs disable TMA
lowering or warp specialization) gets no TMA ring: every loop is scheduled by cp.async.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._copy_rows import box_rows_aligned, element_bytes, row_pitch_aligned
from tilec.compiler.passes._ir_walk import (
    as_operation,
    copy_parts,
    defining_op,
    kernels,
    scope,
    walk,
)
from tilec.compiler.passes._scheduling import (
    DISABLE_TMA_ATTR,
    OPERAND_TYPES,
    PIPELINE_ATTR,
    TMA_PIPELINE,
    decision_attr,
    read_decision,
    target_description,
    tensorcore_type,
)
from tilec.compiler.passes.infer_mma_layout import MMA_ATTR, register_a_fill
from tilec.compiler.passes.select_epilogue_store import STORE_ATTR, accumulator_store
from tilec.compiler.passes.select_shared_swizzle import SWIZZLE_ATTR, swizzle_bytes
from tilec.compiler.targets.description import TargetDescription
from tilec.compiler.tensorcore.dtypes import OPERAND_BYTES

ASYNC_ATTR = "tile.async"
ASYNC_GATHERS_ATTR = "tile.async_gathers"  # module default: pipeline T.Parallel gathers
TABLE_LOADS_ATTR = "tile.pipeline_table_loads"  # module opt-in: mark read-only table loads
TABLE_LOAD_ATTR = "tile.table_load"  # on a memref.load: it may be repeated for a later iteration
ALIGNMENT_SLACK_BYTES = 1024  # the wgmma kernel aligns its ring to 1 KiB
MAX_FILLED_STAGES = 8
MIN_STAGES = 2


def _is_true(gemm: ir.Operation, name: str) -> bool:
    return ir.BoolAttr(gemm.attributes[name]).value


def gemm_k_extent(gemm: ir.Operation) -> int:
    """The K extent of a gemm's tile (block_K), read off A (M x K, or K x M transposed)."""
    a_shape = ir.MemRefType(gemm.operands[0].type).shape
    return a_shape[0] if _is_true(gemm, "transpose_a") else a_shape[1]


def _operand_k_dim(gemm: ir.Operation, operand: int) -> int:
    """Which dimension of the gemm's A (0) or B (1) tile runs along K."""
    if operand == 0:
        return 0 if _is_true(gemm, "transpose_a") else 1
    return 1 if _is_true(gemm, "transpose_b") else 0


def _shared_gathers(loop: ir.Operation) -> list[ir.Operation]:
    """The loop body's own T.Parallel ops whose only store is into a shared tile (what the
    pipeline may issue ahead: it checks the rest once the layouts are known)."""
    found = []
    for op in loop.regions[0].blocks[0].operations:
        op = as_operation(op)
        if op.name != "tile.parallel":
            continue
        stores = [inner for inner in walk(op) if inner.name == "memref.store"]
        if len(stores) == 1 and scope(stores[0].operands[1]) == "shared":
            found.append(op)
    return found


def global_copies(loop: ir.Operation) -> list[ir.Operation]:
    """The loop body's own global -> shared tile.copy ops (not those nested deeper)."""
    found = []
    for op in loop.regions[0].blocks[0].operations:
        op = as_operation(op)
        if op.name == "tile.copy":
            src, _, _, dst, _, _ = copy_parts(op)
            if scope(src) == "global" and scope(dst) == "shared":
                found.append(op)
    return found


@dataclass(frozen=True)
class WgmmaLoop:
    """A loop feeding one wgmma gemm from global memory by TMA: what its ring depends on."""

    gemm: ir.Operation
    operand_copies: dict[int, ir.Operation]  # gemm operand (0: A, 1: B) -> the copy filling it
    warpgroups: int
    operand_bytes: int
    swizzle_bytes: int  # the operand tiles' swizzle span: one stage's K row

    @property
    def k_tile(self) -> int:
        return self.swizzle_bytes // self.operand_bytes

    def static_k(self) -> int | None:
        """K from the global tensor a copy reads along the gemm's K dimension, when static."""
        for operand, copy in self.operand_copies.items():
            src, _, src_box, dst, _, dst_box = copy_parts(copy)
            if len(src_box) != len(dst_box):
                continue
            extent = ir.MemRefType(src.type).shape[_operand_k_dim(self.gemm, operand)]
            if extent != ir.ShapedType.get_dynamic_size():
                return extent
        return None

    def staged_bytes(self, kernel: ir.Operation) -> int:
        """Shared memory of the epilogue's staged C columns (a TMA store), else 0."""
        store = accumulator_store(self.gemm, kernel)
        decision = None if store is None else read_decision(store, STORE_ATTR)
        if decision is None or decision.get("kind") != "tma":
            return 0
        block_m = ir.MemRefType(self.gemm.operands[2].type).shape[0]
        out_bytes = element_bytes(copy_parts(store)[3]) or 0
        rows = block_m // self.warpgroups
        return self.warpgroups * rows * int(decision["columns"]) * out_bytes

    def shared_bytes(self, stages: int, staged: int) -> int:
        """The wgmma kernel's dynamic shared memory with `stages` ring slots and `staged`
        epilogue bytes."""
        block_m, block_n = ir.MemRefType(self.gemm.operands[2].type).shape
        ring = stages * (block_m + block_n) * self.k_tile * self.operand_bytes
        return ALIGNMENT_SLACK_BYTES + ring + staged


def wgmma_loop(loop: ir.Operation, copies: list[ir.Operation]) -> WgmmaLoop | None:
    """The loop as a TMA ring for one wgmma gemm, or None when its copies are not exactly that
    gemm's shared operand tiles with 16-byte-aligned global rows."""
    gemms = [
        op for op in walk(loop) if op.name == "tile.gemm" and MMA_ATTR in op.attributes
    ]
    mma = [read_decision(gemm, MMA_ATTR) for gemm in gemms]
    wgmma = [
        (gemm, d) for gemm, d in zip(gemms, mma, strict=True) if d and d.get("kind") == "wgmma"
    ]
    if len(wgmma) != 1:
        return None
    gemm, decision = wgmma[0]
    destinations = {copy_parts(copy)[3]: copy for copy in copies}
    operands = {
        number: gemm.operands[number]
        for number in (0, 1)
        if scope(gemm.operands[number]) == "shared"
    }
    a_fill = register_a_fill(gemm)
    if a_fill is not None:
        operands[0] = copy_parts(a_fill)[0]
    if len(destinations) != len(copies) or set(destinations) != set(operands.values()):
        return None
    if not all(row_pitch_aligned(copy_parts(copy)[0]) for copy in copies):
        return None
    dtype = tensorcore_type(ir.MemRefType(gemm.operands[1].type).element_type, OPERAND_TYPES)
    swizzles = {operand_swizzle(value) for value in operands.values()}
    if dtype is None or len(swizzles) != 1 or None in swizzles:
        return None
    return WgmmaLoop(
        gemm,
        {number: destinations[value] for number, value in operands.items()},
        int(decision["warpgroups"]),
        OPERAND_BYTES[dtype],
        swizzles.pop(),
    )


def operand_swizzle(operand: ir.Value) -> int | None:
    """The TMA swizzle span select-shared-swizzle chose for a shared operand tile."""
    alloc = defining_op(operand)
    if alloc is None or SWIZZLE_ATTR not in alloc.attributes:
        return None
    return swizzle_bytes(ir.StringAttr(alloc.attributes[SWIZZLE_ATTR]).value)


def tma_stages(ring: WgmmaLoop, block_k: int, num_stages: int, kernel: ir.Operation,
               max_shared_bytes: int) -> int:
    """The TMA ring depth; 0 when the wgmma kernel cannot run the loop: K not known at compile
    time, fewer than two K tiles, or not even two stages fitting in the block's shared memory."""
    k = ring.static_k()
    if k is None or math.ceil(k / ring.k_tile) < MIN_STAGES:
        return 0
    depth = max(MIN_STAGES, math.ceil(block_k * num_stages / ring.k_tile))
    staged = ring.staged_bytes(kernel)  # the same for every depth: looked up once
    fitting = [
        count
        for count in range(MIN_STAGES, max(depth, MAX_FILLED_STAGES) + 1)
        if ring.shared_bytes(count, staged) <= max_shared_bytes
    ]
    if not fitting:
        return 0
    return min(max(fitting), math.ceil(k / ring.k_tile))


def _iv_extent(loop: ir.Operation, copies: list[ir.Operation]) -> int:
    """A non-gemm loop's tile along the loop: the box extent of the first copy dimension whose
    offset is the induction variable (times a constant), else 1."""
    iv = loop.regions[0].blocks[0].arguments[0]
    for copy in copies:
        _, offsets, box, _, _, _ = copy_parts(copy)
        for offset, extent in zip(offsets, box, strict=True):
            op = defining_op(offset)
            if offset == iv or (op is not None and op.name == "arith.muli" and (
                    iv in list(op.operands))):
                return extent
    return 1


def cp_async_k_tile(loop: ir.Operation, copies: list[ir.Operation]) -> int:
    """KT of a cp.async loop: the user's block_K of its gemm, else the copies' step."""
    gemms = [op for op in walk(loop) if op.name == "tile.gemm"]
    return gemm_k_extent(gemms[0]) if gemms else _iv_extent(loop, copies)


def _cp_async_ready(copy: ir.Operation) -> bool:
    src, src_offsets, src_box, _, _, _ = copy_parts(copy)
    return box_rows_aligned(src, src_offsets, src_box)


@register
@dataclass
class PipelineAsyncCopies(TilePass):
    """Choose the mechanism, depth and K tile of every T.Pipelined loop's copies."""

    name = "pipeline-async-copies"
    summary = "tile.pipelined global->shared copies -> tile.async + tile.pipeline (TMA / cp.async)"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        target = target_description(module, self.arch, self.name)
        tma = target.has_wgmma and target.has_tma and (
            DISABLE_TMA_ATTR not in module.operation.attributes)
        gathers = ASYNC_GATHERS_ATTR in module.operation.attributes
        for kernel in kernels(module):
            if TABLE_LOADS_ATTR in module.operation.attributes:
                mark_table_loads(kernel, module.context)
            for loop in walk(kernel):
                if loop.name == "tile.pipelined":
                    self._schedule(loop, kernel, target, tma, gathers, module.context)

    @staticmethod
    def _schedule(loop: ir.Operation, kernel: ir.Operation, target: TargetDescription, tma: bool,
                  gathers: bool, context: ir.Context) -> None:
        copies = global_copies(loop)
        shared_gathers = _shared_gathers(loop) if gathers else []
        if not copies and not shared_gathers:
            return
        num_stages = ir.IntegerAttr(loop.attributes["num_stages"]).value
        ring = wgmma_loop(loop, copies) if tma and copies else None  # a TMA ring keeps its own
        stages = 0 if ring is None else tma_stages(
            ring, gemm_k_extent(ring.gemm), num_stages, kernel, target.max_shared_bytes)
        if not stages:
            schedule_cp_async(loop, context, shared_gathers)
            return
        pipeline = {"stages": stages, "k_tile": ring.k_tile, "mechanism": TMA_PIPELINE}
        for copy in copies:
            copy.attributes[ASYNC_ATTR] = ir.StringAttr.get("tma", context)
        loop.attributes[PIPELINE_ATTR] = decision_attr(pipeline, context)


def mark_table_loads(kernel: ir.Operation, context: ir.Context) -> None:
    """`tile.table_load` on each load of a global tensor that the function only loads from
    (a paged cache's block table, the sequences' lengths): repeated for a later iteration
    of its loop, by the cp.async pipeline's issue ahead or a TMA ring's producer, it gives
    the same value. A copy into the tensor, an atomic or a view that could write it leaves
    its loads unmarked."""
    for op in walk(kernel):
        if op.name == "memref.load" and scope(op.operands[0]) == "global" and all(
                as_operation(use.owner).name == "memref.load" for use in op.operands[0].uses):
            op.attributes[TABLE_LOAD_ATTR] = ir.UnitAttr.get(context)


def schedule_cp_async(loop: ir.Operation, context: ir.Context,
                      gathers: list[ir.Operation] = ()) -> None:
    """The cp.async schedule of a loop: its 16-byte-row copies and `gathers` go ahead, S =
    max(2, num_stages), KT = the user's block_K (nothing when none qualifies)."""
    copies = global_copies(loop)
    chosen = [copy for copy in copies if _cp_async_ready(copy)] + list(gathers)
    if not chosen:
        return
    num_stages = ir.IntegerAttr(loop.attributes["num_stages"]).value
    pipeline = {
        "stages": max(MIN_STAGES, num_stages),
        "k_tile": cp_async_k_tile(loop, copies),
        "mechanism": "cp.async",
    }
    for copy in chosen:
        copy.attributes[ASYNC_ATTR] = ir.StringAttr.get("cp.async", context)
    loop.attributes[PIPELINE_ATTR] = decision_attr(pipeline, context)
