"""plan-tma-pipelines: T.Pipelined loops that feed per-op wgmma gemms, fed by TMA instead.

On sm_90a, after plan-wgmma-gemms, a cp.async-scheduled `tile.pipelined` loop whose copies all
fill 128B-swizzled wgmma operand tiles becomes a warp-specialized TMA ring: the loop gets
`tile.tma_ring = {stages = S, consumers = G, overlap, persistent}` and each copy
`tile.tma_load = {box, boxes, swizzle = 128}` (compiler/passes/_tma_ring.py lowers both: a
producer warpgroup beside the kernel's G streams the tiles with cp.async.bulk.tensor through S
slots and two mbarriers per slot, the kernel's warpgroups wait on them and hand slots back).
S is the loop's cp.async depth (a one-gemm loop's more: RING_K_BYTES of K in flight, at most
the loop's trip count, while the epilogue's staging tiles still fit beside it), or fewer
(down to 2) where the kernel's shared memory
(plan-shared-memory's arena, asked with the ring in place) would not hold it: the ring's tiles
share bytes with no other buffer, so a ring can need more than the cp.async pipeline it
replaces, and a loop whose ring fits at no depth keeps its pipeline; `overlap` when the
loop's work is one gemm, whose wgmma group then stays in flight until the next iteration's
(not when the gemm's A is a fragment the loop writes: the next iteration would rewrite the
registers the group in flight reads);
`persistent` when the grid's extents are constants: one block per multiprocessor runs the
grid's tiles in turn, the producer streaming the next tile's operands while the consumers run
the epilogue.

The loop qualifies when
- it stands directly in the kernel (not nested), the kernel's threads are one dimension of
  G warpgroups, the kernel has no other ring and writes no mbarriers or T.ws of its own;
- its statements are the pipelined copies (pipeline-async-copies' cp.async ones), wgmma
  gemms (tile.wgmma), pure index arithmetic and work in registers (tile ops, T.Parallel
  loops and run-time `if`s of them whose buffers are all fragments, locals or global
  tensors: attention's online softmax between its two gemms, its mask of the diagonal
  tile), so no other shared memory is touched between the barriers the ring replaces (a
  reduction or layout conversion that goes through shared scratch brings its own barriers,
  named ones over the consumers), and copies from the ring's tiles into fragments (a
  register-A chain: `T.copy(A_shared, A_frag)` then `T.gemm(A_frag, B_shared, C)`; the
  consumers load their registers from the slot before they hand it back), and, with the
  opt-in `tile.ring_transposes` (TILEC_RING_TRANSPOSES=1, until the H200 has run it),
  T.Parallel loops that read only the ring's tiles and write one shared tile made outside the
  loop which its gemms read: transpose-mn-major-operands' K-major copy of an MN-major 8-bit
  or tf32 tile, made from the slot TMA just filled (the slot's tile gets 128-byte swizzled
  rows here, as a register-A chain's does); the copy's tile gets `tile.ring_copy_slots = 2`:
  two slots the iterations take turns in (plan-shared-memory gives it both, the lowering's
  consumers write and read slot i mod 2), so the gemm's group still stays in flight into the
  next iteration while that one makes its copy, and insert-shared-barriers puts the
  consumers' barriers around the copy;
- every copy reads a tensor parameter (rank <= 5, whose rows are 16-byte multiples when the
  shape is known) in a box of two non-unit dimensions, the destination tile's rows (at most
  256) and its columns (the tensor's last dimension), into the whole of an operand tile laid
  out with a 128- or 64-byte span (TMA's 128B / 64B swizzle writes it as wgmma's
  descriptors read it; a 64-byte span is a K-major tile of 32 16-bit elements, the
  quickstart's block_K) and wgmma's own row order (tile.shared_layout: k_major either way,
  warpgroups = 0); a tile no gemm reads, only such fragment copies (plan-wgmma-gemms gave it
  no layout), gets `tile.shared_layout` here: K-major, 128-byte column boxes (64 where its
  rows are 64 bytes), which the fragment copies then read through as TMA wrote it;
- the loop bounds and the copies' corners are pure arithmetic of values the kernel has
  before the loop, or loads pipeline-async-copies marked `tile.table_load` (a block table,
  the sequences' lengths: the producer recomputes them), and a marked load may stand in the
  loop as a statement of its own.
Any other loop keeps its cp.async pipeline.

The accumulator's store after such a loop (select-epilogue-store's `tile.store = {kind =
"tma", columns = E}`: a copy of a whole fragment, directly in the kernel, into a box of a
tensor parameter with the fragment's rows (at most 256) along one dimension and its columns
along the last) gets `tile.tma_store = {box, columns = E, swizzle = 128, slabs = G}`: the
consumers stage E columns at a time in 128B-swizzled shared tiles, one per warpgroup's slab of
rows (G slabs where the rows split into whole 8-row groups, else 1), and store their 128-byte
column boxes (a slab's rows) by TMA, overlapping the next tile's main loop (`_tma_ring`'s
`store`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._async_pipeline import plan_pipeline, table_load
from tilec.compiler.passes._ir_walk import (
    ancestors,
    as_operation,
    constant_index,
    copy_parts,
    defining_op,
    is_memref,
    kernels,
    scope,
    walk,
)
from tilec.compiler.passes._scalar import bit_width
from tilec.compiler.passes._scheduling import (
    DISABLE_TMA_ATTR,
    REGISTER_A_STEPS_ATTR,
    RING_LAG_ATTR,
    RING_TRANSPOSES_ATTR,
    read_decision,
    target_description,
)
from tilec.compiler.passes._tma_ring import (
    BARRIER_BYTES,
    COPY_SLOTS,
    COPY_SLOTS_ATTR,
    LOAD_ATTR,
    RING_ATTR,
    STORE_ATTR,
    SWIZZLE_BYTES,
    WARPGROUP_THREADS,
    TmaLoad,
    TmaRing,
    TmaStore,
    recomputable,
)
from tilec.compiler.passes._wgmma import (
    SHARED_LAYOUT_ATTR,
    STEP_LOADS_ATTR,
    SWIZZLE_ATOM_BYTES,
    WGMMA_ATTR,
    SharedOperandLayout,
)
from tilec.compiler.passes.pipeline_async_copies import gemm_k_extent
from tilec.compiler.passes.plan_shared_memory import arena_bytes
from tilec.compiler.passes.select_epilogue_store import STORE_ATTR as EPILOGUE_ATTR
from tilec.compiler.tensorcore.dtypes import K_STEP_BYTES

MAX_TENSOR_RANK = 5  # cuTensorMapEncodeTiled's
MAX_BOX = 256  # elements per box dimension
TMA_SPANS = (SWIZZLE_BYTES, SWIZZLE_BYTES // 2)  # operand tiles' swizzle spans TMA fills
OWN_SYNC_OPS = ("tile.alloc_barrier", "tile.warpgroups", "tile.tma_copy")
MIN_RING_STAGES = 2  # a ring is made shallower to fit, down to this (or the loop's own depth)
# a one-gemm loop's ring is made deeper, while shared memory holds it, up to this much of K in
# flight: the whole-kernel GEMM's 8 stages of 128-byte K rows (the quickstart's 3 slots of 32
# f16 columns left TMA's latency exposed: 333 TFLOP/s on the H200 against 645)
RING_K_BYTES = 8 * 128


def _is_pure(op: ir.Operation) -> bool:
    return op.name.split(".")[0] in ("arith", "math", "index") or op.name in (
        "memref.dim", "affine.apply")


def _in_registers(op: ir.Operation) -> bool:
    """A tile op (a T.Parallel with its body), or a run-time `if` of such ops, touching no
    shared memory and running no gemm: every memref it or a nested op reads, writes or makes
    is a fragment, a local or a global tensor."""
    if op.name.split(".")[0] != "tile" and op.name != "scf.if":
        return False
    for inner in (op, *walk(op)):
        if inner.name == "tile.gemm":
            return False
        values = [*inner.operands, *inner.results]
        if any(is_memref(value) and scope(value) == "shared" for value in values):
            return False
    return True


def _ring_tile_load(op: ir.Operation, tiles: list[ir.Value]) -> bool:
    """A copy from one of the ring's tiles into a fragment (a register-A gemm's operand):
    the consumers read it from the slot before they hand the slot back."""
    if op.name != "tile.copy" or len(op.regions):
        return False
    src, dst = op.operands[0], copy_parts(op)[3]
    return any(src == tile for tile in tiles) and is_memref(dst) and scope(dst) == "fragment"


def _ring_tile_transpose(op: ir.Operation, tiles: list[ir.Value], loop: ir.Operation
                         ) -> ir.Value | None:
    """The shared tile a T.Parallel fills from the ring's tiles alone: every load it makes
    reads one of `tiles`, every store writes that one tile, a tile.alloc outside the loop
    (transpose-mn-major-operands' K-major copy of a slot, which a gemm of the loop reads);
    None for any other op."""
    if op.name != "tile.parallel":
        return None
    written = None
    for inner in walk(op):
        if inner.name == "memref.load":
            if not any(inner.operands[0] == tile for tile in tiles):
                return None
        elif inner.name == "memref.store":
            target = inner.operands[1]
            if scope(target) != "shared" or (written is not None and target != written):
                return None
            written = target
        elif inner.name != "tile.yield" and not (_is_pure(inner) and not len(inner.regions)):
            return None
    alloc = None if written is None else defining_op(written)
    if alloc is None or alloc.name != "tile.alloc" or any(
            parent == loop for parent in ancestors(alloc)):
        return None
    return written


def staged_tile_layout(tile: ir.Value) -> SharedOperandLayout | None:
    """The layout TMA fills a ring tile with that no gemm reads (plan-wgmma-gemms left it
    none), read only into fragments: wgmma's K-major layout of its rows, 128-byte column
    boxes (one 64-byte box where a row is 64 bytes); None for a tile of other rows."""
    type_ = ir.MemRefType(tile.type)
    element_bits = bit_width(type_.element_type)
    if type_.rank != 2 or element_bits < 8:
        return None
    row_bytes = type_.shape[1] * element_bits // 8
    span = SWIZZLE_BYTES if row_bytes % SWIZZLE_BYTES == 0 else \
        row_bytes if row_bytes in TMA_SPANS else None
    if span is None:
        return None
    return SharedOperandLayout(tuple(type_.shape), element_bits // 8, True, span)


def tma_load(copy: ir.Operation, layout: SharedOperandLayout | None = None) -> TmaLoad | None:
    """The TMA box of a pipelined copy into a 128B- or 64B-swizzled operand tile (its
    `tile.shared_layout`, else `layout`), None when TMA cannot fill the tile as wgmma reads
    it."""
    src, _, src_shape, dst, dst_offsets, dst_shape = copy_parts(copy)
    alloc = defining_op(dst)
    if alloc is not None and alloc.name == "tile.alloc" and SHARED_LAYOUT_ATTR in \
            alloc.attributes:
        layout = SharedOperandLayout.of(alloc)
    if layout is None or layout.span not in TMA_SPANS or layout.warpgroups:
        return None
    if not isinstance(src, ir.BlockArgument):
        return None  # a view of a parameter, or a buffer of the kernel
    src_type = ir.MemRefType(src.type)
    if src_type.rank > MAX_TENSOR_RANK or src_type.element_type != ir.MemRefType(
            dst.type).element_type:
        return None
    element_bytes = bit_width(src_type.element_type) // 8
    row_elements = src_type.shape[-1]
    if row_elements != ir.ShapedType.get_dynamic_size() and (row_elements * element_bytes) % 16:
        return None  # TMA needs 16-byte row pitches
    rows, columns = layout.shape
    if list(dst_shape) != [rows, columns] or any(constant_index(v) != 0 for v in dst_offsets):
        return None
    dims = [d for d, extent in enumerate(src_shape) if extent != 1]
    if len(dims) != 2 or dims[1] != len(src_shape) - 1:
        return None  # the tile's rows along one dimension, its columns along the last
    if [src_shape[d] for d in dims] != [rows, columns] or rows > MAX_BOX:
        return None
    per_box = layout.span // element_bytes
    box = (per_box, *reversed(src_shape[:-1]))
    return TmaLoad(box, columns // per_box, layout.span)


def tma_store(copy: ir.Operation, loop: ir.Operation, consumers: int = 1) -> TmaStore | None:
    """The staged TMA store of an accumulator copy after the ring `loop`, None when the
    copy does not qualify (module docstring); its box has the rows of one of the `consumers`
    warpgroups' slabs."""
    decision = read_decision(copy, EPILOGUE_ATTR)
    if decision is None or decision.get("kind") != "tma" or copy.block != loop.block or \
            not loop.is_before_in_block(copy):
        return None
    src, src_offsets, src_shape, dst, _, dst_shape = copy_parts(copy)
    if scope(src) != "fragment" or not isinstance(dst, ir.BlockArgument):
        return None
    src_type, dst_type = ir.MemRefType(src.type), ir.MemRefType(dst.type)
    if src_type.rank != 2 or list(src_shape) != list(src_type.shape) or any(
            constant_index(v) != 0 for v in src_offsets) or dst_type.rank > MAX_TENSOR_RANK:
        return None
    element_bits = bit_width(dst_type.element_type)
    if element_bits < 8:
        return None
    rows, columns = src_shape
    per_box = SWIZZLE_BYTES // (element_bits // 8)
    dims = [d for d, extent in enumerate(dst_shape) if extent != 1]
    if len(dims) != 2 or dims[1] != len(dst_shape) - 1 or [dst_shape[d] for d in dims] != [
            rows, columns] or rows > MAX_BOX or columns % per_box:
        return None
    staged = math.gcd(int(decision["columns"]), columns)
    if staged % per_box:
        return None
    slabs = consumers if rows % (consumers * 8) == 0 else 1
    box_rows = [rows // slabs if d == dims[0] else extent for d, extent in enumerate(dst_shape)]
    return TmaStore((per_box, *reversed(box_rows[:-1])), staged, SWIZZLE_BYTES, slabs)


def _threads(kernel: ir.Operation) -> int | None:
    threads = list(ir.DenseI64ArrayAttr(kernel.attributes["threads"]))
    return threads[0] if len(threads) == 1 else None


@dataclass(frozen=True)
class RingPlan:
    ring: TmaRing
    loads: list[tuple[ir.Operation, TmaLoad]]
    # the ring's tiles no gemm reads (a register-A gemm's, read into fragments) and the
    # layout TMA fills them with: tile.shared_layout on their tile.alloc
    staged: list[tuple[ir.Operation, SharedOperandLayout]] = field(default_factory=list)
    step_loads: list[ir.Operation] = field(default_factory=list)  # STEP_LOADS_ATTR copies
    # the allocs of the slots' K-major copies (RING_TRANSPOSES_ATTR): COPY_SLOTS_ATTR
    copy_tiles: list[ir.Operation] = field(default_factory=list)


def plan_ring(loop: ir.Operation, kernel: ir.Operation, limit: int, deep_groups: bool = False,
              register_a_steps: bool = False, transposes: bool = False) -> RingPlan | None:
    """The TMA ring of a loop, None when it does not qualify (module docstring); `limit`: the
    block's shared memory; `deep_groups`: the module opted into RING_LAG_ATTR;
    `register_a_steps`: into REGISTER_A_STEPS_ATTR; `transposes`: into RING_TRANSPOSES_ATTR."""
    if loop.parent is None or as_operation(loop.parent) != kernel:
        return None
    plan = plan_pipeline(loop)
    threads = _threads(kernel)
    if plan is None or threads is None or threads % WARPGROUP_THREADS or any(
            op.name != "tile.copy" for op in plan.copies):  # a gather is no TMA box
        return None
    body = loop.regions[0].blocks[0]
    statements = [as_operation(op) for op in body.operations]
    copies = [op for op in statements if any(op == copy for copy in plan.copies)]
    tiles = [copy_parts(copy)[3] for copy in copies]
    gemms, transposed = [], []
    for op in statements:
        if op.name == "tile.yield" or any(op == copy for copy in copies):
            continue
        if op.name == "tile.gemm" and WGMMA_ATTR in op.attributes:
            gemms.append(op)
        elif transposes and (copied := _ring_tile_transpose(op, tiles, loop)) is not None:
            transposed.append(copied)
        elif not (_is_pure(op) and not len(op.regions)) and not _in_registers(op) and \
                not _ring_tile_load(op, tiles) and not table_load(op):
            return None
    if not gemms or not _read_by_gemms(transposed, gemms, loop):
        return None
    staged = _staged_tiles(copies, gemms)
    if staged is None:
        return None
    loads = [(copy, tma_load(copy, next((layout for alloc, layout in staged
                                         if alloc == defining_op(copy_parts(copy)[3])), None)))
             for copy in copies]
    if any(load is None for _, load in loads):
        return None
    corners = [v for copy in copies for v in copy_parts(copy)[1]]
    candidates = [as_operation(op) for block in (kernel.regions[0].blocks[0], body)
                  for op in block.operations]
    if recomputable(list(loop.operands)[:3] + corners, candidates) is None:
        return None
    persistent = all(constant_index(size) is not None for size in kernel.operands)
    stages = plan.stages - (plan.overlapped is not None)
    fewest = min(stages, MIN_RING_STAGES)
    deepest = stages if len(gemms) != 1 else max(stages, _deepest_ring(loop, gemms[0]))
    staging = _staging_bytes(loop, kernel)
    # a transposed tile has COPY_SLOTS slots, the iterations taking turns: the next
    # iteration's copy is made while this one's gemm is in flight
    overlap = len(gemms) == 1 and not _a_rewritten(gemms[0], loop)
    copy_tiles = [defining_op(tile) for tile in transposed]
    lag = _lag(gemms[0]) if deep_groups and overlap else 1
    step_loads, groups = [], 1
    if register_a_steps and len(gemms) == 1 and not overlap:
        load = _step_loaded_a(gemms[0], loop, tiles)
        if load is not None:  # the gemm loads A per K step: its groups may stay in flight
            step_loads, groups, overlap = [load], _k_steps(gemms[0]), True
    for depth in range(deepest, fewest - 1, -1):
        ring = TmaRing(depth, threads // WARPGROUP_THREADS, overlap, persistent,
                       min(lag, depth - 1), groups)
        candidate = RingPlan(ring, loads, staged, step_loads, copy_tiles)
        # past the loop's own depth the epilogue's staging tile must still fit beside it
        if ring_bytes(loop, candidate) + (staging if depth > stages else 0) <= limit:
            return candidate
    return None


def _read_by_gemms(transposed: list[ir.Value], gemms: list[ir.Operation],
                   loop: ir.Operation) -> bool:
    """Whether each transposed tile is used only in the loop, as a shared operand of its
    gemms and by the T.Parallel writing it."""
    for tile in transposed:
        users = [as_operation(use.owner) for use in tile.uses]
        if not any(tile == operand for gemm in gemms for operand in list(gemm.operands)[:2]):
            return False
        if not all(any(parent == loop for parent in ancestors(user)) for user in users):
            return False
    return True


def _staged_tiles(copies: list[ir.Operation], gemms: list[ir.Operation]
                  ) -> list[tuple[ir.Operation, SharedOperandLayout]] | None:
    """The allocs of the ring's tiles that no gemm reads, each with the layout TMA is to
    fill it with (`staged_tile_layout`); None when one has no such layout. A tile a gemm
    reads keeps plan-wgmma-gemms' layout (tma_load checks it)."""
    staged = []
    for copy in copies:
        alloc = defining_op(copy_parts(copy)[3])
        if alloc is None or alloc.name != "tile.alloc" or SHARED_LAYOUT_ATTR in \
                alloc.attributes or any(alloc == known for known, _ in staged):
            continue
        if any(operand == alloc.results[0] for gemm in gemms for operand in gemm.operands):
            return None  # a gemm's tile without plan-wgmma-gemms' layout
        layout = staged_tile_layout(alloc.results[0])
        if layout is None:
            return None
        staged.append((alloc, layout))
    return staged


def _k_steps(gemm: ir.Operation) -> int:
    """The gemm's 32-byte K steps (one wgmma per atom each)."""
    return _slot_k_bytes(gemm) // K_STEP_BYTES


def _step_loaded_a(gemm: ir.Operation, loop: ir.Operation, tiles: list[ir.Value]
                   ) -> ir.Operation | None:
    """The copy of a whole ring tile into the whole of the gemm's A fragment, its one other
    use in the loop, before the gemm in the loop's body: with REGISTER_A_STEPS_ATTR the gemm
    loads A's registers of each K step from the tile itself, right before that step's wgmmas
    (after waiting for the same step's group of the iteration before), so the copy emits
    nothing. None for any other register A (the blocked layout's reordered rows included)."""
    a = gemm.operands[0]
    fields = read_decision(gemm, WGMMA_ATTR) or {}
    if not fields.get("a_registers") or fields.get("reordered") or scope(a) != "fragment":
        return None
    inside = list(walk(loop))
    users = [as_operation(use.owner) for use in a.uses
             if any(as_operation(use.owner) == op for op in inside)]
    copies = [op for op in users if op != gemm]
    if len(copies) != 1 or not _ring_tile_load(copies[0], tiles):
        return None
    copy = copies[0]
    src, src_offsets, src_shape, dst, dst_offsets, dst_shape = copy_parts(copy)
    whole = list(ir.MemRefType(a.type).shape)
    if dst != a or list(src_shape) != whole or list(dst_shape) != whole or list(
            ir.MemRefType(src.type).shape) != whole or any(
            constant_index(v) != 0 for v in [*src_offsets, *dst_offsets]):
        return None
    if copy.block != gemm.block or not copy.is_before_in_block(gemm):
        return None
    return copy


def _a_rewritten(gemm: ir.Operation, loop: ir.Operation) -> bool:
    """Whether the gemm's A is a fragment the loop touches elsewhere (a register-A chain's
    load): its wgmma must have read those registers before the next iteration rewrites them,
    so its group cannot stay in flight across iterations."""
    a = gemm.operands[0]
    if scope(a) != "fragment":
        return False
    inside = list(walk(loop))
    return any(as_operation(use.owner) != gemm and any(
        as_operation(use.owner) == op for op in inside) for use in a.uses)


def _staging_bytes(loop: ir.Operation, kernel: ir.Operation) -> int:
    """Shared memory the TMA stores after the loop stage their tiles in (1 KiB-aligned)."""
    total = 0
    for copy in (op for op in walk(kernel) if op.name == "tile.copy"):
        store = tma_store(copy, loop)
        if store is not None:
            dst_type = ir.MemRefType(copy_parts(copy)[3].type)
            rows = ir.MemRefType(copy.operands[0].type).shape[0]
            total += rows * store.columns * bit_width(dst_type.element_type) // 8 + \
                SWIZZLE_ATOM_BYTES
    return total


def _slot_k_bytes(gemm: ir.Operation) -> int:
    """Bytes of K one iteration's operand rows hold (the gemm's block_K)."""
    a_type = ir.MemRefType(gemm.operands[0].type)
    return gemm_k_extent(gemm) * max(1, bit_width(a_type.element_type) // 8)


def _lag(gemm: ir.Operation) -> int:
    """The wgmma groups a one-gemm loop leaves in flight under RING_LAG_ATTR: a 128-byte K
    row's worth (one group of 128-byte slots, two of the quickstart's 64-byte ones), so the
    warpgroup issues the next group while as much work as the whole-kernel GEMM's one group
    still runs."""
    return max(1, SWIZZLE_BYTES // _slot_k_bytes(gemm))


def _deepest_ring(loop: ir.Operation, gemm: ir.Operation) -> int:
    """The most slots worth giving a one-gemm loop's ring: RING_K_BYTES of K in flight
    (a slot holds the gemm's block_K), no more slots than the loop has iterations."""
    deepest = max(1, RING_K_BYTES // _slot_k_bytes(gemm))
    lower, upper, step = (constant_index(v) for v in list(loop.operands)[:3])
    if None not in (lower, upper, step) and step > 0:
        deepest = min(deepest, -(-(upper - lower) // step))
    return deepest


def ring_bytes(loop: ir.Operation, plan: RingPlan) -> int:
    """The kernel's shared memory with the planned ring feeding the loop (plan-shared-memory's
    arena, the ring's tiles then living through the kernel once per slot) and the ring's
    mbarriers; the decisions are taken back after."""
    context = loop.context
    _apply(loop, plan, context)
    try:
        kernel = loop.parent
        while as_operation(kernel).name != "tile.kernel":
            kernel = kernel.parent
        return arena_bytes(as_operation(kernel)) + 2 * plan.ring.stages * BARRIER_BYTES
    finally:
        del loop.attributes[RING_ATTR]
        for copy, _ in plan.loads:
            del copy.attributes[LOAD_ATTR]
        for alloc, _ in plan.staged:
            del alloc.attributes[SHARED_LAYOUT_ATTR]
        for copy in plan.step_loads:
            del copy.attributes[STEP_LOADS_ATTR]
        for alloc in plan.copy_tiles:
            del alloc.attributes[COPY_SLOTS_ATTR]


def _apply(loop: ir.Operation, plan: RingPlan, context: ir.Context) -> None:
    """Write the plan's decisions: the ring, each copy's load, the staged tiles' layouts."""
    loop.attributes[RING_ATTR] = plan.ring.to_attr(context)
    for copy, load in plan.loads:
        copy.attributes[LOAD_ATTR] = load.to_attr(context)
    for alloc, layout in plan.staged:
        alloc.attributes[SHARED_LAYOUT_ATTR] = layout.to_attr(context)
    for copy in plan.step_loads:
        copy.attributes[STEP_LOADS_ATTR] = ir.UnitAttr.get(context)
    for alloc in plan.copy_tiles:
        alloc.attributes[COPY_SLOTS_ATTR] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64, context), COPY_SLOTS)


@register
@dataclass
class PlanTmaPipelines(TilePass):
    """Mark the T.Pipelined loops whose operand tiles a producer warpgroup fills by TMA."""

    name = "plan-tma-pipelines"
    summary = "cp.async loops feeding wgmma gemms -> tile.tma_ring + tile.tma_load (sm_90a)"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        target = target_description(module, self.arch, self.name)
        if not (target.has_wgmma and target.has_tma) or \
                DISABLE_TMA_ATTR in module.operation.attributes:
            return
        context = module.context
        for kernel in kernels(module):
            if any(op.name in OWN_SYNC_OPS or RING_ATTR in op.attributes
                   for op in walk(kernel)):
                continue
            deep_groups = RING_LAG_ATTR in module.operation.attributes
            steps = REGISTER_A_STEPS_ATTR in module.operation.attributes
            transposes = RING_TRANSPOSES_ATTR in module.operation.attributes
            plans = [plan for op in walk(kernel) if op.name == "tile.pipelined"
                     and (plan := plan_ring(op, kernel, target.max_shared_bytes, deep_groups,
                                            steps, transposes)) is not None]
            if len(plans) != 1:
                continue  # one producer warpgroup serves one loop
            loop = as_operation(plans[0].loads[0][0].parent)
            _apply(loop, plans[0], context)
            for copy in (op for op in walk(kernel) if op.name == "tile.copy"):
                store = tma_store(copy, loop, plans[0].ring.consumers)
                if store is not None:
                    copy.attributes[STORE_ATTR] = store.to_attr(context)
