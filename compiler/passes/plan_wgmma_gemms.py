"""plan-wgmma-gemms: which tile.gemm ops lower-tile-to-gpu computes with wgmma, one op at a time.

On sm_90a, for a kernel that lower-gemm-to-tensorcore did not replace (any kernel but the
canonical GEMM: an epilogue in T.Parallel, a batched grid, several gemms, ...), every gemm that
infer-mma-layout gave a wgmma `tile.mma` runs on the tensor cores where it stands when:

- A and B are tiles of their own (tile.alloc), A as M x K, or shared as K x M (transpose_A:
  MN-major, 16-bit types, block_M a multiple of 64: 64-element boxes, one 64-row atom each),
  and no other gemm reads them laid out differently; B is shared, A shared or (tile.mma's a_source =
  "registers") a fragment, which gets wgmma's A-operand layout (`operand_a_layout`: for 16-bit
  types the accumulator's registers where its K steps are the accumulator's 8-column groups,
  so the cast accumulator of attention's first gemm is the second's A as it stands); C is a
  fragment without a layout yet, or with the one another such gemm accumulating into it gave
  it;
- the threads running it (the block, its T.ws block's warpgroups or its thread range) are
  exactly the decision's warpgroups (128 threads each: every thread issues), and the block's
  threads past them (a block of 160 runs its last 32 as copies of the first) whole
  warpgroups too, starting on one of the hardware's (warps 4k..4k+3: a range from thread
  32 or 64 holds none, `on_whole_warpgroups`): wgmma is a warpgroup's instruction; a
  decision splitting N (`split = "n"`, the opt-in TILEC_SPLIT_WGMMA_N) has every warpgroup
  read all of A (a fragment A: a copy of it in each warpgroup) and B from its N share on, so
  B's tile must let a descriptor start there (`splits_at`: 8-row multiples K-major, whole
  128-byte column boxes MN-major) and the fragment covers the tile unreordered;
- a K-major tile's rows are a multiple of 32 bytes (the swizzle span is the widest of 128, 64
  and 32 bytes dividing them), an MN-major B's a multiple of 64 elements;
- the operand type has a wgmma: f16 / bf16 (k16), fp8 e4m3 / e5m2 (k32) and float32 read as
  tf32 (k8) into an f32 accumulator, int8 (k32) into an s32 one; every instruction consumes 32
  bytes of K. Only 16-bit operands may be MN-major: an 8-bit or tf32 gemm needs A as M x K and
  B as N x K (transpose_B), else it stays on the CUDA cores (TileLang takes mma.sync there).

A gemm's operand tile that the frontend fills from a column slice of a larger shared tile
(`T.gemm(Q_shared[:, 0:256], KV_shared[:, 0:256], ...)`, `T.gemm(P, KV_shared[:, 256:512],
...)`) is read in place (by wgmma here; by ldmatrix where plan-mma-sync-gemms planned the gemms
under the opt-in tile.mma_sync_fallback, calling `read_slices_in_place` too) when the slice
starts at a whole column box of the larger tile laid out as the slice's tile is (same rows,
same swizzle span: for 16-bit types a multiple of 64 columns of a 128-byte swizzle), covers all
its rows, and nothing writes the larger tile between the copy
and the gemms: the copy gets `tile.read_in_place = {columns, box_bytes}` (it then moves nothing:
_wgmma.read_in_place), the larger tile the slice's layout over its own shape, and the slice's
tile no bytes of its own (plan-shared-memory). A slice of one stage of a 3-d stage buffer
(`KV_shared[stage, :, :256]`, the stage a constant or a loop value) is read in place alike
when a stage is a whole number of 1 KiB swizzle patterns: the buffer gets the slice's layout
stacked over its stages (`StackedOperandLayout`: stage s from s * stage bytes on). Other
slices keep their copy. A tile read
K-major by one gemm and MN-major (transposed) by another is one 128-byte-span layout for both
(`SharedOperandLayout.same_bytes`).

It records the decisions of `compiler/passes/_wgmma.py` (tile.wgmma on the gemm, tile.layout on
the accumulator: wgmma's own fragment, or a blocked one with A's rows reordered for it where
the fragment does not cover the tile; tile.shared_layout on A's and B's tiles) and, since the
whole-kernel TMA ring pipeline-async-copies may have chosen for the loop around the gemm
exists only in that generator, reschedules such a loop as a cp.async pipeline of the user's
depth (which plan-tma-pipelines may then feed by TMA). Other gemms are
left to lower-gemm-simt. The pass does nothing on targets without wgmma (sm_80).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mlir import ir

from tilec.compiler.layouts.linear import LayoutError, LinearLayout
from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._fragment_layout import LAYOUT_ATTR, layout_attr, layout_of
from tilec.compiler.passes._ir_walk import (
    as_operation,
    constant_index,
    copy_parts,
    defining_op,
    enclosing,
    kernels,
    scope,
    walk,
)
from tilec.compiler.passes._mma_sync import MMA_SYNC_ATTR
from tilec.compiler.passes._scheduling import (
    OPERAND_TYPES,
    PIPELINE_ATTR,
    TMA_PIPELINE,
    decision_attr,
    read_decision,
    target_description,
    tensorcore_type,
)
from tilec.compiler.passes._wgmma import (
    ATOM_ROWS,
    IN_PLACE_ATTR,
    SHARED_LAYOUT_ATTR,
    WARPGROUP_THREADS,
    WGMMA_ATTR,
    SharedOperandLayout,
    StackedOperandLayout,
    WgmmaPlan,
    accumulator_layout,
    needs_reordering,
    operand_a_layout,
    operand_layout_of,
)
from tilec.compiler.passes.infer_fragment_layout import on_whole_warpgroups, threads_at
from tilec.compiler.passes.infer_mma_layout import MMA_ATTR
from tilec.compiler.passes.lower_sub_byte_types import multiple_of
from tilec.compiler.passes.pipeline_async_copies import ASYNC_ATTR, schedule_cp_async
from tilec.compiler.tensorcore.dtypes import OPERAND_BYTES

SPANS = (128, 64, 32)


def _alloc(value: ir.Value) -> ir.Operation | None:
    op = defining_op(value)
    return op if op is not None and op.name == "tile.alloc" else None


def _flag(gemm: ir.Operation, name: str) -> bool:
    return name in gemm.attributes and ir.BoolAttr(gemm.attributes[name]).value


def _span(row_bytes: int) -> int | None:
    return next((span for span in SPANS if row_bytes % span == 0), None)


def operand_layouts(gemm: ir.Operation, plan: WgmmaPlan
                    ) -> tuple[SharedOperandLayout | None, SharedOperandLayout] | None:
    """A's (None: from registers) and B's shared layouts for the per-op rule, None when it
    cannot read them."""
    a_type, b_type = ir.MemRefType(gemm.operands[0].type), ir.MemRefType(gemm.operands[1].type)
    element_bytes = OPERAND_BYTES[plan.dtype]
    transposed_a = _flag(gemm, "transpose_a")
    block_m, block_k = reversed(a_type.shape) if transposed_a else a_type.shape
    if block_m % ATOM_ROWS:
        return None
    if transposed_a:  # K x M: MN-major, 64-element boxes, each one 64-row atom
        if plan.a_registers or plan.reordered or element_bytes != 2 or \
                (block_m * element_bytes) % 128:
            return None
        a = SharedOperandLayout(tuple(a_type.shape), element_bytes, False, 128)
    else:
        a_span = _span(block_k * element_bytes)
        if a_span is None:
            return None
        reorder = (plan.warpgroups, plan.m_atoms) if plan.reordered else (0, 0)
        a = None if plan.a_registers else SharedOperandLayout(
            (block_m, block_k), element_bytes, True, a_span, *reorder)
    if _flag(gemm, "transpose_b"):  # N x K: K-major
        b_span = _span(block_k * element_bytes)
        if b_span is None:
            return None
        b = SharedOperandLayout(tuple(b_type.shape), element_bytes, True, b_span)
    else:  # K x N: MN-major, 64-element boxes
        if (b_type.shape[1] * element_bytes) % 128 or element_bytes != 2:
            return None
        b = SharedOperandLayout(tuple(b_type.shape), element_bytes, False, 128)
    if plan.split_n and not b.splits_at(plan.n):
        return None
    return a, b


def gemm_plan(gemm: ir.Operation, threads: int) -> WgmmaPlan | None:
    """The per-op plan of a gemm infer-mma-layout put on wgmma, None when the rule declines."""
    mma = read_decision(gemm, MMA_ATTR)
    if mma is None or mma.get("kind") != "wgmma":
        return None
    a_registers = mma.get("a_source") == "registers"
    transposed_a = _flag(gemm, "transpose_a")
    if transposed_a and a_registers:
        return None
    a, b, c = gemm.operands[0], gemm.operands[1], gemm.operands[2]
    if any(_alloc(v) is None for v in (a, b, c)) or a == b or scope(c) != "fragment":
        return None
    if scope(a) != ("fragment" if a_registers else "shared"):
        return None
    warpgroups = int(mma["warpgroups"])
    split_n = mma.get("split") == "n"
    if threads != WARPGROUP_THREADS * warpgroups:
        return None
    block_m, block_n = ir.MemRefType(c.type).shape
    dtype = tensorcore_type(ir.MemRefType(a.type).element_type, OPERAND_TYPES)
    if dtype is None:
        return None
    block_k = ir.MemRefType(a.type).shape[0 if transposed_a else 1]
    instr = tuple(mma["instr"])
    if split_n:
        reordered = False
        try:
            layout = accumulator_layout(block_m, block_n, warpgroups, False, True)
        except LayoutError:
            return None
    else:
        reordered = needs_reordering(block_m, block_n, block_k, warpgroups,
                                     OPERAND_BYTES[dtype], a_registers)
        layout = accumulator_layout(block_m, block_n, warpgroups, reordered)
    if layout_of(c) not in (None, layout):
        return None  # laid out for another use (a wgmma gemm before this one gives this)
    if split_n:
        return WgmmaPlan(warpgroups, block_m // ATOM_ROWS, block_n // warpgroups,
                         int(instr[2]), dtype, a_registers, split_n=True)
    return WgmmaPlan(warpgroups, block_m // warpgroups // ATOM_ROWS, block_n, int(instr[2]),
                     dtype, a_registers, reordered)


def _fits(alloc: ir.Operation, layout: SharedOperandLayout) -> bool:
    """Whether a tile has no operand layout yet or one with `layout`'s bytes."""
    known = SharedOperandLayout.of(alloc)
    return known is None or known.same_bytes(layout)


