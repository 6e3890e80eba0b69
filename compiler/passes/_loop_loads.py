"""What the loop-load prefetch passes share: which loops may have their global loads issued
ahead (none of their ops writes memory another thread reads, waits or calls), which of their ops
are such loads (top-level far loads and load-only bounds-checked branches, addressed from the
loop variable and values before the loop), and cloning those for another iteration."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, llvm, memref

from tilec.compiler.passes._ir_walk import as_operation, constant_index, defining_op, walk
from tilec.compiler.passes._scalar import bit_width

PURE_PREFIXES = ("arith.", "index.", "math.", "affine.apply")
PURE_OPS = ("llvm.freeze", "llvm.bitcast", "llvm.mlir.constant", "llvm.mlir.poison",
            "llvm.mlir.undef", "ub.poison", "nvvm.prmt", "builtin.unrealized_conversion_cast")
# vector ops that touch memory (the others compute on values)
VECTOR_MEMORY = ("vector.load", "vector.store", "vector.transfer_read", "vector.transfer_write",
                 "vector.maskedload", "vector.maskedstore", "vector.gather", "vector.scatter",
                 "vector.expandload", "vector.compressstore", "vector.print")
# ops a loop may hold besides pure ones and private stores: they neither write shared or
# global memory nor order other threads' accesses
HARMLESS_OPS = ("scf.for", "scf.if", "scf.yield", "memref.load", "vector.load",
                "vector.transfer_read", "vector.maskedload", "vector.gather",
                "memref.alloca", "gpu.thread_id", "gpu.block_id", "gpu.block_dim",
                "gpu.grid_dim", "gpu.lane_id", "gpu.shuffle", "nvvm.shfl.sync",
                "nvvm.read.ptx.sreg.tid.x", "nvvm.read.ptx.sreg.tid.y",
                "nvvm.read.ptx.sreg.tid.z", "nvvm.read.ptx.sreg.laneid")
STORES = ("memref.store", "vector.store", "vector.transfer_write")  # memref operand 1
LOADS = ("memref.load", "vector.load", "vector.transfer_read")  # memref operand 0
VIEWS = ("memref.subview", "memref.cast", "memref.reinterpret_cast", "memref.collapse_shape",
         "memref.expand_shape", "memref.view", "memref.memory_space_cast")
# memory another thread of the block may write (shared) or this thread writes (private)
MAX_SHARERS = 8  # blocks reading the same bytes, at most, for a load to count as streamed
NEAR_SPACES = ("3", "5", "#gpu.address_space<workgroup>", "#gpu.address_space<private>")


def is_pure(op: ir.Operation) -> bool:
    if op.name == "llvm.inline_asm":
        return "has_side_effects" not in op.attributes
    if op.name.startswith("vector."):
        return op.name not in VECTOR_MEMORY
    return op.name.startswith(PURE_PREFIXES) or op.name in PURE_OPS


def _origin(memref: ir.Value) -> ir.Operation | None:
    """The op a memref is a view of (through subviews and casts); None for an argument."""
    op = defining_op(memref)
    while op is not None and op.name in VIEWS:
        op = defining_op(op.operands[0])
    return op


def _is_far(memref: ir.Value) -> bool:
    """Memory no thread of the block writes inside the loop once it stores only privately:
    not a private or shared buffer (kernel arguments, their casts and views)."""
    space = ir.MemRefType(memref.type).memory_space
    if space is not None and str(space).split(":")[0].strip() in NEAR_SPACES:
        return False
    origin = _origin(memref)
    return origin is None or origin.name not in ("memref.alloca", "memref.alloc",
                                                 "memref.get_global")


def _is_private(memref: ir.Value) -> bool:
    origin = _origin(memref)
    return origin is not None and origin.name == "memref.alloca"


def writes_nothing_shared(loop: ir.Operation) -> bool:
    """Whether every op of the loop is pure, a load, a private store or harmless."""
    for op in walk(loop):
        if op.name in STORES:
            if not _is_private(op.operands[1]):
                return False
        elif not (is_pure(op) or op.name in HARMLESS_OPS):
            return False
    return True


def is_far_load(op: ir.Operation) -> bool:
    return op.name in LOADS and _is_far(op.operands[0])


def _load_only(op: ir.Operation) -> bool:
    """A far load, or an scf.if whose regions hold only far loads, pure ops and yields, at
    least one load among them."""
    if is_far_load(op):
        return True
    if op.name != "scf.if" or not len(op.results):
        return False
    nested = walk(op)
    allowed = all(is_far_load(inner) or is_pure(inner) or inner.name in ("scf.if", "scf.yield")
                  for inner in nested)
    return allowed and any(is_far_load(inner) for inner in nested)


@dataclass
class LoopLoads:
    """A loop's prefetched ops (roots) and the pure body ops their operands need (slice), both
    in program order."""

    roots: list[ir.Operation]
    slice: list[ir.Operation]


def plan_loop_loads(loop: ir.Operation) -> LoopLoads | None:
    body = loop.regions[0].blocks[0]
    induction = body.arguments[0]
    body_ops = [as_operation(op) for op in body.operations]
    position = {op: n for n, op in enumerate(body_ops)}

    def available(value: ir.Value, taken: set[int], needed: dict[ir.Value, bool]) -> bool:
        """Computable at the iteration's start from the loop variable and earlier values."""
        if value == induction:
            return True
        owner = value.owner
        if isinstance(owner, ir.Block):
            return owner != body  # an iteration value is not; an enclosing block's is
        op = as_operation(owner)
        if op.parent is None or as_operation(op.parent) != loop:
            return not _inside(op, loop)
        if value in needed:
            return needed[value]
        needed[value] = False
        ok = is_pure(op) and not len(op.regions) and all(
            available(operand, taken, needed) for operand in op.operands)
        if ok:
            taken.add(position[op])
        needed[value] = ok
        return ok

    roots, taken = [], set()
    for op in body_ops:
        trial: set[int] = set()
        needed: dict[ir.Value, bool] = {}  # per root: a rejected root's ops stay out
        if _load_only(op) and all(available(operand, trial, needed)
                                  for operand in _external_operands(op)):
            roots.append(op)
            taken |= trial
    if not roots:
        return None
    return LoopLoads(roots, [body_ops[n] for n in sorted(taken)])


