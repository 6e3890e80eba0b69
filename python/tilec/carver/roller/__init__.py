"""Carver's recommendations: `Hint` (TileLang's roller hint fields) and the rasterization plans."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tilec.carver.roller.rasterization import (
    NoRasterization,
    Rasterization,
    Rasterization2DColumn,
    Rasterization2DRow,
)

__all__ = ["Hint", "NoRasterization", "Rasterization", "Rasterization2DColumn",
           "Rasterization2DRow"]


@dataclass
class Hint:
    """One recommended GEMM tile, in the fields TileLang's examples read.

    `block` = [block_M, block_N]; `warp` = one warp's share of it, so that
    (block_M / warp[0]) * (block_N / warp[1]) * 32 is the block's `threads`; `rstep` =
    [block_K]; `pipeline_stage` = shared-memory stages of the K loop; `use_tc`: on tensor cores.
    `shared_memory_bytes`, `waves` and `estimated_cycles` are the cost model's view of it
    (MatmulTemplate.recommend_hints).
    """

    block: list[int]
    warp: list[int]
    rstep: list[int]
    pipeline_stage: int
    threads: int
    rasterization_plan: Rasterization = field(default_factory=NoRasterization)
    use_async: bool = True
    use_tc: bool = True
    arch: Any = None
    shared_memory_bytes: int = 0
    waves: int = 0
    estimated_cycles: float = 0.0
    split_k_factor: int = 1
    block_reduction_depth: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"block": list(self.block), "warp": list(self.warp), "rstep": list(self.rstep),
                "pipeline_stage": self.pipeline_stage, "threads": self.threads,
                "use_tc": self.use_tc}

    def __repr__(self) -> str:
        return str(self.to_dict())
