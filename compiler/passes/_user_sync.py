"""The CUDA lowering of the synchronization a kernel writes itself (lower-tile-to-gpu's part for
tile.alloc_barrier, tile.mbarrier_*, tile.tma_copy, tile.fence_proxy_async, tile.warpgroups).

- tile.alloc_barrier: 8 bytes of shared memory per mbarrier; thread 0 runs mbarrier.init with
  each arrive count, then fence.mbarrier_init and a block barrier, before any use.
- tile.mbarrier_arrive: mbarrier.arrive from every thread reaching it; wait_parity:
  mbarrier.try_wait.parity in a loop (nvvm's op loops until the phase completed);
  expect_tx: one thread (the first of those reaching it) raises the phase's byte count.
- tile.tma_copy: the threads running it (the block, or a T.ws block's warpgroups) share the
  box's rows out (the box's last dimension, contiguous in the tensor and in the shared tile;
  16-byte chunks of them for a wgmma operand tile) and move each with cp.async.bulk, each row
  raising the barrier's expected bytes by its size first; a row partly or wholly outside the
  tensor, or whose addresses are not 16-byte aligned, is copied by its thread element by
  element (zeros outside), so it never counts as transaction bytes. A barrier over those
  threads follows, so every row's bytes are expected before any of them arrives on the
  mbarrier (one thread issuing a tile's thousand bulk copies alone kept a warp-specialized
  GEMM's producer a hundred times slower than its consumer). The bulk copy needs no tensor map.
- tile.copy marked `tile.cp_async` (T.ptx_cp_async: one thread's own copy of 4, 8 or 16
  bytes, global -> shared): one cp.async to where the shared tile's layout puts the element
  (an element run of it stays whole under the 16-byte-chunk swizzles: its column must be a
  multiple of its length), zero-filled outside the tensor; element by element where the
  tensor's address is misaligned. tile.mbarrier_arrive marked `tile.cp_async_noinc`:
  cp.async.mbarrier.arrive.noinc, the arrival made once this thread's earlier cp.async landed.
- nvvm.barrier marked `tile.sync_grid` (T.sync_grid): a block barrier, then thread 0 of each
  block arrives on a 32-bit counter in global memory (a zero-initialized global of the
  module) and spins until every block has: block (0, 0, 0) adds 2^31 - (blocks - 1), the
  others 1, so the counter's top bit flips once all have arrived and its low bits are back
  to 0 for the next barrier (cooperative groups' scheme). The add is a release and the spin
  an acquire at GPU scope, with fences around them, so every thread's writes before the
  barrier are visible to every thread after it; a block barrier ends it. Every block must be
  resident at once: the gpu.func is marked `tile.cooperative` and the runtime launches it
  cooperatively, checking the grid against what the GPU holds.
- tile.warpgroups: an scf.if on the thread's warpgroup; inside, the block is the listed
  warpgroups (thread index from 0, their thread count), so copies and T.Parallel loops share
  their work out among those threads only, and block barriers become the named barrier
  1 + first warpgroup over those threads. Fragments, T.gemm and T.reduce work there as in the
  whole block: infer-mma-layout, plan-wgmma-gemms and infer-fragment-layout lay them out over
  the warpgroups' threads (a consumer warpgroup's wgmma, its accumulator in its registers).
  The branches of one `if tx < 128: ... elif ...` chain (each after the first marked
  `tile.else_branch` by the frontend) run side by side on their threads, as TileLang's
  if / else does: nothing orders one branch after another, so no block barrier stands between
  them (insert-shared-barriers), which would hang their threads waiting for each other's
  mbarrier arrivals.

The mbarrier waits, transaction bytes, bulk copies and proxy fences need sm_90: on sm_80 they
are a CompileError at their line (mbarrier.init and arrive alone would assemble, but wait for
nothing).

"One thread of those reaching it" needs every thread to reach it: under a condition on the
thread index (other than a T.ws) it is a CompileError, since that thread may not be there.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref, nvvm, scf

from tilec.compiler.passes._builders import typed_view
from tilec.compiler.passes._fragment_layout import default_layout, op_layout, set_layout
from tilec.compiler.passes._ir_walk import as_operation, op_error, scope, walk
from tilec.compiler.passes._scalar import bit_width, index, zero
from tilec.compiler.passes._scheduling import ARCH_ATTR
from tilec.compiler.passes._wgmma import SharedOperandLayout, StackedOperandLayout
from tilec.compiler.passes.lower_sub_byte_types import multiple_of
from tilec.compiler.targets.description import DEFAULT_CUDA_ARCH, TargetDescription, describe

if TYPE_CHECKING:
    from tilec.compiler.passes.lower_tile_to_gpu import KernelLowering

USER_SYNC_OPS = ("tile.alloc_barrier", "tile.mbarrier_arrive", "tile.mbarrier_expect_tx",
                 "tile.mbarrier_wait_parity", "tile.tma_copy", "tile.fence_proxy_async",
                 "tile.warpgroups")
# what sm_80 lacks: mbarrier.try_wait.parity, expect_tx, cp.async.bulk, fence.proxy.async
NEEDS_TMA = {"tile.mbarrier_wait_parity": "T.mbarrier_wait_parity",
             "tile.mbarrier_expect_tx": "T.mbarrier_expect_tx", "tile.tma_copy": "T.tma_copy",
             "tile.fence_proxy_async": "T.fence_proxy_async"}
WARPGROUP_THREADS = 128
BARRIER_BYTES = 8
BULK_ALIGN = 16  # cp.async.bulk: addresses and sizes in multiples of 16 bytes
MAX_TX_BYTES = (1 << 20) - 1
WAIT_TICKS = 10_000_000  # try_wait's suspend-time hint, as CUTLASS
GUARD_ATTR = "tile.warpgroups_guard"
CP_ASYNC_ATTR = "tile.cp_async"  # a tile.copy that is one thread's own cp.async
CP_ASYNC_NOINC_ATTR = "tile.cp_async_noinc"  # a tile.mbarrier_arrive of the thread's cp.async
SYNC_GRID_ATTR = "tile.sync_grid"  # an nvvm.barrier that waits for the whole grid
# a tile.warpgroups that is a later branch of the `if tx < 128: ... elif ...:` chain the
# tile.warpgroups before it starts: a thread runs one branch of the chain, never two in turn
ELSE_BRANCH_ATTR = "tile.else_branch"
COOPERATIVE_ATTR = "tile.cooperative"  # a gpu.func whose blocks must all be resident at once
GRID_COUNTER = "tilec_grid_barrier"
GRID_FLIP = -(1 << 31)  # the counter's top bit, as a signless i32 constant


def lower_user_sync(lowering: KernelLowering, op: ir.Operation) -> None:
    """Lower one of USER_SYNC_OPS at its place (the op is gone afterwards)."""
    name = op.name
    if name in NEEDS_TMA and not _target(op).has_tma:
        raise op_error(op, f"{NEEDS_TMA[name]} needs sm_90 (Hopper's mbarrier transactions, "
                           f"bulk copies and proxy fences); this kernel is compiled for "
                           f"{_target(op).name}")
    with op.location, ir.InsertionPoint(op):
        {
            "tile.alloc_barrier": _alloc_barrier,
            "tile.mbarrier_arrive": _arrive,
            "tile.mbarrier_expect_tx": _expect_tx,
            "tile.mbarrier_wait_parity": _wait_parity,
            "tile.tma_copy": _tma_copy,
            "tile.fence_proxy_async": _fence_proxy_async,
            "tile.warpgroups": _warpgroups,
        }[name](lowering, op)
    if name != "tile.warpgroups":  # its body moved out, the op with it
        op.erase()


def _target(op: ir.Operation) -> TargetDescription:
    """The module's target (its tile.arch attribute, else tilec's default CUDA arch)."""
    top = op
    while top.parent is not None:
        top = as_operation(top.parent)
    arch = top.attributes[ARCH_ATTR] if ARCH_ATTR in top.attributes else None
    return describe(ir.StringAttr(arch).value if arch is not None else DEFAULT_CUDA_ARCH)


def _i32(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), value)


def _pointer(buffer: ir.Value, byte_offset: ir.Value, space: int) -> ir.Value:
    """An !llvm.ptr<space> to `byte_offset` bytes past the start of `buffer`."""
    base = memref.ExtractAlignedPointerAsIndexOp(buffer).result
    address = arith.index_cast(ir.IntegerType.get_signless(64), arith.addi(base, byte_offset))
    return llvm.inttoptr(llvm.PointerType.get(space), address)


def _barrier(op: ir.Operation) -> ir.Value:
    """The shared address of the barrier `op` names (its barrier buffer and index operands)."""
    barriers, position = typed_view(op).barriers, typed_view(op).index
    return _pointer(barriers, arith.muli(position, index(BARRIER_BYTES)), 3)


def _leader(lowering: KernelLowering, op: ir.Operation, what: str) -> ir.Value:
    """True on the first thread of those running `op`; an error when a condition on the thread
    index may keep that thread away."""
    _check_every_thread_reaches(op, f"{what} is issued by the first thread of those running it")
    return arith.cmpi(arith.CmpIPredicate.eq, lowering.tid, index(0))


def _check_every_thread_reaches(op: ir.Operation, how: str) -> None:
    """An error at `op` when it stands under a condition on the thread index (other than a
    T.ws block's): `how` says why every thread running it must reach it."""
    parent = op.parent
    while parent is not None and parent.name != "gpu.func":
        if GUARD_ATTR in parent.attributes:
            return
        if parent.name == "scf.if" and _depends_on_thread(parent.operands[0]):
            raise op_error(op, f"{how}, but it stands under a condition on the thread index: "
                               "put it in a `with T.ws(...)` block or outside the condition")
        parent = parent.parent


def _check_every_block_reaches(op: ir.Operation) -> None:
    """An error at T.sync_grid when a condition or a loop's bounds around it differ between
    the grid's blocks (the block index, or a value computed or loaded from it): the blocks
    that skip it, or reach it fewer times, never arrive, and the others wait forever."""
    parent = op.parent
    while parent is not None and parent.name != "gpu.func":
        if parent.name == "scf.if":
            varying = _depends_on_thread(parent.operands[0], BLOCK_INDEX)
        elif parent.name in ("scf.for", "scf.while"):
            varying = any(_depends_on_thread(v, BLOCK_INDEX) for v in parent.operands)
        else:
            varying = False
        if varying:
            around = ("under a condition that differs" if parent.name == "scf.if"
                      else "in a loop whose bounds differ")
            raise op_error(op, f"T.sync_grid waits for every block of the grid, but it stands "
                               f"{around} between the blocks: those that "
                               f"skip it never arrive and the grid waits forever; every block "
                               f"must reach it the same number of times")
        parent = parent.parent


BLOCK_INDEX = ("gpu.block_id",)


def _depends_on_thread(value: ir.Value, sources: tuple[str, ...] = ("gpu.thread_id",)
                       ) -> bool:
    """Whether `value` is computed (through SSA operands, a load's indices included) from an
    op named in `sources`: the thread index by default."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        owner = current.owner
        if not isinstance(owner, ir.Operation) and not hasattr(owner, "operation"):
            continue  # a block argument
        owner = as_operation(owner)
        if owner.name in sources:
            return True
        key = hash(owner)
        if key in seen:
            continue
        seen.add(key)
        stack.extend(owner.operands)
    return False


def _alloc_barrier(lowering: KernelLowering, op: ir.Operation) -> None:
    counts = list(ir.DenseI64ArrayAttr(op.attributes["arrive_counts"]))
    view = lowering.shared_view([len(counts)], ir.IntegerType.get_signless(64), BARRIER_BYTES)
    first = arith.cmpi(arith.CmpIPredicate.eq, lowering.tid, index(0))
    branch = scf.IfOp(first)
    with ir.InsertionPoint(branch.then_block):
        for n, count in enumerate(counts):
            nvvm.MBarrierInitOp(_pointer(view, index(n * BARRIER_BYTES), 3), _i32(count))
        scf.YieldOp([])
    nvvm.FenceMbarrierInitOp()
    gpu.BarrierOp()
    op.results[0].replace_all_uses_with(view)


def _arrive(lowering: KernelLowering, op: ir.Operation) -> None:
    if CP_ASYNC_NOINC_ATTR in op.attributes:
        nvvm.CpAsyncMBarrierArriveOp(_barrier(op), noinc=True)
        return
    nvvm.MBarrierArriveOp(ir.IntegerType.get_signless(64), _barrier(op))


def _expect_tx(lowering: KernelLowering, op: ir.Operation) -> None:
    bytes_ = typed_view(op).bytes
    arrive = "arrive" in op.attributes
    branch = scf.IfOp(_leader(lowering, op, "T.mbarrier_expect_tx"))
    with ir.InsertionPoint(branch.then_block):
        address = _barrier(op)
        if arrive:
            nvvm.MBarrierArriveExpectTxOp(ir.IntegerType.get_signless(64), address, bytes_)
        else:
            nvvm.MBarrierExpectTxOp(address, bytes_)
        scf.YieldOp([])


def _wait_parity(lowering: KernelLowering, op: ir.Operation) -> None:
    parity = arith.andi(typed_view(op).parity, _i32(1))
    nvvm.MBarrierTryWaitParityOp(_barrier(op), parity, _i32(WAIT_TICKS))


def _fence_proxy_async(lowering: KernelLowering, op: ir.Operation) -> None:
    nvvm.FenceProxyOp(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)


# ----- tile.tma_copy ---------------------------------------------------------------------------
def _tma_copy(lowering: KernelLowering, op: ir.Operation) -> None:
    view = typed_view(op)
    src, dst = view.src, view.dst
    src_offsets, dst_offsets = list(view.src_offsets), list(view.dst_offsets)
    src_shape = list(ir.DenseI64ArrayAttr(op.attributes["src_shape"]))
    dst_shape = list(ir.DenseI64ArrayAttr(op.attributes["dst_shape"]))
    if dst in lowering.rings:
        raise op_error(op, "T.tma_copy into a shared ring tilec pipelines itself is not "
                           "supported")
    element = ir.MemRefType(src.type).element_type
    width = bit_width(element) // 8
    if bit_width(element) % 8:
        raise op_error(op, "T.tma_copy needs whole-byte elements")
    src_dims = [d for d, e in enumerate(src_shape) if e != 1] or [len(src_shape) - 1]
    dst_dims = [d for d, e in enumerate(dst_shape) if e != 1] or [len(dst_shape) - 1]
    extents = [src_shape[d] for d in src_dims]
    if math.prod(extents) * width > MAX_TX_BYTES:
        raise op_error(op, f"T.tma_copy moves {math.prod(extents) * width} bytes; an mbarrier "
                           f"phase counts at most {MAX_TX_BYTES}")
    inner = extents[-1]
    row_bytes = inner * width
    # rows run along the last dimension of both buffers, in 16-byte multiples
    bulk_rows = (src_dims[-1] == len(src_shape) - 1 and dst_dims[-1] == len(dst_shape) - 1
                 and row_bytes % BULK_ALIGN == 0)
    rows = math.prod(extents[:-1])
    if dst in lowering.shared_layouts:
        _tma_copy_to_operand_tile(lowering, op, lowering.shared_layouts[dst][0], src_dims,
                                  dst_dims, extents, element)
        return
    with _shared_out(lowering, op, rows) as flat:
        point = _unflatten(flat, extents[:-1]) + [index(0)]
        src_at = _box_point(src_offsets, src_dims, point)
        dst_at = _box_point(dst_offsets, dst_dims, point)
        src_bytes = arith.muli(_linear(src, src_at), index(width))
        dst_bytes = arith.muli(_linear(dst, dst_at), index(width))
        if bulk_rows:
            inside = _row_inside(src, src_at, inner)
            aligned = arith.andi(_aligned(src, src_bytes), _aligned(dst, dst_bytes))
            fast = scf.IfOp(arith.andi(inside, aligned), has_else=True)
            with ir.InsertionPoint(fast.then_block):
                _bulk_copy(op, src, src_bytes, dst, dst_bytes, row_bytes)
                scf.YieldOp([])
            with ir.InsertionPoint(fast.else_block):
                _copy_row(src, src_at, dst, dst_at, inner, element)
                scf.YieldOp([])
        else:
            _copy_row(src, src_at, dst, dst_at, inner, element)


def _tma_copy_to_operand_tile(lowering: KernelLowering, op: ir.Operation,
                              layout: SharedOperandLayout | StackedOperandLayout,
                              src_dims: list[int], dst_dims: list[int], extents: list[int],
                              element: ir.Type) -> None:
    """T.tma_copy into a wgmma operand tile (swizzled, A's rows reordered: compiler/passes/
    _wgmma.py): its 16-byte chunks stay whole, so each is one bulk copy to where the layout
    puts it (element by element where it leaves the tensor or is misaligned, then fenced for
    the async proxy wgmma reads through)."""
    view = typed_view(op)
    src, dst = view.src, view.dst
    src_offsets, dst_offsets = list(view.src_offsets), list(view.dst_offsets)
    width = bit_width(element) // 8
    chunk = BULK_ALIGN // width  # elements of one 16-byte chunk
    # a column known only as a multiple of the chunk (an unrolled `j * k_tile`) will do
    rank = len(dst_offsets)  # 3: one stage of a stage buffer (StackedOperandLayout)
    if len(dst_dims) != 2 or dst_dims != [rank - 2, rank - 1] or extents[-1] % chunk or \
            rank not in (2, 3) or not multiple_of(dst_offsets[-1], chunk):
        raise op_error(op, "T.tma_copy into a wgmma operand tile copies a 2-d box whose "
                           "columns start and end on 16-byte boundaries")
    rows, chunks = extents[0], extents[1] // chunk
    with _shared_out(lowering, op, rows * chunks) as flat:
        point = [arith.divui(flat, index(chunks)),
                 arith.muli(arith.remui(flat, index(chunks)), index(chunk))]
        src_at = _box_point(src_offsets, src_dims, point)
        dst_at = _box_point(dst_offsets, dst_dims, point)
        src_bytes = arith.muli(_linear(src, src_at), index(width))
        dst_bytes = arith.muli(layout.element_index(*dst_at), index(width))
        fast = scf.IfOp(arith.andi(_row_inside(src, src_at, chunk), _aligned(src, src_bytes)),
                        has_else=True)
        with ir.InsertionPoint(fast.then_block):
            _bulk_copy(op, src, src_bytes, dst, dst_bytes, BULK_ALIGN)
            scf.YieldOp([])
        with ir.InsertionPoint(fast.else_block):
            for step in range(chunk):
                src_index = src_at[:-1] + [arith.addi(src_at[-1], index(step))]
                value = _load_or_zero(src, src_index, element)
                target = layout.element_index(*dst_at[:-1], arith.addi(dst_at[-1], index(step)))
                memref.store(value, dst, [target])
            nvvm.FenceProxyOp(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)
            scf.YieldOp([])


def _bulk_copy(op: ir.Operation, src: ir.Value, src_bytes: ir.Value, dst: ir.Value,
               dst_bytes: ir.Value, size: int) -> None:
    """One cp.async.bulk of `size` bytes from global `src` to shared `dst` (byte offsets into
    each), completing on `op`'s mbarrier: this thread raises the phase's expected bytes by
    `size` first, so the copy's completion never finds the count below zero."""
    barrier = _barrier(op)
    nvvm.MBarrierExpectTxOp(barrier, _i32(size))
    shared = llvm.addrspacecast(llvm.PointerType.get(7), _pointer(dst, dst_bytes, 3))
    nvvm.CpAsyncBulkGlobalToSharedClusterOp(shared, _pointer(src, src_bytes, 1), barrier,
                                            _i32(size))


@contextlib.contextmanager
def _shared_out(lowering: KernelLowering, op: ir.Operation, count: int) -> Iterator[ir.Value]:
    """A loop sharing `count` pieces of a T.tma_copy out over the threads running it (the body
    gets the piece's number), then a barrier over them: every piece's bytes are expected on
    the mbarrier before any of those threads goes on to arrive on it."""
    _check_every_thread_reaches(op, "T.tma_copy is shared out over the threads running it, "
                                    "which then wait for each other")
    loop = scf.ForOp(lowering.tid, index(count), index(lowering.threads))
    with ir.InsertionPoint(loop.body):
        yield loop.induction_variable
        scf.YieldOp([])
    gpu.BarrierOp()


def _load_or_zero(src: ir.Value, at: list[ir.Value], element: ir.Type) -> ir.Value:
    """src[at], zero where `at` leaves the tensor."""
    inside = None
    for d, i in enumerate(at):
        term = arith.cmpi(arith.CmpIPredicate.ult, i, memref.dim(src, index(d)))
        inside = term if inside is None else arith.andi(inside, term)
    read = scf.IfOp(inside, [element], has_else=True)
    with ir.InsertionPoint(read.then_block):
        scf.YieldOp([memref.load(src, at)])
    with ir.InsertionPoint(read.else_block):
        scf.YieldOp([zero(element)])
    return read.results[0]


def _unflatten(flat: ir.Value, shape: list[int]) -> list[ir.Value]:
    point = []
    for extent in reversed(shape):
        point.insert(0, arith.remui(flat, index(extent)))
        flat = arith.divui(flat, index(extent))
    return point


def _box_point(offsets: list[ir.Value], dims: list[int], point: list[ir.Value]
               ) -> list[ir.Value]:
    """The buffer index of the box's squeezed `point`."""
    at = list(offsets)
    for d, p in zip(dims, point, strict=True):
        at[d] = arith.addi(at[d], p)
    return at


def _linear(buffer: ir.Value, at: list[ir.Value]) -> ir.Value:
    """Row-major element offset of `at` in `buffer`."""
    flat = index(0)
    for d, i in enumerate(at):
        flat = arith.addi(arith.muli(flat, memref.dim(buffer, index(d))), i)
    return flat


def _row_inside(src: ir.Value, at: list[ir.Value], inner: int) -> ir.Value:
    last = len(at) - 1
    inside = arith.cmpi(arith.CmpIPredicate.ule, arith.addi(at[last], index(inner)),
                        memref.dim(src, index(last)))
    for d in range(last):
        inside = arith.andi(inside, arith.cmpi(arith.CmpIPredicate.ult, at[d],
                                               memref.dim(src, index(d))))
    return inside


def _aligned(buffer: ir.Value, byte_offset: ir.Value) -> ir.Value:
    address = arith.addi(memref.ExtractAlignedPointerAsIndexOp(buffer).result, byte_offset)
    return arith.cmpi(arith.CmpIPredicate.eq, arith.remui(address, index(BULK_ALIGN)), index(0))


def _copy_row(src: ir.Value, src_at: list[ir.Value], dst: ir.Value, dst_at: list[ir.Value],
              inner: int, element: ir.Type) -> None:
    """The row element by element on this thread, zeros where it leaves the tensor."""
    loop = scf.ForOp(index(0), index(inner), index(1))
    with ir.InsertionPoint(loop.body):
        step = loop.induction_variable
        src_index = src_at[:-1] + [arith.addi(src_at[-1], step)]
        dst_index = dst_at[:-1] + [arith.addi(dst_at[-1], step)]
        memref.store(_load_or_zero(src, src_index, element), dst, dst_index)
        scf.YieldOp([])


# ----- T.sync_grid ------------------------------------------------------------------------------
def lower_sync_grid(lowering: KernelLowering, op: ir.Operation) -> None:
    """A grid-wide barrier (see the module docstring); the op is gone afterwards."""
    _check_every_thread_reaches(op, "T.sync_grid waits for every thread of the grid")
    _check_every_block_reaches(op)
    if lowering.tma_ring is not None and lowering.tma_ring.persistent:
        raise op_error(op, "T.sync_grid in a kernel tilec made persistent (its TMA ring loops "
                           "over tiles) is not supported")
    function = op.parent
    while function.name != "gpu.func":
        function = function.parent
    function.attributes[COOPERATIVE_ATTR] = ir.UnitAttr.get()
    i32 = ir.IntegerType.get_signless(32)
    with op.location, ir.InsertionPoint(op):
        counter = _grid_counter(lowering)
        gpu.BarrierOp()
        leader = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, lowering.tid, index(0)))
        with ir.InsertionPoint(leader.then_block):
            blocks = _product([gpu.grid_dim(d) for d in _AXES])
            first = _all_zero([gpu.block_id(d) for d in _AXES])
            first_share = arith.subi(_i32(GRID_FLIP + 1), arith.index_cast(i32, blocks))
            share = arith.select(first, first_share, _i32(1))
            old = llvm.InlineAsmOp(i32, [counter, share],
                                   "fence.acq_rel.gpu;\n\tatom.add.release.gpu.global.u32 $0, "
                                   "[$1], $2;", "=r,l,r,~{memory}", has_side_effects=True).result
            spin = scf.WhileOp([], [])
            before = spin.before.blocks.append()
            with ir.InsertionPoint(before):
                now = llvm.InlineAsmOp(i32, [counter], "ld.acquire.gpu.global.u32 $0, [$1];",
                                       "=r,l,~{memory}", has_side_effects=True).result
                flipped = arith.andi(arith.xori(old, now), _i32(GRID_FLIP))
                scf.ConditionOp(arith.cmpi(arith.CmpIPredicate.eq, flipped, _i32(0)), [])
            with ir.InsertionPoint(spin.after.blocks.append()):
                scf.YieldOp([])
            llvm.InlineAsmOp(None, [], "fence.acq_rel.gpu;", "~{memory}", has_side_effects=True)
            scf.YieldOp([])
        gpu.BarrierOp()
    op.erase()


