"""lower-tile-structure-to-scf: kernel, parallel, pipelined, for and alloc as plain scf loops.

One thread runs the whole block (`threads` is ignored), so:
- tile.kernel becomes a loop nest over the grid, x innermost (blocks run in CUDA's linear
  order);
- tile.alloc (any scope, wherever it sits in the kernel) becomes a `memref.alloca` without a
  memory space at the start of the function: one set of buffers that every block reuses. A
  block's buffers start uninitialized, as on a GPU, and the stack does not grow with the grid
  (an alloca inside a loop would: lowered scf loops free nothing per iteration); a buffer
  past HEAP_BYTES is a `memref.alloc` freed before the function returns instead (a 16 MB
  fragment on the stack overflowed it: a segfault);
- tile.parallel becomes a loop nest over its extents, tile.pipelined and tile.for plain
  `scf.for` loops (stages and `unroll` are performance hints the CPU does without);
- barriers (gpu.barrier, nvvm.barrier: T.sync_threads) are dropped: the block's one thread
  runs its statements in order; T.sync_grid (an nvvm.barrier marked tile.sync_grid) is an
  error, since no block could wait for the blocks after it. What names one thread of many
  (gpu.thread_id, nvvm.shfl.sync, nvvm.vote.sync: T.get_thread_binding, T.shfl_*,
  T.warp_reduce_*, T.any_sync) has no meaning here and is rejected, as is a call of CUDA C
  code (llvm.call: T.call_extern);
- an element load or store of a global buffer whose index is not provably inside is guarded
  as the CUDA target guards it: out of bounds, a load gives 0 and a store is skipped (a ragged
  last block must not write past a tensor on one target and not the other).
Run lower-tile-ops-to-loops first: the block-level ops must be gone.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import memref, scf

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import BoundsGuard, loop_nest, move_body, ops_named
from tilec.compiler.passes._extern import IKET_EVENT_ATTR
from tilec.compiler.passes._ir_walk import op_error
from tilec.compiler.passes._scalar import bit_width, constant
from tilec.compiler.passes._user_sync import SYNC_GRID_ATTR
from tilec.errors import CompileError

LOOP_OPS = ("tile.parallel", "tile.pipelined", "tile.for")
BARRIERS = ("gpu.barrier", "nvvm.barrier")
PER_THREAD = {
    "gpu.thread_id": "a thread index (T.get_thread_binding, T.thread_binding)",
    "nvvm.shfl.sync": "a warp shuffle (T.shfl_*, T.warp_reduce_*)",
    "nvvm.vote.sync": "a warp vote (T.any_sync, T.all_sync)",
    "llvm.call": "a call of CUDA C code (T.call_extern of T.import_source)",
}


@register
class LowerTileStructureToScf(TilePass):
    """Rewrites the tile region ops and allocations into scf loops and stack buffers."""

    name = "lower-tile-structure-to-scf"
    summary = "tile.kernel/parallel/pipelined/for -> scf.for, tile.alloc -> memref.alloca"

    def run(self, module: ir.Module) -> None:
        leftover = ops_named(
            module.operation,
            ("tile.copy", "tile.gemm", "tile.fill", "tile.reduce", "tile.atomic_add"),
        )
        if leftover:
            raise CompileError(
                f"{self.name}: run lower-tile-ops-to-loops first "
                f"('{leftover[0].operation.name}' at {leftover[0].location})"
            )
        for op in ops_named(module.operation, tuple(PER_THREAD)):
            if IKET_EVENT_ATTR in op.operation.attributes:
                raise op_error(op.operation, "an IKET event (iket.mark, iket.range) is CUDA "
                                             "instrumentation; compile this kernel for CUDA")
            raise op_error(op.operation, f"{PER_THREAD[op.operation.name]} has no meaning on "
                                         "the CPU target, which runs each block as one thread; "
                                         "compile this kernel for CUDA")
        for kernel in ops_named(module.operation, ("tile.kernel",)):
            _guard_global_elements(kernel)
        for op in ops_named(module.operation, BARRIERS):
            if SYNC_GRID_ATTR in op.operation.attributes:
                raise op_error(op.operation, "T.sync_grid waits for every block of the grid, "
                                             "but the CPU target runs the blocks one after "
                                             "another on one thread: the first would wait for "
                                             "blocks that have not started; compile this "
                                             "kernel for CUDA")
            op.operation.erase()
        for op in ops_named(module.operation, LOOP_OPS):
            with ir.InsertionPoint(op), op.location:
                if op.operation.name == "tile.parallel":
                    _lower_parallel(op)
                else:
                    _lower_loop(op)
            op.operation.erase()
        for kernel in ops_named(module.operation, ("tile.kernel",)):
            _lower_kernel(kernel)
            kernel.operation.erase()


def _guard_global_elements(kernel: ir.OpView) -> None:
    """Each global memref.load / memref.store of the kernel runs only where its index is inside
    the buffer; an outside load yields 0."""
    for op in ops_named(kernel.operation, ("memref.load", "memref.store")):
        element = ir.MemRefType(op.memref.type).element_type
        if not isinstance(element, (ir.FloatType, ir.IntegerType, ir.IndexType)):
            continue
        indices = list(op.indices)
        with ir.InsertionPoint(op), op.location:
            inside = BoundsGuard(op.memref, indices, [1] * len(indices)).condition(indices)
            if inside is None:
                continue
            if op.operation.name == "memref.store":
                guarded = scf.IfOp(inside)
                with ir.InsertionPoint(guarded.then_block):
                    memref.store(op.value, op.memref, indices)
                    scf.YieldOp([])
            else:
                guarded = scf.IfOp(inside, [element], has_else=True)
                with ir.InsertionPoint(guarded.then_block):
                    scf.YieldOp([memref.load(op.memref, indices)])
                with ir.InsertionPoint(guarded.else_block):
                    scf.YieldOp([constant(element, 0)])
                op.result.replace_all_uses_with(guarded.result)
        op.operation.erase()


def _lower_parallel(op: ir.OpView) -> None:
    loops = loop_nest(list(op.extents), lambda ivs: None)
    _move_region_into(op.body.blocks[0], loops)


def _lower_loop(op: ir.OpView) -> None:
    loop = scf.ForOp(op.lower, op.upper, op.step)
    with ir.InsertionPoint(loop.body):
        scf.YieldOp([])
    _move_region_into(op.body.blocks[0], [loop])


def _lower_kernel(kernel: ir.OpView) -> None:
    _allocs_to_allocas(kernel)
    with ir.InsertionPoint(kernel), kernel.location:
        # outermost loop over the last grid dimension, innermost over x
        loops = loop_nest(list(reversed(list(kernel.grid))), lambda ivs: None)
    _move_region_into(kernel.body.blocks[0], loops, reverse_indices=True)


def _move_region_into(
    body: ir.Block, loops: list[scf.ForOp], reverse_indices: bool = False
) -> None:
    """Moves a region op's body into the innermost of `loops`; its block arguments become
    the loops' induction variables (outermost first, or innermost first when reversed)."""
    ivs = [loop.induction_variable for loop in loops]
    for argument, iv in zip(body.arguments, reversed(ivs) if reverse_indices else ivs, strict=True):
        argument.replace_all_uses_with(iv)
    innermost_terminator = list(loops[-1].body.operations)[-1]
    move_body(body, innermost_terminator.operation)


