"""wgmma groups left in flight until a statement needs their registers (a TMA ring's body).

A `tile.wgmma` gemm normally waits for its group (wait_group 0) right after committing it.
One marked `tile.deferred_wait` (rotate-attention-loop marks both gemms of the loop it rotates)
inside a TMA ring loop's body leaves the group pending instead; before each later statement
of the body that touches a pending gemm's accumulator or register A operand, the lowering
waits for that gemm with wait_group N, N the groups committed after it (wgmma groups complete
in order): in the rotated attention loop the softmax waits for Q K^T with P V still in flight
(wait_group 1), and its statements that scale O and write P wait for P V (wait_group 0).

A statement with regions that the lowering descends into (an scf.if: the rotated softmax
under `k < n`) gets the first wait its statements need before it, on both paths, and the
later ones inside, before their statements; after it every gemm pending after that first
wait counts as pending still, since the branch may not have run. The first wait stays out of
the branch for ptxas: with it inside, ptxas 13 does not credit wait_group 1 on one path with
finishing Q K^T and serializes every wgmma of the kernel (C7514: "non wgmma instructions
reading accumulator registers of a wgmma between start and end of the pipeline stage"). On the
path that skips the branch (the rotated loop's last iteration) the wait costs nothing: the
body's end waits for every group anyway. At the end of the body, before the ring hands its
slot back, every pending group is waited for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import nvvm

from tilec.compiler.passes._ir_walk import scope, walk

DEFERRED_WAIT_ATTR = "tile.deferred_wait"


def _registers(gemm: ir.Operation) -> list[ir.Value]:
    """The buffers a gemm's group in flight reads or writes as registers: its accumulator and
    a fragment A."""
    a = gemm.operands[0]
    return [gemm.operands[2]] + [a] * (scope(a) == "fragment")


def _touches(op: ir.Operation, buffers: list[ir.Value]) -> bool:
    return any(operand == buffer for inner in [op, *walk(op)] for operand in inner.operands
               for buffer in buffers)


@dataclass
class PendingGroups:
    """The register buffers of each deferred gemm committed and not yet waited for, oldest
    first (the gemm ops themselves are gone once lowered)."""

    groups: list[list[ir.Value]] = field(default_factory=list)

    @staticmethod
    def defers(gemm: ir.Operation) -> bool:
        return DEFERRED_WAIT_ATTR in gemm.attributes

    def committed(self, gemm: ir.Operation) -> None:
        self.groups.append(_registers(gemm))

    def before(self, op: ir.Operation) -> None:
        """At the insertion point: wait for the pending gemms `op` touches the registers of
        (and every one committed before them)."""
        touched = [number for number, buffers in enumerate(self.groups)
                   if _touches(op, buffers)]
        if touched:
            nvvm.wgmma_wait_group_sync_aligned(len(self.groups) - 1 - touched[-1])
            del self.groups[:touched[-1] + 1]

    def before_branch(self, branch: ir.Operation) -> None:
        """At the insertion point, before `branch` (an op with regions the lowering descends
        into): the wait the first of its statements touching a pending gemm's registers
        would make inside it."""
        for region in branch.regions:
            for block in region.blocks:
                for op in block.operations:
                    if any(_touches(op, buffers) for buffers in self.groups):
                        self.before(op)
                        return

    def drain(self) -> None:
        """At the insertion point: wait for every pending group."""
        if self.groups:
            nvvm.wgmma_wait_group_sync_aligned(0)
            self.groups.clear()