@dataclass
class TakenLoop:
    """A loop whose loads can be taken ahead: its constant bounds and its plan."""

    lower: int
    step: int
    trips: int
    loads: LoopLoads

    @property
    def last(self) -> int:
        """The loop variable's value on the last iteration."""
        return self.lower + (self.trips - 1) * self.step


def take_loop(loop: ir.Operation) -> TakenLoop | None:
    """The loop the loop-load passes work on (constant bounds and a positive step, two trips or
    more, no write to memory another thread reads, loads to take ahead), else None."""
    lower, upper, step = (constant_index(value) for value in loop.operands[:3])
    if lower is None or upper is None or step is None or step <= 0:
        return None
    trips = (upper - lower + step - 1) // step
    if trips < 2 or not writes_nothing_shared(loop):
        return None
    loads = plan_loop_loads(loop)
    return None if loads is None else TakenLoop(lower, step, trips, loads)


def _external_operands(op: ir.Operation) -> list[ir.Value]:
    """The operands of `op` and of the ops nested in it that are defined outside it."""
    found = list(op.operands)
    for inner in walk(op):
        for operand in inner.operands:
            owner = operand.owner
            defined = as_operation(owner.owner if isinstance(owner, ir.Block) else owner)
            if defined != op and not _inside(defined, op):
                found.append(operand)
    return found


def _inside(op: ir.Operation, outer: ir.Operation) -> bool:
    while op.parent is not None:
        op = as_operation(op.parent)
        if op == outer:
            return True
    return False