_AXES = (gpu.Dimension.x, gpu.Dimension.y, gpu.Dimension.z)


def _grid_counter(lowering: KernelLowering) -> ir.Value:
    """The address of the module's grid-barrier counter (declared on first use)."""
    block = lowering.gpu_block
    known = any(as_operation(o).name == "llvm.mlir.global" and
                ir.StringAttr(as_operation(o).attributes["sym_name"]).value == GRID_COUNTER
                for o in block.operations)
    if not known:
        i32 = ir.IntegerType.get_signless(32)
        with ir.InsertionPoint.at_block_begin(block), ir.Location.unknown():
            llvm.GlobalOp(i32, GRID_COUNTER, ir.Attribute.parse("#llvm.linkage<internal>"),
                          value=ir.IntegerAttr.get(i32, 0), addr_space=1)
    return llvm.mlir_addressof(llvm.PointerType.get(1), GRID_COUNTER)


def _product(values: list[ir.Value]) -> ir.Value:
    result = values[0]
    for value in values[1:]:
        result = arith.muli(result, value)
    return result


def _all_zero(values: list[ir.Value]) -> ir.Value:
    result = None
    for value in values:
        term = arith.cmpi(arith.CmpIPredicate.eq, value, index(0))
        result = term if result is None else arith.andi(result, term)
    return result


