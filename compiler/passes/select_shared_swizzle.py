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

Only gemms with a `tile.mma` (infer-mma-layout) are looked at. A read from registers has no
shared tile of its own, except when a whole shared tile is copied into it before the gemm
(`T.copy(A_shared, A_frag)`, infer-mma-layout's `register_a_fill`): with wgmma that tile is
the TMA slot each warp ldmatrix-reads its rows of A from, so it gets "128B" like a shared
operand (on sm_80 the mma.sync kernel does not read A from registers: it gets nothing). A tile
two gemms read gets the same choice from both.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import copy_parts, defining_op, kernels, scope, walk
from tilec.compiler.passes._scheduling import (
    read_decision,
    target_description,
)
from tilec.compiler.passes.infer_mma_layout import MMA_ATTR, register_a_fill

SWIZZLE_ATTR = "tile.swizzle"
WGMMA_SWIZZLE = "128B"
SWIZZLES = {"wgmma": WGMMA_SWIZZLE, "mma.sync": "xor"}  # by tile.mma kind


def swizzle_bytes(swizzle: str) -> int | None:
    """The span of a TMA swizzle ("128B" -> 128), None for other patterns."""
    return int(swizzle[:-1]) if swizzle.endswith("B") and swizzle[:-1].isdigit() else None


@register
@dataclass
class SelectSharedSwizzle(TilePass):
    """Record on each shared gemm operand the swizzle its tensor-core instruction reads."""

    name = "select-shared-swizzle"
    summary = "shared tile.alloc read by a tensor-core gemm -> tile.swizzle (128B / xor)"
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
