"""plan-mma-sync-gemms: which tile.gemm ops lower-tile-to-gpu computes with ldmatrix + mma.sync,
one op at a time (sm_80 and the other chips of the mma.sync family; on sm_90a the gemms
infer-mma-layout gave mma.sync, those in a thread range off the hardware's warpgroups).

For a kernel that lower-gemm-to-tensorcore did not replace (a T.Parallel epilogue, a batched
grid, several gemms, A from registers, ...), every gemm that infer-mma-layout gave an mma.sync
`tile.mma` runs on the tensor cores where it stands when:

- A and B are tiles of their own (tile.alloc), B shared, A shared or (tile.mma's a_source =
  "registers") a fragment, C a fragment; the threads running it are exactly the decision's
  warps (every warp issues), and those past them, copies, whole warps too (ldmatrix and
  mma.sync are a whole warp's: a block of 48 threads has a last warp of 16 lanes);
- each warp's tile is a whole number of 16 x 16 pieces and mma.sync's fragments cover the
  accumulator (and a fragment A) over the warp grid (power-of-two pieces per warp);
- a shared operand's rows span a multiple of 32 bytes (the swizzle span is the widest of 128,
  64 and 32 bytes dividing them) and K a multiple of the instruction's 32 bytes;
- no other gemm, annotation or earlier gemm laid out C, a fragment A or an operand tile
  differently.

It records the decisions `compiler/passes/_mma_sync.py` lowers (tile.mma_sync on the gemm,
tile.layout on the accumulator and a fragment A: mma.sync's fragments, which
infer-fragment-layout then propagates; tile.shared_layout on shared operand tiles: the
swizzled layout ldmatrix reads). A fragment A that one copy in the gemm's block fills from a
whole shared tile of its shape and type (attention's P aside, the register-A chain
`T.copy(A_shared, A_frag)`) gets its registers by ldmatrix too: the tile gets A's swizzled
K-major layout and the copy `tile.mma_sync_load` (the gemm's plan). Under the opt-in
`tile.mma_sync_fallback` an operand tile filled from a column slice of a larger shared tile is
read in place (plan-wgmma-gemms' `read_slices_in_place`: ldmatrix addresses the larger tile's
bytes through the slice's layout). Other gemms are left to lower-gemm-simt. The pass does
nothing on targets whose tensor cores are neither the mma.sync family nor wgmma.

With the module's `tile.staged_epilogue` (TILEC_STAGED_EPILOGUE=1, an opt-in until the GPU
measures it), the accumulator's store that select-epilogue-store made `shared-staged` (a
top-level statement of the kernel) becomes two copies through a shared tile of its own, its
rows padded by 16 bytes: the fragment's registers into it (each lane's row of mma.sync's C
fragment lands 4 banks past the row above: no bank conflicts), then the block's 16-byte
vectors from it to global memory, as the whole-kernel sm_80 GEMM stores. Only where the tile is
no larger than the kernel's cp.async rings, whose bytes plan-shared-memory can give it after
the loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir

from tilec.compiler.layouts.linear import LayoutError, LinearLayout
from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._async_pipeline import plan_pipeline
from tilec.compiler.passes._fragment_layout import LAYOUT_ATTR, layout_attr, layout_of
from tilec.compiler.passes._ir_walk import (
    as_operation,
    constant_index,
    copy_parts,
    defining_op,
    kernels,
    scope,
    walk,
)
from tilec.compiler.passes._mma_sync import (
    MMA_SYNC_ATTR,
    MMA_SYNC_LOAD_ATTR,
    PIECE_M,
    WARP_THREADS,
    MmaSyncPlan,
    accumulator_layout,
    operand_a_layout,
    shared_operand_layout,
)
from tilec.compiler.passes._scalar import bit_width, index
from tilec.compiler.passes._scheduling import (
    MMA_SYNC_FALLBACK_ATTR,
    OPERAND_TYPES,
    STAGED_EPILOGUE_ATTR,
    read_decision,
    target_description,
    tensorcore_type,
)
from tilec.compiler.passes._wgmma import SHARED_LAYOUT_ATTR, SharedOperandLayout
from tilec.compiler.passes.infer_fragment_layout import running_threads, threads_at
from tilec.compiler.passes.infer_mma_layout import MMA_ATTR
from tilec.compiler.passes.plan_wgmma_gemms import read_slices_in_place
from tilec.compiler.passes.select_epilogue_store import STORE_ATTR, accumulator_store
from tilec.compiler.tensorcore.dtypes import K_STEP_BYTES, OPERAND_BYTES
from tilec.dialect import AllocOp, CopyOp

MMA_SYNC_FAMILY = "mma.sync"
STAGING_PAD_BYTES = 16  # past each row of a staged store's tile


def _alloc(value: ir.Value) -> ir.Operation | None:
    op = defining_op(value)
    return op if op is not None and op.name == "tile.alloc" else None


@dataclass(frozen=True)
class GemmLayouts:
    """Everything one gemm's plan lays out."""

    plan: MmaSyncPlan
    accumulator: LinearLayout
    a: SharedOperandLayout | LinearLayout  # a fragment A: mma.sync's A fragment
    b: SharedOperandLayout


