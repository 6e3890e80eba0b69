"""rasterize-blocks: the order a 2-d grid's blocks run in, and whether the grid is persistent.

Blocks that run at the same time should share operand tiles in L2: grouped order walks
`group_m` rows of tiles down a column before moving right (TileLang's T.use_swizzle panel,
`tile.swizzle_panel` on the kernel; 8 without it). A persistent grid (one block per SM looping
over tiles) lets a block's epilogue overlap its next tile's loads; it pays off, and the
generated kernel supports it, only on sm_90a with a TMA + mbarrier pipeline, and its tile count
must be known when compiling (a static grid). The kernel records
`tile.raster = {group_m = G, persistent = B}`.

Left alone: 1-d and 3-d grids (a 3-d grid's z is a batch or head index, not a tile row).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import constant_index, kernels, walk
from tilec.compiler.passes._scheduling import decision_attr, target_description
from tilec.compiler.passes.specialize_warps import is_tma_pipeline
from tilec.compiler.targets.description import TargetDescription

RASTER_ATTR = "tile.raster"
PANEL_ATTR = "tile.swizzle_panel"  # the frontend's T.use_swizzle(panel)
DEFAULT_GROUP_M = 8


def group_m(kernel: ir.Operation) -> int:
    attributes = kernel.attributes
    if PANEL_ATTR in attributes:
        return ir.IntegerAttr(attributes[PANEL_ATTR]).value
    return DEFAULT_GROUP_M


def persistent(kernel: ir.Operation, target: TargetDescription) -> bool:
    """wgmma (sm_90a), a grid of constant size and a TMA + mbarrier pipeline inside."""
    if not target.has_wgmma or any(constant_index(size) is None for size in kernel.operands):
        return False
    return any(op.name == "tile.pipelined" and is_tma_pipeline(op) for op in walk(kernel))


@register
@dataclass
class RasterizeBlocks(TilePass):
    """Choose the grouped block order and persistence of every 2-d grid."""

    name = "rasterize-blocks"
    summary = "tile.kernel with a 2-d grid -> tile.raster (group_m, persistent)"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        target = target_description(module, self.arch, self.name)
        for kernel in kernels(module):
            if len(kernel.operands) != 2:
                continue
            decision = {"group_m": group_m(kernel), "persistent": persistent(kernel, target)}
            kernel.attributes[RASTER_ATTR] = decision_attr(decision, module.context)
