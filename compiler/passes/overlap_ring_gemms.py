"""overlap-ring-gemms: a TMA ring loop of several gemms leaves its last one in flight.

In attention's loop each consumer warpgroup issues S = Q K^T, waits for it, runs its online
softmax, issues O += P V and waits for that too before the ring hands the slot back and the
next iteration's Q K^T can issue: the tensor cores drain at every iteration's end. With
`overlap` on the loop's `tile.tma_ring` (compiler/passes/_tma_ring.py lowers it) the last
gemm's wgmma group stays in flight into the next iteration, whose first gemm's
wait_group 0 (before the softmax reads S) waits for both: P V runs under the slot
hand-over, the next full-slot wait and Q K^T's issue, and the ring hands a slot back one
iteration later (after wait_group 1: every group but the last one done). With
plan-warpgroup-pingpong's turns, a warpgroup's turn then ends once its Q K^T is issued,
without waiting for its P V, as FlashAttention-3's warp scheduler hands turns on.

The slot held one iteration longer leaves one slot fewer to prefetch into, so the ring is
made one slot deeper where the kernel's shared memory holds it; a ring that stays at two
slots would have none left to prefetch into and is left alone.

A loop qualifies when it has a `tile.tma_ring` not yet overlapped and its statements hold two
or more tile.wgmma gemms, and no statement after the last gemm, nor any before the first
(run again in the next iteration before the first gemm's wait), touches the last gemm's
accumulator or its A operand (registers the group in flight reads and writes). After the
loop the ring waits for every group.

An opt-in: the pass marks loops only in a module carrying the unit attribute
`tile.overlap_ring_gemms` (the CUDA target sets it from TILEC_OVERLAP_RING_GEMMS=1) until
measured on the H200.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import as_operation, enclosing, kernels, scope, touches, walk
from tilec.compiler.passes._scheduling import OVERLAP_RING_GEMMS_ATTR, target_description
from tilec.compiler.passes._tma_ring import BARRIER_BYTES, RING_ATTR, TmaRing
from tilec.compiler.passes._wgmma import WGMMA_ATTR
from tilec.compiler.passes.plan_shared_memory import arena_bytes

MIN_OVERLAP_STAGES = 3  # the slot in use, the one the last gemm still reads, one to prefetch


def overlapped_gemm(loop: ir.Operation) -> ir.Operation | None:
    """The ring loop's last gemm when its wgmma group may stay in flight into the next
    iteration (module docstring), else None."""
    statements = [as_operation(op) for op in loop.regions[0].blocks[0].operations]
    gemms = [i for i, op in enumerate(statements) if op.name == "tile.gemm"]
    if len(gemms) < 2 or any(WGMMA_ATTR not in statements[i].attributes for i in gemms):
        return None
    last = statements[gemms[-1]]
    registers = [last.operands[2]] + [last.operands[0]] * (scope(last.operands[0]) == "fragment")
    around = statements[gemms[-1] + 1:] + statements[:gemms[0]]
    if any(op.name != "tile.yield" and touches(op, registers) for op in around):
        return None
    return last


def _shared_bytes(loop: ir.Operation, ring: TmaRing) -> int:
    """The kernel's shared memory with `ring` on the loop (left there)."""
    loop.attributes[RING_ATTR] = ring.to_attr(loop.context)
    return arena_bytes(enclosing(loop, "tile.kernel")) + 2 * ring.stages * BARRIER_BYTES


@register
@dataclass
class OverlapRingGemms(TilePass):
    """Leave the last gemm of a several-gemm TMA ring loop in flight into the next iteration."""

    name = "overlap-ring-gemms"
    summary = "several-gemm tile.tma_ring loops -> overlap = true, one slot deeper (sm_90a)"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        if OVERLAP_RING_GEMMS_ATTR not in module.operation.attributes:
            return
        limit = target_description(module, self.arch, self.name).max_shared_bytes
        for kernel in kernels(module):
            for loop in (op for op in walk(kernel) if op.name == "tile.pipelined"):
                ring = TmaRing.of(loop)
                if ring is None or ring.overlap or overlapped_gemm(loop) is None:
                    continue
                overlapped = replace(ring, overlap=True, lag=1)
                deeper = replace(overlapped, stages=ring.stages + 1)
                if _shared_bytes(loop, deeper) <= limit:
                    continue  # the deeper ring stays on the loop
                if ring.stages >= MIN_OVERLAP_STAGES:
                    loop.attributes[RING_ATTR] = overlapped.to_attr(module.context)
                else:
                    loop.attributes[RING_ATTR] = ring.to_attr(module.context)
