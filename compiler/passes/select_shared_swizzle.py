"""select-shared-swizzle: how each shared-memory operand of a tensor-core gemm is swizzled.

The tensor cores read shared tiles row by row (wgmma through matrix descriptors, mma.sync
through ldmatrix); without a swizzle the rows of one access fall into the same banks. The
pattern must match what the instruction was told (the descriptor's layout field, the ldmatrix
addressing) and what the copy that fills the tile writes, so it is chosen once, here, and
recorded as `tile.swizzle` on the operand's tile.alloc:

- wgmma (sm_90a): "128B", the widest span, for every operand. An MN-major operand is laid
  out as boxes 64 elements wide (128-byte rows); a K-major one (A as M x K, B as N x K) is
  staged in 128-byte K rows: pipeline-async-copies reads this span and makes its K tile
  span / element bytes, merging consecutive iterations of a narrower user tile (the
  quickstart's 32-element f16 K tile becomes 64 per stage), so no operand row is narrower
  than its swizzle.
- mma.sync (sm_80): "xor", the 16-byte-chunk XOR of the row index that keeps ldmatrix and
  ldmatrix.trans free of bank conflicts for any tile width.

A shared tile that a T.Parallel reads across its rows (the parallel's innermost variable
indexes the tile's rows: a transpose through shared memory) gets "transpose": the 16-byte chunk
index XORed with (row / V) mod C, V the elements of a chunk, C the chunks of a row (a power of
two, at least 2). The threads of one such read hold V consecutive rows each (their 16-byte
global vectors), so one load instruction touches rows V apart: unswizzled they share their
banks (a 64-wide f16 tile: an 8-way conflict), swizzled each sits in chunk column + row / V. A
row-wise 16-byte access stays inside one chunk. A tile a T.Pipelined loop fills is left alone
(its slots are addressed by the copy engine's layout).

Only gemms with a `tile.mma` (infer-mma-layout) are looked at for the tensor-core swizzles. A
read from registers has no shared tile of its own, except when a whole shared tile is copied
into it before the gemm (`T.copy(A_shared, A_frag)`, infer-mma-layout's `register_a_fill`):
with wgmma that tile is the TMA slot each warp ldmatrix-reads its rows of A from, so it gets
"128B" like a shared operand (on sm_80 the mma.sync kernel does not read A from registers: it
gets nothing). A tile two gemms read gets the same choice from both.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import (
    as_operation,
    block_arg_index,
    copy_parts,
    defining_op,
    kernels,
    scope,
    walk,
)
from tilec.compiler.passes._scheduling import (
    read_decision,
    target_description,
)
from tilec.compiler.passes.infer_mma_layout import MMA_ATTR, register_a_fill

SWIZZLE_ATTR = "tile.swizzle"
WGMMA_SWIZZLE = "128B"
SWIZZLES = {"wgmma": WGMMA_SWIZZLE, "mma.sync": "xor"}  # by tile.mma kind
TRANSPOSE_SWIZZLE = "transpose"
CHUNK_BYTES = 16


def swizzle_bytes(swizzle: str) -> int | None:
    """The span of a TMA swizzle ("128B" -> 128), None for other patterns."""
    return int(swizzle[:-1]) if swizzle.endswith("B") and swizzle[:-1].isdigit() else None


@register
@dataclass
class SelectSharedSwizzle(TilePass):
    """Record on each shared gemm operand the swizzle its tensor-core instruction reads."""

    name = "select-shared-swizzle"
    summary = ("shared tile.alloc read by a tensor-core gemm -> tile.swizzle (128B / xor); "
               "read across its rows by a T.Parallel -> transpose")
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        target_description(module, self.arch, self.name)  # tile.mma's kind already follows it
        context = module.context
        for kernel in kernels(module):
            for gemm in (op for op in walk(kernel) if op.name == "tile.gemm"):
                mma = read_decision(gemm, MMA_ATTR)
                if mma is None:
                    continue
                swizzle = SWIZZLES.get(str(mma["kind"]))
                operands = list(gemm.operands[:2])
                fill = register_a_fill(gemm) if mma["kind"] == "wgmma" else None
                if fill is not None:
                    operands[0] = copy_parts(fill)[0]
                for operand in operands:
                    alloc = defining_op(operand)
                    if scope(operand) != "shared" or alloc is None or alloc.name != "tile.alloc":
                        continue
                    if swizzle is not None:
                        alloc.attributes[SWIZZLE_ATTR] = ir.StringAttr.get(swizzle, context)
            for alloc in transposed_tiles(kernel):
                alloc.attributes[SWIZZLE_ATTR] = ir.StringAttr.get(TRANSPOSE_SWIZZLE, context)


def transposed_tiles(kernel: ir.Operation) -> list[ir.Operation]:
    """The unswizzled 2-d shared tile.allocs some T.Parallel loads across their rows (the
    row index is the parallel's innermost variable, the column index is not), that only
    element accesses and tile.copy outside T.Pipelined loops use, that no copy turns into a
    gemm's operand (the tensor-core lowerings may read such a tile in place), and whose rows
    TransposedTile can swizzle."""
    found: list[ir.Operation] = []
    in_loops = {op for loop in walk(kernel) if loop.name == "tile.pipelined"
                for op in walk(loop)}
    gemm_operands = [operand for op in walk(kernel) if op.name == "tile.gemm"
                     for operand in op.operands]
    feeding_gemms = [copy_parts(op)[0] for op in walk(kernel) if op.name == "tile.copy"
                     and any(copy_parts(op)[3] == operand for operand in gemm_operands)]
    for parallel in (op for op in walk(kernel) if op.name == "tile.parallel"):
        body = parallel.regions[0].blocks[0]
        innermost = len(body.arguments) - 1
        for load in (op for op in walk(parallel) if op.name == "memref.load"):
            tile, indices = load.operands[0], list(load.operands[1:])
            alloc = defining_op(tile)
            if (alloc is None or alloc.name != "tile.alloc" or scope(tile) != "shared"
                    or len(indices) != 2 or SWIZZLE_ATTR in alloc.attributes
                    or TransposedTile.of(alloc) is None):
                continue
            users = [as_operation(use.owner) for use in tile.uses]
            if any(user.name not in ("memref.load", "memref.store", "tile.copy")
                   or user in in_loops for user in users) or any(
                    tile == source for source in feeding_gemms):
                continue
            if (block_arg_index(indices[0], body) == innermost
                    and block_arg_index(indices[1], body) != innermost):
                found.append(alloc)
    return found


@dataclass(frozen=True)
class TransposedTile:
    """A shared tile swizzled for reads across its rows (module docstring): `shape` (rows,
    columns), the elements of a 16-byte chunk and the chunks of a row."""

    shape: tuple[int, int]
    chunk_elements: int
    chunks: int

    @classmethod
    def of(cls, alloc: ir.Operation) -> TransposedTile | None:
        """The swizzle of a 2-d tile whose rows hold a power-of-two count (>= 2) of whole
        16-byte chunks; None for any other tile."""
        type_ = ir.MemRefType(alloc.results[0].type)
        width = type_.element_type.width if hasattr(type_.element_type, "width") else 0
        if type_.rank != 2 or width < 8 or CHUNK_BYTES % (width // 8):
            return None
        rows, columns = type_.shape
        chunk_elements = CHUNK_BYTES // (width // 8)
        chunks = columns // chunk_elements
        if columns % chunk_elements or chunks < 2 or chunks & (chunks - 1):
            return None
        return cls((rows, columns), chunk_elements, chunks)

    def element_index(self, row: ir.Value, column: ir.Value) -> ir.Value:
        """The element offset of (row, column) from the tile's start."""
        def const(value: int) -> ir.Value:
            return arith.constant(ir.IndexType.get(), value)

        phase = arith.remui(arith.divui(row, const(self.chunk_elements)), const(self.chunks))
        chunk = arith.xori(arith.divui(column, const(self.chunk_elements)), phase)
        return arith.addi(arith.addi(arith.muli(row, const(self.shape[1])),
                                     arith.muli(chunk, const(self.chunk_elements))),
                          arith.remui(column, const(self.chunk_elements)))