def _claim(alloc: ir.Operation, layout: SharedOperandLayout, context: ir.Context) -> bool:
    """Record `layout` on an operand tile; False when another gemm recorded different bytes."""
    known = SharedOperandLayout.of(alloc)
    if known is not None:
        return known.same_bytes(layout)
    alloc.attributes[SHARED_LAYOUT_ATTR] = layout.to_attr(context)
    return True


def _same_bytes(one: SharedOperandLayout | StackedOperandLayout,
                other: SharedOperandLayout | StackedOperandLayout) -> bool:
    """Whether two layouts of one tile or stage buffer place every element alike."""
    if isinstance(one, StackedOperandLayout) or isinstance(other, StackedOperandLayout):
        return isinstance(one, StackedOperandLayout) and \
            isinstance(other, StackedOperandLayout) and one.stages == other.stages and \
            one.tile.same_bytes(other.tile)
    return one.same_bytes(other)


def _on_tensor_cores(gemm: ir.Operation) -> bool:
    """Whether a gemm is planned for wgmma or ldmatrix + mma.sync (both read their shared
    operand tiles through `tile.shared_layout`)."""
    return WGMMA_ATTR in gemm.attributes or MMA_SYNC_ATTR in gemm.attributes


def _slice_fill(tile: ir.Operation) -> tuple[ir.Operation, ir.Operation] | None:
    """(the copy, the larger tile's alloc) where a tensor-core gemm's operand tile may be read
    in place from the shared tile its one filling copy reads (module docstring), else None."""
    layout = SharedOperandLayout.of(tile)
    value = tile.results[0]
    owners = [as_operation(use.owner) for use in value.uses]
    fills = [op for op in owners if op.name == "tile.copy"]
    gemms = [op for op in owners if op.name == "tile.gemm"]
    if layout is None or layout.warpgroups or len(fills) != 1 or \
            len(fills) + len(gemms) != len(owners):
        return None
    fill = fills[0]
    src, src_offsets, src_box, dst, dst_offsets, dst_box = copy_parts(fill)
    source = _alloc(src)
    if dst != value or source is None or scope(src) != "shared" or any(
            not _on_tensor_cores(gemm) or not any(
                value == operand for operand in list(gemm.operands)[:2]) for gemm in gemms):
        return None
    src_type = ir.MemRefType(src.type)
    rows, columns = layout.shape
    per_box = layout.span // layout.element_bytes
    if src_type.rank == 3:  # one stage of a stage buffer: [stage, :, columns]
        if src_box[0] != 1 or not StackedOperandLayout.fits(
                replace(layout, shape=tuple(src_type.shape[1:]))):
            return None
        src_box, src_offsets = src_box[1:], src_offsets[1:]
    if src_type.rank not in (2, 3) or \
            src_type.element_type != ir.MemRefType(value.type).element_type \
            or src_box != [rows, columns] or dst_box != [rows, columns] \
            or src_type.shape[-2] != rows or src_type.shape[-1] % per_box \
            or constant_index(src_offsets[0]) != 0 or not multiple_of(src_offsets[1], per_box) \
            or any(constant_index(offset) != 0 for offset in dst_offsets):
        return None
    block = fill.block
    order = {as_operation(op): n for n, op in enumerate(block.operations)}
    if any(gemm.block != block or order[gemm] < order[fill] for gemm in gemms):
        return None
    last = max(order[gemm] for gemm in gemms)
    between = [op for op, n in order.items() if order[fill] < n < last]
    for op in between:  # the larger tile is only read (by copies) until the last gemm
        for inner in [op, *walk(op)]:
            if any(src == operand for operand in inner.operands) and not (
                    inner.name == "tile.copy" and copy_parts(inner)[3] != src) and not (
                    inner.name == "tile.gemm" and inner.operands[2] != src):
                return None
    return fill, source


