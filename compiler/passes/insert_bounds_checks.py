"""insert-bounds-checks: the checked mode's run-time guard of every shared, fragment and local
buffer access at an index not known to be inside (the pass config `tilec.bounds_check`).

tilec's default leaves such an access unchecked (a global tensor's accesses are guarded on every
target; a block buffer's at a run-time index are not: the check would cost every access of the
inner loops). In the checked mode each memref.load / memref.store of a shared, fragment or local
buffer inside a tile.kernel whose index may fall outside gets, before it, a test of every such
dimension; outside, the thread prints where (the kernel's file:line, the block and thread, the
index and the buffer's shape, through T.print's `gpu.printf`, which lower-device-prints
completes) and traps: the CUDA kernel stops with an illegal-instruction error, the CPU process
with SIGILL, before the bad access happens. An index is known inside when interval arithmetic
over constants, T.Parallel points and loop indices of constant bounds (+, -, *, remainders by a
constant) keeps it in the dimension. Runs first among the tile passes, on the frontend's IR.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu, llvm, scf

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import constant_index_value, ops_named
from tilec.compiler.passes._ir_walk import LOCATION
from tilec.dialect import scope_of

CHECKED_SCOPES = ("shared", "fragment", "local")
PRINT_THREADS = "tile.print_threads"
Interval = tuple[int, int]  # lowest and highest value, both included


@register
class InsertBoundsChecks(TilePass):
    """A print-and-trap guard before each block-buffer access that may leave the buffer."""

    name = "insert-bounds-checks"
    summary = "checked mode: shared/fragment/local accesses at unproven indices print and trap"

    def run(self, module: ir.Module) -> None:
        for kernel in ops_named(module.operation, ("tile.kernel",)):
            blocks = list(kernel.regions[0].blocks[0].arguments)
            for op in ops_named(kernel.operation, ("memref.load", "memref.store")):
                memref_type = ir.MemRefType(op.memref.type)
                if scope_of(memref_type) not in CHECKED_SCOPES:
                    continue
                indices = list(op.indices)
                unproven = [d for d, (index, size) in enumerate(zip(
                    indices, memref_type.shape, strict=True)) if not _inside(index, size)]
                if unproven:
                    with ir.InsertionPoint(op), op.location:
                        _guard(op, memref_type, indices, unproven, blocks)


def _guard(op: ir.OpView, memref_type: ir.MemRefType, indices: list[ir.Value],
           unproven: list[int], blocks: list[ir.Value]) -> None:
    sizes = [arith.constant(ir.IndexType.get(), size) for size in memref_type.shape]
    outside = None
    for dim in unproven:  # unsigned: a negative index wraps to a huge one
        past = arith.cmpi(arith.CmpIPredicate.uge, indices[dim], sizes[dim])
        outside = past if outside is None else arith.ori(outside, past)
    found = LOCATION.search(str(op.location))
    where = f"{found.group(1)}:{found.group(2)}" if found else "the kernel"
    access = "read" if op.operation.name == "memref.load" else "write"
    shape = str(tuple(memref_type.shape))
    line = (f"tilec bounds check: {where}: BlockIdx=(%d, %d, %d), ThreadIdx=(%d, %d, %d): "
            f"{access} of a {scope_of(memref_type)} buffer of shape {shape} at index ("
            + ", ".join("%ld" for _ in indices) + ")\n")
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    check = scf.IfOp(outside)
    with ir.InsertionPoint(check.then_block):
        block_ids = [arith.index_cast(i32, blocks[d]) if d < len(blocks)
                     else arith.constant(i32, 0) for d in range(3)]
        printed = gpu.PrintfOp(line, [*block_ids, *(arith.index_cast(i64, i) for i in indices)])
        printed.operation.attributes[PRINT_THREADS] = ir.IntegerAttr.get(i64, -1)
        llvm.Trap()
        scf.YieldOp([])


def _inside(index: ir.Value, size: int) -> bool:
    if ir.ShapedType.is_dynamic_size(size):
        return False
    interval = _interval(index)
    return interval is not None and interval[0] >= 0 and interval[1] < size


def _interval(value: ir.Value, depth: int = 0) -> Interval | None:
    """Bounds of an index value, where the IR shows them; None where it does not."""
    constant = constant_index_value(value)
    if constant is not None:
        return constant, constant
    if depth > 8:
        return None
    if isinstance(value, ir.BlockArgument):
        return _loop_index_interval(value)
    owner = value.owner
    name = owner.name if isinstance(owner, ir.Operation) else owner.operation.name
    operands = list(owner.operands)
    if name in ("arith.index_cast", "arith.index_castui"):
        return _interval(operands[0], depth + 1)
    if name not in ("arith.addi", "arith.subi", "arith.muli", "arith.remui", "arith.remsi"):
        return None
    a, b = (_interval(operand, depth + 1) for operand in operands)
    if a is None or b is None:
        return None
    if name == "arith.addi":
        return a[0] + b[0], a[1] + b[1]
    if name == "arith.subi":
        return a[0] - b[1], a[1] - b[0]
    if name == "arith.muli" and a[0] >= 0 and b[0] >= 0:
        return a[0] * b[0], a[1] * b[1]
    if name in ("arith.remui", "arith.remsi") and a[0] >= 0 and b[0] == b[1] and b[0] > 0:
        return 0, min(a[1], b[0] - 1)
    return None


def _loop_index_interval(argument: ir.BlockArgument) -> Interval | None:
    loop = argument.owner.owner
    name = loop.name if isinstance(loop, ir.Operation) else loop.operation.name
    if name == "tile.parallel":
        extent = list(ir.DenseI64ArrayAttr(loop.attributes["extents"]))[argument.arg_number]
        return 0, extent - 1
    if name in ("tile.for", "tile.pipelined", "scf.for") and argument.arg_number == 0:
        lower, upper, step = (constant_index_value(v) for v in list(loop.operands)[:3])
        if None not in (lower, upper, step) and step > 0 and upper > lower:
            return lower, upper - 1
    return None