# ----- tile.warpgroups -------------------------------------------------------------------------
def _warpgroups(lowering: KernelLowering, op: ir.Operation) -> None:
    from tilec.compiler.passes.lower_tile_to_gpu import move_body_before

    groups = sorted(ir.DenseI64ArrayAttr(op.attributes["groups"]))
    if groups != list(range(groups[0], groups[0] + len(groups))):
        raise op_error(op, f"T.ws over warpgroups {groups} that are not adjacent is not "
                           "supported by tilec")
    first, count = groups[0] * WARPGROUP_THREADS, len(groups) * WARPGROUP_THREADS
    whole = count == lowering.threads
    if not whole:
        _check_partial_body(lowering, op, count)
    tid = lowering.tid
    inside = arith.andi(arith.cmpi(arith.CmpIPredicate.uge, tid, index(first)),
                        arith.cmpi(arith.CmpIPredicate.ult, tid, index(first + count)))
    branch = scf.IfOp(inside)
    branch.operation.attributes[GUARD_ATTR] = ir.UnitAttr.get()
    with ir.InsertionPoint(branch.then_block):
        local = arith.subi(tid, index(first))
        end = as_operation(scf.YieldOp([]))
    moved = move_body_before(op, [], end)
    saved = lowering.tid, lowering.threads, lowering.tid_is_global
    lowering.tid, lowering.threads, lowering.tid_is_global = local, count, whole
    try:
        lowering.lower_block_ops(moved)
    finally:
        lowering.tid, lowering.threads, lowering.tid_is_global = saved
    if whole:
        return
    for barrier in [inner for inner in walk(branch.operation) if inner.name == "gpu.barrier"]:
        with barrier.location, ir.InsertionPoint(barrier):
            nvvm.BarrierOp(None, barrierId=_i32(1 + groups[0]), numberOfThreads=_i32(count))
        barrier.erase()