HEAP_BYTES = 64 * 1024  # a block buffer larger than this lives on the heap, not the stack
# past this a block buffer is an error at its line: malloc would give no memory (a 4 TB
# T.alloc_local segfaulted on the null buffer) or the machine's all
MAX_BUFFER_BYTES = 1 << 32


def _allocs_to_allocas(kernel: ir.OpView) -> None:
    """Every tile.alloc of the kernel becomes a memref.alloca at the start of the function, or
    past HEAP_BYTES a memref.alloc there with its memref.dealloc before the return; past
    MAX_BUFFER_BYTES an error."""
    function = kernel.operation.parent
    while function.name != "func.func":
        function = function.parent
    function_body = function.regions[0].blocks[0]
    allocs = ops_named(kernel.operation, ("tile.alloc",))
    for alloc in allocs:
        size = _bytes(ir.MemRefType(alloc.buffer.type))
        if size > MAX_BUFFER_BYTES:
            raise op_error(alloc.operation, f"this buffer takes {size} bytes; a buffer of a "
                                            f"block has at most {MAX_BUFFER_BYTES} (4 GiB) on "
                                            "the CPU target (use smaller tiles)")
    # inserting each at the block's start in reverse keeps the allocation order
    for alloc in reversed(allocs):
        with ir.InsertionPoint.at_block_begin(function_body), alloc.location:
            buffer_type = ir.MemRefType(alloc.buffer.type)
            plain_type = ir.MemRefType.get(list(buffer_type.shape), buffer_type.element_type)
            on_heap = _bytes(plain_type) > HEAP_BYTES
            allocate = memref.AllocOp if on_heap else memref.AllocaOp
            buffer = allocate(plain_type, [], [], alignment=64).result
        if on_heap:
            with ir.InsertionPoint(list(function_body.operations)[-1]), alloc.location:
                memref.DeallocOp(buffer)
        alloc.buffer.replace_all_uses_with(buffer)
        alloc.operation.erase()


def _bytes(type_: ir.MemRefType) -> int:
    return math.prod(type_.shape) * max(1, bit_width(type_.element_type) // 8)
