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
Where rotate-attention-loop rotated the loop (both gemms `tile.deferred_wait`: Q K^T of
tile k, then P V of tile k - 1) a turn takes both gemms (`together = true`), so the gemms
must stand side by side: between them only index arithmetic and the copies the ring's
producer makes (a barrier between them, over both warpgroups, would wait for the other
warpgroup while it waits for its turn). A loop with one gemm deferred and not the other is
left alone.

An opt-in: the pass marks loops only in a module carrying the unit attribute
`tile.warpgroup_pingpong` (the CUDA target sets it from TILEC_WARPGROUP_PINGPONG=1); a loop
already marked by hand is checked either way. On the H200 (8 x 4096 x 32 x 128 fp16) it made
examples/attention/flash_fwd.py's loop as written slower, 469 / 416 TFLOP/s against 489 /
456 non-causal / causal, with right results: a turn ends with P V's wait_group 0 before the
next Q K^T issues (the ring hands the slot back after the body), so FlashAttention-3's gain
also needs its intra-warpgroup overlap, the rotated loop, which the turns now take (not yet
measured on a GPU).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import as_operation, kernels, op_error, walk
from tilec.compiler.passes._scheduling import PINGPONG_OPT_IN_ATTR, read_decision
from tilec.compiler.passes._tma_ring import LOAD_ATTR, RING_ATTR, TmaRing
from tilec.compiler.passes._warpgroup_pingpong import PINGPONG_ATTR, TURNS, PingPong
from tilec.compiler.passes._wgmma import WGMMA_ATTR
from tilec.compiler.passes._wgmma_waits import DEFERRED_WAIT_ATTR


def _side_by_side(loop: ir.Operation, gemms: list[ir.Operation]) -> bool:
    """Whether only index arithmetic and the ring's copies (TMA loads) stand between the
    loop's two gemms."""
    body = [as_operation(op) for op in loop.regions[0].blocks[0].operations]
    between = body[body.index(gemms[0]) + 1:body.index(gemms[1])]
    return all((op.name == "tile.copy" and LOAD_ATTR in op.attributes) or (
        not op.regions and op.name.startswith("arith.") and
        not any(isinstance(value.type, ir.MemRefType) for value in op.operands))
        for op in between)


def pingpong_gemms(loop: ir.Operation) -> tuple[list[ir.Operation], bool] | None:
    """The loop's two gemms when its consumers can take turns on them (module docstring) and
    whether a turn takes both (a rotated loop), else None."""
    ring = TmaRing.of(loop)
    if ring is None or ring.consumers != TURNS or (ring.overlap and ring.lag != 1):
        return None
    gemms = [op for op in map(as_operation, loop.regions[0].blocks[0].operations)
             if op.name == "tile.gemm"]
    if len(gemms) != 2:
        return None
    deferred = [DEFERRED_WAIT_ATTR in gemm.attributes for gemm in gemms]
    together = all(deferred)
    if deferred[0] != deferred[1] or (together and (ring.overlap or
                                                    not _side_by_side(loop, gemms))):
        return None
    for gemm in gemms:
        plan = read_decision(gemm, WGMMA_ATTR)
        if plan is None or plan.get("warpgroups") != TURNS or plan.get("split_n"):
            return None
    return gemms, together


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
                planned = pingpong_gemms(loop)
                if PINGPONG_ATTR in loop.attributes:
                    marked = PingPong.of(loop)
                    if planned is None:
                        raise op_error(loop, f"{PINGPONG_ATTR} needs a {RING_ATTR} loop of "
                                             f"{TURNS} consumer warpgroups whose body holds "
                                             f"two {WGMMA_ATTR} gemms over both")
                    if marked.together != planned[1]:
                        raise op_error(loop, f"{PINGPONG_ATTR} together = "
                                             f"{str(marked.together).lower()}: the loop's "
                                             f"gemms {'are' if planned[1] else 'are not'} "
                                             f"{DEFERRED_WAIT_ATTR} (rotate-attention-loop)")
                elif opted_in and planned is not None:
                    loop.attributes[PINGPONG_ATTR] = PingPong(
                        together=planned[1]).to_attr(module.context)
