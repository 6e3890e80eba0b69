"""widen-k-tiles: a GEMM main loop whose tiles are narrower along K than a 128-byte swizzle row
runs over tiles one row wide, each iteration doing the work of several.

On sm_90a one ring slot of 64-byte K rows (the quickstart's block_K = 32 in f16) carries half
the tensor-core work of a 128-byte one for the same mbarrier waits, wgmma fence / commit / wait
and slot hand-back, and its A tile is a 64B-swizzled TMA box: the H200 ran the quickstart's
128 x 128 x 32 per op at 418 TFLOP/s where the same kernel over 64-column tiles (the whole-kernel
GEMM's slots) ran at 634. This pass makes the loop that kernel: F = 128 bytes / the K row's
bytes user iterations become one iteration over tiles F times as wide along K, so every later
pass (the operand swizzle, the TMA ring, the wgmma groups) sees 128-byte K rows.

A `tile.pipelined` loop is widened when
- it runs from 0 by 1 to a constant N (>= F) with no `order`, `stage` or `group` schedule;
- its body is two tile.copy ops, each filling the whole of one operand tile of the body's one
  tile.gemm (clear_accum off: the gemm accumulates across iterations) from a global tensor,
  and pure index arithmetic; or, for a register-A chain, those copies and the copy of A's
  whole shared tile into the gemm's fragment A (`T.copy(A_shared, A_frag)`, infer-mma-layout's
  `register_a_fill`), the fragment a tile of its own that only that copy and the gemm use,
  which widened holds at most CHAIN_REGISTERS registers a thread with the accumulator;
- each operand tile is a shared buffer of the kernel with no attribute of its own (no layout
  request), used by its copy and the gemm (or A's fragment copy) only, of an element type the
  tensor cores take;
- each copy's corner along K is `k * block_K` (the loop's index times the tile's K extent),
  its other coordinates do not depend on k, so iteration k' of the widened loop copies exactly
  the tiles of user iterations F k' .. F k' + F - 1;
- the widened loop reads nothing the user's did not: N is a multiple of F, or N * block_K
  reaches the end of every copied tensor along K (the tiles past N lie outside it, and a copy
  reads outside a tensor as zero, which adds nothing to the accumulator);
- the widened tiles at the loop's stage count, ceil(S / F) but at least 2 (as much K in flight
  as the user's S, or more), fit in the block's shared memory beside the kernel's other
  shared buffers.
The loop then runs to ceil(N / F) with ceil(S / F) (>= 2) stages; the tiles, the copies' boxes
and their K corners (k * F * block_K) widen by F, a register-A chain's fragment and its copy
along K with them. The gemm computes the same sums in the same
order of K (its K steps run in sequence), so the result is bit for bit the user loop's.

It runs first among the CUDA scheduling passes, on chips with wgmma and TMA only, and not in a
module with `tile.disable_tma` (a cp.async loop gains nothing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import (
    as_operation,
    constant_index,
    copy_parts,
    defining_op,
    kernels,
    scope,
    walk,
)
from tilec.compiler.passes._scalar import bit_width, index
from tilec.compiler.passes._scheduling import (
    DISABLE_TMA_ATTR,
    OPERAND_TYPES,
    target_description,
    tensorcore_type,
)
from tilec.compiler.passes.infer_fragment_layout import threads_at
from tilec.compiler.passes.infer_mma_layout import register_a_fill
from tilec.dialect import AllocOp

ROW_BYTES = 128  # the widest swizzle row: one wgmma K-major slot, one TMA box of K
MIN_STAGES = 2
ALIGNMENT_SLACK_BYTES = 1024  # a ring's tiles start on 1 KiB
# a register-A chain's accumulator and widened A fragment, 32-bit registers a thread: the
# unwidened 128 x 128 x 64 fp8 chain's (128 + 16) compiles without spills under a consumer's 240
# registers; widened (128 + 32) it spilled 84 bytes
CHAIN_REGISTERS = 144


def _buffer_bytes(buffer_type: ir.MemRefType) -> int:
    return math.prod(buffer_type.shape) * max(1, bit_width(buffer_type.element_type) // 8)


def _depends_on(value: ir.Value, target: ir.Value, body: ir.Block) -> bool:
    """Whether `value` is computed from `target` by ops of `body`."""
    pending = [value]
    while pending:
        current = pending.pop()
        if current == target:
            return True
        op = defining_op(current)
        if op is not None and op.parent is not None and as_operation(op.parent) == \
                as_operation(body.owner):
            pending += list(op.operands)
    return False


def _is_k_corner(value: ir.Value, iv: ir.Value, k_extent: int) -> bool:
    """Whether `value` is `iv * k_extent` (either operand order)."""
    op = defining_op(value)
    if op is None or op.name != "arith.muli":
        return False
    left, right = op.operands
    return (left == iv and constant_index(right) == k_extent) or (
        right == iv and constant_index(left) == k_extent)


def _flag(gemm: ir.Operation, name: str) -> bool:
    return name in gemm.attributes and ir.BoolAttr(gemm.attributes[name]).value


def _is_pure(op: ir.Operation) -> bool:
    return op.name.split(".")[0] in ("arith", "index") and not len(op.regions)


@dataclass(frozen=True)
class OperandCopy:
    """One operand tile of the loop's gemm, the copy filling it and the dimensions along K."""

    copy: ir.Operation
    tile: ir.Operation  # its tile.alloc
    tile_k_dim: int
    src_k_dim: int