def _bool(gemm: ir.Operation, name: str) -> bool:
    return ir.BoolAttr(gemm.attributes[name]).value


def gemm_layouts(gemm: ir.Operation, threads: int) -> GemmLayouts | None:
    """The per-op plan of a gemm infer-mma-layout put on mma.sync, None when the rule
    declines (module docstring)."""
    mma = read_decision(gemm, MMA_ATTR)
    if mma is None or mma.get("kind") != MMA_SYNC_FAMILY:
        return None
    a, b, c = gemm.operands[0], gemm.operands[1], gemm.operands[2]
    a_registers = mma.get("a_source") == "registers"
    if any(_alloc(v) is None for v in (a, b, c)) or a == b or scope(c) != "fragment":
        return None
    if scope(b) != "shared" or scope(a) != ("fragment" if a_registers else "shared"):
        return None
    dtype = tensorcore_type(ir.MemRefType(a.type).element_type, OPERAND_TYPES)
    warps_m, warps_n = (int(w) for w in mma["warps"])
    if dtype is None or threads != WARP_THREADS * warps_m * warps_n:
        return None
    plan = MmaSyncPlan(warps_m, warps_n, K_STEP_BYTES // OPERAND_BYTES[dtype], dtype,
                       a_registers)
    block_m, block_n = ir.MemRefType(c.type).shape
    trans_a, trans_b = _bool(gemm, "transpose_a"), _bool(gemm, "transpose_b")
    a_shape, b_shape = ir.MemRefType(a.type).shape, ir.MemRefType(b.type).shape
    block_k = a_shape[0] if trans_a else a_shape[1]
    if (block_m // warps_m) % PIECE_M or (block_n // warps_n) % 16 or block_k % plan.k:
        return None
    element_bytes = plan.element_bytes
    b_layout = shared_operand_layout(tuple(b_shape), element_bytes, trans_b)
    try:
        accumulator = accumulator_layout(block_m, block_n, plan)
        a_layout = operand_a_layout(block_m, block_k, plan) if a_registers else \
            shared_operand_layout(tuple(a_shape), element_bytes, not trans_a)
    except LayoutError:
        return None
    if a_layout is None or b_layout is None:
        return None
    return GemmLayouts(plan, accumulator, a_layout, b_layout)


def _fits(alloc: ir.Operation, layout: SharedOperandLayout | LinearLayout) -> bool:
    """Whether a tile has no layout yet or exactly `layout`."""
    if isinstance(layout, SharedOperandLayout):
        return SharedOperandLayout.of(alloc) in (None, layout)
    return LAYOUT_ATTR not in alloc.attributes or layout_of(alloc.results[0]) == layout


def _fragment_a_source(gemm: ir.Operation) -> tuple[ir.Operation, ir.Operation] | None:
    """(copy, shared tile.alloc) when the gemm's fragment A is written only by one copy in
    the gemm's block from a whole shared tile of the fragment's shape and element type."""
    a = gemm.operands[0]
    writers = [as_operation(use.owner) for use in a.uses
               if as_operation(use.owner).name != "tile.gemm"]
    if len(writers) != 1 or writers[0].name != "tile.copy":
        return None
    copy = writers[0]
    src, src_offsets, src_shape, dst, dst_offsets, dst_shape = copy_parts(copy)
    tile = _alloc(src)
    a_type = ir.MemRefType(a.type)
    if dst != a or copy.block != gemm.block or tile is None or scope(src) != "shared":
        return None
    src_type = ir.MemRefType(src.type)
    whole = list(src_type.shape) == list(a_type.shape) == src_shape == dst_shape
    if not whole or src_type.element_type != a_type.element_type or any(
            constant_index(v) != 0 for v in [*src_offsets, *dst_offsets]):
        return None
    return copy, tile


def _record(alloc: ir.Operation, layout: SharedOperandLayout | LinearLayout,
            context: ir.Context) -> None:
    if isinstance(layout, SharedOperandLayout):
        alloc.attributes[SHARED_LAYOUT_ATTR] = layout.to_attr(context)
    else:
        alloc.attributes[LAYOUT_ATTR] = layout_attr(layout)


@register
@dataclass
class PlanMmaSyncGemms(TilePass):
    """Mark the gemms lower-tile-to-gpu lowers to ldmatrix + mma.sync one by one, and their
    layouts."""

    name = "plan-mma-sync-gemms"
    summary = "tile.gemm with an mma.sync tile.mma -> tile.mma_sync + fragment / operand layouts"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        if target_description(module, self.arch, self.name).mma not in (MMA_SYNC_FAMILY,
                                                                         "wgmma"):
            return  # on wgmma chips: the gemms infer-mma-layout gave mma.sync (off warpgroups)
        context = module.context
        staged = STAGED_EPILOGUE_ATTR in module.operation.attributes
        fallback = MMA_SYNC_FALLBACK_ATTR in module.operation.attributes
        for kernel in kernels(module):
            for gemm in [op for op in walk(kernel) if op.name == "tile.gemm"]:
                if running_threads(gemm, kernel) % WARP_THREADS:
                    continue  # a partial warp cannot run ldmatrix / mma.sync: CUDA cores
                layouts = gemm_layouts(gemm, threads_at(gemm, kernel))
                if layouts is None:
                    continue
                tiles = [_alloc(operand) for operand in gemm.operands[:3]]
                wanted = [layouts.a, layouts.b, layouts.accumulator]
                if not all(_fits(tile, layout) for tile, layout in zip(tiles, wanted,
                                                                         strict=True)):
                    continue
                for tile, layout in zip(tiles, wanted, strict=True):
                    _record(tile, layout, context)
                gemm.attributes[MMA_SYNC_ATTR] = layouts.plan.to_attr(context)
                if layouts.plan.a_registers:
                    self._load_a_by_ldmatrix(gemm, layouts.plan, context)
                if staged:
                    _stage_store(gemm, kernel)
            if fallback:
                read_slices_in_place(kernel, context)

    @staticmethod
    def _load_a_by_ldmatrix(gemm: ir.Operation, plan: MmaSyncPlan,
                            context: ir.Context) -> None:
        """Mark the copy filling a fragment A for ldmatrix, its tile for A's layout."""
        source = _fragment_a_source(gemm)
        if source is None:
            return
        copy, tile = source
        shape = tuple(ir.MemRefType(tile.results[0].type).shape)
        layout = shared_operand_layout(shape, plan.element_bytes, True)
        if layout is None or not _fits(tile, layout):
            return
        _record(tile, layout, context)
        copy.attributes[MMA_SYNC_LOAD_ATTR] = plan.to_attr(context)


def _ring_bytes(kernel: ir.Operation) -> int:
    """The bytes of the kernel's cp.async rings: every slot of every pipelined copy's tile."""
    total = 0
    for loop in walk(kernel):
        plan = plan_pipeline(loop)
        for buffer in [] if plan is None else plan.buffers:
            type_ = ir.MemRefType(buffer.type)
            total += plan.stages * math.prod(type_.shape) * bit_width(type_.element_type) // 8
    return total


def _stage_store(gemm: ir.Operation, kernel: ir.Operation) -> None:
    """The gemm's shared-staged accumulator store through a padded shared tile (module
    docstring), where it is a top-level statement of 2-D fragment tiles of whole bytes no
    larger than the kernel's rings."""
    store = accumulator_store(gemm, kernel)
    fields = None if store is None else read_decision(store, STORE_ATTR)
    if fields is None or fields.get("kind") != "shared-staged" or \
            store.block != kernel.regions[0].blocks[0]:
        return
    src, src_offsets, src_box, dst, dst_offsets, dst_box = copy_parts(store)
    element = ir.MemRefType(dst.type).element_type
    element_bytes = bit_width(element) // 8
    if scope(src) != "fragment" or len(src_box) != 2 or element_bytes == 0:
        return
    rows, columns = src_box
    padded = [rows, columns + STAGING_PAD_BYTES // element_bytes]
    if math.prod(padded) * element_bytes > _ring_bytes(kernel):
        return
    with store.location, ir.InsertionPoint(store):
        tile = AllocOp(ir.MemRefType.get(padded, element,
                                         memory_space=ir.StringAttr.get("shared"))).result
        zeros = [index(0), index(0)]
        CopyOp(src, src_offsets, src_box, tile, zeros, src_box)
        CopyOp(tile, zeros, src_box, dst, dst_offsets, dst_box)
    store.erase()
