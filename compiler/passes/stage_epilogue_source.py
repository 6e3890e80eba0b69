"""stage-epilogue-source: the residual tile a TMA ring loop's epilogue reads comes through
shared memory, loaded by the ring's producer while the last K tiles run.

A fused GEMM's epilogue `C = alpha * acc + R[by * 128 + i, bx * 256 + j]` reads its residual
tile from global memory only after the last K tile's wgmmas: every SM, done with its tile at
about the same time, asks for 64 KiB at once (8192^3 f16, 128 x 256 tiles) with its tensor
cores idle. Here, as CUTLASS's Hopper epilogue loads its source tensor C, the tile is read
from a shared tile instead, filled by TMA. The tile takes no bytes of its own: the ring's
slots are drained once the loop's last K tile is read (4 x 48 KiB of slots and the TMA
store's 32 KiB staging tile leave no room for 64 KiB more), so the producer warpgroup treats
the tile as the ring's next iterations after the tile's K tiles: it waits for their slots to
be released, as for any K tile, and loads the tile's 128-byte column boxes into them
(128B-swizzled, as the slots' operand tiles are), completing on their full barriers. That
is as early as the ring allows, about `stages` K tiles before the loop ends, and costs no
register. The consumers wait for those full barriers where the copy stands, right after the
loop, read the tile in their fragment's layout (a wgmma accumulator's pair of columns at a
row: 8 rows x 16 bytes a warp, each row's chunk in another bank group by the swizzle, no
conflict) and hand the slots back after the epilogue's last read of it; a persistent
producer's next tile then starts in the slots after them.

Taken (module attribute `tile.epilogue_shared_source`, TILEC_EPILOGUE_SHARED_SOURCE=1, opt-in
until a GPU times it; the CUDA target runs it before prefetch-epilogue-operands, so the tile
it takes is not also preloaded into registers, the sm_90a default): a `tile.pipelined` loop of
plan-tma-pipelines' `tile.tma_ring` followed by a T.Parallel that reads a whole tile
(prefetch-epilogue-operands' `Box`: the T.Parallel's extents, variable d along index d) of a
2-d global tensor the function only reads, at a corner computable before the loop's end; its
element whole bytes, its columns a multiple of one 128-byte column box, its rows a multiple of
8 (the swizzle's phase) and at most 256 (a TMA box's extent), each column box no larger than
the ring's largest slot, and the boxes fitting in the ring's stages' slots. The rewrite: a
shared tile of the T.Parallel's shape marked `tile.ring_source` (plan-shared-memory gives it
no bytes), one `tile.copy` of the box into it right after the loop carrying
`tile.epilogue_source` = {box, boxes, swizzle} (TMA box innermost first, column boxes, 128),
and the T.Parallel's reads of the box from the tile. One such tile per loop; other reads are
left alone. lower-tile-to-gpu (`_tma_ring.py`'s place_, produce_, wait_ and release_source)
places the boxes and issues, waits and releases them.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import memref

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import index
from tilec.compiler.passes._ir_walk import as_operation, copy_parts, walk
from tilec.compiler.passes._scalar import bit_width
from tilec.compiler.passes._tma_ring import (
    LOAD_ATTR,
    SOURCE_ATTR,
    SOURCE_TILE_ATTR,
    SWIZZLE_BYTES,
    TmaLoad,
    TmaRing,
    clone_ops,
    recomputable,
)
from tilec.compiler.passes.prefetch_epilogue_operands import (
    Box,
    epilogue_after,
    epilogue_reads,
    read_only,
    recomputable_before,
)
from tilec.dialect import AllocOp, CopyOp

OPT_IN_ATTR = "tile.epilogue_shared_source"  # on the module
VARIABLE = "TILEC_EPILOGUE_SHARED_SOURCE"
MAX_BOX_ROWS = 256  # a TMA box's extent along a dimension
SWIZZLE_ROWS = 8  # rows of one 128B swizzle pattern


def ring_slot_bytes(loop: ir.Operation) -> list[int]:
    """The bytes of one slot of each tile the ring's copies fill (at least the tile's)."""
    slots: list[int] = []
    seen: list[ir.Value] = []
    for op in map(as_operation, loop.regions[0].blocks[0].operations):
        if LOAD_ATTR not in op.attributes:
            continue
        dst = copy_parts(op)[3]
        if any(dst == known for known in seen):
            continue
        seen.append(dst)
        tile = ir.MemRefType(dst.type)
        slots.append(tile.shape[0] * tile.shape[1] * bit_width(tile.element_type) // 8)
    return slots


def iterations_for(boxes: int, box_bytes: int, slots: list[int]) -> int:
    """The ring iterations whose slots hold `boxes` column boxes of `box_bytes` each, filled
    slot by slot; 0 where no slot holds one."""
    per_iteration = sum(slot // box_bytes for slot in slots)
    return -(-boxes // per_iteration) if per_iteration else 0


def _source_load(box: Box, rank: int, ring: TmaRing, loop: ir.Operation) -> TmaLoad | None:
    """The TMA boxes of a residual tile `box`, where the ring can hold them."""
    tensor = ir.MemRefType(box.tensor.type)
    width = bit_width(tensor.element_type)
    if rank != 2 or tensor.rank != 2 or not box.whole_tile(rank) or width % 8 or \
            not read_only(box.tensor):
        return None
    rows, columns = box.extents
    per_box = SWIZZLE_BYTES // (width // 8)
    if columns % per_box or rows % SWIZZLE_ROWS or rows > MAX_BOX_ROWS:
        return None
    boxes = columns // per_box
    iterations = iterations_for(boxes, rows * SWIZZLE_BYTES, ring_slot_bytes(loop))
    if not 0 < iterations <= ring.stages:
        return None
    return TmaLoad((per_box, rows), boxes, SWIZZLE_BYTES)


def stage_source(loop: ir.Operation) -> bool:
    """Read the first whole residual tile the T.Parallel statements after a ring loop read
    from a shared tile filled right after it; whether one was found."""
    ring = TmaRing.of(loop)
    if ring is None:
        return False
    parallels, candidates = epilogue_after(loop)
    for parallel in parallels:
        rank = len(ir.DenseI64ArrayAttr(parallel.attributes["extents"]))
        for _, box in epilogue_reads(parallel):
            load = _source_load(box, rank, ring, loop)
            corners = [c for c in box.corners if not isinstance(c, int)]
            if load is not None and recomputable_before(corners, loop, candidates):
                _rewrite(loop, box, load, parallels, candidates)
                return True
    return False


def _rewrite(loop: ir.Operation, box: Box, load: TmaLoad, parallels: list[ir.Operation],
             candidates: list[ir.Operation]) -> None:
    """The shared tile, its filling copy after `loop` and the reads of `box` from it."""
    element = ir.MemRefType(box.tensor.type).element_type
    shape = list(box.extents)
    with loop.location, ir.InsertionPoint(loop):
        alloc = AllocOp(ir.MemRefType.get(shape, element,
                                          memory_space=ir.Attribute.parse('"shared"')))
        alloc.operation.attributes[SOURCE_TILE_ATTR] = ir.UnitAttr.get()
    tile = alloc.result
    with loop.location, ir.InsertionPoint.after(loop):
        mapping: dict = {}
        corners = [c for c in box.corners if not isinstance(c, int)]
        clone_ops(recomputable(corners, candidates) or [], mapping)
        copy = CopyOp(box.tensor, [index(0) if isinstance(c, int) else mapping.get(c, c)
                                   for c in box.corners], shape, tile, [index(0)] * 2, shape)
        copy.operation.attributes[SOURCE_ATTR] = load.to_attr(loop.context)
    for parallel in parallels:
        variables = list(parallel.regions[0].blocks[0].arguments)
        for read, found in epilogue_reads(parallel):
            if found.tensor != box.tensor or found.variables != box.variables or not all(
                    a == b for a, b in zip(found.corners, box.corners, strict=True)):
                continue
            with read.location, ir.InsertionPoint(read):
                value = memref.load(tile, variables)
            read.results[0].replace_all_uses_with(value)
            read.erase()


@register
@dataclass
class StageEpilogueSource(TilePass):
    """An epilogue's residual tile through shared memory, loaded by a TMA ring's producer."""

    name = "stage-epilogue-source"
    summary = "epilogue whole-tile global read after a TMA ring loop -> ring-loaded shared tile"

    def run(self, module: ir.Module) -> None:
        if OPT_IN_ATTR not in module.operation.attributes:
            return
        for loop in [op for op in walk(module.operation) if op.name == "tile.pipelined"]:
            stage_source(loop)