def clone_ops(ops: list[ir.Operation], mapping: dict[ir.Value, ir.Value],
           point: ir.InsertionPoint) -> None:
    """Clones `ops` at `point` in order, their operands (and their regions') renamed by
    `mapping`, which gains each clone's results."""
    for op in ops:
        copy = as_operation(op.clone(ip=point))
        for inner in [copy, *walk(copy)]:
            for n, operand in enumerate(inner.operands):
                if operand in mapping:
                    inner.operands[n] = mapping[operand]
        for old, new in zip(op.results, copy.results, strict=True):
            mapping[old] = new


def value_bytes(value_type: ir.Type) -> int:
    """The bytes of a value of a scalar or vector type (an element of a vector memref too)."""
    if isinstance(value_type, ir.VectorType):
        return bit_width(value_type.element_type) * math.prod(value_type.shape) // 8
    return bit_width(value_type) // 8


def loaded_bytes(load: ir.Operation) -> int:
    return value_bytes(load.results[0].type)


def element_address(memory: ir.Value, indices: list[ir.Value]) -> ir.Value:
    """The global address of `memory[indices]`, as an !llvm.ptr in the memref's space."""
    memref_type = ir.MemRefType(memory.type)
    rank = memref_type.rank
    metadata = memref.ExtractStridedMetadataOp(memory)
    results = list(metadata.results)
    offset, strides = results[1], results[2 + rank:2 + 2 * rank]
    linear = offset
    for index, stride in zip(indices, strides, strict=True):
        linear = arith.addi(linear, arith.muli(index, stride))
    base = memref.extract_aligned_pointer_as_index(results[0])
    scale = arith.constant(ir.IndexType.get(), value_bytes(memref_type.element_type))
    where = arith.addi(base, arith.muli(linear, scale))
    integer = arith.index_cast(ir.IntegerType.get_signless(64), where)
    space = memref_type.memory_space
    number = int(str(space).split(":")[0]) if space is not None and str(space).split(":")[0] \
        .strip().isdigit() else 0
    return llvm.inttoptr(llvm.PointerType.get(number), integer)


def in_else_branch(op: ir.Operation, clone: ir.Operation) -> bool:
    """Whether `op` lies in the second region (else) of an scf.if within `clone`."""
    while op != clone and op.parent is not None:
        region_owner = as_operation(op.parent)
        if region_owner.name == "scf.if" and len(region_owner.regions) > 1 and any(
                as_operation(inner) == op for block in region_owner.regions[1].blocks
                for inner in block.operations):
            return True
        op = region_owner
    return False


def _block_indices(values: list[ir.Value]) -> set[str]:
    """The dimensions (x, y, z) of the block indices `values` are computed from."""
    found, seen, work = set(), set(), list(values)
    while work:
        value = work.pop()
        owner = defining_op(value)
        if owner is None or owner in seen:
            continue
        seen.add(owner)
        if owner.name == "gpu.block_id":
            found.add(str(owner.attributes["dimension"]).split()[-1].strip(">"))
        work.extend(owner.operands)
    return found


def read_by_few_blocks(load: ir.Operation, grid: list[int] | None) -> bool:
    """Whether few blocks read this load's data (where the grid is known): the blocks along
    the grid dimensions its address does not depend on, which read the same bytes, are at most
    MAX_SHARERS (a batch of GEMV rows re-reading the weights). Data many blocks read (the
    GEMV's activations, every block's) stays in L2 after the first of them; prefetching it
    would only cost instructions."""
    if grid is None:
        return True
    used = _block_indices(list(load.operands[1:]))
    sharers = math.prod(extent for axis, extent in zip("xyz", grid, strict=False)
                        if axis not in used)
    return sharers <= MAX_SHARERS


def known_grid(function: ir.Operation | None) -> list[int] | None:
    """The launch grid of a gpu.func where lower-tile-to-gpu knew it (`known_grid_size`)."""
    if function is None or "known_grid_size" not in function.attributes:
        return None
    return list(ir.DenseI32ArrayAttr(function.attributes["known_grid_size"]))


def cap_registers(function: ir.Operation | None, cap: int) -> None:
    """`nvvm.maxnreg` = cap on a GPU function that has no register cap yet."""
    if function is not None and "nvvm.maxnreg" not in function.attributes:
        function.attributes["nvvm.maxnreg"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(32), cap)