def _check_partial_body(lowering: KernelLowering, op: ir.Operation, threads: int) -> None:
    """Lay fragment-free T.Parallel loops out over the warpgroups' threads; a fragment the body
    touches must be laid out over them too (infer-fragment-layout lays out a fragment its T.ws
    blocks use over their threads; one laid out over the whole block cannot be followed)."""
    for inner in walk(op):
        for operand in inner.operands:
            fragment = lowering.fragments.get(operand)
            if fragment is not None and fragment.layout.threads != threads:
                raise op_error(inner, f"this fragment is laid out over {fragment.layout.threads} "
                                      f"threads, but the T.ws block using it runs on {threads}")
        layout = op_layout(inner) if inner.name == "tile.parallel" else None
        if layout is not None and layout.threads != threads:
            if any(scope(v) == "fragment" for v in _loaded_buffers(inner)):
                raise op_error(inner, f"this T.Parallel is laid out over {layout.threads} "
                                      f"threads, but the T.ws block around it runs on {threads}")
            extents = tuple(ir.DenseI64ArrayAttr(inner.attributes["extents"]))
            set_layout(inner, default_layout(extents, threads, 16))


def _loaded_buffers(parallel: ir.Operation) -> list[ir.Value]:
    """The buffers a T.Parallel loads from or stores into."""
    return [inner.operands[0] if inner.name == "memref.load" else inner.operands[1]
            for inner in walk(parallel) if inner.name in ("memref.load", "memref.store")]
