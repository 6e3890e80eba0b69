"""lower-tile-to-gpu: a tile kernel as one gpu.func whose threads run the block's work (SIMT).

Input: the frontend's entry function (contract 1) after infer-fragment-layout,
lower-gemm-simt and insert-shared-barriers. Output: a `gpu.container_module` holding
`gpu.module @kernels` with one `gpu.func @<name> kernel`; the host function is dropped (the
runtime launches the kernel itself).

Kernel ABI (what the runtime passes, in this order):
  1. every parameter in the kernel's order: a tensor as one global pointer to its first element
     (`!llvm.ptr<1>`), a scalar as itself (i32, i64, f32, ...);
  2. then, for every tensor parameter in order, each of its dynamic dimensions as i64.
Tensors are contiguous row-major; the kernel rebuilds their memref descriptors from these.
On a target of logical addressing (SPIR-V) a tensor is instead a flat `memref<?xT>` of global
memory, viewed in its shape by a `memref.reinterpret_cast`, and its dynamic dimensions come
as i32: Vulkan's storage buffers are typed arrays, not pointers.

Buffers: shared ones are views into the dynamic shared memory at the offsets plan-shared-memory
gave them in its arena (planned here when it did not run), reductions' and conversions' scratch
and mbarriers (on 8-byte boundaries) after it; the total goes to the kernel's
`tile.shared_bytes` attribute for the launch (with logical addressing each shared buffer and
scratch is a `memref.alloc` of workgroup memory of its own type, and every access is one
element: there is no byte arena to view and no vector view of a scalar buffer); a fragment is a
per-thread register array (`memref.alloca`, every access at a constant index so LLVM keeps it in
registers, but for fragments every thread holds whole) holding the elements its `tile.layout`
gives the thread; local and var buffers are per-thread arrays.

Ops: T.Parallel runs each thread over the points its layout gives it (unrolled when it touches
fragments); copies are cooperative, vectorized up to 16 bytes along the contiguous dimension and
guarded (out-of-bounds global reads give 0, writes are skipped; a vector access falls back to
elements when it is misaligned or partly outside); reductions combine a thread's registers,
then its peers' with warp shuffles or through shared memory; atomics become memref.atomic_rmw.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, builtin, gpu, llvm, memref, nvgpu, nvvm, scf, vector

from tilec.compiler.layouts.emit import (
    bit_coordinates,
    combine_coordinates,
    register_coordinates,
    thread_coordinates,
)
from tilec.compiler.layouts.linear import LayoutError, LinearLayout
from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._async_pipeline import (
    SLOT_ALIGN,
    Gather,
    PipelinedLoop,
    PipelinePlan,
    Ring,
    plan_pipeline,
)
from tilec.compiler.passes._extern import EXTERN_ATTR
from tilec.compiler.passes._fragment_layout import (
    depends_on,
    follows,
    op_layout,
    project,
    register_runs,
    vector_loads,
)
from tilec.compiler.passes._ir_walk import (
    as_operation,
    block_arg_index,
    constant_index,
    copy_parts,
    op_error,
    scope,
    walk,
)
from tilec.compiler.passes._loop_loads import element_address
from tilec.compiler.passes._mfma import MFMA_ATTR, lower_mfma
from tilec.compiler.passes._mma_sync import (
    MMA_SYNC_ATTR,
    MMA_SYNC_LOAD_ATTR,
    lower_mma_sync,
    lower_mma_sync_load,
)
from tilec.compiler.passes._scalar import (
    bit_width,
    cast,
    combine,
    combine_pairwise,
    constant,
    index,
    is_float,
    reduce_init,
    reduce_term,
    zero,
)
from tilec.compiler.passes._scheduling import (
    DRAINED_CHECKS_ATTR,
    VECTOR_LOADS_ATTR,
    read_decision,
    target_description,
)
from tilec.compiler.passes._thread_range import branch_ranges, is_thread_branch, range_warp
from tilec.compiler.passes._tma_ring import (
    CONSUMER_BARRIER,
    COPY_SLOTS,
    COPY_SLOTS_ATTR,
    LOAD_ATTR,
    MAPS_ATTR,
    RING_ATTR,
    SOURCE_ATTR,
    SOURCE_TILE_ATTR,
    STORE_ATTR,
    TILES_ATTR,
    WARPGROUP_THREADS,
    RingLowering,
    SourceTileLayout,
    TmaLoad,
    TmaRing,
    TmaStore,
    grouped_order,
)
from tilec.compiler.passes._user_sync import (
    CP_ASYNC_ATTR,
    SYNC_GRID_ATTR,
    USER_SYNC_OPS,
    lower_sync_grid,
    lower_user_sync,
)
from tilec.compiler.passes._warpgroup_pingpong import Turns
from tilec.compiler.passes._wgmma import (
    IN_PLACE_ATTR,
    STEP_LOADS_ATTR,
    SWIZZLE_ATOM_BYTES,
    WGMMA_ATTR,
    SharedOperandLayout,
    StackedOperandLayout,
    lower_wgmma,
    operand_layout_of,
    operands_fenced,
    read_in_place,
)
from tilec.compiler.passes._wgmma_waits import PendingGroups, opaque_index
from tilec.compiler.passes.lower_sub_byte_types import multiple_of
from tilec.compiler.passes.plan_shared_memory import (
    ARENA_ATTR,
    OFFSET_ATTR,
    SHARED_ALIGN,
    plan_kernel,
)
from tilec.compiler.passes.rasterize_blocks import DEFAULT_GROUP_M, RASTER_ATTR
from tilec.compiler.passes.select_shared_swizzle import (
    SWIZZLE_ATTR,
    TRANSPOSE_SWIZZLE,
    TransposedTile,
)
from tilec.errors import CompileError

# per-thread arrays (a fragment's registers, T.alloc_local) are 16-byte aligned: copies move
# their elements in vectors of up to 16 bytes, which, where an array stays in local memory
# (indexed at run time), are st.local.v4 / ld.local.v4 and fault on a smaller alignment
PER_THREAD_ALIGN = 16
# named barriers of branches on the thread index: 9 to 15 (below: T.ws blocks, 1 + warpgroup,
# the TMA ring's consumers and slabs, ping-pong turns)
FIRST_BRANCH_BARRIER = 8
LAST_BARRIER_ID = 15

WORKGROUP = "#gpu.address_space<workgroup>"
UNROLL_LIMIT = 16  # a T.Parallel without fragments loops past this many registers (vectors)
MAX_FRAGMENT_REGISTERS = 4096  # 16x the register file a thread can have; code per register
COPY_UNROLL_LIMIT = 8  # a pipelined copy of at most this many chunks per thread is unrolled
UNROLL_OPS_LIMIT = 4096  # ops a T.unroll may copy out; past this it stays a loop (see lower_loop)
COPY_UNROLL_LIMIT = 8  # a global/shared copy of at most this many vectors per thread is unrolled
# a copy into or out of a thread's own buffer of at most this many chunks (vectors, or elements
# where the alignment allows none) is unrolled: indexed at constants, the buffer stays in
# registers, where one loop indexing it anywhere in the kernel puts it in local memory
PER_THREAD_COPY_UNROLL_LIMIT = 128


@dataclass
class Fragment:
    """A fragment's register array and its layout."""

    registers: ir.Value
    layout: LinearLayout

    def register_of(self, coordinate: tuple[int, ...]) -> int | None:
        """The register holding `coordinate` in the thread whose shift is zero, i.e. the
        register every thread uses for its own element at that register coordinate."""
        if not hasattr(self, "_table"):
            self._table = {self.layout.register_coordinate(r): r
                           for r in range(self.layout.num_registers)}
        return self._table.get(coordinate)

    def load(self, slot: int | ir.Value) -> ir.Value:
        return memref.load(self.registers, [index(slot) if isinstance(slot, int) else slot])

    def store(self, value: ir.Value, slot: int | ir.Value) -> None:
        memref.store(value, self.registers, [index(slot) if isinstance(slot, int) else slot])


def swizzle_of(alloc: ir.Operation) -> str | None:
    """The tile.swizzle select-shared-swizzle recorded on a tile.alloc, if any."""
    if SWIZZLE_ATTR not in alloc.attributes:
        return None
    return ir.StringAttr(alloc.attributes[SWIZZLE_ATTR]).value


def fail(op: ir.Operation, message: str) -> CompileError:
    return op_error(op, message)