@dataclass(frozen=True)
class Widening:
    loop: ir.Operation
    operands: list[OperandCopy]
    factor: int
    k_extent: int
    trips: int
    stages: int
    fill: ir.Operation | None = None  # a register-A chain's copy of A's tile into its fragment


def _registers(buffer: ir.Value, threads: int) -> int:
    """32-bit registers a thread holds of a fragment spread over `threads`."""
    buffer_type = ir.MemRefType(buffer.type)
    bits = math.prod(buffer_type.shape) * bit_width(buffer_type.element_type)
    return -(-bits // (32 * threads))


def _register_a_fill(gemm: ir.Operation, copies: list[ir.Operation], threads: int
                     ) -> ir.Operation | None:
    """The loop's copy of A's whole shared tile into the gemm's fragment A (a register-A
    chain), when the fragment is a tile of its own (no layout yet) that only it and the gemm
    use and, widened, fits beside the accumulator (CHAIN_REGISTERS); None otherwise."""
    fill = register_a_fill(gemm)
    if fill is None or not any(fill == copy for copy in copies):
        return None
    fragment = gemm.operands[0]
    alloc = defining_op(fragment)
    if alloc is None or alloc.name != "tile.alloc" or len(alloc.attributes) or any(
            as_operation(use.owner) not in (fill, gemm) for use in fragment.uses):
        return None
    k_extent = ir.MemRefType(fragment.type).shape[1]
    row_bytes = k_extent * max(1, bit_width(ir.MemRefType(fragment.type).element_type) // 8)
    widened = _registers(fragment, threads) * max(1, ROW_BYTES // row_bytes)
    if _registers(gemm.operands[2], threads) + widened > CHAIN_REGISTERS:
        return None
    return fill


def _operand_copy(copy: ir.Operation, gemm: ir.Operation, fill: ir.Operation | None,
                  iv: ir.Value, body: ir.Block) -> OperandCopy | None:
    """The copy as the filling of one of the gemm's operand tiles (A's may be the shared tile
    a register-A `fill` copies into the gemm's fragment A), None when it is not one."""
    src, src_offsets, src_shape, dst, dst_offsets, dst_shape = copy_parts(copy)
    readers = [gemm] if fill is None else [gemm, fill]
    operands = [gemm.operands[0] if fill is None else fill.operands[0], gemm.operands[1]]
    operand = next((n for n in (0, 1) if operands[n] == dst), None)
    alloc = defining_op(dst)
    if operand is None or scope(src) != "global" or scope(dst) != "shared" or \
            alloc is None or alloc.name != "tile.alloc" or len(alloc.attributes):
        return None
    tile_type = ir.MemRefType(dst.type)
    if tile_type.rank != 2 or list(dst_shape) != list(tile_type.shape) or any(
            constant_index(v) != 0 for v in dst_offsets):
        return None
    if any(as_operation(use.owner) not in (copy, *readers) for use in dst.uses):
        return None
    transposed = _flag(gemm, ("transpose_a", "transpose_b")[operand])
    tile_k_dim = (1, 0)[operand] if not transposed else (0, 1)[operand]
    dims = [d for d, extent in enumerate(src_shape) if extent != 1]
    if len(dims) != 2 or [src_shape[d] for d in dims] != list(tile_type.shape):
        return None
    src_k_dim = dims[tile_k_dim]
    k_extent = tile_type.shape[tile_k_dim]
    if not _is_k_corner(src_offsets[src_k_dim], iv, k_extent) or any(
            _depends_on(v, iv, body) for d, v in enumerate(src_offsets) if d != src_k_dim):
        return None
    return OperandCopy(copy, alloc, tile_k_dim, src_k_dim)


def plan_widening(loop: ir.Operation, kernel: ir.Operation, limit: int) -> Widening | None:
    """How the loop widens, None when it does not qualify (module docstring)."""
    if any(name in loop.attributes for name in ("order", "stage", "group")):
        return None
    lower, upper, step = (constant_index(v) for v in list(loop.operands)[:3])
    if lower != 0 or step != 1 or upper is None:
        return None
    body = loop.regions[0].blocks[0]
    iv = body.arguments[0]
    statements = [as_operation(op) for op in body.operations]
    copies = [op for op in statements if op.name == "tile.copy"]
    gemms = [op for op in statements if op.name == "tile.gemm"]
    if len(gemms) != 1 or any(not _is_pure(op) for op in statements
                              if op.name not in ("tile.copy", "tile.gemm", "tile.yield")):
        return None
    gemm = gemms[0]
    fill = _register_a_fill(gemm, copies, threads_at(gemm, kernel)) \
        if scope(gemm.operands[0]) == "fragment" else None
    if fill is not None:
        copies = [copy for copy in copies if copy != fill]
    if len(copies) != 2 or _flag(gemm, "clear_accum"):
        return None
    operands = [_operand_copy(copy, gemm, fill, iv, body) for copy in copies]
    if any(operand is None for operand in operands) or \
            operands[0].tile == operands[1].tile:
        return None
    tile_types = [ir.MemRefType(operand.tile.result.type) for operand in operands]
    if any(tensorcore_type(t.element_type, OPERAND_TYPES) is None for t in tile_types):
        return None
    k_extent = tile_types[0].shape[operands[0].tile_k_dim]
    row_bytes = k_extent * max(1, bit_width(tile_types[0].element_type) // 8)
    if ROW_BYTES % row_bytes or k_extent != tile_types[1].shape[operands[1].tile_k_dim]:
        return None
    factor = ROW_BYTES // row_bytes
    if factor < 2 or upper < factor:
        return None
    if upper % factor:
        for operand in operands:
            src = operand.copy.operands[0]
            extent = ir.MemRefType(src.type).shape[operand.src_k_dim]
            if extent == ir.ShapedType.get_dynamic_size() or upper * k_extent < extent:
                return None
    stages = max(MIN_STAGES, -(-ir.IntegerAttr(loop.attributes["num_stages"]).value // factor))
    widened = stages * factor * sum(_buffer_bytes(t) for t in tile_types)
    others = sum(_buffer_bytes(ir.MemRefType(op.result.type)) for op in walk(kernel)
                 if op.name == "tile.alloc" and scope(op.result) == "shared" and
                 not any(op == operand.tile for operand in operands))
    if widened + others + ALIGNMENT_SLACK_BYTES > limit:
        return None
    return Widening(loop, operands, factor, k_extent, upper, stages, fill)


def _widen_alloc(alloc: ir.Operation, dim: int, factor: int) -> list[int]:
    """Replace a tile's alloc by one `factor` times as wide along `dim`; the new shape."""
    old = alloc.result
    old_type = ir.MemRefType(old.type)
    shape = list(old_type.shape)
    shape[dim] *= factor
    with alloc.location, ir.InsertionPoint(alloc):
        new = AllocOp(ir.MemRefType.get(shape, old_type.element_type,
                                        memory_space=old_type.memory_space)).result
    old.replace_all_uses_with(new)
    alloc.erase()
    return shape


def widen(plan: Widening) -> None:
    """Rewrite the loop, its operand tiles and their copies as `plan` says."""
    loop = plan.loop
    iv = loop.regions[0].blocks[0].arguments[0]
    with loop.location, ir.InsertionPoint(loop):
        loop.operands[1] = index(-(-plan.trips // plan.factor))
    loop.attributes["num_stages"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                       plan.stages)
    for operand in plan.operands:
        shape = _widen_alloc(operand.tile, operand.tile_k_dim, plan.factor)
        copy = operand.copy
        src_shape = list(ir.DenseI64ArrayAttr(copy.attributes["src_shape"]))
        src_shape[operand.src_k_dim] *= plan.factor
        copy.attributes["src_shape"] = ir.DenseI64ArrayAttr.get(src_shape)
        copy.attributes["dst_shape"] = ir.DenseI64ArrayAttr.get(shape)
        corner = 1 + operand.src_k_dim
        previous = defining_op(copy.operands[corner])
        with copy.location, ir.InsertionPoint(copy):
            copy.operands[corner] = arith.muli(iv, index(plan.k_extent * plan.factor))
        if previous is not None and not list(previous.results[0].uses):
            previous.erase()
    if plan.fill is not None:  # A's fragment (M x K) widens with its tile, its copy with both
        shape = _widen_alloc(defining_op(copy_parts(plan.fill)[3]), 1, plan.factor)
        plan.fill.attributes["src_shape"] = ir.DenseI64ArrayAttr.get(shape)
        plan.fill.attributes["dst_shape"] = ir.DenseI64ArrayAttr.get(shape)


@register
@dataclass
class WidenKTiles(TilePass):
    """Widen GEMM main loops whose K tiles are narrower than a 128-byte swizzle row."""

    name = "widen-k-tiles"
    summary = "T.Pipelined GEMM loops over 64-byte K rows -> half the iterations over 128 (sm_90a)"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        target = target_description(module, self.arch, self.name)
        attributes = module.operation.attributes
        if not (target.has_wgmma and target.has_tma) or DISABLE_TMA_ATTR in attributes:
            return
        for kernel in kernels(module):
            plans = [plan for op in walk(kernel) if op.name == "tile.pipelined"
                     and (plan := plan_widening(op, kernel, target.max_shared_bytes))
                     is not None]
            for plan in plans:
                widen(plan)