def read_slices_in_place(kernel: ir.Operation, context: ir.Context) -> None:
    """Mark the copies whose gemms read the larger tile in place (module docstring)."""
    tiles = [op for op in walk(kernel) if op.name == "tile.alloc" and SharedOperandLayout.of(op)
             is not None and scope(op.results[0]) == "shared"]
    for tile in tiles:
        found = _slice_fill(tile)
        if found is None:
            continue
        fill, source = found
        layout = SharedOperandLayout.of(tile)
        shape = tuple(ir.MemRefType(source.results[0].type).shape)
        whole = SharedOperandLayout(shape[-2:], layout.element_bytes, layout.k_major,
                                    layout.span)
        if len(shape) == 3:
            whole = StackedOperandLayout(shape[0], whole)
        known = operand_layout_of(source)
        if known is None:
            source.attributes[SHARED_LAYOUT_ATTR] = whole.to_attr(context)
        elif not _same_bytes(known, whole):
            continue
        fill.attributes[IN_PLACE_ATTR] = decision_attr({
            "columns": layout.span // layout.element_bytes, "box_bytes": layout.box_bytes},
            context)


@register
@dataclass
class PlanWgmmaGemms(TilePass):
    """Mark the gemms lower-tile-to-gpu lowers to wgmma one by one, and their layouts."""

    name = "plan-wgmma-gemms"
    summary = "tile.gemm with a wgmma tile.mma -> tile.wgmma + accumulator / operand layouts"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        if not target_description(module, self.arch, self.name).has_wgmma:
            return
        context = module.context
        for kernel in kernels(module):
            for gemm in [op for op in walk(kernel) if op.name == "tile.gemm"]:
                if not on_whole_warpgroups(gemm, kernel):
                    continue  # wgmma needs aligned whole warpgroups, copies included
                plan = gemm_plan(gemm, threads_at(gemm, kernel))
                layouts = None if plan is None else operand_layouts(gemm, plan)
                if layouts is None:
                    continue
                a_alloc, b_alloc = _alloc(gemm.operands[0]), _alloc(gemm.operands[1])
                if not (self._a_fits(gemm, a_alloc, layouts[0], plan) and _fits(b_alloc,
                                                                              layouts[1])):
                    continue
                if layouts[0] is None:
                    a_alloc.attributes[LAYOUT_ATTR] = layout_attr(self._a_registers(gemm, plan))
                else:
                    _claim(a_alloc, layouts[0], context)
                _claim(b_alloc, layouts[1], context)
                block_m, block_n = ir.MemRefType(gemm.operands[2].type).shape
                _alloc(gemm.operands[2]).attributes[LAYOUT_ATTR] = layout_attr(
                    accumulator_layout(block_m, block_n, plan.warpgroups, plan.reordered,
                                       plan.split_n))
                gemm.attributes[WGMMA_ATTR] = plan.to_attr(context)
                loop = enclosing(gemm, "tile.pipelined")
                if loop is not None:
                    self._cp_async_loop(loop, context)
            read_slices_in_place(kernel, context)

    @staticmethod
    def _a_registers(gemm: ir.Operation, plan: WgmmaPlan) -> LinearLayout:
        block_m, block_k = ir.MemRefType(gemm.operands[0].type).shape
        return operand_a_layout(block_m, block_k, plan.warpgroups, OPERAND_BYTES[plan.dtype],
                                plan.reordered, plan.split_n)

    def _a_fits(self, gemm: ir.Operation, alloc: ir.Operation,
                layout: SharedOperandLayout | None, plan: WgmmaPlan) -> bool:
        """Whether A's tile has no layout yet or the one this gemm needs."""
        if layout is not None:
            return _fits(alloc, layout)
        return LAYOUT_ATTR not in alloc.attributes or layout_of(alloc.results[0]) == \
            self._a_registers(gemm, plan)

    @staticmethod
    def _cp_async_loop(loop: ir.Operation, context: ir.Context) -> None:
        """A loop scheduled as the whole-kernel generator's TMA ring gets cp.async instead."""
        pipeline = read_decision(loop, PIPELINE_ATTR)
        if pipeline is None or pipeline.get("mechanism") != TMA_PIPELINE:
            return
        del loop.attributes[PIPELINE_ATTR]
        for op in loop.regions[0].blocks[0].operations:
            op = as_operation(op)
            if op.name == "tile.copy" and ASYNC_ATTR in op.attributes:
                del op.attributes[ASYNC_ATTR]
        schedule_cp_async(loop, context)

