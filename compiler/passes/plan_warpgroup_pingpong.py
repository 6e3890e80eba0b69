"""plan-warpgroup-pingpong: attention's two consumer warpgroups take turns on the tensor cores.

In an attention loop each consumer warpgroup runs S = Q K^T, then its online softmax on the
accumulator in registers (exp2, row maxima and sums: no tensor-core work), then O += P V.
Left to themselves both warpgroups wait on the same TMA slot and reach their softmax together,
so the tensor cores idle through it. With `tile.pingpong = {barrier = 4}` on the loop
(compiler/passes/_warpgroup_pingpong.py lowers it) the warpgroups issue their gemms in turn,
one warpgroup's P V and next Q K^T while the other computes its softmax, as
FlashAttention-3's ping-pong schedule does.

A loop qualifies when plan-tma-pipelines gave it a `tile.tma_ring` of two consumer
warpgroups (overlapped by overlap-ring-gemms or not: with P V left in flight a turn ends once
the next Q K^T is issued, not after P V's wait), and its statements hold exactly two gemms,
both tile.wgmma over both warpgroups (each warpgroup issues the wgmmas of its own rows).

An opt-in: the pass marks loops only in a module carrying the unit attribute
`tile.warpgroup_pingpong` (the CUDA target sets it from TILEC_WARPGROUP_PINGPONG=1); a loop
already marked by hand is checked either way. On the H200 (8 x 4096 x 32 x 128 fp16) it made
examples/attention/flash_fwd.py slower, 469 / 416 TFLOP/s against 489 / 456 non-causal /
causal, with right results: a turn ends with P V's wait_group 0 before the next Q K^T issues
(the ring hands the slot back after the body), so FlashAttention-3's gain presumably also
needs its intra-warpgroup overlap, which holds a slot one iteration longer.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import as_operation, kernels, op_error, walk
from tilec.compiler.passes._scheduling import PINGPONG_OPT_IN_ATTR, read_decision
from tilec.compiler.passes._tma_ring import RING_ATTR, TmaRing
from tilec.compiler.passes._warpgroup_pingpong import PINGPONG_ATTR, TURNS, PingPong
from tilec.compiler.passes._wgmma import WGMMA_ATTR
from tilec.compiler.passes._wgmma_waits import DEFERRED_WAIT_ATTR


def pingpong_gemms(loop: ir.Operation) -> list[ir.Operation] | None:
    """The loop's two gemms when its consumers can take turns on them (module docstring),
    else None."""
    ring = TmaRing.of(loop)
    if ring is None or ring.consumers != TURNS or (ring.overlap and ring.lag != 1):
        return None
    gemms = [op for op in map(as_operation, loop.regions[0].blocks[0].operations)
             if op.name == "tile.gemm"]
    if len(gemms) != 2 or any(DEFERRED_WAIT_ATTR in gemm.attributes for gemm in gemms):
        return None  # a rotated loop's gemms (rotate-attention-loop) issue back to back
    for gemm in gemms:
        plan = read_decision(gemm, WGMMA_ATTR)
        if plan is None or plan.get("warpgroups") != TURNS or plan.get("split_n"):
            return None
    return gemms


@register
@dataclass
class PlanWarpgroupPingpong(TilePass):
    """Mark the attention-shaped TMA ring loops whose two consumer warpgroups take turns."""

    name = "plan-warpgroup-pingpong"
    summary = "two-gemm tile.tma_ring loops of two consumers -> tile.pingpong (sm_90a)"

    def run(self, module: ir.Module) -> None:
        opted_in = PINGPONG_OPT_IN_ATTR in module.operation.attributes
        for kernel in kernels(module):
            for loop in (op for op in walk(kernel) if op.name == "tile.pipelined"):
                if PINGPONG_ATTR in loop.attributes:
                    PingPong.of(loop)
                    if pingpong_gemms(loop) is None:
                        raise op_error(loop, f"{PINGPONG_ATTR} needs a {RING_ATTR} loop of "
                                             f"{TURNS} consumer warpgroups whose body holds "
                                             f"two {WGMMA_ATTR} gemms over both")
                elif opted_in and pingpong_gemms(loop) is not None:
                    loop.attributes[PINGPONG_ATTR] = PingPong().to_attr(module.context)
