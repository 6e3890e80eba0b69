"""specialize-warps: split a TMA-fed wgmma kernel's warps into a producer and consumers.

When a pipelined loop is fed by TMA through mbarriers ("tma-mbarrier", pipeline-async-copies)
and its gemms are wgmma (infer-mma-layout), one thread can issue every load, and a separate
producer warpgroup doing only that keeps the ring full while the consumer warpgroups never
wait on address arithmetic or barriers for their copies. The kernel records the split as
`tile.warp_specialize = {producer_warpgroups = 1, consumer_warpgroups = C, threads =
128 * (C + 1)}`, C being the gemms' `warpgroups`: the block grows by the producer warpgroup.
Register reallocation (setmaxnreg) stays off, so the decision carries no `setmaxnreg` field.

Left alone: sm_80 (no TMA, no wgmma), kernels without a "tma-mbarrier" loop holding a wgmma
gemm, and kernels whose wgmma gemms in such loops want different consumer counts (one block
shape cannot serve both).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import kernels, walk
from tilec.compiler.passes._scheduling import (
    PIPELINE_ATTR,
    TMA_PIPELINE,
    decision_attr,
    read_decision,
    target_description,
)
from tilec.compiler.passes.infer_mma_layout import MMA_ATTR, WARPGROUP_THREADS

WARP_SPECIALIZE_ATTR = "tile.warp_specialize"
PRODUCER_WARPGROUPS = 1


def is_tma_pipeline(loop: ir.Operation) -> bool:
    pipeline = read_decision(loop, PIPELINE_ATTR)
    return pipeline is not None and pipeline.get("mechanism") == TMA_PIPELINE


def consumer_warpgroups(kernel: ir.Operation) -> int | None:
    """The warpgroups of the wgmma gemms in the kernel's TMA-fed loops, when they agree."""
    counts = set()
    for loop in (op for op in walk(kernel) if op.name == "tile.pipelined"):
        if not is_tma_pipeline(loop):
            continue
        for gemm in (op for op in walk(loop) if op.name == "tile.gemm"):
            mma = read_decision(gemm, MMA_ATTR)
            if mma is not None and mma["kind"] == "wgmma":
                counts.add(mma["warpgroups"])
    return counts.pop() if len(counts) == 1 else None


@register
@dataclass
class SpecializeWarps(TilePass):
    """Give a TMA-fed wgmma kernel a producer warpgroup besides its consumer warpgroups."""

    name = "specialize-warps"
    summary = "tile.kernel with a tma-mbarrier wgmma loop -> tile.warp_specialize"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        if not target_description(module, self.arch, self.name).has_wgmma:
            return
        for kernel in kernels(module):
            consumers = consumer_warpgroups(kernel)
            if consumers is None:
                continue
            decision = {
                "producer_warpgroups": PRODUCER_WARPGROUPS,
                "consumer_warpgroups": consumers,
                "threads": WARPGROUP_THREADS * (PRODUCER_WARPGROUPS + consumers),
            }
            kernel.attributes[WARP_SPECIALIZE_ATTR] = decision_attr(decision, module.context)
