"""fold-accumulator-clears: a T.clear of a GEMM's accumulator right before its TMA ring loop
becomes the first iteration's wgmma scale-d = 0 (D = A * B, the old D ignored).

The CUDA target runs it by default (TILEC_FOLD_ACCUMULATOR_CLEARS=0 leaves it out), after the
epilogue passes, on the ring loop's final body. Why: per op the clear is one register move per
accumulator register and thread, every tile: 128 moves for a 64 x 256 f32 wgmma accumulator,
issued by both consumer warpgroups while the tensor cores wait for the tile's first wgmma. A
batched GEMM of 16 K tiles (fused_gemm.py's batched_nt) runs them once every 16 tiles of
mainloop; the whole-kernel GEMM issues its first wgmma with scale-d = 0 instead (`HGMMA ... RZ,
!UPT` in its SASS).

A `tile.fill` of zero into a fragment is folded when
- the next statement after it that touches the fragment is a `tile.pipelined` loop marked
  `tile.tma_ring` (plan-tma-pipelines) running from a constant to a constant at least once,
  so its first iteration is the one every tile runs;
- the loop's body holds one tile.gemm, a `tile.wgmma` one (plan-wgmma-gemms) with the
  fragment as its accumulator and clear_accum off, and that gemm is the body's first
  statement touching the fragment;
- the body does nothing else but its copies and index arithmetic (`_tma_ring.copies_and_gemms`):
  beside
  prefetch-epilogue-operands' preload (a branch filling a fragment in the last K tiles, its
  registers live beside the accumulator) the folded scale + residual of fused_gemm.py spilled
  492 bytes under ptxas, none with the clear; the fold runs after that pass to see it.
The fill is erased and the gemm gets `tile.clear_first_iteration`: lower-tile-to-gpu's wgmma
lowering gives the first K step's scale-d as (ring iteration != 0), so iteration 0 computes
D = A * B and every later one D += A * B, the sums the cleared accumulator had.
Left alone: any other fill, a loop that may run no iteration (its accumulator would keep what
the registers held), a loop with several gemms (attention) or other work, a cp.async pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import as_operation, constant_index, scope, touches, walk
from tilec.compiler.passes._tma_ring import RING_ATTR, copies_and_gemms
from tilec.compiler.passes._wgmma import CLEAR_FIRST_ATTR, WGMMA_ATTR


def _zero(value: ir.Value) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block) or as_operation(owner).name != "arith.constant":
        return False
    attr = as_operation(owner).attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value == 0.0
    return isinstance(attr, ir.IntegerAttr) and ir.IntegerAttr(attr).value == 0


def _runs(loop: ir.Operation) -> bool:
    """Whether the loop's bounds are constants giving it one iteration or more."""
    lower, upper, step = (constant_index(v) for v in list(loop.operands)[:3])
    return None not in (lower, upper, step) and step > 0 and upper > lower


def folded_gemm(fill: ir.Operation) -> ir.Operation | None:
    """The ring loop's gemm that the zero `fill` can fold into (module docstring), or None."""
    accumulator = fill.operands[0]
    if scope(accumulator) != "fragment" or not _zero(fill.operands[1]):
        return None
    after = [as_operation(op) for op in fill.block.operations]
    after = after[next(i for i, op in enumerate(after) if op == fill) + 1:]
    following = next((op for op in after if touches(op, [accumulator])), None)
    if following is None or following.name != "tile.pipelined" or \
            RING_ATTR not in following.attributes or not _runs(following):
        return None
    body = [as_operation(op) for op in following.regions[0].blocks[0].operations]
    gemms = [op for op in walk(following) if op.name == "tile.gemm"]
    first = next((op for op in body if touches(op, [accumulator])), None)
    if len(gemms) != 1 or first is None or first != gemms[0] or not copies_and_gemms(following):
        return None
    gemm = first
    if WGMMA_ATTR not in gemm.attributes or gemm.operands[2] != accumulator or (
            "clear_accum" in gemm.attributes and ir.BoolAttr(gemm.attributes["clear_accum"]).value):
        return None
    return gemm


@register
@dataclass
class FoldAccumulatorClears(TilePass):
    """Fold a T.clear of an accumulator into its ring loop's first wgmma (scale-d = 0)."""

    name = "fold-accumulator-clears"
    summary = "tile.fill 0 before a one-gemm TMA ring loop -> tile.clear_first_iteration"

    def run(self, module: ir.Module) -> None:
        for fill in [op for op in walk(module.operation) if op.name == "tile.fill"]:
            gemm = folded_gemm(fill)
            if gemm is not None:
                gemm.attributes[CLEAR_FIRST_ATTR] = ir.UnitAttr.get()
                fill.erase()