def element_bytes(type_: ir.Type) -> int:
    return max(1, bit_width(type_) // 8)


def memref_type(value: ir.Value) -> ir.MemRefType:
    return ir.MemRefType(value.type)


def all_of(conditions: list[ir.Value]) -> ir.Value | None:
    result = None
    for condition in conditions:
        result = condition if result is None else arith.andi(result, condition)
    return result


def cmp(predicate: str, left: ir.Value, right: ir.Value) -> ir.Value:
    return arith.cmpi(getattr(arith.CmpIPredicate, predicate), left, right)



def if_value(condition: ir.Value | None, type_: ir.Type, then: Callable[[], ir.Value],
             otherwise: Callable[[], ir.Value]) -> ir.Value:
    """then() where condition holds, else otherwise(), as an scf.if (no branch when None)."""
    if condition is None:
        return then()
    branch = scf.IfOp(condition, [type_], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([then()])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([otherwise()])
    return branch.results[0]


def guarded(condition: ir.Value | None, body: Callable[[], None]) -> None:
    """Run body() only where condition holds."""
    if condition is None:
        body()
        return
    branch = scf.IfOp(condition)
    with ir.InsertionPoint(branch.then_block):
        body()
        scf.YieldOp([])


def add_index(base: ir.Value, offset: int | ir.Value) -> ir.Value:
    if isinstance(offset, int):
        if offset == 0:
            return base
        offset = index(offset)
    if constant_index(base) == 0:
        return offset
    return arith.addi(base, offset)


def box_dims(shape: list[int]) -> list[int]:
    """The dimensions of a copy box that are not of extent 1 (the last one if all are)."""
    dims = [d for d, extent in enumerate(shape) if extent != 1]
    return dims or [len(shape) - 1]


def move_body_before(holder: ir.Operation, values: list[ir.Value], anchor: ir.Operation
                     ) -> list[ir.Operation]:
    body = holder.regions[0].blocks[0]
    for argument, value in zip(body.arguments, values, strict=True):
        argument.replace_all_uses_with(value)
    moved = []
    for inner in list(body.operations):
        inner = as_operation(inner)
        if inner.name in ("tile.yield", "scf.yield"):
            continue
        inner.move_before(anchor)
        moved.append(inner)
    holder.erase()
    return moved


def _unique(values: list[ir.Value]) -> list[ir.Value]:
    kept: list[ir.Value] = []
    for value in values:
        if not any(value == known for known in kept):
            kept.append(value)
    return kept


def frozen(loaded: ir.Value) -> ir.Value:
    """`loaded` (a vector) through llvm.freeze; a vector of 8-bit floats, which have no LLVM
    type of their own until the LLVM lowering makes them integers, is frozen as the integers
    of its width, so no type conversion is left behind around the freeze."""
    vector_type = ir.VectorType(loaded.type)
    element = vector_type.element_type
    if not (isinstance(element, ir.FloatType) and element.width < 16):
        return llvm.freeze(loaded)
    bits = ir.VectorType.get(vector_type.shape, ir.IntegerType.get_signless(element.width))
    return arith.bitcast(vector_type, llvm.freeze(arith.bitcast(bits, loaded)))


class KernelLowering:
    """Lowers one entry function (its tile.kernel) into a gpu.func inside `gpu_block`."""

    def __init__(self, func: ir.Operation, kernel: ir.Operation, gpu_block: ir.Block,
                 warp_size: int, max_shared_bytes: int, vector_loads: bool = False,
                 logical_addressing: bool = False, range_warp: int = 0,
                 l2_prefetch: bool = False, drained_checks: bool = False):
        self.func = func
        self.kernel = kernel
        self.gpu_block = gpu_block
        self.warp_size = warp_size  # a shuffle's width: the target's warp (wavefront)
        self.range_warp = range_warp  # branches on the thread index (_thread_range.py)
        self.max_shared_bytes = max_shared_bytes  # a block's, on the target
        self.logical = logical_addressing  # typed buffers only (SPIR-V): see the module doc
        # T.Parallel's global reads as vectors (opt-in; never with logical addressing)
        self.vector_loads = vector_loads and not logical_addressing
        self.vector_bytes = 0 if logical_addressing else 16  # the widest access of a copy
        self.l2_prefetch = l2_prefetch  # memref.prefetch of a tensor as prefetch.global.L2
        self.block_size = list(ir.DenseI64ArrayAttr(kernel.attributes["threads"]))
        self.threads = math.prod(self.block_size)
        self.fragments: dict[ir.Value, Fragment] = {}
        self.per_thread: set[ir.Value] = set()  # local and var buffers, once allocas
        self.pointer_aligned: dict[ir.Value, ir.Value] = {}
        self.view_sizes: dict[ir.Value, list[ir.Value]] = {}  # logical addressing's tensors
        # global buffers whose base and row length a check around the copy being emitted
        # found 16-byte aligned (split_on_alignment)
        self.known_aligned: set[ir.Value] = set()
        # past a loop whose wgmma groups were drained (a cp.async pipeline's), with
        # drained_checks: an alignment check is tested where it stands (alignment_check)
        self.drained_checks = drained_checks
        self.after_wgmma_drain = False
        self.shared_bytes = 0
        self.canonical: ir.Value | None = None
        # (block, buffer, indices) -> the value a store there left, in a T.Parallel with
        # replicas: a replica whose store was skipped reads it back from here
        self.owned_stores: dict[tuple, ir.Value] = {}
        self.rings: dict[ir.Value, Ring] = {}
        # wgmma operand tiles (compiler/passes/_wgmma.py): view -> (layout, fenced for wgmma
        # by the cp.async pipeline filling it)
        self.shared_layouts: dict[ir.Value, tuple[
            SharedOperandLayout | StackedOperandLayout | TransposedTile, bool]] = {}
        self.swizzle_base: ir.Value | None = None
        self.overlapped_gemm: ir.Operation | None = None  # its pipeline waits for its wgmma
        # a fragment A a tile.a_step_loads copy fills: its gemm emits the loads per K step
        # (`load_registers` of the given registers), compiler/passes/_wgmma.py
        self.step_loads: dict[ir.Value, Callable[[list[int]], None]] = {}
        self.turns: Turns | None = None  # a ring loop's consumers taking turns on its gemms
        # a ring loop's body: the deferred gemms' groups in flight (_wgmma_waits)
        self.pending: PendingGroups | None = None
        # a T.Pipelined loop fed by a TMA ring and a producer warpgroup (plan-tma-pipelines)
        self.ring_loop, self.tma_ring = next(
            ((op, ring) for op in walk(kernel) if op.name == "tile.pipelined"
             and (ring := TmaRing.of(op)) is not None), (None, None))
        self.ring_copies = [] if self.ring_loop is None else [
            op for op in map(as_operation, self.ring_loop.regions[0].blocks[0].operations)
            if LOAD_ATTR in op.attributes]
        # the accumulator stores after it, by TMA from a staging tile (plan-tma-pipelines)
        self.store_copies = [] if self.ring_loop is None else [
            op for op in walk(kernel) if op.name == "tile.copy" and STORE_ATTR in op.attributes]
        # the epilogue's source tile loaded by the ring's producer (stage-epilogue-source)
        self.source_copies = [] if self.ring_loop is None else [
            op for op in walk(kernel) if op.name == "tile.copy" and SOURCE_ATTR in op.attributes]
        self.ring_lowering: RingLowering | None = None
        # decided on the tile IR, as insert-shared-barriers did (scopes change on the way)
        self.plans: list[tuple[ir.Operation, PipelinePlan]] = [
            (op, plan) for op in walk(kernel) if not self.is_ring_loop(op)
            and (plan := plan_pipeline(op)) is not None]

    def group_m(self) -> int:
        """The grouped block order's rows (rasterize-blocks' decision, else its default)."""
        raster = read_decision(self.kernel, RASTER_ATTR)
        return int(raster["group_m"]) if raster is not None else DEFAULT_GROUP_M

    def grouped_blocks(self) -> bool:
        """Whether the blocks run in rasterize-blocks' grouped order: a TMA ring's kernel that
        is not persistent, or one whose gemms run on mma.sync (the L2 reuse the whole-kernel
        sm_80 GEMM has)."""
        if self.ring_loop is not None:
            return not self.tma_ring.persistent
        return RASTER_ATTR in self.kernel.attributes and any(
            op.name == "tile.gemm" and MMA_SYNC_ATTR in op.attributes for op in walk(self.kernel))

    def known_grid(self) -> list[int] | None:
        """The grid the kernel is launched with where it is known here: every size a
        constant and launched as written (a persistent grid is launched smaller, a SPIR-V
        workgroup count is not ours to state). Its block indices' bounds let LLVM drop the
        guards and zero-trip paths it cannot otherwise rule out: a loop from `bx * 2` to 64
        might run no iteration, and GVN then carried the epilogue's column indices, hoisted
        from the loop, across it in registers (the causal flash backward's spill)."""
        if self.logical or (self.ring_loop is not None and self.tma_ring.persistent):
            return None
        sizes = [constant_index(size) for size in self.kernel.operands]
        if any(size is None or size < 1 for size in sizes):
            return None
        return (sizes + [1, 1])[:3]

    def is_ring_loop(self, op: ir.Operation) -> bool:
        return self.ring_loop is not None and op == self.ring_loop

    # ----- the gpu.func and its prelude -------------------------------------------------
    def build(self) -> None:
        if ARENA_ATTR not in self.kernel.attributes:
            with self.kernel.location:
                plan_kernel(self.kernel)
        func_type = ir.FunctionType(ir.TypeAttr(self.func.attributes["function_type"]).value)
        params = list(func_type.inputs)
        abi = [self.tensor_argument(t) if isinstance(t, ir.MemRefType) else t for t in params]
        dynamic_size = ir.ShapedType.get_dynamic_size()
        dynamic = [(i, d) for i, t in enumerate(params) if isinstance(t, ir.MemRefType)
                   for d, extent in enumerate(t.shape) if extent == dynamic_size]
        abi += [ir.IntegerType.get_signless(32 if self.logical else 64)] * len(dynamic)
        maps_at = len(abi)
        abi += [llvm.PointerType.get()] * len(self.map_copies)  # TMA maps
        name = ir.StringAttr(self.func.attributes["sym_name"]).value
        block_size = (self.block_size + [1, 1])[:3]
        if self.ring_loop is not None:  # the producer warpgroup
            block_size[0] += WARPGROUP_THREADS
        with self.func.location, ir.InsertionPoint(self.gpu_block):
            gpu_func = gpu.GPUFuncOp(ir.TypeAttr.get(ir.FunctionType.get(abi, [])),
                                     sym_name=name, kernel=True, known_block_size=block_size,
                                     known_grid_size=self.known_grid())
            entry = gpu_func.regions[0].blocks.append(*abi)
            with ir.InsertionPoint(entry):
                self.ret = as_operation(gpu.ReturnOp([]))
        self.gpu_func = as_operation(gpu_func)
        if self.map_copies:
            self.gpu_func.attributes[MAPS_ATTR] = self.tensor_maps_attr()
        with self.func.location, ir.InsertionPoint(self.ret):
            self.prelude(params, entry, dynamic)
        self.move_kernel_body()
        with self.func.location, ir.InsertionPoint(self.ret):
            self.open_arena()
        self.hoist_allocs()
        if self.ring_loop is None:
            self.lower_block_ops(self.body_ops)
        else:
            self.lower_with_producer(entry.arguments[maps_at:])
        self.fold_tensor_dims()
        for old in self.fragment_allocs:
            if list(old.results[0].uses):
                raise fail(old, "a fragment is used where the CUDA lowering cannot follow it")
            old.erase()
        self.gpu_func.attributes["tile.shared_bytes"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), self.shared_bytes)
        self.func.erase()

    def tensor_argument(self, type_: ir.MemRefType) -> ir.Type:
        """How a tensor parameter enters the gpu.func: a global pointer, or with logical
        addressing a flat array of its elements in global memory."""
        if not self.logical:
            return llvm.PointerType.get(1)
        extent = math.prod(type_.shape) if type_.has_static_shape else \
            ir.ShapedType.get_dynamic_size()
        return ir.MemRefType.get([extent], type_.element_type,
                                 memory_space=ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                                 1))

    def tensor_view(self, flat: ir.Value, type_: ir.MemRefType,
                    sizes: list[ir.Value]) -> ir.Value:
        """A flat tensor argument in its shape (row-major), for logical addressing: static
        sizes and strides where the type has them, else the dimensions passed in."""
        dynamic = ir.ShapedType.get_dynamic_size()
        static_sizes, dynamic_sizes, static_strides, dynamic_strides = [], [], [], []
        stride: int | ir.Value = 1
        strides = []
        for d in reversed(range(type_.rank)):
            strides.append(stride)
            extent = type_.shape[d]
            if extent != dynamic:
                stride = stride * extent if isinstance(stride, int) else arith.muli(
                    stride, index(extent))
            else:
                stride = arith.muli(index(stride) if isinstance(stride, int) else stride,
                                    sizes[d])
        for d, extent in enumerate(type_.shape):
            static_sizes.append(extent)
            if extent == dynamic:
                dynamic_sizes.append(sizes[d])
        for value in reversed(strides):
            static_strides.append(value if isinstance(value, int) else dynamic)
            if not isinstance(value, int):
                dynamic_strides.append(value)
        view_type = ir.MemRefType.get(type_.shape, type_.element_type,
                                      memory_space=ir.MemRefType(flat.type).memory_space)
        return memref.reinterpret_cast(view_type, flat, [], dynamic_sizes, dynamic_strides,
                                       [0], static_sizes, static_strides)

    def fold_tensor_dims(self) -> None:
        """memref.dim of a tensor's view is the size it was made with: SPIR-V cannot ask a
        storage buffer for the extent of one of its dimensions."""
        if not self.view_sizes:  # no tensor views (physical addressing): nothing to fold
            return
        for op in [op for op in walk(self.gpu_func) if op.name == "memref.dim"]:
            if op.operands[0] not in self.view_sizes:
                continue
            dim = constant_index(op.operands[1])
            if dim is None:
                raise fail(op, "a tensor's extent along a dimension known only at run time")
            op.results[0].replace_all_uses_with(self.view_sizes[op.operands[0]][dim])
            op.erase()

    @property
    def map_copies(self) -> list[ir.Operation]:
        """The copies that go through a tensor map, in the order of their map arguments: the
        ring's loads, the epilogue source's, the accumulator's stores."""
        return self.ring_copies + self.source_copies + self.store_copies

    def tensor_maps_attr(self) -> ir.Attribute:
        """What the launch encodes for each tensor-map argument: the tensor parameter, the
        box and the swizzle of the copy that loads (stores) through it."""
        entries = []
        for copy in self.map_copies:
            loads = copy not in self.store_copies
            attribute = SOURCE_ATTR if copy in self.source_copies else LOAD_ATTR
            tensor = copy_parts(copy)[0 if loads else 3]
            if not isinstance(tensor, ir.BlockArgument) or tensor.owner != \
                    self.func.regions[0].blocks[0]:
                raise fail(copy, f"a {attribute if loads else STORE_ATTR} copy must "
                                 f"{'read' if loads else 'write'} a tensor parameter")
            spec = TmaLoad.of(copy, attribute) if loads else TmaStore.of(copy)
            i64 = ir.IntegerType.get_signless(64)
            entries.append(ir.DictAttr.get({
                "param": ir.IntegerAttr.get(i64, tensor.arg_number),
                "box": ir.DenseI64ArrayAttr.get(list(spec.box)),
                "swizzle": ir.IntegerAttr.get(i64, spec.swizzle)}))
        return ir.ArrayAttr.get(entries)

    def lower_with_producer(self, maps: list[ir.Value]) -> None:
        """The kernel's statements on its warpgroups, a producer warpgroup beside them
        feeding the ring loop (compiler/passes/_tma_ring.py); the statements' block barriers
        become named barriers over the consumers."""
        if len(self.source_copies) > 1:
            raise fail(self.source_copies[1], f"a {RING_ATTR} loop's producer loads one "
                                              f"{SOURCE_ATTR} tile (stage-epilogue-source "
                                              "makes one)")
        loads, sources = len(self.ring_copies), len(self.ring_copies + self.source_copies)
        self.ring_lowering = RingLowering(
            self, self.ring_loop, self.tma_ring,
            list(zip(self.ring_copies, maps[:loads], strict=True)),
            list(zip(self.store_copies, maps[sources:], strict=True)),
            list(zip(self.source_copies, maps[loads:sources], strict=True)))
        with self.ring_loop.location, ir.InsertionPoint(self.ret):
            self.ring_lowering.reserve_staging(self.fragments, self.max_shared_bytes)
            self.ring_lowering.init_barriers()
            grid = None
            if self.tma_ring.persistent:
                grid = [constant_index(size) for size in self.kernel.operands]
                self.gpu_func.attributes[TILES_ATTR] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(64), math.prod(grid))
            branch = self.ring_lowering.split(self.body_ops, self.block_ids, grid,
                                              self.group_m())
        released = self.source_release_point()
        self.lower_block_ops(self.body_ops)
        if released is not None:
            with released.location, ir.InsertionPoint(released):
                self.ring_lowering.release_source()
            released.erase()
        with self.func.location, ir.InsertionPoint(self.ret):
            self.ring_lowering.drain_stores()
        # the producer's side has no block barrier
        for barrier in [op for op in walk(as_operation(branch)) if op.name == "gpu.barrier"]:
            with barrier.location, ir.InsertionPoint(barrier):
                nvvm.BarrierOp(None, barrierId=constant(ir.IntegerType.get_signless(32),
                                                        CONSUMER_BARRIER),
                               numberOfThreads=constant(ir.IntegerType.get_signless(32),
                                                        self.threads))
            barrier.erase()

    def source_release_point(self) -> ir.Operation | None:
        """A placeholder op right after the last of the kernel's statements that reads the
        epilogue source tile, where its slots go back to the producer once the statements
        are lowered; None without a source."""
        if not self.source_copies:
            return None
        tile = copy_parts(self.source_copies[0])[3]
        readers = [n for n, op in enumerate(self.body_ops)
                   if any(inner.operands[0] == tile for inner in walk(op)
                          if inner.name == "memref.load")]
        if not readers:
            raise fail(self.source_copies[0], f"a {SOURCE_ATTR} copy's tile is read by no "
                                              "statement")
        with self.body_ops[readers[-1]].location, ir.InsertionPoint.after(
                self.body_ops[readers[-1]]):
            return as_operation(index(0).owner)

    def prelude(self, params: list[ir.Type], entry: ir.Block, dynamic: list) -> None:
        i64 = ir.IntegerType.get_signless(64)
        dims = {key: entry.arguments[len(params) + n] for n, key in enumerate(dynamic)}
        old_args = self.func.regions[0].blocks[0].arguments
        self.mapping: dict[ir.Value, ir.Value] = {}
        for i, type_ in enumerate(params):
            if not isinstance(type_, ir.MemRefType):
                self.mapping[old_args[i]] = entry.arguments[i]
                continue
            if self.logical:
                sizes = [arith.index_cast(ir.IndexType.get(), dims[(i, d)])
                         if (i, d) in dims else index(extent)
                         for d, extent in enumerate(type_.shape)]
                buffer = self.tensor_view(entry.arguments[i], type_, sizes)
                self.view_sizes[buffer] = sizes
                self.mapping[old_args[i]] = buffer
                self.pointer_aligned[buffer] = arith.constant(ir.IntegerType.get_signless(1), 0)
                continue
            rank = type_.rank
            sizes = [dims[(i, d)] if (i, d) in dims else constant(i64, extent)
                     for d, extent in enumerate(type_.shape)]
            descriptor_type = ir.Type.parse(
                "!llvm.struct<(ptr<1>, ptr<1>, i64"
                + (f", array<{rank} x i64>, array<{rank} x i64>" if rank else "") + ")>")
            descriptor = llvm.mlir_poison(descriptor_type)
            pointer = entry.arguments[i]
            descriptor = llvm.insertvalue(descriptor, pointer, [0])
            descriptor = llvm.insertvalue(descriptor, pointer, [1])
            descriptor = llvm.insertvalue(descriptor, constant(i64, 0), [2])
            stride = constant(i64, 1)
            for d in reversed(range(rank)):
                descriptor = llvm.insertvalue(descriptor, sizes[d], [3, d])
                descriptor = llvm.insertvalue(descriptor, stride, [4, d])
                stride = arith.muli(stride, sizes[d])
            global_type = ir.MemRefType.get(type_.shape, type_.element_type,
                                            memory_space=ir.IntegerAttr.get(i64, 1))
            buffer = builtin.UnrealizedConversionCastOp([global_type], [descriptor]).results[0]
            self.mapping[old_args[i]] = buffer
            address = memref.ExtractAlignedPointerAsIndexOp(buffer).result
            self.pointer_aligned[buffer] = cmp("eq", arith.remui(address, index(16)), index(0))
        ids = [gpu.ThreadIdOp(getattr(gpu.Dimension, axis)).result for axis in "xyz"[
            :len(self.block_size)]]
        tid = ids[0]
        scale = 1
        for axis in range(1, len(ids)):
            scale *= self.block_size[axis - 1]
            tid = arith.addi(tid, arith.muli(ids[axis], index(scale)))
        self.tid = tid
        self.tid_is_global = True  # False inside a T.ws block or a branch's thread range
        self.range_first: int | None = None  # inside a thread range: its first thread
        self.branch_barriers = 0
        self.smem = None if self.logical else gpu.DynamicSharedMemoryOp(ir.MemRefType.get(
            [ir.ShapedType.get_dynamic_size()], ir.IntegerType.get_signless(8),
            memory_space=ir.Attribute.parse(WORKGROUP))).result
        body = self.func.regions[0].blocks[0]
        for op in body.operations:
            op = as_operation(op)
            if op == self.kernel:
                break
            clone = as_operation(op.clone(ip=ir.InsertionPoint(self.ret)))
            for n, operand in enumerate(clone.operands):
                if operand in self.mapping:
                    clone.operands[n] = self.mapping[operand]
            for old, new in zip(op.results, clone.results, strict=True):
                self.mapping[old] = new
        self.block_ids = [gpu.BlockIdOp(getattr(gpu.Dimension, axis)).result
                          for axis in "xyz"[:len(self.kernel.regions[0].blocks[0].arguments)]]
        if self.grouped_blocks() and len(self.block_ids) == 2:
            width = gpu.GridDimOp(gpu.Dimension.x).result
            launched = arith.addi(arith.muli(self.block_ids[1], width), self.block_ids[0])
            self.block_ids = grouped_order(launched, width, gpu.GridDimOp(gpu.Dimension.y).result,
                                           self.group_m())

    def move_kernel_body(self) -> None:
        block = self.kernel.regions[0].blocks[0]
        for argument, block_id in zip(block.arguments, self.block_ids, strict=True):
            argument.replace_all_uses_with(block_id)
        self.body_ops = []
        for op in list(block.operations):
            op = as_operation(op)
            if op.name == "tile.yield":
                continue
            op.move_before(self.ret)
            self.body_ops.append(op)
        for old, new in self.mapping.items():
            old.replace_all_uses_with(new)

    def hoist_allocs(self) -> None:
        self.fragment_allocs = []
        allocs = [op for root in self.body_ops for op in [root, *walk(root)]
                  if op.name == "tile.alloc"]
        self.body_ops = [op for op in self.body_ops if op.name != "tile.alloc"]
        for op in allocs:
            old = op.results[0]
            type_ = memref_type(old)
            kind = scope(old)
            with op.location, ir.InsertionPoint(self.ret):
                stages = self.ring_stages(old) if kind == "shared" else 0
                operand = operand_layout_of(op) if kind == "shared" else None
                offset = ir.IntegerAttr(op.attributes[OFFSET_ATTR]).value if (
                    kind == "shared" and not self.logical) else 0
                if self.logical and kind == "shared" and (operand is not None or stages):
                    raise fail(op, "a pipelined or tensor-core operand tile is a view of "
                                   "shared memory as bytes, which a target of logical "
                                   "addressing (SPIR-V) cannot make")
                if self.logical and kind == "shared":
                    new = self.shared_buffer(list(type_.shape), type_.element_type)
                elif SOURCE_TILE_ATTR in op.attributes:
                    new = self.source_tile(op, type_)
                elif operand is not None:
                    new = self.operand_tile(old, operand, type_, stages, offset)
                elif stages:
                    new = self.ring(old, type_, stages, offset)
                elif kind == "shared" and swizzle_of(op) == TRANSPOSE_SWIZZLE:
                    new = self.transposed_tile(op, type_, offset)
                elif kind == "shared":
                    view_type = ir.MemRefType.get(list(type_.shape), type_.element_type,
                                                  memory_space=ir.Attribute.parse(WORKGROUP))
                    new = memref.ViewOp(view_type, self.smem, self.arena_position(offset),
                                        []).result
                elif kind == "fragment":
                    layout = op_layout(op)
                    if layout is None:
                        raise fail(op, "fragment without a layout: run infer-fragment-layout")
                    if layout.num_registers > MAX_FRAGMENT_REGISTERS:
                        raise fail(op, f"the fragment holds {layout.num_registers} elements per "
                                       f"thread; a fragment lives in registers (at most 255 "
                                       f"per thread) and tilec builds at most "
                                       f"{MAX_FRAGMENT_REGISTERS}: use more threads, smaller "
                                       "tiles or T.alloc_shared")
                    registers = memref.AllocaOp(ir.MemRefType.get(
                        [layout.num_registers], type_.element_type), [], [],
                        alignment=PER_THREAD_ALIGN).result
                    self.fragments[old] = Fragment(registers, layout)
                    self.fragment_allocs.append(op)
                    continue
                else:
                    new = memref.AllocaOp(ir.MemRefType.get(list(type_.shape),
                                                            type_.element_type), [], [],
                                          alignment=PER_THREAD_ALIGN).result
                    self.per_thread.add(new)
            old.replace_all_uses_with(new)
            op.erase()
        # buffers first, then the kernel's statements
        for op in self.body_ops:
            op.move_before(self.ret)

    def open_arena(self) -> None:
        """The shared buffers' arena (plan-shared-memory's, planned here when the kernel has
        none) at the window's start, or at its first 1 KiB boundary (found at run time) where
        a wgmma operand tile needs its swizzle atoms aligned; what the lowering reserves later
        (scratch, mbarriers) follows it."""
        if self.logical:  # shared_buffer counts each buffer as it makes it
            return
        arena = ir.DictAttr(self.kernel.attributes[ARENA_ATTR])
        size, align = (ir.IntegerAttr(arena[key]).value for key in ("bytes", "align"))
        if align >= SWIZZLE_ATOM_BYTES:
            start = memref.ExtractAlignedPointerAsIndexOp(self.smem).result
            atom = index(SWIZZLE_ATOM_BYTES)
            self.swizzle_base = arith.remui(arith.subi(atom, arith.remui(start, atom)), atom)
            size += SWIZZLE_ATOM_BYTES
        self.shared_bytes = size

    def arena_position(self, offset: int) -> ir.Value:
        """Where the arena's byte `offset` lies in the dynamic shared window."""
        return index(offset) if self.swizzle_base is None else add_index(self.swizzle_base,
                                                                           offset)

    def reserve_shared(self, size: int, align: int = SHARED_ALIGN) -> int:
        """The offset of `size` new bytes of shared memory (past the arena), on an
        `align`-byte boundary."""
        offset = -(-self.shared_bytes // align) * align
        self.shared_bytes = offset + size
        return offset

    def shared_buffer(self, shape: list[int], element: ir.Type) -> ir.Value:
        """Workgroup memory of its own (logical addressing: a typed array, no arena)."""
        self.shared_bytes += math.prod(shape) * element_bytes(element)
        buffer_type = ir.MemRefType.get(shape, element,
                                        memory_space=ir.Attribute.parse(WORKGROUP))
        return memref.AllocOp(buffer_type, [], []).result

    def shared_view(self, shape: list[int], element: ir.Type, align: int = SHARED_ALIGN
                    ) -> ir.Value:
        """New shared memory past the arena (mbarriers ask only their own 8-byte alignment:
        TileLang's MLA kernels hold two dozen beside an arena a few hundred bytes short of
        the limit)."""
        if self.logical:
            return self.shared_buffer(shape, element)
        offset = self.reserve_shared(math.prod(shape) * element_bytes(element), align)
        view_type = ir.MemRefType.get(shape, element, memory_space=ir.Attribute.parse(WORKGROUP))
        return memref.ViewOp(view_type, self.smem, index(offset), []).result

    def ring_stages(self, buffer: ir.Value) -> int:
        """The slots a pipelined loop gives this shared buffer (0: none, a plain buffer)."""
        if any(buffer == copy_parts(copy)[3] for copy in self.ring_copies):
            return self.tma_ring.stages
        alloc = buffer.owner
        if self.ring_copies and not isinstance(alloc, ir.Block) and \
                COPY_SLOTS_ATTR in as_operation(alloc).attributes:
            return COPY_SLOTS
        return next((plan.stages for _, plan in self.plans
                     if any(buffer == known for known in plan.buffers)), 0)

    def ring(self, old: ir.Value, type_: ir.MemRefType, stages: int, offset: int) -> ir.Value:
        """S slots for a pipelined copy's destination (at the arena's `offset`); the returned
        view (slot 0) stands in for the buffer until its loop gives every use the slot of the
        iteration."""
        size = math.prod(type_.shape) * element_bytes(type_.element_type)
        slot_bytes = -(-size // SLOT_ALIGN) * SLOT_ALIGN
        view_type = ir.MemRefType.get(list(type_.shape), type_.element_type,
                                      memory_space=ir.Attribute.parse(WORKGROUP))
        placeholder = memref.ViewOp(view_type, self.smem, self.arena_position(offset),
                                    []).result
        self.rings[placeholder] = Ring(offset, slot_bytes, view_type, self.swizzle_base)
        for _, plan in self.plans:
            plan.buffers = [placeholder if buffer == old else buffer for buffer in plan.buffers]
        return placeholder

    def operand_tile(self, old: ir.Value, layout: SharedOperandLayout | StackedOperandLayout,
                     type_: ir.MemRefType, stages: int, offset: int) -> ir.Value:
        """A wgmma operand tile (or a stage buffer of them): a flat view (or ring of them) at
        the arena's `offset`, a 1 KiB boundary of the shared window, where its swizzle pattern
        starts; accesses go through its layout."""
        slot_bytes = -(-layout.bytes // SWIZZLE_ATOM_BYTES) * SWIZZLE_ATOM_BYTES
        view_type = ir.MemRefType.get([math.prod(type_.shape)], type_.element_type,
                                      memory_space=ir.Attribute.parse(WORKGROUP))
        view = memref.ViewOp(view_type, self.smem, add_index(self.swizzle_base, offset),
                             []).result
        # wgmma reads through the async proxy, so writers fence; ldmatrix reads as they wrote
        read_by_wgmma = any(WGMMA_ATTR in owner.attributes if owner.name == "tile.gemm" else
                            IN_PLACE_ATTR in owner.attributes
                            for owner in (as_operation(use.owner) for use in old.uses))
        self.shared_layouts[view] = (layout, not read_by_wgmma)
        if stages:
            self.rings[view] = Ring(offset, slot_bytes, view_type, self.swizzle_base)
            for _, plan in self.plans:
                plan.buffers = [view if buffer == old else buffer for buffer in plan.buffers]
        return view

    def source_tile(self, alloc: ir.Operation, type_: ir.MemRefType) -> ir.Value:
        """The epilogue source tile (stage-epilogue-source): no bytes of its own, a flat view
        of the shared window whose accesses go where the ring's lowering puts its boxes."""
        if self.ring_loop is None or not self.source_copies:
            raise fail(alloc, f"a {SOURCE_TILE_ATTR} tile needs a {SOURCE_ATTR} copy after a "
                              f"{RING_ATTR} loop (stage-epilogue-source makes both)")
        element = type_.element_type
        view_type = ir.MemRefType.get([self.max_shared_bytes // element_bytes(element)],
                                      element, memory_space=ir.Attribute.parse(WORKGROUP))
        view = memref.ViewOp(view_type, self.smem, index(0), []).result
        self.shared_layouts[view] = (SourceTileLayout(
            tuple(type_.shape), element_bytes(element), self), True)
        return view

    def transposed_tile(self, alloc: ir.Operation, type_: ir.MemRefType,
                        offset: int) -> ir.Value:
        """A shared tile swizzled for reads across its rows (select-shared-swizzle): a flat
        view at the arena's `offset`, accessed through its TransposedTile layout."""
        layout = TransposedTile.of(alloc)
        if layout is None:
            raise fail(alloc, f'{SWIZZLE_ATTR} = "{TRANSPOSE_SWIZZLE}" on a tile whose rows '
                              "are not a power-of-two count of 16-byte chunks")
        view_type = ir.MemRefType.get([math.prod(type_.shape)], type_.element_type,
                                      memory_space=ir.Attribute.parse(WORKGROUP))
        view = memref.ViewOp(view_type, self.smem, self.arena_position(offset), []).result
        self.shared_layouts[view] = (layout, True)
        return view

    def rank(self, buffer: ir.Value) -> int:
        """The rank the kernel indexes a buffer with (a wgmma operand tile's view is flat)."""
        if buffer in self.shared_layouts:
            return len(self.shared_layouts[buffer][0].shape)
        return memref_type(buffer).rank

    def shared_where(self, buffer: ir.Value, where: list[ir.Value]) -> list[ir.Value]:
        """The index of an access: a wgmma operand tile's through its layout."""
        if buffer not in self.shared_layouts:
            return where
        return [self.shared_layouts[buffer][0].element_index(*where)]

    def scratch(self, elements: int, element: ir.Type) -> ir.Value:
        """Shared memory of its own for one lowered reduction across warps or conversion
        between fragment layouts (a view made where the op is lowered; an unrolled loop's
        copies of the op each get one)."""
        return self.shared_view([elements], element)

    @staticmethod
    def reduce_type(src: ir.Value) -> ir.Type:
        """What a reduction combines and shuffles: narrow floats as f32, narrow integers as
        i32 (shfl.sync moves 32-bit words; an i8 shuffle failed nvvm's verifier)."""
        element = memref_type(src).element_type
        if bit_width(element) < 32:
            return ir.F32Type.get() if is_float(element) else ir.IntegerType.get_signless(32)
        return element

    # ----- statements ------------------------------------------------------------------
    def lower_block_ops(self, ops: list[ir.Operation]) -> None:
        for op in ops:
            self.lower_op(op)

    def lower_op(self, op: ir.Operation) -> None:
        name = op.name
        descends = name == "scf.if" and not is_thread_branch(op, self.range_warp, self.kernel)
        if self.pending is not None:
            with op.location, ir.InsertionPoint(op):
                if descends:
                    self.pending.before_branch(op)
                    self.pending.keep_apart(op)
                else:
                    self.pending.before(op)
        with op.location, ir.InsertionPoint(op):
            if name == "tile.copy":
                self.lower_copy(op)
            elif name == "tile.fill":
                self.lower_fill(op)
            elif name == "tile.parallel":
                self.lower_parallel(op)
                return
            elif name == "tile.pipelined" and self.is_ring_loop(op):
                iv, end = self.ring_lowering.lower_loop()
                self.pending = PendingGroups.of_loop(op)
                with self.ring_lowering.operands_fenced():
                    self.lower_block_ops(move_body_before(op, [iv], end))
                self.ring_lowering.iteration = None  # its loop's, read by the body's gemms
                with end.location, ir.InsertionPoint(end):  # the slot goes back after this
                    self.pending.drain()
                self.pending = None
                return
            elif name == "tile.pipelined" and self.plan_of(op) is not None:
                self.lower_pipelined(op)
                return
            elif name in ("tile.for", "tile.pipelined"):
                self.lower_loop(op)
                return
            elif name == "tile.reduce":
                self.lower_reduce(op)
            elif name == "tile.convert_layout":
                self.convert(op, op.operands[0], op.operands[1])
            elif name == "tile.atomic_add":
                self.lower_atomic(op)
            elif name == "tile.gemm" and WGMMA_ATTR in op.attributes:
                lower_wgmma(self, op)
            elif name == "tile.gemm" and MMA_SYNC_ATTR in op.attributes:
                lower_mma_sync(self, op)
            elif name == "tile.gemm" and MFMA_ATTR in op.attributes:
                lower_mfma(self, op)
            elif name == "tile.gemm":
                raise fail(op, "tile.gemm must be lowered first (lower-gemm-simt)")
            elif name in ("memref.load", "memref.store"):
                self.lower_access(op)
                return
            elif name == "memref.prefetch":
                self.lower_prefetch(op)
                return
            elif name in USER_SYNC_OPS:
                lower_user_sync(self, op)
                return
            elif name == "nvvm.barrier" and SYNC_GRID_ATTR in op.attributes:
                lower_sync_grid(self, op)
                return
            elif name == "memref.reinterpret_cast":
                self.lower_view(op)
                return
            elif self.lower_thread_branch(op):
                return
            else:
                pending = None if self.pending is None else (list(self.pending.groups),
                                                              self.pending.settled)
                for region in op.regions:
                    for block in region.blocks:
                        self.lower_block_ops([as_operation(o) for o in block.operations])
                if pending is not None:  # a branch that waited may not have run
                    self.pending.groups, self.pending.settled = pending
                return
        op.erase()

    def lower_thread_branch(self, op: ir.Operation) -> bool:
        """An scf.if on the thread index giving each branch a range of the block's threads
        (compiler/passes/_thread_range.py): each branch runs with its threads' index from 0
        and their count, as a T.ws block does, and its block barriers become a named barrier
        over those threads; a branch nested in a range (an `elif` of a chain) counts from its
        own first thread. False (nothing done) for any other op."""
        if not is_thread_branch(op, self.range_warp, self.kernel) or not (
                self.tid_is_global or self.range_first is not None):
            return False
        ranges = branch_ranges(op, self.kernel, self.range_warp)
        origin = self.range_first or 0  # the thread self.tid counts from
        saved = self.tid, self.threads, self.tid_is_global, self.range_first
        for region, found in zip(op.regions, ranges, strict=True):
            if not region.blocks or found is None:  # no statements (is_thread_branch)
                continue
            first, end = found
            block = region.blocks[0]
            ops = [as_operation(o) for o in block.operations]
            with op.location, ir.InsertionPoint.at_block_begin(block):
                local = arith.subi(self.tid, index(first - origin)) if first != origin \
                    else self.tid
            self.tid, self.threads, self.tid_is_global, self.range_first = (
                local, end - first, False, first)
            try:
                self.lower_block_ops(ops)
            finally:
                self.tid, self.threads, self.tid_is_global, self.range_first = saved
            tops = [as_operation(top) for top in block.operations]
            barriers = [inner for top in tops for inner in [top, *walk(top)]
                        if inner.name == "gpu.barrier"]
            if barriers:
                self.branch_barriers += 1
                if self.branch_barriers > LAST_BARRIER_ID - FIRST_BRANCH_BARRIER:
                    raise fail(op, "too many branches on the thread index with block "
                                   "barriers in one kernel (named barriers run out)")
            i32 = ir.IntegerType.get_signless(32)
            for barrier in barriers:
                with barrier.location, ir.InsertionPoint(barrier):
                    nvvm.BarrierOp(None, barrierId=constant(
                        i32, FIRST_BRANCH_BARRIER + self.branch_barriers),
                        numberOfThreads=constant(i32, end - first))
                barrier.erase()
        return True

    def lower_view(self, op: ir.Operation) -> None:
        """A reshaped view of a tensor parameter, rebuilt in the parameter's global memory
        space; it starts where the parameter starts, so it shares the parameter's alignment."""
        source, old = op.operands[0], op.results[0]
        view_type = memref_type(old)
        space = memref_type(source).memory_space
        new_type = ir.MemRefType.get(view_type.shape, view_type.element_type, view_type.layout,
                                     memory_space=space)
        static = [list(ir.DenseI64ArrayAttr(op.attributes[key])) for key in
                  ("static_offsets", "static_sizes", "static_strides")]
        view = memref.reinterpret_cast(new_type, source, [], [], [], *static)
        self.pointer_aligned[view] = self.pointer_aligned[source]
        old.replace_all_uses_with(view)
        op.erase()

    def lower_prefetch(self, op: ir.Operation) -> None:
        """A prefetch of a tensor element (prefetch-epilogue-operands) is one
        `prefetch.global.L2` of its address where the chip has it (sm_90 and later,
        TargetDescription.has_l2_prefetch); elsewhere, a hint dropped."""
        if self.l2_prefetch and self.is_global(op.operands[0]):
            with op.location, ir.InsertionPoint(op):
                nvvm.prefetch(element_address(op.operands[0], list(op.operands)[1:]),
                              cache_level=nvvm.PrefetchCacheLevel.L2)
        op.erase()

    def lower_access(self, op: ir.Operation) -> None:
        """A load or store: guard global ones; a fragment outside T.Parallel is held whole by
        every thread (infer-fragment-layout), which uses its own copy. In a T.Parallel whose
        layout gives several threads the same points, only one of them stores to shared or
        global memory: a replica's store could land between another's load and store of the
        same element (`s[i] = s[i] + 1` adding twice); a later load of that element in the same
        block takes the stored value, as the owner's own load would."""
        load = op.name == "memref.load"
        buffer = op.operands[0 if load else 1]
        indices = list(op.operands)[1 if load else 2:]
        if self.canonical is not None and buffer not in self.fragments:
            key = (op.block, buffer, *indices)
            if not load:
                self.owned_stores[key] = op.operands[0]
            elif key in self.owned_stores:
                op.results[0].replace_all_uses_with(self.owned_stores[key])
                op.erase()
                return
        if buffer in self.fragments:
            fragment = self.fragments[buffer]
            if not fragment.layout.holds_whole_tile():
                raise fail(op, "a fragment element is accessed outside T.Parallel, but its "
                               "layout spreads it over the threads (run infer-fragment-layout)")
            with op.location, ir.InsertionPoint(op):
                slot = self.flat_index(fragment.layout, indices)
                if load:
                    op.results[0].replace_all_uses_with(fragment.load(slot))
                else:
                    fragment.store(op.operands[0], slot)
            op.erase()
            return
        if buffer in self.shared_layouts:
            with op.location, ir.InsertionPoint(op):
                where = self.shared_where(buffer, indices)
                if load:
                    op.results[0].replace_all_uses_with(memref.load(buffer, where))
                else:
                    stored = op.operands[0]
                    guarded(self.canonical, lambda: memref.store(stored, buffer, where))
            op.erase()
            return
        if not self.is_global(buffer):
            if not load and self.canonical is not None and self.is_workgroup(buffer):
                with op.location, ir.InsertionPoint(op):
                    stored = op.operands[0]
                    guarded(self.canonical, lambda: memref.store(stored, buffer, indices))
                op.erase()
            return
        with op.location, ir.InsertionPoint(op):
            inside = self.in_bounds(buffer, indices)
            if load:
                element = memref_type(buffer).element_type
                value = if_value(inside, element, lambda: memref.load(buffer, indices),
                                 lambda: zero(element))
                op.results[0].replace_all_uses_with(value)
            else:
                stored = op.operands[0]
                owner = [self.canonical] if self.canonical is not None else []
                guarded(all_of(owner + ([inside] if inside is not None else [])),
                        lambda: memref.store(stored, buffer, indices))
        op.erase()

    def in_bounds(self, buffer: ir.Value, indices: list[ir.Value]) -> ir.Value | None:
        return all_of([cmp("ult", i, memref.dim(buffer, index(d)))
                       for d, i in enumerate(indices)])

    def lower_loop(self, op: ir.Operation) -> None:
        lower, upper, step = op.operands[0], op.operands[1], op.operands[2]
        bounds = [constant_index(v) for v in (lower, upper, step)]
        if "unroll" in op.attributes and None not in bounds and self.unrolls(op, range(*bounds)):
            for value in range(*bounds):
                with op.location, ir.InsertionPoint(op):
                    iv = index(value)
                # a fragment the body allocates is one set of registers for all the copies,
                # as for a loop's iterations (hoist_allocs made one array of it): the copies
                # run one after another on each thread, and a copy reads only what it wrote
                # (what it reads before writing is undefined with a fragment of its own too)
                clone = as_operation(op.clone(ip=ir.InsertionPoint(op)))
                self.share_fragments(op, clone)
                self.lower_block_ops(move_body_before(clone, [iv], op))
            # the body's own fragment allocs go with it (each copy's are erased at the end)
            inside = [inner for inner in walk(op) if inner.name == "tile.alloc"]
            self.fragment_allocs = [alloc for alloc in self.fragment_allocs
                                    if not any(alloc == inner for inner in inside)]
            op.erase()
            return
        with op.location, ir.InsertionPoint(op):
            loop = scf.ForOp(lower, upper, step)
            with ir.InsertionPoint(loop.body):
                end = as_operation(scf.YieldOp([]))
        moved = move_body_before(op, [loop.induction_variable], end)
        self.lower_block_ops(moved)

    def unrolls(self, op: ir.Operation, trips: range) -> bool:
        """Whether a T.unroll loop is copied out. Past UNROLL_OPS_LIMIT copied ops it stays a
        loop (the same computation; unrolling is a hint), unless its body reads or writes a
        fragment: registers need the constant indices only unrolling gives, so that is an
        error rather than minutes of compiling."""
        body = list(walk(op))
        if len(trips) * len(body) <= UNROLL_OPS_LIMIT:
            return True
        if any(operand in self.fragments for inner in body for operand in inner.operands):
            raise fail(op, f"T.unroll({len(trips)}) over fragments would copy its body "
                           f"{len(trips)} times ({len(trips) * len(body)} ops; at most "
                           f"{UNROLL_OPS_LIMIT}): unroll a shorter loop, or loop with T.serial "
                           "over a shared or local buffer")
        return False

    def plan_of(self, op: ir.Operation) -> PipelinePlan | None:
        return next((plan for loop, plan in self.plans if loop == op), None)

    def lower_pipelined(self, op: ir.Operation) -> None:
        """A loop whose copies run ahead through cp.async (compiler/passes/_async_pipeline),
        the sources' alignment checked in each iteration around its copies; a loop of
        mma.sync gemms in two versions where it is not known: the loop of cp.async where
        every source's base and row length are aligned, checked once before it, and a copy
        of it reading element by element where not. (The check in every iteration keeps the
        element-wise copies' registers in the loop: ptxas then has no room left to load the
        next K step's operands during this one's mma.sync.)"""
        plan = self.plan_of(op)
        if not any(inner.name == "tile.gemm" and MMA_SYNC_ATTR in inner.attributes
                   for inner in walk(op)):
            self.lower_pipeline_version(op, plan, None)
            return
        sources = [(plan.source(at), vec) for at, vec in enumerate(plan.vectors)]
        checked, condition = self.alignment_check(sources)
        if condition is None:
            self.lower_pipeline_version(op, plan, True)
            return
        branch = scf.IfOp(condition, has_else=True)
        with ir.InsertionPoint(branch.then_block):
            aligned_end = as_operation(scf.YieldOp([]))
        with ir.InsertionPoint(branch.else_block):
            unaligned_end = as_operation(scf.YieldOp([]))
        unaligned = as_operation(op.clone(ip=ir.InsertionPoint(unaligned_end)))
        unaligned_plan = plan.of_copy(op, unaligned)
        self.share_fragments(op, unaligned)
        op.move_before(aligned_end)
        self.known_aligned.update(checked)
        self.lower_pipeline_version(op, plan, True)
        self.known_aligned.difference_update(checked)
        self.lower_pipeline_version(unaligned, unaligned_plan, False)

    def share_fragments(self, op: ir.Operation, copy: ir.Operation) -> None:
        """A copy of `op` uses the registers of the fragments `op` allocates (fragments stay
        allocs until the kernel is lowered, then every alloc of them is erased)."""
        for old, new in zip(walk(op), walk(copy), strict=True):
            if old.name == "tile.alloc" and old.results[0] in self.fragments:
                self.fragments[new.results[0]] = self.fragments[old.results[0]]
                self.fragment_allocs.append(new)

    def lower_pipeline_version(self, op: ir.Operation, plan: PipelinePlan,
                               aligned: bool | None) -> None:
        """One version of a cp.async pipeline loop; its gemms marked tile.deferred_wait
        (defer-pipeline-gemm-waits) leave their groups in flight until a statement touches
        their registers, and the body's end waits for the rest, before the next iteration
        refills the slots they read (not with the pipeline's own overlapped gemm)."""
        defers = plan.overlapped is None and any(PendingGroups.defers(inner)
                                                 for inner in walk(op))
        # with deferred gemms the operand tiles filled before the loop are fenced once, by the
        # pipeline's fence and barrier at each iteration's start (_wgmma.operands_fenced)
        iv, end = PipelinedLoop(self, op, plan, self.rings, aligned).lower()
        if not defers:
            self.lower_block_ops(move_body_before(op, [iv], end))
            return
        outer, self.pending = self.pending, PendingGroups.of_loop(op)
        with operands_fenced(self.shared_layouts, op.regions[0].blocks[0]):
            self.lower_block_ops(move_body_before(op, [iv], end))
        with end.location, ir.InsertionPoint(end):
            self.pending.drain()
        self.pending = outer

    # ----- T.Parallel ------------------------------------------------------------------
    def canonical_owner(self, layout: LinearLayout) -> ir.Value | None:
        """True on one thread of each group holding the same elements (None: no copies):
        the thread whose replicated thread-id bits are clear."""
        bits = layout.replicated_thread_bits()
        # threads past a layout's span (a count that is not a power of two) are copies too
        beyond = self.threads > layout.threads
        if not bits and not beyond:
            return None
        mask = sum(1 << bit for bit in bits)
        owner = cmp("eq", arith.andi(self.tid, index(mask)), index(0))
        return arith.andi(owner, cmp("ult", self.tid, index(layout.threads))) if beyond else owner

    def inside_tile(self, layout: LinearLayout, point: list[ir.Value]) -> ir.Value | None:
        """Whether a coordinate of a padded layout lies inside the tile (None: always)."""
        return all_of([cmp("ult", x, index(extent)) for x, extent, full in zip(
            point, layout.shape, layout.padded_shape, strict=True) if extent != full])

    def lower_parallel(self, op: ir.Operation) -> None:
        layout = op_layout(op)
        if layout is None:
            raise fail(op, "T.Parallel without a layout: run infer-fragment-layout")
        touches_fragments = any(
            any(operand in self.fragments for operand in inner.operands) for inner in walk(op))
        outer = self.canonical
        with op.location, ir.InsertionPoint(op):
            offsets = thread_coordinates(layout, self.tid)
            self.canonical = self.canonical_owner(layout)
        self.owned_stores.clear()
        # a loop on no fragment (a gather into shared memory) reads vectors; one on fragments
        # (an epilogue) with the opt-in tile.vector_epilogue_loads; none with logical addressing
        vectors = self.vector_loads or (not touches_fragments and self.vector_bytes > 0)
        loads = vector_loads(op, layout, self.is_global) if vectors else []
        # the epilogue source tile's reads are vectors of a run's registers in any case: the
        # run's columns lie side by side inside one 16-byte chunk of its box
        loads += vector_loads(op, layout, self.is_source_tile) if self.source_copies else []
        vec = math.gcd(*[width for _, width in loads]) if loads else 1
        if vectors and not loads:  # no global reads: stores into an operand tile set the runs
            vec = self.store_runs(op, layout)
        if not touches_fragments and layout.num_registers > UNROLL_LIMIT * vec:
            self.parallel_loop(op, layout, offsets)
        else:
            buffers = _unique([op.regions[0].blocks[0].operations[at].operands[0]
                               for at, _ in loads])
            buffers = [buffer for buffer in buffers if self.is_global(buffer)]
            with op.location, ir.InsertionPoint(op):
                self.split_on_alignment(buffers, vec, lambda vec: self.parallel_registers(
                    op, layout, offsets, loads, vec))
        self.canonical = outer
        op.erase()

    def parallel_registers(self, op: ir.Operation, layout: LinearLayout,
                           offsets: list[ir.Value], loads: list[tuple[int, int]], vec: int
                           ) -> None:
        """The body once per register of the layout. With `vec` > 1, the global loads at
        `loads` (body positions) are read as one vec-wide vector by the first register of
        each run of vec (registers holding consecutive columns, a run unmasked), the run's
        registers taking their elements from it: a T.Parallel epilogue's residual reads.
        The run's stores into a wgmma operand tile along its columns are then one vec-wide
        store of the run's values (its swizzle moves whole 16-byte chunks): a gather's."""
        here = ir.InsertionPoint.current  # before the loop, or in an alignment branch
        vectors: dict[int, ir.Value] = {}
        stores = self.operand_tile_stores(op) if vec > 1 and self.canonical is None else []
        pending: dict[int, list[ir.Operation]] = {}
        for reg in range(layout.num_registers):
            mask = layout.register_mask(reg)
            if mask is False:
                continue
            with op.location, here:
                points = register_coordinates(layout, reg, offsets)
                guard = None if mask else self.inside_tile(layout, points)
            clone = as_operation(op.clone(ip=here))
            anchor = clone
            if guard is not None:
                with op.location, ir.InsertionPoint(clone):
                    branch = scf.IfOp(guard)
                    with ir.InsertionPoint(branch.then_block):
                        anchor = as_operation(scf.YieldOp([]))
            body = clone.regions[0].blocks[0]
            run = vec > 1 and all(layout.register_mask(reg - reg % vec + i) is True
                                  for i in range(vec))
            picked = [as_operation(body.operations[at]) for at, _ in loads] if run else []
            stored = [as_operation(body.operations[at]) for at in stores] if run else []
            self.bind_fragments(clone, layout, reg)
            moved = [inner for inner in move_body_before(clone, points, anchor)
                     if not any(inner == load for load in picked + stored)]
            for number, load in enumerate(picked):
                with load.location, ir.InsertionPoint(load):
                    if reg % vec == 0:
                        where = list(load.operands)[1:]
                        side = Side(load.operands[0], where, [len(where) - 1])
                        vectors[number] = self.read(side, where, vec)
                    value = vector.extract(vectors[number], [], [reg % vec])
                load.results[0].replace_all_uses_with(value)
                load.erase()
            self.lower_block_ops(moved)
            # the run's scalar stores stay in the IR until its last register is lowered: the
            # lowering replaces the ops defining their values and indices, and only operands
            # of live ops follow such a replacement (values held aside would dangle)
            for number, store in enumerate(stored):
                pending.setdefault(number, []).append(store)
                if reg % vec != vec - 1:
                    continue
                run_stores = pending.pop(number)
                values = [run_store.operands[0] for run_store in run_stores]
                buffer = store.operands[1]
                with store.location, ir.InsertionPoint(store):
                    run_value = vector.FromElementsOp(
                        ir.VectorType.get([vec], values[0].type), values).result
                    vector.StoreOp(run_value, buffer,
                                   self.shared_where(buffer, list(run_stores[0].operands)[2:]),
                                   alignment=vec * element_bytes(values[0].type))
                for run_store in run_stores:
                    run_store.erase()

    def store_runs(self, op: ir.Operation, layout: LinearLayout) -> int:
        """The vector width of a T.Parallel's stores into wgmma operand tiles along the
        layout's runs of registers (at most 16 bytes), where it has such stores: the
        transposing copies of transpose-mn-major-operands; 1 otherwise."""
        body = op.regions[0].blocks[0]
        stores = [as_operation(body.operations[at]) for at in self.operand_tile_stores(op)]
        if not stores:
            return 1
        widest = min(16 // element_bytes(store.operands[0].type) for store in stores)
        return math.gcd(register_runs(layout), widest)

    def operand_tile_stores(self, op: ir.Operation) -> list[int]:
        """Body positions of a T.Parallel's stores into a wgmma operand tile whose last index
        is the loop's last variable and whose other indices are free of it: a run of the
        layout's registers starts at a column that is a multiple of its length, so its
        elements lie side by side in one 16-byte chunk of the swizzled tile."""
        body = op.regions[0].blocks[0]
        last = body.arguments[len(body.arguments) - 1]
        found = []
        for position, inner in enumerate(body.operations):
            inner = as_operation(inner)
            if inner.name != "memref.store" or not isinstance(
                    self.shared_layouts.get(inner.operands[1], (None,))[0], SharedOperandLayout):
                continue
            indices = list(inner.operands)[2:]
            if indices[-1] == last and not any(depends_on(value, last, body)
                                               for value in indices[:-1]):
                found.append(position)
        return found

    def parallel_loop(self, op: ir.Operation, layout: LinearLayout,
                      offsets: list[ir.Value]) -> None:
        with op.location, ir.InsertionPoint(op):
            loop = scf.ForOp(index(0), index(layout.num_registers), index(1))
            with ir.InsertionPoint(loop.body):
                registers = bit_coordinates(layout.register, layout.rank,
                                            loop.induction_variable)
                points = combine_coordinates(layout, registers, offsets)
                guard = self.inside_tile(layout, points)
                if guard is not None:
                    branch = scf.IfOp(guard)
                    with ir.InsertionPoint(branch.then_block):
                        end = as_operation(scf.YieldOp([]))
                    scf.YieldOp([])
                else:
                    end = as_operation(scf.YieldOp([]))
        clone = as_operation(op.clone(ip=ir.InsertionPoint(op)))
        self.lower_block_ops(move_body_before(clone, points, end))

    def bind_fragments(self, clone: ir.Operation, layout: LinearLayout, reg: int) -> None:
        """Turn the body's fragment accesses into accesses of this thread's registers: the
        fragment's layout follows the loop's (infer-fragment-layout converts where not), so
        the element of loop register `reg` sits at one register in every thread."""
        body = clone.regions[0].blocks[0]
        point = layout.register_coordinate(reg)
        for inner in list(walk(clone)):
            if inner.name not in ("memref.load", "memref.store"):
                continue
            load = inner.name == "memref.load"
            buffer = inner.operands[0 if load else 1]
            if buffer not in self.fragments:
                continue
            fragment = self.fragments[buffer]
            indices = list(inner.operands)[1 if load else 2:]
            dims = [block_arg_index(value, body) for value in indices]
            constants = [constant_index(value) for value in indices]
            if not follows(fragment.layout, layout, dims) or any(
                    d is None and c is None for d, c in zip(dims, constants, strict=True)):
                raise fail(inner, "this fragment index does not follow the T.Parallel "
                                  "loop's thread layout (index fragments by the loop "
                                  "variables)")
            coordinate = tuple(c if d is None else x for d, c, x in zip(
                dims, constants, project(layout, point, dims), strict=True))
            slot = fragment.register_of(coordinate)
            if slot is None:
                raise fail(inner, f"fragment index {list(coordinate)} lies outside the "
                                  f"fragment's {list(fragment.layout.shape)} elements")
            with inner.location, ir.InsertionPoint(inner):
                if load:
                    inner.results[0].replace_all_uses_with(fragment.load(slot))
                else:
                    fragment.store(inner.operands[0], slot)
            inner.erase()

    # ----- atomics, fill -----------------------------------------------------------------
    def lower_atomic(self, op: ir.Operation) -> None:
        operands = list(op.operands)
        buffer, indices, value = operands[0], operands[1:-1], operands[-1]
        element = memref_type(buffer).element_type
        value = cast(value, element)
        kind = arith.AtomicRMWKind.addf if is_float(element) else arith.AtomicRMWKind.addi
        conditions = [self.canonical] if self.canonical is not None else []
        if self.is_global(buffer):
            inside = self.in_bounds(buffer, indices)
            conditions += [inside] if inside is not None else []
        where = self.shared_where(buffer, indices)
        guarded(all_of(conditions),
                lambda: memref.AtomicRMWOp(kind, value, buffer, where))

    def lower_fill(self, op: ir.Operation) -> None:
        buffer, value = op.operands[0], op.operands[1]
        element = memref_type(buffer).element_type
        value = cast(value, element)
        if buffer in self.fragments:
            fragment = self.fragments[buffer]
            for slot in range(fragment.layout.num_registers):
                fragment.store(value, slot)
            return
        shape = list(memref_type(buffer).shape)
        cooperative = self.is_global(buffer) or scope(buffer) == "shared"
        start, step = (self.tid, self.threads) if cooperative else (index(0), 1)
        loop = scf.ForOp(start, index(math.prod(shape)), index(step))
        with ir.InsertionPoint(loop.body):
            point = self.unflatten(loop.induction_variable, shape)
            memref.store(value, buffer, self.shared_where(buffer, point))
            scf.YieldOp([])

    @staticmethod
    def unflatten(flat: ir.Value, shape: list[int]) -> list[ir.Value]:
        point = []
        for extent in reversed(shape):
            point.insert(0, arith.remui(flat, index(extent)))
            flat = arith.divui(flat, index(extent))
        return point

    # ----- reduce ------------------------------------------------------------------------
    def lower_reduce(self, op: ir.Operation) -> None:
        """Each thread combines its registers per destination element (pairwise), then
        lanes combine over the layout's lane bits along `dim` (xor shuffles), then warps
        through shared memory. Elements of a padded layout outside the tile count as the
        neutral value."""
        src, dst = op.operands[0], op.operands[1]
        kind = ir.StringAttr(op.attributes["kind"]).value
        dim = ir.IntegerAttr(op.attributes["dim"]).value
        clear = ir.BoolAttr(op.attributes["clear"]).value
        if src not in self.fragments or dst not in self.fragments:
            raise fail(op, "the CUDA target reduces fragments into fragments only")
        source, target = self.fragments[src], self.fragments[dst]
        layout = source.layout
        if target.layout != layout.slice(dim):
            raise fail(op, "the reduce destination's layout is not the source's slice along "
                           "the reduced dimension (run infer-fragment-layout)")
        acc_type = self.reduce_type(src)
        element = memref_type(src).element_type
        narrow_integer = not is_float(element) and element != acc_type
        offsets = thread_coordinates(layout, self.tid) if layout.shape != \
            layout.padded_shape else None
        terms: dict[int, list[ir.Value]] = {}
        for reg, key in layout.slice_registers(dim):
            mask = layout.register_mask(reg)
            if mask is False:
                continue
            term = reduce_term(kind, cast(source.load(reg), acc_type))
            if kind in ("abssum", "absmax") and narrow_integer:
                # |x| in the element's own width, as the other targets take it (int8's |-128|
                # is -128, not 128): the widened |x| truncated and widened again
                term = cast(cast(term, element), acc_type)
            if mask is None:
                inside = self.inside_tile(layout, register_coordinates(layout, reg,
                                                                       offsets))
                term = arith.select(inside, term, reduce_init(kind, acc_type))
            terms.setdefault(key, []).append(term)
        partial = {key: combine_pairwise(kind, values) for key, values in terms.items()}
        try:
            lanes, warps = layout.reduction_bits(dim)
        except LayoutError as error:
            raise fail(op, str(error)) from None
        i32 = ir.IntegerType.get_signless(32)
        for key, value in partial.items():
            for bit in lanes:
                other = gpu.ShuffleOp(value, constant(i32, 1 << bit),
                                      constant(i32, self.warp_size),
                                      gpu.ShuffleMode.XOR).results[0]
                value = combine(kind, value, other)
            partial[key] = value
        # past a layout's span (a count that is not a power of two) threads are copies: those
        # of a last, partial group of lanes shuffled with absent lanes, so every copy takes
        # its result from the threads of the span, through shared memory
        partial_group = bool(lanes) and self.threads > layout.threads and \
            self.threads % (2 << max(lanes)) != 0
        if warps or partial_group:
            partial = self.reduce_through_shared(op, layout, dim, warps, kind, partial)
        for key in range(target.layout.num_registers):
            value = partial.get(key, reduce_init(kind, acc_type))
            result = cast(value, memref_type(dst).element_type)
            if not clear:
                result = combine(kind, target.load(key), result)
            target.store(result, key)

    def reduce_through_shared(self, op: ir.Operation, layout: LinearLayout, dim: int,
                              warps: list[int], kind: str, partial: dict) -> dict:
        """Warps holding other coordinates along `dim` (none: the span's results for its
        copies): each writes its partials to scratch[element][peer] (peer: its index over
        those warp bits), all read them back. Threads past the layout's span only read: a
        copy's shuffles may have met absent lanes."""
        kept = layout.slice(dim)
        group = 1 << len(warps)
        scratch = self.scratch(math.prod(kept.padded_shape) * group,
                               self.reduce_type(op.operands[0]))
        warp = arith.divui(self.tid, index(layout.lanes))
        peer = index(0)
        for n, bit in enumerate(warps):
            chosen = arith.remui(arith.divui(warp, index(1 << bit)), index(2))
            peer = add_index(peer, arith.muli(chosen, index(1 << n)))
        offsets = thread_coordinates(kept, self.tid)
        writer = cmp("ult", self.tid, index(layout.threads)) \
            if self.threads > layout.threads else None
        slots = {}
        for key, value in partial.items():
            element = self.flat_index(kept, register_coordinates(kept, key, offsets))
            slots[key] = arith.muli(element, index(group))
            at = arith.addi(slots[key], peer)
            guarded(writer, lambda at=at, value=value: memref.store(value, scratch, [at]))
        gpu.BarrierOp()
        result = {}
        for key, first in slots.items():
            value = memref.load(scratch, [first])
            for n in range(1, group):
                value = combine(kind, value, memref.load(scratch, [add_index(first, n)]))
            result[key] = value
        gpu.BarrierOp()
        return result

    @staticmethod
    def flat_index(layout: LinearLayout, point: list[ir.Value]) -> ir.Value:
        """Row-major position of a coordinate in the layout's padded tile."""
        flat = index(0)
        for x, extent in zip(point, layout.padded_shape, strict=True):
            flat = add_index(arith.muli(flat, index(extent)) if constant_index(flat) != 0
                             else flat, x)
        return flat

    # ----- fragment -> fragment ------------------------------------------------------------
    def convert(self, op: ir.Operation, src: ir.Value, dst: ir.Value) -> None:
        """dst's elements from src's (cast to dst's type): register moves when every thread
        already holds its elements, else through shared memory (each thread writes what it
        holds at the element's row-major slot of the padded tile, then reads its own)."""
        source, target = self.fragments[src], self.fragments[dst]
        element = memref_type(dst).element_type
        if source.layout.shape != target.layout.shape:
            raise fail(op, "fragments of different shapes: a fragment copy must cover both "
                           "fragments whole on the CUDA target")
        moves = source.layout.register_permutation(target.layout)
        if moves is not None:
            values = [cast(source.load(r), element) for r in moves]
            for reg, value in enumerate(values):
                target.store(value, reg)
            return
        if source.layout.holds_whole_tile():  # every thread picks its elements from its copy
            offsets = thread_coordinates(target.layout, self.tid)
            for reg in target.layout.live_registers():
                point = register_coordinates(target.layout, reg, offsets)
                slot = self.flat_index(source.layout, point)
                target.store(cast(source.load(slot), element), reg)
            return
        scratch = self.scratch(math.prod(source.layout.padded_shape), element)
        offsets = thread_coordinates(source.layout, self.tid)
        for reg in source.layout.live_registers():
            point = register_coordinates(source.layout, reg, offsets)
            memref.store(cast(source.load(reg), element), scratch,
                         [self.flat_index(source.layout, point)])
        gpu.BarrierOp()
        offsets = thread_coordinates(target.layout, self.tid)
        for reg in target.layout.live_registers():
            point = register_coordinates(target.layout, reg, offsets)
            target.store(memref.load(scratch, [self.flat_index(target.layout, point)]),
                         reg)
        gpu.BarrierOp()

    # ----- copy --------------------------------------------------------------------------
    @staticmethod
    def is_global(buffer: ir.Value) -> bool:
        """Global tensors were rebuilt in address space 1 by the prelude."""
        return isinstance(memref_type(buffer).memory_space, ir.IntegerAttr)

    def is_source_tile(self, buffer: ir.Value) -> bool:
        """stage-epilogue-source's tile (its view: SourceTileLayout's accesses)."""
        return buffer in self.shared_layouts and isinstance(self.shared_layouts[buffer][0],
                                                             SourceTileLayout)

    @staticmethod
    def is_workgroup(buffer: ir.Value) -> bool:
        """A shared buffer (or a view of the shared arena)."""
        return str(memref_type(buffer).memory_space) == WORKGROUP

    def lower_copy(self, op: ir.Operation) -> None:
        if MMA_SYNC_LOAD_ATTR in op.attributes:
            lower_mma_sync_load(self, op)
            return
        if CP_ASYNC_ATTR in op.attributes:
            self.thread_cp_async(op)
            return
        if IN_PLACE_ATTR in op.attributes:
            read_in_place(self, op)
            return
        if SOURCE_ATTR in op.attributes:
            if self.ring_lowering is None:
                raise fail(op, f"a {SOURCE_ATTR} copy must follow a {RING_ATTR} loop")
            self.ring_lowering.wait_source(op)
            return
        src, src_offsets, src_shape, dst, dst_offsets, dst_shape = copy_parts(op)
        src_dims, dst_dims = box_dims(src_shape), box_dims(dst_shape)
        extents = [src_shape[d] for d in src_dims]
        src_at = Side(src, src_offsets, src_dims)
        dst_at = Side(dst, dst_offsets, dst_dims)
        if STEP_LOADS_ATTR in op.attributes and dst in self.fragments:
            self.step_loads[dst] = lambda slots: self.load_registers(src_at, self.fragments[
                dst], slots)
            return
        if src in self.fragments and dst in self.fragments:
            if any(constant_index(v) != 0 for v in src_offsets + dst_offsets) or list(
                    src_shape) != list(memref_type(src).shape) or list(dst_shape) != list(
                    memref_type(dst).shape):
                raise fail(op, "a copy between two fragments must cover both whole on the "
                               "CUDA target")
            self.convert(op, src, dst)
            return
        if STORE_ATTR in op.attributes and src in self.fragments and self.ring_lowering \
                is not None and self.ring_lowering.store(op, self.fragments[src]):
            return
        if src in self.fragments or dst in self.fragments:
            self.copy_fragment(op, src_at, dst_at, extents)
        else:
            self.copy_elements(src_at, dst_at, extents)
        if dst in self.shared_layouts and not self.shared_layouts[dst][1]:
            # a wgmma operand tile, read through the async proxy: each writer fences its
            # stores (the gemm may run on other threads, in a T.ws block)
            nvvm.fence_proxy(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)

    def copy_fragment(self, op: ir.Operation, src: Side, dst: Side, extents: list[int]) -> None:
        """Each thread moves the elements its fragment layout gives it, vectors where the
        fragment's last dimension runs along the other buffer's last dimension. A box of the
        fragment (a causal row's first columns, say) moves the registers inside it: each
        thread tests its register's coordinates against the box's corner and extents, which
        are constants once an unrolled loop has set them."""
        reading = src.buffer in self.fragments
        frag_side, other = (src, dst) if reading else (dst, src)
        fragment = self.fragments[frag_side.buffer]
        layout = fragment.layout
        frag_shape = list(layout.shape)
        box = [1] * layout.rank
        for d, extent in zip(frag_side.dims, extents, strict=True):
            box[d] = extent
        whole = box == frag_shape and all(constant_index(v) == 0 for v in frag_side.offsets)
        if not whole and frag_side.dims != sorted(frag_side.dims):
            raise fail(op, "a copy of a box of a fragment must keep its dimensions' order on "
                           "the CUDA target")
        other_type = memref_type(other.buffer)
        frag_element = memref_type(frag_side.buffer).element_type
        other_element = other_type.element_type
        vec = 1
        if (frag_side.dims[-1] == layout.rank - 1 and other.dims[-1] == self.rank(other.buffer) - 1
                and scope(other.buffer) not in ("local", "var") and bit_width(other_element) >= 8):
            # registers 0..vec-1 hold consecutive elements and no thread shifts inside them
            vec = math.gcd(layout.contiguous_registers(), max(1, self.vector_bytes //
                                                              element_bytes(other_element)),
                           layout.shape[-1])
            while layout.thread_span()[-1] & (vec - 1):
                vec //= 2
            # a box's vectors lie wholly inside or outside it
            while vec > 1 and not whole and (box[-1] % vec or not multiple_of(
                    frag_side.offsets[-1], vec)):
                vec //= 2
        offsets = thread_coordinates(layout, self.tid)

        def emit(vec: int) -> None:
            for reg in range(0, layout.num_registers, vec):
                mask = layout.register_mask(reg)
                if mask is False:
                    continue
                x = register_coordinates(layout, reg, offsets)
                guard = None if mask else self.inside_tile(layout, x)
                if not whole:  # the box's elements only, at their place in the box
                    x = [arith.subi(value, corner) if constant_index(corner) != 0 else value
                         for value, corner in zip(x, frag_side.offsets, strict=True)]
                    guard = all_of(([guard] if guard is not None else []) + [
                        cmp("ult", value, index(extent))
                        for value, extent, full in zip(x, box, frag_shape, strict=True)
                        if extent != full or constant_index(value) is None])
                point = [x[d] for d in frag_side.dims]
                where = other.index(point)
                slots = [reg + i for i in range(vec)]
                guarded(guard, lambda where=where, slots=slots: self.move_fragment(
                    fragment, reading, other, where, slots, frag_element, other_element))

        self.split_on_alignment([other.buffer], vec, emit)

    def load_registers(self, src: Side, fragment: Fragment, slots: list[int]) -> None:
        """The fragment's registers `slots` (runs of consecutive registers holding
        consecutive elements) from the whole-tile copy's source `src`, in vectors of a run."""
        layout = fragment.layout
        offsets = thread_coordinates(layout, self.tid)
        frag_element = memref_type(fragment.registers).element_type
        src_element = memref_type(src.buffer).element_type
        runs: list[list[int]] = []
        for slot in slots:
            if runs and slot == runs[-1][-1] + 1 and \
                    len(runs[-1]) < layout.contiguous_registers():
                runs[-1].append(slot)
            else:
                runs.append([slot])
        for run in runs:
            point = register_coordinates(layout, run[0], offsets)
            self.move_fragment(fragment, False, src, src.index([point[d] for d in src.dims]),
                               run, frag_element, src_element)

    def move_fragment(self, fragment: Fragment, reading: bool, other: Side,
                      where: list[ir.Value], slots: list[int], frag_element: ir.Type,
                      other_element: ir.Type) -> None:
        """Registers `slots` (consecutive elements) to or from `other` at `where`."""
        vec = len(slots)
        if reading:
            values = [fragment.load(s) for s in slots]
            if vec == 1:
                self.write(other, where, cast(values[0], other_element))
            else:
                packed = vector.FromElementsOp(
                    ir.VectorType.get([vec], frag_element), values).result
                self.write(other, where, cast(packed, ir.VectorType.get([vec], other_element)))
            return
        value = self.read(other, where, vec)
        if vec == 1:
            fragment.store(cast(value, frag_element), slots[0])
            return
        value = cast(value, ir.VectorType.get([vec], frag_element))
        for i, s in enumerate(slots):
            fragment.store(vector.extract(value, [], [i]), s)

    def copy_elements(self, src: Side, dst: Side, extents: list[int]) -> None:
        """Global/shared copies are shared out over the block's threads, a copy touching a
        local or var buffer is done by each thread; both in vectors along the contiguous
        dimension."""
        per_thread = any(side.buffer in self.per_thread for side in (src, dst))
        src_type, dst_type = memref_type(src.buffer), memref_type(dst.buffer)
        vec = 1
        if (src.dims[-1] == self.rank(src.buffer) - 1
                and dst.dims[-1] == self.rank(dst.buffer) - 1
                and min(bit_width(src_type.element_type), bit_width(dst_type.element_type)) >= 8):
            widest = max(element_bytes(src_type.element_type), element_bytes(dst_type.element_type))
            vec = math.gcd(extents[-1], max(1, self.vector_bytes // widest))
        self.split_on_alignment([src.buffer, dst.buffer], vec, lambda vec: self.copy_chunks(
            src, dst, extents, vec, per_thread))

    def copy_chunks(self, src: Side, dst: Side, extents: list[int], vec: int,
                    per_thread: bool) -> None:
        """The copy in `vec`-element chunks along the last dimension: shared out over the
        block's threads, or all of it by each thread (`per_thread`)."""
        chunks = list(extents)
        chunks[-1] //= vec
        total = math.prod(chunks)
        element = memref_type(dst.buffer).element_type
        target = ir.VectorType.get([vec], element) if vec > 1 else element

        def at(chunk: ir.Value) -> list[ir.Value]:
            point = self.unflatten(chunk, chunks)
            if vec > 1:
                point[-1] = arith.muli(point[-1], index(vec))
            return point

        if per_thread and total <= PER_THREAD_COPY_UNROLL_LIMIT:
            # every read before the first write
            points = [at(index(chunk)) for chunk in range(total)]
            values = [cast(self.read(src, src.index(point), vec), target) for point in points]
            for point, value in zip(points, values, strict=True):
                self.write(dst, dst.index(point), value)
            return
        trips = -(-total // self.threads)
        if not per_thread and trips <= COPY_UNROLL_LIMIT:
            # every read before the first write: a thread has all its vectors in flight at
            # once (a loop would wait for each before storing it and fetching the next)
            chunks_of = [add_index(self.tid, k * self.threads) for k in range(trips)]
            whole = trips if total % self.threads == 0 else trips - 1
            points = [at(chunk) for chunk in chunks_of]
            values = [cast(self.read(src, src.index(point), vec), target)
                      for point in points[:whole]]
            if whole < trips:  # the last vectors, of the threads below the copy's end
                guarded(cmp("ult", chunks_of[-1], index(total)), lambda: self.write(
                    dst, dst.index(points[-1]), cast(self.read(src, src.index(points[-1]), vec),
                                                     target)))
            for point, value in zip(points, values, strict=False):
                self.write(dst, dst.index(point), value)
            return
        start, step = (index(0), 1) if per_thread else (self.tid, self.threads)
        loop = scf.ForOp(start, index(total), index(step))
        with ir.InsertionPoint(loop.body):
            point = at(loop.induction_variable)
            self.write(dst, dst.index(point), cast(self.read(src, src.index(point), vec),
                                                   target))
            scf.YieldOp([])

    def copy_async(self, op: ir.Operation, vec: int, src_offsets: list[ir.Value], dst: ir.Value,
                   dst_offsets: list[ir.Value], vectorized: bool) -> None:
        """A pipelined global -> shared copy (corners given for the iteration it fetches):
        the chunks of the synchronous copy, each one cp.async that zero-fills what lies
        outside the tensor when `vectorized` (on_alignment found the source's base and row
        length aligned), else read element by element and stored, as the synchronous copy
        does for a tensor whose alignment does not allow cp.async. A thread's chunks are
        straight-line code when they are few and the same count for every thread
        (COPY_UNROLL_LIMIT), else a loop."""
        src, _, src_shape, _, _, dst_shape = copy_parts(op)
        src_at = Side(src, src_offsets, box_dims(src_shape))
        dst_at = Side(dst, dst_offsets, box_dims(dst_shape))
        chunks = [src_shape[d] for d in src_at.dims]
        chunks[-1] //= vec

        def by_elements(where: list[ir.Value], target: list[ir.Value]) -> None:
            self.write(dst_at, target, self.read_elements(src, where, vec))

        def chunk(flat: ir.Value) -> None:
            point = self.unflatten(flat, chunks)
            point[-1] = arith.muli(point[-1], index(vec))
            where, target = src_at.index(point), dst_at.index(point)
            if not vectorized:
                by_elements(where, target)
                return
            extent = memref.dim(src, index(len(where) - 1))
            if multiple_of(where[-1], vec):  # the base and row length are known aligned
                self.cp_async(src, where, extent, dst, target, vec)
                return
            branch = scf.IfOp(all_of(self.vector_aligned(src, where, vec, extent)),
                              has_else=True)
            with ir.InsertionPoint(branch.then_block):
                self.cp_async(src, where, extent, dst, target, vec)
                scf.YieldOp([])
            with ir.InsertionPoint(branch.else_block):
                by_elements(where, target)
                scf.YieldOp([])

        total = math.prod(chunks)
        if total % self.threads == 0 and total // self.threads <= COPY_UNROLL_LIMIT:
            for turn in range(total // self.threads):  # every thread's chunks, straight line
                chunk(add_index(self.tid, turn * self.threads))
            return
        loop = scf.ForOp(self.tid, index(total), index(self.threads))
        with ir.InsertionPoint(loop.body):
            chunk(loop.induction_variable)
            scf.YieldOp([])

    def gather_async(self, op: ir.Operation, gather: Gather, mapping: dict[ir.Value, ir.Value],
                     slot: ir.Value, vectorized: bool) -> None:
        """A pipelined gather (a T.Parallel filling a shared tile, _async_pipeline.Gather) of
        a later iteration into its ring slot: its values from the loop body taken from
        `mapping` (recomputed for that iteration), each thread's run of `vec` registers one
        cp.async whose src-size is 0 where the run's condition fails (the slot's bytes then
        zero-filled) or the row lies outside the tensor, as the T.Parallel stores zero there;
        a run the column leaves misaligned read element by element. Where the sources are
        not aligned (`vectorized` false) the gather runs as its synchronous T.Parallel."""
        destination = gather.destination(op)
        clone = as_operation(op.clone())
        for inner in walk(clone):
            for number, operand in enumerate(inner.operands):
                if operand == destination:
                    inner.operands[number] = slot
                elif operand in mapping:
                    inner.operands[number] = mapping[operand]
        if not vectorized:
            self.lower_parallel(clone)
            return
        layout, vec = op_layout(clone), gather.vec
        with op.location, ir.InsertionPoint(clone):
            offsets = thread_coordinates(layout, self.tid)
        for reg in range(0, layout.num_registers, vec):
            with op.location, ir.InsertionPoint(clone):
                points = register_coordinates(layout, reg, offsets)
            run = as_operation(clone.clone(ip=ir.InsertionPoint(clone)))
            moved = move_body_before(run, points, clone)
            load, store = moved[gather.load], moved[gather.store]
            select = None if gather.select is None else moved[gather.select]
            live = None if select is None else select.operands[0]
            with op.location, ir.InsertionPoint(store):
                self.gathered_run(load, store, live, vec)
            rest = [inner for at, inner in enumerate(moved)
                    if at not in (gather.load, gather.store, gather.select)]
            for done in (store, select, load):
                if done is not None:
                    done.erase()
            self.lower_block_ops(rest)
        clone.erase()

    def gathered_run(self, load: ir.Operation, store: ir.Operation, live: ir.Value | None,
                     vec: int) -> None:
        """One run of a pipelined gather: cp.async of `vec` elements from the load's indices
        to the store's, nothing read (zeros) where `live` fails."""
        src, dst = load.operands[0], store.operands[1]
        where, target = list(load.operands)[1:], list(store.operands)[2:]
        extent = memref.dim(src, index(len(where) - 1))
        if multiple_of(where[-1], vec):
            self.cp_async(src, where, extent, dst, target, vec, live)
            return
        branch = scf.IfOp(all_of(self.vector_aligned(src, where, vec, extent)), has_else=True)
        with ir.InsertionPoint(branch.then_block):
            self.cp_async(src, where, extent, dst, target, vec, live)
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            value = self.read_elements(src, where, vec)
            if live is not None:
                zeros = vector.BroadcastOp(value.type, zero(memref_type(src).element_type))
                value = arith.select(live, value, zeros.result)
            vector.StoreOp(value, dst, self.shared_where(dst, target))
            scf.YieldOp([])

    def thread_cp_async(self, op: ir.Operation) -> None:
        """T.ptx_cp_async (a tile.copy marked tile.cp_async): this thread's own cp.async of
        its 1 x n box, to where the shared tile's layout puts the box's first element (a run
        within one 16-byte chunk, which the swizzles keep whole: its column a multiple of n);
        element by element where the tensor's base or row length is misaligned for it."""
        src, src_at, src_shape, dst, dst_at, dst_shape = copy_parts(op)
        vec = src_shape[-1]
        if dst in self.rings:
            raise fail(op, "T.ptx_cp_async into a shared ring tilec pipelines itself is not "
                           "supported")
        if dst in self.shared_layouts and not multiple_of(dst_at[-1], vec):
            raise fail(op, f"T.ptx_cp_async into a swizzled shared tile: its column must be a "
                           f"multiple of the {vec} elements it copies (runs of a 16-byte chunk "
                           "stay whole under the swizzle), which tilec cannot prove here")
        where, target = list(src_at), list(dst_at)
        extent = memref.dim(src, index(len(where) - 1))
        branch = scf.IfOp(all_of(self.vector_aligned(src, where, vec, extent)), has_else=True)
        with ir.InsertionPoint(branch.then_block):
            self.cp_async(src, where, extent, dst, target, vec)
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            self.write(Side(dst, target, box_dims(dst_shape)), target,
                       self.read_elements(src, where, vec))
            scf.YieldOp([])

    def cp_async(self, src: ir.Value, where: list[ir.Value], extent: ir.Value, dst: ir.Value,
                 target: list[ir.Value], vec: int, live: ir.Value | None = None) -> None:
        """One cp.async of `vec` elements; src-size counts the elements inside the tensor (0
        for a row outside it, or where `live` is false, which then reads from the tensor's
        start: nothing is read). In a
        tensor of rank > 1 the callers checked the row length and the column to be multiples
        of `vec`, so a chunk is whole or outside: src-size vec or 0, which ptxas makes a
        predicate rather than a zero-fill length."""
        column = where[-1]
        inside_row = cmp("ult", column, extent)
        if len(where) > 1:
            count = arith.select(inside_row, index(vec), index(0))
        else:
            inside = arith.select(inside_row, arith.subi(extent, column), index(0))
            count = arith.minui(inside, index(vec))
        rows = self.in_bounds(src, where[:-1]) if len(where) > 1 else None
        if rows is not None:
            count = arith.select(rows, count, index(0))
        if live is not None:
            count = arith.select(live, count, index(0))
        live = cmp("ne", count, index(0))
        source = [arith.select(live, value, index(0)) for value in where]
        whole_line = vec * element_bytes(memref_type(src).element_type) == 16
        nvgpu.DeviceAsyncCopyOp(dst, self.shared_where(dst, target), src, source,
                                ir.IntegerAttr.get(ir.IndexType.get(), vec), srcElements=count,
                                bypassL1=whole_line or None)

    def vector_ok(self, buffer: ir.Value, where: list[ir.Value], vec: int) -> ir.Value | None:
        """Whether a `vec`-wide access at `where` is in bounds and aligned (global buffers)."""
        last = len(where) - 1
        conditions = [cmp("ult", i, memref.dim(buffer, index(d))) for d, i in
                      enumerate(where[:-1])]
        extent = memref.dim(buffer, index(last))
        conditions.append(cmp("ule", add_index(where[-1], vec), extent))
        return all_of(conditions + self.vector_aligned(buffer, where, vec, extent))

    def vector_aligned(self, buffer: ir.Value, where: list[ir.Value], vec: int,
                       extent: ir.Value) -> list[ir.Value]:
        """Conditions for a global `vec`-wide access at `where` to be vec-element aligned
        (`extent`: the buffer's last dimension); the base pointer's and the row length's
        alignment where split_on_alignment has not checked them around the copy."""
        conditions = [cmp("eq", arith.remui(where[-1], index(vec)), index(0))]
        if buffer in self.known_aligned:
            return conditions
        if len(where) > 1:
            conditions.append(cmp("eq", arith.remui(extent, index(vec)), index(0)))
        conditions.append(self.pointer_aligned[buffer])
        return conditions

    def split_on_alignment(self, buffers: list[ir.Value], vec: int,
                           emit: Callable[[int], None]) -> None:
        """emit(vec) where the global buffers' base pointers and row lengths allow vec-wide
        accesses, checked once around the whole copy, and emit(1) where they do not. Checked
        per vector instead, a vector whose bounds are static has two branches reading the
        same addresses (the vector and its elements one by one); LLVM merges them into one
        load aligned for the elements only, which the NVPTX backend splits into scalars."""
        if vec == 1:
            emit(vec)
            return
        self.on_alignment([(buffer, vec) for buffer in buffers],
                          lambda aligned: emit(vec if aligned else 1))

    def on_alignment(self, accesses: list[tuple[ir.Value, int]],
                     emit: Callable[[bool], None]) -> None:
        """emit(True) where every global buffer of `accesses` (buffer, elements per vector)
        has a 16-byte aligned base and a row length that is a multiple of its vector, with
        those buffers in known_aligned; emit(False) where one has not. One uniform branch
        around what `emit` builds, none when nothing is left to check."""
        checked, condition = self.alignment_check(accesses)
        if condition is None:
            emit(True)
            return
        branch = scf.IfOp(condition, has_else=True)
        with ir.InsertionPoint(branch.then_block):
            self.known_aligned.update(checked)
            emit(True)
            self.known_aligned.difference_update(checked)
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            emit(False)
            scf.YieldOp([])

    def alignment_check(self, accesses: list[tuple[ir.Value, int]]
                        ) -> tuple[list[ir.Value], ir.Value | None]:
        """The global buffers of `accesses` not yet known aligned, and the condition that
        their bases are 16-byte aligned and their row lengths multiples of their vectors
        (None: nothing to check)."""
        checked = []
        conditions = []
        for buffer, vec in accesses:
            if not self.is_global(buffer) or buffer in self.known_aligned:
                continue
            if not any(buffer == known for known in checked):
                checked.append(buffer)
                conditions.append(self.drained_pointer_aligned(buffer) if self.drained
                                  else self.pointer_aligned[buffer])
            shape = memref_type(buffer).shape
            if len(shape) > 1:
                extent = memref.dim(buffer, index(len(shape) - 1))
                if self.drained and ir.ShapedType.is_dynamic_size(shape[-1]):
                    extent = opaque_index(extent)
                conditions.append(cmp("eq", arith.remui(extent, index(vec)), index(0)))
        return checked, all_of(conditions)

    @property
    def drained(self) -> bool:
        """Whether alignment checks are made past a wgmma drain (drained_pointer_aligned)."""
        return self.drained_checks and self.after_wgmma_drain

    @staticmethod
    def drained_pointer_aligned(buffer: ir.Value) -> ir.Value:
        """pointer_aligned's test of `buffer`, made here from its address through an empty asm.
        Past a loop's wgmma drain, LLVM sinks the test of a check made of values from before
        the loop (the epilogue's store) into the loop's exit block, ahead of
        wgmma.wait_group 0; its predicate, live across the accumulators' reads, is then saved
        into a register (P2R) and ptxas 13 serializes every wgmma of the kernel (C7514: "non
        wgmma instructions reading accumulator registers"; conv2d's implicit GEMM on its
        cp.async pipeline)."""
        address = opaque_index(memref.ExtractAlignedPointerAsIndexOp(buffer).result)
        return cmp("eq", arith.remui(address, index(16)), index(0))

    @staticmethod
    def alignment(buffer: ir.Value, corner: ir.Value, vec: int) -> int | None:
        """Byte alignment of a shared/local vector access when the box's corner and the row
        length prove it (the element offset inside the box is a multiple of vec)."""
        type_ = memref_type(buffer)
        offset = constant_index(corner)
        if type_.shape[-1] % vec or offset is None or offset % vec:
            return None
        return vec * element_bytes(type_.element_type)

    def read(self, side: Side, where: list[ir.Value], vec: int) -> ir.Value:
        buffer = side.buffer
        element = memref_type(buffer).element_type
        if not self.is_global(buffer):
            where = self.shared_where(buffer, where)
            if vec == 1:
                return memref.load(buffer, where)
            # a source tile's run starts at a multiple of vec columns, on a box 1 KiB aligned
            aligned = vec * element_bytes(element) if self.is_source_tile(buffer) else \
                self.alignment(buffer, side.offsets[-1], vec)
            return vector.LoadOp(ir.VectorType.get([vec], element), buffer, where,
                                 alignment=aligned).result
        if vec == 1:
            return if_value(self.in_bounds(buffer, where), element,
                            lambda: memref.load(buffer, where), lambda: zero(element))
        vector_type = ir.VectorType.get([vec], element)

        def whole() -> ir.Value:
            # frozen: a vector load whose only users extract its elements is split by LLVM's
            # VectorCombine into element loads, which SimplifyCFG then merges with the same
            # loads of the misaligned branch beside it (split_on_alignment) into one load
            # aligned for an element, and the 16-byte load is gone. A freeze is such a user
            # of another kind; it changes no value that was read
            return frozen(vector.LoadOp(vector_type, buffer, where,
                                        alignment=vec * element_bytes(element)).result)

        return if_value(self.vector_ok(buffer, where, vec), vector_type, whole,
                        lambda: self.read_elements(buffer, where, vec))

    def read_elements(self, buffer: ir.Value, where: list[ir.Value], vec: int) -> ir.Value:
        """`vec` elements of a global buffer read one by one, 0 outside it (a vector when
        vec > 1)."""
        element = memref_type(buffer).element_type
        items = []
        for i in range(vec):
            at = where[:-1] + [add_index(where[-1], i)]
            items.append(if_value(self.in_bounds(buffer, at), element,
                                  lambda at=at: memref.load(buffer, at), lambda: zero(element)))
        if vec == 1:
            return items[0]
        return vector.FromElementsOp(ir.VectorType.get([vec], element), items).result

    def write(self, side: Side, where: list[ir.Value], value: ir.Value) -> None:
        buffer = side.buffer
        vec = ir.VectorType(value.type).shape[0] if isinstance(value.type, ir.VectorType) else 1
        if not self.is_global(buffer):
            where = self.shared_where(buffer, where)
            if vec == 1:
                memref.store(value, buffer, where)
            else:
                vector.StoreOp(value, buffer, where,
                               alignment=self.alignment(buffer, side.offsets[-1], vec))
            return
        if vec == 1:
            guarded(self.in_bounds(buffer, where), lambda: memref.store(value, buffer, where))
            return
        branch = scf.IfOp(self.vector_ok(buffer, where, vec), has_else=True)
        with ir.InsertionPoint(branch.then_block):
            element = memref_type(buffer).element_type
            vector.StoreOp(value, buffer, where, alignment=vec * element_bytes(element))
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            for i in range(vec):
                at = where[:-1] + [add_index(where[-1], i)]
                item = vector.extract(value, [], [i])
                guarded(self.in_bounds(buffer, at),
                        lambda at=at, item=item: memref.store(item, buffer, at))
            scf.YieldOp([])


@dataclass
class Side:
    """One end of a copy: the buffer, the box's corner, the box's non-unit dimensions."""

    buffer: ir.Value
    offsets: list[ir.Value]
    dims: list[int]

    def index(self, point: list[ir.Value]) -> list[ir.Value]:
        """The buffer index of the box element at `point` (one value per non-unit dim)."""
        where = list(self.offsets)
        for value, d in zip(point, self.dims, strict=True):
            where[d] = add_index(where[d], value)
        return where


@register
@dataclass
class LowerTileToGpu(TilePass):
    """Turn the tile kernel into a gpu.func: threads, registers, shared memory, guards."""

    name = "lower-tile-to-gpu"
    summary = "tile kernel -> gpu.module/gpu.func (SIMT: layouts, vector copies, shuffles)"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        entries = [as_operation(op) for op in module.body.operations
                   if as_operation(op).name == "func.func" and "tile.entry" in
                   as_operation(op).attributes]
        if not entries:
            return
        target = target_description(module, self.arch, self.name)
        with module.context, ir.Location.unknown():
            module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
            with ir.InsertionPoint(module.body):
                gpu_module = gpu.GPUModuleOp("kernels")
            gpu_block = gpu_module.regions[0].blocks.append()
        for func in entries:
            kernel_ops = [op for op in walk(func) if op.name == "tile.kernel"]
            if len(kernel_ops) != 1:
                raise fail(func, "an entry function must hold exactly one tile.kernel")
            KernelLowering(func, kernel_ops[0], gpu_block, target.warp_size,
                           target.max_shared_bytes,
                           VECTOR_LOADS_ATTR in module.operation.attributes,
                           target.logical_addressing, range_warp(target),
                           target.has_l2_prefetch,
                           DRAINED_CHECKS_ATTR in module.operation.attributes).build()
        for op in list(module.body.operations):  # T.call_extern's callees go with the kernels
            op = as_operation(op)
            if op.name == "llvm.func" and EXTERN_ATTR in op.attributes:
                op.move_before(gpu_block.operations[0])
