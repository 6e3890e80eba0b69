"""infer-fragment-layout: give every fragment and every T.Parallel one thread/register layout.

A fragment lives in registers spread over the block's threads, so every op that touches it
(copy, T.Parallel, reduce, gemm) must agree on which thread holds which element. This pass
records that agreement as `tile.layout = #tile.linear<...>` on each fragment's tile.alloc and
on each tile.parallel (the mapping of its iteration points onto threads), in one pass over the
kernel:

- anchors: a layout already on a tile.alloc (the user's T.annotate_layout) is kept; a gemm
  accumulator gets its instruction's C fragment where infer-mma-layout chose one
  (`tile.mma_layout`: wgmma over the decision's warpgroups, mma.sync over its warp grid, when
  they span the block's threads), else a near-square block per thread (`gemm_layout`); a
  fragment A or B operand gets the rows (columns) of C its threads hold, whole along K;
- propagation: a reduce destination is the source's slice (the reduced dimension's threads
  hold copies; a shared source or destination is staged through a fragment of its own); a
  fragment->fragment copy (a cast) gives its layout to the other side; a T.Parallel takes
  the layout of a fragment it indexes with all its loop variables, and lends its own to
  fragments it indexes that have none yet;
- a fragment read or written outside T.Parallel (a statement the whole block runs, such as
  `if block_mask[k]:` in a pipelined loop) is held whole by every thread (`whole_tile`):
  each thread then finds any element, at any index, in its own registers; one that another
  anchor laid out otherwise is converted to that layout around the access;
- any fragment left is laid out for 16-byte accesses along its last dimension;
- threads: an op in a T.ws block over part of the block (tile.warpgroups) runs on that block's
  warpgroups, their thread index from 0 (`threads_at`), so its layouts span those threads; a
  fragment is laid out over the threads of the T.ws blocks that use it, and one used by two
  sets of threads (two warpgroups, or a T.ws block and the whole block) is an error; the
  branches of an `if` comparing the thread index with a multiple of the warp size
  (`if T.get_thread_binding() < 32:`) run on their range of threads as a T.ws block does
  (compiler/passes/_thread_range.py), and a count that is not a power of two (a block of 96)
  is laid out over the largest power of two it holds, the threads past it running as copies;
- conversions: where an op needs a fragment in another layout than the one it has (a
  T.Parallel whose threads do not hold that fragment's elements, a gemm operand, a reduce
  into a destination laid out otherwise, a reduction the layout's threads cannot butterfly),
  the op gets a new fragment in the layout it needs and `tile.convert_layout` copies between
  the two before it (and back after it, where it writes);
- a T.Parallel indexing a fragment by anything but its loop variables and constants (an
  offset `jj * 4 + j`, a T.serial variable, a transposed or computed index) reads and writes
  a shared copy of it instead: any thread reaches any element there. The fragment is copied
  into it before the loop (before the loops around it that leave both untouched) and back
  after the loop where the loop writes it. Where every index of a large fragment (a whole copy
  of STAGED_BOX_BYTES or more) is a loop variable, plus an offset the loop's points share (`i
  + s * 16`, s a T.serial variable) or not, or a value they share (its whole dimension), the
  copy holds only the box those indices reach (`staging_box`: the loop's extents, cut by `if
  i < 16:` around the accesses; at most half the fragment), made just before the loop from
  the fragment's box at the offsets: TileLang's sparse MLA backward stores its 32 x 512
  float32 dKV accumulator 16 rows at a time that way, and a whole copy took 64 KiB of shared
  memory where the box takes 32;
- a T.alloc_local / T.alloc_var buffer is each thread's own whole copy, so whatever fills one
  must give every thread every element (as the CPU target's one thread has them): a
  T.Parallel that stores such a buffer at indices moving with its points, read after it,
  runs every point on every thread (`whole_tile`; it lends that layout to no fragment, and
  the fragments it reads are converted to it or read through a shared copy as above), and a
  T.copy from a fragment into one (`T.copy(fragment[i, 0], row)`) reads a shared copy of the
  fragment, where every thread finds the whole box. Each would otherwise fill, on each
  thread, only the elements of its own points or registers.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mlir import ir

from tilec.compiler.layouts.linear import LayoutError, LinearLayout, is_power_of_two, whole_tile
from tilec.compiler.layouts.nvidia import mma_accumulator, wgmma_accumulator
from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._fragment_layout import (
    LAYOUT_ATTR,
    default_layout,
    follows,
    gemm_layout,
    layout_attr,
    layout_of,
    op_layout,
    row_contiguous_accesses,
    row_contiguous_loads,
    set_layout,
)
from tilec.compiler.passes._integer_storage import VIEWS, root_of
from tilec.compiler.passes._ir_walk import (
    ancestors,
    as_operation,
    block_arg_index,
    constant_index,
    copy_parts,
    defining_op,
    is_memref,
    kernels,
    op_error,
    scope,
    walk,
)
from tilec.compiler.passes._mfma import MFMA_ATTR, MfmaPlan
from tilec.compiler.passes._mma_sync import MMA_SYNC_ATTR
from tilec.compiler.passes._scalar import index
from tilec.compiler.passes._scheduling import read_decision, target_description
from tilec.compiler.passes._thread_range import layout_threads, range_warp, thread_range_at
from tilec.compiler.passes._wgmma import WARPGROUP_THREADS, WGMMA_ATTR
from tilec.compiler.passes.check_parallel_updates import THREAD_STREAM_ATTR
from tilec.dialect import AllocOp, ConvertLayoutOp, CopyOp

# the CUDA target's default (an H100 ran the int4 tile GEMM 3.6x faster with it;
# TILEC_SHARED_STORE_RUNS=0 leaves it out): a T.Parallel that no fragment
# lays out and that reads no global row, but stores a shared tile along its rows (a
# dequantize-into-shared decode), gives each thread 16-byte runs of that tile's rows, where
# it had one point per thread per step: the run's stores into a wgmma operand tile are one
# vector, and its row's scale and zero one load each
SHARED_STORE_RUNS_ATTR = "tile.shared_store_runs"
STAGED_BOX_BYTES = 16 * 1024  # a whole shared copy this large is made of the box read only


def kernel_threads(kernel: ir.Operation) -> int:
    return math.prod(ir.DenseI64ArrayAttr(kernel.attributes["threads"]))


def warpgroups_at(op: ir.Operation, kernel: ir.Operation) -> tuple[int, ...] | None:
    """The warpgroups of the innermost `T.ws` block (tile.warpgroups) around `op` that runs on
    part of the block, None where every thread of the block runs it."""
    parent = as_operation(op.parent)
    while parent.name != "tile.kernel":
        if parent.name == "tile.warpgroups":
            groups = tuple(sorted(ir.DenseI64ArrayAttr(parent.attributes["groups"])))
            if WARPGROUP_THREADS * len(groups) != kernel_threads(kernel):
                return groups
        parent = as_operation(parent.parent)
    return None


def threads_at(op: ir.Operation, kernel: ir.Operation, range_warp: int = 32) -> int:
    """How many threads `op`'s layouts span: its T.ws block's warpgroups (their thread index
    starts at 0 there, so layouts are over them alone), else the threads of the branch on the
    thread index around it (compiler/passes/_thread_range.py), else the whole block; a count
    that is not a power of two spans the largest power of two it holds."""
    count = running_threads(op, kernel, range_warp)
    return count if warpgroups_at(op, kernel) is not None else layout_threads(count)


def running_threads(op: ir.Operation, kernel: ir.Operation, range_warp: int = 32) -> int:
    """How many threads run `op`: its T.ws block's, its thread range's or the block's (the
    copies past a layout's span included: a tensor-core instruction needs them as whole warps
    and warpgroups)."""
    groups = threads_of(op, kernel, range_warp)
    if isinstance(groups, tuple):
        return WARPGROUP_THREADS * len(groups)
    return kernel_threads(kernel) if groups is None else groups.count


def first_thread(op: ir.Operation, kernel: ir.Operation, range_warp: int = 32) -> int:
    """The block's thread index of the first thread running `op`: its T.ws block's first
    warpgroup's, its thread range's first (`if 32 <= tx < 288:` starts at 32), else 0."""
    groups = threads_of(op, kernel, range_warp)
    if isinstance(groups, tuple):
        return WARPGROUP_THREADS * min(groups)
    return 0 if groups is None else groups.first


def on_whole_warpgroups(op: ir.Operation, kernel: ir.Operation, range_warp: int = 32) -> bool:
    """Whether the threads running `op` (copies past its layouts' span included) are whole
    hardware warpgroups, warps 4k..4k+3: a count and a first thread that are multiples of
    128. wgmma is issued by such warpgroups only; a range from thread 32 to 287 holds 256
    threads but spans warps 1..8, no warpgroup of the hardware's."""
    return running_threads(op, kernel, range_warp) % WARPGROUP_THREADS == 0 and \
        first_thread(op, kernel, range_warp) % WARPGROUP_THREADS == 0


@dataclass(frozen=True)
class BranchThreads:
    """The threads [first, end) of a branch on the thread index (not a T.ws block)."""

    first: int
    end: int

    @property
    def count(self) -> int:
        return self.end - self.first


Threads = tuple[int, ...] | BranchThreads | None  # warpgroups, a branch's threads, the block


def threads_of(op: ir.Operation, kernel: ir.Operation, warp_size: int) -> Threads:
    """The threads running `op`: a T.ws block's warpgroups, a branch's thread range, or None
    (the whole block)."""
    groups = warpgroups_at(op, kernel)
    if groups is not None:
        return groups
    found = thread_range_at(op, kernel, warp_size)
    return None if found is None else BranchThreads(*found)


def fragment_warpgroups(kernel: ir.Operation, warp_size: int) -> dict[ir.Value, Threads]:
    """The threads (warpgroups of T.ws blocks, a branch's thread range) using each fragment
    (None: the whole block). Its registers belong to those threads, so a fragment used by two
    sets of threads is an error at the second use."""
    found: dict[ir.Value, Threads] = {}
    for op in walk(kernel):
        for operand in op.operands:
            if not is_memref(operand) or scope(operand) != "fragment":
                continue
            groups = threads_of(op, kernel, warp_size)
            if operand not in found:
                found[operand] = groups
            elif found[operand] != groups:
                raise op_error(op, f"a fragment used by {_threads_name(found[operand])} is "
                                   f"used here by {_threads_name(groups)}: its registers "
                                   f"belong to the threads of one of them (copy it through "
                                   f"shared memory)")
    return found


def _threads_name(groups: Threads) -> str:
    if isinstance(groups, BranchThreads):
        return f"threads {groups.first} to {groups.end - 1} (a branch on the thread index)"
    return "the whole block" if groups is None else f"T.ws({', '.join(map(str, groups))})"


Access = tuple[ir.Operation, ir.Value, list[int | None], bool]


def fragment_accesses(parallel: ir.Operation, scopes: tuple[str, ...] = ("fragment",)
                      ) -> list[Access]:
    """(load/store, buffer, loop dimension of each index or None, is_store) in the body, of
    the buffers in `scopes` (fragments unless told)."""
    body = parallel.regions[0].blocks[0]
    found = []
    for op in walk(parallel):
        if op.name == "memref.load":
            buffer, indices, store = op.operands[0], list(op.operands)[1:], False
        elif op.name == "memref.store":
            buffer, indices, store = op.operands[1], list(op.operands)[2:], True
        else:
            continue
        if scope(buffer) in scopes:
            found.append((op, buffer, [block_arg_index(i, body) for i in indices], store))
    return found


def floating_accesses(kernel: ir.Operation) -> list[tuple[ir.Operation, ir.Value, bool]]:
    """(load/store, fragment, is_store) of fragment elements outside every T.Parallel."""
    found = []

    def visit(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = as_operation(child)
                    if child.name == "tile.parallel":
                        continue
                    store = child.name == "memref.store"
                    if child.name == "memref.load" or store:
                        buffer = child.operands[1 if store else 0]
                        if scope(buffer) == "fragment":
                            found.append((child, buffer, store))
                    visit(child)

    visit(kernel)
    return found


# each thread's own copy of the whole buffer (T.alloc_local, T.alloc_var)
PER_THREAD_SCOPES = ("local", "var")


def reads(op: ir.Operation, buffer: ir.Value) -> bool:
    """Whether `op` itself (not an op nested in it) reads `buffer` or a view of it."""
    if op.name in (*VIEWS, "memref.store", "tile.fill"):
        return False
    operands = list(op.operands)
    if op.name == "tile.copy":
        operands = [copy_parts(op)[0]]
    return any(is_memref(value) and root_of(value) == buffer for value in operands)


def fills_per_thread_buffer(parallel: ir.Operation, kernel: ir.Operation) -> bool:
    """Whether `parallel` stores a T.alloc_local / T.alloc_var buffer at an index that is not
    a constant (its points fill different elements) and an op outside the loop reads that
    buffer: each thread must then run every point, or its copy keeps only its own points'
    elements. A constant index is a point's temporary (check-parallel-updates rejects one
    whose value the loop's variables decide), T.rng_init's state each thread's own stream."""
    filled = set()
    for op in walk(parallel):
        if op.name != "memref.store" or scope(op.operands[1]) not in PER_THREAD_SCOPES:
            continue
        buffer = root_of(op.operands[1])
        owner = defining_op(buffer)
        if owner is not None and THREAD_STREAM_ATTR in owner.attributes:
            continue
        if any(constant_index(value) is None for value in list(op.operands)[2:]):
            filled.add(buffer)
    return bool(filled) and any(
        reads(op, buffer) and not any(outer == parallel for outer in ancestors(op))
        for op in walk(kernel) for buffer in filled)


def loop_extents(parallel: ir.Operation) -> tuple[int, ...]:
    return tuple(ir.DenseI64ArrayAttr(parallel.attributes["extents"]))


def overwrites(parallel: ir.Operation, fragment: ir.Value) -> bool:
    """Whether a T.Parallel stores every element of `fragment` (or of a shared tile) and reads
    none: its one access of it is a store at the loop's own variables, directly in its body
    (under no branch), over the fragment's whole shape. Converted for such a loop, the
    fragment needs no conversion in, only the one back out (a cast copy into a fragment laid
    out otherwise: P from split scores, which otherwise went through shared memory twice);
    plan-shared-memory lets a shared tile so filled in a loop take bytes other tiles use
    elsewhere in the loop's body."""
    accesses = [(op, dims, store) for op, known, dims, store
                in fragment_accesses(parallel, (scope(fragment),)) if known == fragment]
    if len(accesses) != 1:
        return False
    op, dims, store = accesses[0]
    return store and as_operation(op.parent) == parallel and None not in dims and \
        len(set(dims)) == len(dims) and spans(parallel, fragment, dims)


def spans(parallel: ir.Operation, fragment: ir.Value, dims: list[int | None]) -> bool:
    """Whether the loop variables indexing `fragment` run over its dimensions exactly."""
    extents = loop_extents(parallel)
    return all(d is None or extents[d] == extent
               for d, extent in zip(dims, shape_of(fragment), strict=True))


def check_bounds(parallel: ir.Operation) -> None:
    """A loop variable must not run past the fragment dimension it indexes."""
    extents = loop_extents(parallel)
    for access, fragment, dims, _ in fragment_accesses(parallel):
        for position, (d, extent) in enumerate(zip(dims, shape_of(fragment), strict=True)):
            if d is not None and extents[d] > extent:
                raise op_error(access, f"this T.Parallel variable runs over {extents[d]} values "
                                       f"but indexes dimension {position} of a fragment of "
                                       f"shape {list(shape_of(fragment))}: the elements past "
                                       f"{extent - 1} do not exist")


def stage_reduce_in_fragments(kernel: ir.Operation, reduce: ir.Operation) -> None:
    """A reduce from or into a shared buffer (TileLang allows both) works on a fragment of its
    own: the source copied into one before it, the destination copied out of one after it
    (and into it first when the reduce accumulates: clear = false)."""
    body = kernel.regions[0].blocks[0]

    def fragment_like(buffer: ir.Value) -> ir.Value:
        type_ = ir.MemRefType(buffer.type)
        with reduce.location, ir.InsertionPoint.at_block_begin(body):
            return AllocOp(ir.MemRefType.get(list(type_.shape), type_.element_type,
                                             memory_space=ir.StringAttr.get("fragment"))).result

    def copy(src: ir.Value, dst: ir.Value) -> ir.Operation:
        shape = list(ir.MemRefType(src.type).shape)
        with reduce.location, ir.InsertionPoint(reduce):
            zeros = [index(0)] * len(shape)
            return as_operation(CopyOp(src, zeros, shape, dst, zeros, shape))

    src, dst = reduce.operands[0], reduce.operands[1]
    if scope(src) == "shared":
        staged = fragment_like(src)
        copy(src, staged)
        reduce.operands[0] = staged
    if scope(dst) == "shared":
        staged = fragment_like(dst)
        if not ir.BoolAttr(reduce.attributes["clear"]).value:
            copy(dst, staged)
        copy(staged, dst).move_after(reduce)
        reduce.operands[1] = staged


def writes(op: ir.Operation, buffer: ir.Value) -> bool:
    """Whether `op` or an op inside it may write `buffer`."""
    for inner in [op, *walk(op)]:
        operands = list(inner.operands)
        if inner.name == "memref.store" and operands[1] == buffer:
            return True
        if inner.name == "tile.copy" and copy_parts(inner)[3] == buffer:
            return True
        if inner.name in ("tile.fill", "tile.atomic_add") and operands[0] == buffer:
            return True
        if inner.name in ("tile.reduce", "tile.convert_layout") and operands[1] == buffer:
            return True
        if inner.name == "tile.gemm" and operands[2] == buffer:
            return True
    return False


def hoisted(op: ir.Operation, fragment: ir.Value) -> ir.Operation:
    """The outermost of `op` and the loops around it inside the kernel that leave `fragment`
    as it is (a copy of it made before that op stays valid through them)."""
    chosen = op
    parent = op.parent
    while parent is not None and as_operation(parent).name in ("tile.for", "scf.for"):
        parent = as_operation(parent)
        if writes(parent, fragment):
            break
        chosen, parent = parent, parent.parent
    return chosen


@dataclass(frozen=True)
class BoxIndex:
    """How a T.Parallel indexes one dimension of a staged fragment: loop dimension `dim`
    plus `offset` (a value the loop's points share; None: no offset) over `extent` values,
    or (dim None) the access's own index over the whole dimension."""

    dim: int | None
    offset: ir.Value | None
    extent: int


def _body_of(parallel: ir.Operation) -> ir.Block:
    return parallel.regions[0].blocks[0]


def _inside(op: ir.Operation, parallel: ir.Operation) -> bool:
    return op == parallel or any(outer == parallel for outer in ancestors(op))


def _invariant(value: ir.Value, parallel: ir.Operation) -> bool:
    """Whether `value` is the same for every point of `parallel`: defined outside it, or
    computed in it by arith ops from such values."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return not _inside(as_operation(owner.owner), parallel)
    op = as_operation(owner)
    if not _inside(op, parallel):
        return True
    return op.name.startswith("arith.") and not len(op.regions) and all(
        _invariant(operand, parallel) for operand in op.operands)


def _loop_index(value: ir.Value, parallel: ir.Operation) -> tuple[int, ir.Value | None] | None:
    """(loop dimension, offset) of an index that is a loop variable, or one plus a value
    the loop's points share; None for any other index."""
    body = _body_of(parallel)
    dim = block_arg_index(value, body)
    if dim is not None:
        return dim, None
    op = defining_op(value)
    if op is None or op.name != "arith.addi":
        return None
    for this, other in ((op.operands[0], op.operands[1]), (op.operands[1], op.operands[0])):
        dim = block_arg_index(this, body)
        if dim is not None and _invariant(other, parallel):
            return dim, other
    return None


def _guard_bound(access: ir.Operation, parallel: ir.Operation, dim: int) -> int | None:
    """The bound `if i < K:` (also `<=`, and `and`s of such) puts on loop dimension `dim`
    around `access`: the tightest of the scf.ifs holding it in their then-regions."""
    body = _body_of(parallel)
    bound = None
    child = access
    for outer in ancestors(access):
        if outer == parallel:
            break
        if outer.name == "scf.if" and child.block == outer.regions[0].blocks[0]:
            for leaf in _and_leaves(outer.operands[0]):
                found = _upper_bound(leaf, body, dim)
                if found is not None:
                    bound = found if bound is None else min(bound, found)
        child = outer
    return bound


def _and_leaves(condition: ir.Value) -> list[ir.Value]:
    op = defining_op(condition)
    if op is None or op.name != "arith.andi":
        return [condition]
    return [leaf for operand in op.operands for leaf in _and_leaves(operand)]


# arith.cmpi predicates: slt, sle, ult, ule (i < K, i <= K)
_LESS_THAN = {2: 0, 3: 1, 6: 0, 7: 1}


def _upper_bound(condition: ir.Value, body: ir.Block, dim: int) -> int | None:
    op = defining_op(condition)
    if op is None or op.name != "arith.cmpi" or block_arg_index(op.operands[0], body) != dim:
        return None
    predicate = ir.IntegerAttr(op.attributes["predicate"]).value
    limit = constant_index(op.operands[1])
    if predicate not in _LESS_THAN or limit is None:
        return None
    return limit + _LESS_THAN[predicate]


def staging_box(parallel: ir.Operation, fragment: ir.Value, accesses: list[Access]
                ) -> list[BoxIndex] | None:
    """The box of `fragment` a T.Parallel reaches, one BoxIndex per dimension, where every
    access indexes each dimension alike (the same loop variable and offset) by a loop
    variable with an offset or without, or by a value its points share; None where an index
    is anything else, where the box holds more than half the fragment or the fragment's
    whole copy is smaller than STAGED_BOX_BYTES (the whole copy is made once, before the
    loops around the T.Parallel that leave the fragment as it is; a box copy stands before
    the T.Parallel, inside them)."""
    shape = shape_of(fragment)
    if math.prod(shape) * elem_bytes(fragment) < STAGED_BOX_BYTES:
        return None
    extents = loop_extents(parallel)
    box: list[BoxIndex] | None = None
    for access, _, _, store in accesses:
        indices = list(access.operands)[2 if store else 1:]
        found = []
        for position, value in enumerate(indices):
            loop_index = _loop_index(value, parallel)
            if loop_index is None:
                if not _invariant(value, parallel):
                    return None
                found.append(BoxIndex(None, None, shape[position]))
                continue
            dim, offset = loop_index
            bound = _guard_bound(access, parallel, dim)
            extent = extents[dim] if bound is None else max(1, min(extents[dim], bound))
            found.append(BoxIndex(dim, offset, extent))
        if box is None:
            box = found
            continue
        for number, (known, new) in enumerate(zip(box, found, strict=True)):
            if known.dim != new.dim or known.offset != new.offset:
                return None
            box[number] = BoxIndex(known.dim, known.offset, max(known.extent, new.extent))
    if box is None or math.prod(index.extent for index in box) * 2 > math.prod(shape):
        return None
    return box


def _shared_offset(value: ir.Value, parallel: ir.Operation) -> ir.Value:
    """`value` (an offset the loop's points share) before `parallel`: cloned there with the
    arith ops computing it where they stand inside the loop."""
    owner = value.owner
    if isinstance(owner, ir.Block) or not _inside(as_operation(owner), parallel):
        return value
    op = as_operation(owner)
    operands = [_shared_offset(operand, parallel) for operand in op.operands]
    clone = as_operation(op.clone())
    for number, operand in enumerate(operands):
        clone.operands[number] = operand
    return clone.results[list(op.results).index(value)]


def needed_layout(loop: LinearLayout, dims: list[int | None], shape: tuple[int, ...]
                  ) -> LinearLayout:
    """The layout a fragment indexed by `dims` of the loop needs to follow it: the loop's
    layout on those dimensions, the others (constant indices) whole in registers."""
    moving = [d for d in dims if d is not None]
    if len(set(moving)) != len(moving):
        raise LayoutError("a fragment indexed twice by one loop variable")
    picked = loop.select(moving)
    positions = [i for i, d in enumerate(dims) if d is not None]
    return picked.extend(positions, shape)


@contextmanager
def reported_at(op: ir.Operation) -> Iterator[None]:
    """A LayoutError inside becomes a CompileError at `op` (the kernel's source line)."""
    try:
        yield
    except LayoutError as error:
        raise op_error(op, str(error)) from None


def elem_bytes(value: ir.Value) -> int:
    return elem_bytes_of(ir.MemRefType(value.type).element_type)


def elem_bytes_of(element: ir.Type) -> int:
    return max(1, getattr(element, "width", 32) // 8)


def is_global_tensor(value: ir.Value) -> bool:
    """A kernel's tensor (no memory space) rather than a shared, fragment or local buffer."""
    return ir.MemRefType(value.type).memory_space is None


def shape_of(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.MemRefType(value.type).shape)


class _KernelInference:
    def __init__(self, kernel: ir.Operation, warp_size: int, range_warp: int,
                 shared_store_runs: bool = False):
        self.kernel = kernel
        self.shared_store_runs = shared_store_runs  # the module's SHARED_STORE_RUNS_ATTR
        self.warp_size = warp_size  # lanes of a warp (wavefront): where lane bits end
        self.range_warp = range_warp  # branches on the thread index: _thread_range.py
        self.threads = layout_threads(kernel_threads(kernel))
        for reduce in [op for op in walk(kernel) if op.name == "tile.reduce"]:
            stage_reduce_in_fragments(kernel, reduce)
        ops = list(walk(kernel))
        self.allocs = [op for op in ops if op.name == "tile.alloc"
                       and scope(op.results[0]) == "fragment"]
        # the threads each fragment is laid out over (those of the T.ws blocks using it)
        self.fragment_groups = fragment_warpgroups(kernel, range_warp)
        self.gemms = [op for op in ops if op.name == "tile.gemm"]
        self.reduces = [op for op in ops if op.name == "tile.reduce"]
        self.parallels = [op for op in ops if op.name == "tile.parallel"]
        # each T.Parallel's fragment accesses, read once: propagation only sets attributes
        # (the conversions, which change operands, come after it)
        self.propagated_accesses: dict[ir.Operation, list[Access]] = {}
        self.floating = floating_accesses(kernel)
        self.copies = [op for op in ops if op.name == "tile.copy"
                       and scope(op.operands[0]) == "fragment" and scope(
                           copy_parts(op)[3]) == "fragment"]
        # fragment -> T.alloc_local / T.alloc_var copies: every thread needs the whole box
        self.private_copies = [op for op in ops if op.name == "tile.copy"
                               and scope(op.operands[0]) == "fragment" and scope(
                                   copy_parts(op)[3]) in PER_THREAD_SCOPES]
        # T.Parallel loops filling per-thread buffers: every thread runs every point
        self.replicated = [op for op in self.parallels if fills_per_thread_buffer(op, kernel)]
        # a fragment or T.Parallel of T.ws blocks only is laid out over their threads
        spans = [self.fragment_threads(op.results[0]) for op in self.allocs] + [
            self.parallel_threads(op) for op in self.parallels]
        odd = [threads for threads in spans if not is_power_of_two(threads)]
        if odd:
            raise op_error(kernel, f"fragments and T.Parallel need a power-of-two thread "
                                   f"count on this target, not {odd[0]}")

    def parallel_threads(self, parallel: ir.Operation) -> int:
        groups = warpgroups_at(parallel, self.kernel)
        return self.threads if groups is None else WARPGROUP_THREADS * len(groups)

    def fragment_threads(self, fragment: ir.Value) -> int:
        groups = self.fragment_groups.get(fragment)
        if isinstance(groups, BranchThreads):
            return layout_threads(groups.count)
        return self.threads if groups is None else WARPGROUP_THREADS * len(groups)

    def alloc_of(self, fragment: ir.Value, where: ir.Operation) -> ir.Operation:
        owner = defining_op(fragment)
        if owner is None or owner.name != "tile.alloc":
            raise op_error(where, "fragment is not a tile.alloc result")
        return owner

    def offer(self, fragment: ir.Value, layout: LinearLayout, where: ir.Operation) -> bool:
        """Give `fragment` this layout if it has none yet (True when it changed)."""
        owner = self.alloc_of(fragment, where)
        if op_layout(owner) is not None:
            return False
        if layout.shape != shape_of(fragment):
            raise op_error(where, f"a fragment of shape {list(shape_of(fragment))} cannot take "
                                  f"a layout over {list(layout.shape)}")
        set_layout(owner, layout)
        return True

    def run(self) -> None:
        for parallel in self.parallels:
            check_bounds(parallel)
        for gemm in self.gemms:
            self.anchor_gemm(gemm)
        for access, fragment, _ in self.floating:
            self.offer(fragment, whole_tile(shape_of(fragment), self.fragment_threads(fragment),
                                         self.warp_size),
                       access)
        for parallel in self.replicated:
            with reported_at(parallel):
                set_layout(parallel, whole_tile(loop_extents(parallel), threads_at(
                    parallel, self.kernel, self.range_warp), self.warp_size))
        while True:
            while self.propagate():
                pass
            pending = [op for op in self.allocs if LAYOUT_ATTR not in op.attributes]
            if not pending:
                break
            pending.sort(key=lambda op: any(r.operands[1] == op.results[0]
                                            for r in self.reduces))
            value = pending[0].results[0]
            with reported_at(pending[0]):
                set_layout(pending[0], default_layout(shape_of(value), self.fragment_threads(
                    value), elem_bytes(value), self.warp_size))
        for parallel in self.parallels:
            if LAYOUT_ATTR not in parallel.attributes:
                self.fallback_parallel(parallel)
        for gemm in self.gemms:
            self.convert_gemm_operands(gemm)
        for reduce in self.reduces:
            self.convert_reduce(reduce)
        for parallel in self.parallels:
            self.convert_parallel(parallel)
        for access, fragment, store in self.floating:
            self.convert_floating(access, fragment, store)
        for copy in self.private_copies:
            if not layout_of(copy.operands[0]).holds_whole_tile():
                copy.operands[0] = self.staged(copy.operands[0], copy, written=False)

    # ----- anchors ------------------------------------------------------------------------
    def accumulator_layout(self, gemm: ir.Operation, m: int, n: int) -> LinearLayout:
        """The instruction's C fragment where infer-mma-layout chose one for the whole block,
        else the SIMT gemm's."""
        # infer-mma-layout reads kernel_threads from here: import its names when running
        from tilec.compiler.passes.infer_mma_layout import ACCUMULATOR_LAYOUT_ATTR, MMA_ATTR

        owner = defining_op(gemm.operands[2])
        mma = read_decision(gemm, MMA_ATTR)
        threads = threads_at(gemm, self.kernel, self.range_warp)
        if mma is not None and owner is not None and ACCUMULATOR_LAYOUT_ATTR in owner.attributes:
            try:
                if mma["kind"] == "wgmma" and 128 * int(mma["warpgroups"]) == threads:
                    return wgmma_accumulator(m, n, int(mma["warpgroups"]),
                                             mma.get("split") == "n")
                if mma["kind"] == "mma.sync":
                    warps_m, warps_n = (int(w) for w in mma["warps"])
                    if 32 * warps_m * warps_n == threads:
                        return mma_accumulator(m, n, warps_m, warps_n)
            except LayoutError:
                pass  # a tile the instruction's fragment does not cover: SIMT's layout
        with reported_at(gemm):
            return gemm_layout(m, n, threads, self.warp_size)

    def anchor_gemm(self, gemm: ir.Operation) -> None:
        if WGMMA_ATTR in gemm.attributes or MMA_SYNC_ATTR in gemm.attributes or \
                MFMA_ATTR in gemm.attributes:
            return  # plan-wgmma-gemms / -mma-sync-gemms / -mfma-gemms laid it out for it
        a, b, c = gemm.operands[0], gemm.operands[1], gemm.operands[2]
        if scope(c) != "fragment":
            raise op_error(gemm, "T.gemm accumulates into a fragment only")
        m, n = shape_of(c)
        if layout_of(c) is None:
            self.offer(c, self.accumulator_layout(gemm, m, n), gemm)
        for operand in (a, b):
            if scope(operand) == "fragment":
                self.offer(operand, self.operand_layout(gemm, operand), gemm)

    def operand_layout(self, gemm: ir.Operation, operand: ir.Value) -> LinearLayout:
        """Operand rows (or columns) where C's threads need them, whole along K."""
        c_layout = layout_of(gemm.operands[2])
        is_a = operand == gemm.operands[0]
        transpose = ir.BoolAttr(gemm.attributes["transpose_a" if is_a else "transpose_b"]).value
        c_dim = 0 if is_a else 1
        # the operand dimension that runs along C's dimension c_dim
        along = (1 if transpose else 0) if is_a else (0 if transpose else 1)
        kept = c_layout.select([c_dim])
        with reported_at(gemm):
            return kept.extend([along], shape_of(operand))

    # ----- propagation ----------------------------------------------------------------------
    def propagate(self) -> bool:
        changed = False
        for reduce in self.reduces:
            src, dst = reduce.operands[0], reduce.operands[1]
            dim = ir.IntegerAttr(reduce.attributes["dim"]).value
            source = layout_of(src) if scope(src) == "fragment" else None
            if source is not None and scope(dst) == "fragment" and layout_of(dst) is None:
                changed |= self.offer(dst, self.reduced_layout(reduce, source, dim), reduce)
        for copy in self.copies:
            src, dst = copy.operands[0], copy_parts(copy)[3]
            if shape_of(src) != shape_of(dst):
                continue
            for have, want in ((src, dst), (dst, src)):
                if layout_of(have) is not None and layout_of(want) is None:
                    changed |= self.offer(want, layout_of(have), copy)
        for parallel in self.parallels:
            changed |= self.propagate_parallel(parallel)
        return changed

    def reduced_layout(self, reduce: ir.Operation, source: LinearLayout, dim: int
                       ) -> LinearLayout:
        dst = reduce.operands[1]
        sliced = source.slice(dim)
        if sliced.shape != shape_of(dst):
            raise op_error(reduce, f"a fragment reduce into shape {list(shape_of(dst))} (the "
                                   f"source's shape without dim {dim} is {list(sliced.shape)})")
        return sliced

    def accesses_before_conversion(self, parallel: ir.Operation) -> list[Access]:
        if parallel not in self.propagated_accesses:
            self.propagated_accesses[parallel] = fragment_accesses(parallel)
        return self.propagated_accesses[parallel]

    def propagate_parallel(self, parallel: ir.Operation) -> bool:
        extents = loop_extents(parallel)
        accesses = self.accesses_before_conversion(parallel)
        changed = False
        if LAYOUT_ATTR not in parallel.attributes:
            for _, fragment, dims, _ in accesses:
                layout = layout_of(fragment)
                if layout is None or None in dims or sorted(dims) != list(range(len(
                        extents))) or not spans(parallel, fragment, dims):
                    continue
                with reported_at(parallel):
                    set_layout(parallel, layout.extend(dims, extents))
                changed = True
                break
        loop = op_layout(parallel)
        if loop is None or any(parallel == known for known in self.replicated):
            return changed  # a replicated loop's layout is no fragment's
        for _, fragment, dims, _ in accesses:
            if layout_of(fragment) is not None or None in dims or len(set(dims)) != len(dims):
                continue
            if tuple(loop.shape[d] for d in dims) != shape_of(fragment):
                continue
            changed |= self.offer(fragment, loop.select(dims), parallel)
        return changed

    def fallback_parallel(self, parallel: ir.Operation) -> None:
        """No fragment fixes this loop's mapping: follow a partially indexed fragment if any,
        else spread the points over the threads."""
        extents = loop_extents(parallel)
        for _, fragment, dims, _ in self.accesses_before_conversion(parallel):
            layout = layout_of(fragment)
            if layout is not None and None not in dims and len(set(dims)) == len(
                    dims) and spans(parallel, fragment, dims):
                with reported_at(parallel):
                    set_layout(parallel, layout.extend(dims, extents))
                return
        # a gather into on-chip buffers reading global rows along the last dimension: 16
        # bytes of them per thread (whole vectors); else one point per thread per step, the
        # scalar accesses of consecutive threads coalescing (stores to global memory stay so)
        gather = not any(inner.name == "memref.store" and is_global_tensor(inner.operands[1])
                         for inner in walk(parallel))
        rows = row_contiguous_loads(parallel, is_global_tensor) if gather else []
        if gather and not rows and self.shared_store_runs:
            # on-chip only, a decode into a shared tile: 16 bytes of its rows per thread
            rows = row_contiguous_accesses(parallel, "memref.store",
                                           lambda value: scope(value) == "shared")
        widest = max((elem_bytes_of(element) for _, element in rows), default=16)
        with reported_at(parallel):
            threads = threads_at(parallel, self.kernel, self.range_warp)
            set_layout(parallel, default_layout(extents, threads, widest, self.warp_size))

    # ----- conversions ----------------------------------------------------------------------
    def converted(self, fragment: ir.Value, layout: LinearLayout, op: ir.Operation,
                  read: bool, write: bool) -> ir.Value:
        """A new fragment in `layout` standing in for `fragment` at `op`: converted from it
        before op (when op reads it) and back after op (when op writes it)."""
        owner = self.alloc_of(fragment, op)
        twin = as_operation(owner.clone(ip=ir.InsertionPoint(owner)))
        twin.move_after(owner)
        twin.attributes[LAYOUT_ATTR] = layout_attr(layout)
        new = twin.results[0]
        self.allocs.append(twin)
        with op.location:
            if read:
                with ir.InsertionPoint(op):
                    ConvertLayoutOp(fragment, new)
            if write:
                with ir.InsertionPoint(op):
                    back = as_operation(ConvertLayoutOp(new, fragment))
                back.move_after(op)
        return new

    def convert_gemm_operands(self, gemm: ir.Operation) -> None:
        if WGMMA_ATTR in gemm.attributes or MMA_SYNC_ATTR in gemm.attributes:
            return  # its operands are laid out as the instruction reads them
        mfma = MfmaPlan.of(gemm) if MFMA_ATTR in gemm.attributes else None
        for position in (0, 1):
            operand = gemm.operands[position]
            if scope(operand) != "fragment":
                continue
            wanted = self.operand_layout(gemm, operand) if mfma is None else (
                mfma.a, mfma.b)[position]
            if layout_of(operand) != wanted:
                gemm.operands[position] = self.converted(operand, wanted, gemm, True, False)

    def convert_reduce(self, reduce: ir.Operation) -> None:
        src, dst = reduce.operands[0], reduce.operands[1]
        if scope(src) != "fragment" or scope(dst) != "fragment":
            return
        dim = ir.IntegerAttr(reduce.attributes["dim"]).value
        source = layout_of(src)
        try:
            source.reduction_bits(dim)
        except LayoutError:
            source = default_layout(shape_of(src), self.fragment_threads(src), elem_bytes(src),
                                    self.warp_size)
            reduce.operands[0] = self.converted(src, source, reduce, True, False)
        wanted = self.reduced_layout(reduce, source, dim)
        if layout_of(dst) != wanted:
            clear = ir.BoolAttr(reduce.attributes["clear"]).value
            reduce.operands[1] = self.converted(dst, wanted, reduce, not clear, True)

    def convert_floating(self, access: ir.Operation, fragment: ir.Value, store: bool) -> None:
        """An element access the whole block runs reads every thread's own copy: a fragment
        another anchor laid out otherwise is converted to the whole tile around it."""
        if layout_of(fragment).holds_whole_tile():
            return
        whole = whole_tile(shape_of(fragment), self.fragment_threads(fragment), self.warp_size)
        access.operands[1 if store else 0] = self.converted(fragment, whole, access, True, store)

    def convert_parallel(self, parallel: ir.Operation) -> None:
        loop = op_layout(parallel)
        twins: dict[tuple, ir.Value] = {}
        accesses = fragment_accesses(parallel)
        free = [fragment for access, fragment, dims, _ in accesses if not spans(
            parallel, fragment, dims) or any(
            d is None and constant_index(value) is None for d, value in zip(
                dims, list(access.operands)[2 if access.name == "memref.store" else 1:],
                strict=True))]
        staged: dict[ir.Value, ir.Value] = {}
        for fragment in free:
            if fragment in staged:
                continue
            own = [access for access in accesses if access[1] == fragment]
            written = any(store for _, _, _, store in own)
            box = staging_box(parallel, fragment, own)
            if box is None:
                staged[fragment] = self.staged(fragment, parallel, written)
                for access, _, _, store in own:
                    access.operands[1 if store else 0] = staged[fragment]
                continue
            staged[fragment] = self.staged_box(fragment, parallel, written, box)
            body = _body_of(parallel)
            for access, _, _, store in own:
                position = 1 if store else 0
                access.operands[position] = staged[fragment]
                for number, part in enumerate(box):
                    if part.dim is not None:
                        access.operands[position + 1 + number] = body.arguments[part.dim]
        for access, fragment, dims, store in accesses:
            position = 1 if store else 0
            if fragment in staged:
                continue
            if layout_of(fragment) is not None and follows(layout_of(fragment), loop, dims):
                continue
            key = (fragment, tuple(dims))
            if key not in twins:
                stores = [store for op, f, d, store in fragment_accesses(parallel)
                          if f == fragment and tuple(d) == tuple(dims)]
                with reported_at(access):
                    layout = needed_layout(loop, dims, shape_of(fragment))
                twins[key] = self.converted(fragment, layout, parallel,
                                            not overwrites(parallel, fragment), any(stores))
            access.operands[position] = twins[key]

    def staged_box(self, fragment: ir.Value, parallel: ir.Operation, written: bool,
                   box: list[BoxIndex]) -> ir.Value:
        """A shared copy of the box of `fragment` that `parallel` reaches (staging_box),
        indexed by the loop's variables where the fragment was indexed by them plus an offset:
        filled just before the loop from the fragment's box at the offsets, copied back after
        it when the loop writes it."""
        owner = self.alloc_of(fragment, parallel)
        type_ = ir.MemRefType(fragment.type)
        shape = [part.extent for part in box]
        with owner.location, ir.InsertionPoint(owner):
            shared = as_operation(AllocOp(ir.MemRefType.get(
                shape, type_.element_type, memory_space=ir.StringAttr.get("shared"))))
        shared.move_after(owner)
        copy = shared.results[0]
        with parallel.location, ir.InsertionPoint(parallel):
            corner = [index(0) if part.offset is None else _shared_offset(part.offset, parallel)
                      for part in box]
            zeros = [index(0)] * len(shape)
            CopyOp(fragment, corner, shape, copy, zeros, shape)
            if written:
                back = as_operation(CopyOp(copy, zeros, shape, fragment, corner, shape))
                back.move_after(parallel)
        return copy

    def staged(self, fragment: ir.Value, parallel: ir.Operation, written: bool) -> ir.Value:
        """A shared copy of `fragment` for `parallel` (a T.Parallel, or a copy into a
        per-thread buffer) to index freely: filled before it (or before the enclosing loops
        that neither write the fragment nor are written back in), copied back into the
        fragment after it when the op writes it."""
        owner = self.alloc_of(fragment, parallel)
        type_ = ir.MemRefType(fragment.type)
        shape = list(type_.shape)
        with owner.location, ir.InsertionPoint(owner):
            shared = as_operation(AllocOp(ir.MemRefType.get(
                shape, type_.element_type, memory_space=ir.StringAttr.get("shared"))))
        shared.move_after(owner)
        copy = shared.results[0]
        anchor = parallel if written else hoisted(parallel, fragment)
        with parallel.location:
            with ir.InsertionPoint(anchor):
                zeros = [index(0)] * len(shape)
                CopyOp(fragment, zeros, shape, copy, zeros, shape)
            if written:
                with ir.InsertionPoint(parallel):
                    back = as_operation(CopyOp(copy, zeros, shape, fragment, zeros, shape))
                back.move_after(parallel)
        return copy


@register
@dataclass
class InferFragmentLayout(TilePass):
    """Record a #tile.linear layout on every fragment alloc and T.Parallel; convert where
    two ops need a fragment in different layouts."""

    name = "infer-fragment-layout"
    summary = "thread/register layout of fragments and T.Parallel loops (tile.layout)"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        target = target_description(module, self.arch, self.name)
        runs = SHARED_STORE_RUNS_ATTR in module.operation.attributes
        for kernel in kernels(module):
            _KernelInference(kernel, target.warp_size, range_warp(target), runs).run()
