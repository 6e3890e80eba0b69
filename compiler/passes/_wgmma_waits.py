"""wgmma groups left in flight until a statement needs their registers (a TMA ring's body).

A `tile.wgmma` gemm normally waits for its group (wait_group 0) right after committing it.
One marked `tile.deferred_wait` (rotate-attention-loop marks both gemms of the loop it rotates)
inside a TMA ring loop's body leaves the group pending instead; before each later statement
of the body that touches a pending gemm's accumulator or register A operand, the lowering
waits for that gemm with wait_group N, N the groups committed after it (wgmma groups complete
in order): in the rotated attention loop the softmax waits for Q K^T with P V still in flight
(wait_group 1), and its statements that scale O and write P wait for P V (wait_group 0).

A statement with regions that the lowering descends into (an scf.if: the rotated softmax's
two parts under `k < n`) gets its waits inside, before its statements, but for a first wait
that leaves groups in flight (wait_group N > 0): that one goes before the branch, on both
paths. ptxas 13 does not credit a wait_group 1 inside a branch with finishing Q K^T and
serializes every wgmma of the kernel (C7514: "non wgmma instructions reading accumulator
registers of a wgmma between start and end of the pipeline stage"); a wait_group 0 inside
one it takes, and it places the wait at the start of the block holding it (so the rotated
softmax's statements on S run in a branch before P V's wait, rotate-attention-loop). On the
path that skips the branch (the rotated loop's last iteration) the hoisted wait costs
nothing: the body's end waits for every group anyway. After a branch every gemm pending before
it (after a hoisted wait) counts as pending still, since the branch may not have run. At the
end of the body, before the ring hands its slot back, every pending group is waited for.

A statement touching the registers of a deferred gemm whose group is no longer pending (waited
for in this iteration, or at the previous one's end) while later groups are in flight gets a
wait_group N first, N the groups in flight: it waits for nothing, but without it ptxas 13
takes the registers as maybe written by a wgmma still running (the previous iteration's, over
the back edge) and waits for every group before the statement (C7517: "warpgroup.wait is
injected ... to allow use of registers defined by GMMA"), so O's rescale under the rotated
loop's next Q K^T (rotate-attention-loop's rescale_under_qk) would wait for that Q K^T. It
goes before a branch, as a first wait leaving groups in flight does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, llvm, nvvm

from tilec.compiler.passes._ir_walk import scope, touches, walk

DEFERRED_WAIT_ATTR = "tile.deferred_wait"


def opaque_condition(condition: ir.Value) -> ir.Value:
    """`condition` (an i1) tested at the insertion point: through an empty asm with side
    effects, which LLVM neither sees through nor moves across the wgmma waits around it."""
    i32 = ir.IntegerType.get_signless(32)
    word = arith.extui(i32, condition)
    opaque = llvm.InlineAsmOp(i32, [word], "", "=r,0", has_side_effects=True).result
    return arith.cmpi(arith.CmpIPredicate.ne, opaque, arith.constant(i32, 0))


def opaque_index(value: ir.Value) -> ir.Value:
    """`value` (an index) as computed at the insertion point: through an empty asm with side
    effects, so what is computed from it stays after the wgmma waits before it."""
    i64 = ir.IntegerType.get_signless(64)
    word = arith.index_cast(i64, value)
    opaque = llvm.InlineAsmOp(i64, [word], "", "=l,0", has_side_effects=True).result
    return arith.index_cast(ir.IndexType.get(), opaque)


def _registers(gemm: ir.Operation) -> list[ir.Value]:
    """The buffers a gemm's group in flight reads or writes as registers: its accumulator and
    a fragment A."""
    a = gemm.operands[0]
    return [gemm.operands[2]] + [a] * (scope(a) == "fragment")


@dataclass
class PendingGroups:
    """The register buffers of each deferred gemm committed and not yet waited for, oldest
    first (the gemm ops themselves are gone once lowered), and those of every deferred gemm
    of the loop; `settled` once a wait since the last commit has told ptxas that no group
    but those in flight is running."""

    groups: list[list[ir.Value]] = field(default_factory=list)
    deferred: list[ir.Value] = field(default_factory=list)
    settled: bool = True

    @staticmethod
    def defers(gemm: ir.Operation) -> bool:
        return DEFERRED_WAIT_ATTR in gemm.attributes

    @classmethod
    def of_loop(cls, loop: ir.Operation) -> PendingGroups:
        """The groups of `loop`'s body, none in flight at its start."""
        return cls(deferred=[buffer for op in walk(loop) if op.name == "tile.gemm"
                             and cls.defers(op) for buffer in _registers(op)])

    def committed(self, gemm: ir.Operation) -> None:
        self.groups.append(_registers(gemm))
        self.settled = False

    def before(self, op: ir.Operation) -> None:
        """At the insertion point: wait for the pending gemms `op` touches the registers of
        (and every one committed before them), or settle (module docstring)."""
        touched = [number for number, buffers in enumerate(self.groups)
                   if touches(op, buffers)]
        if touched:
            nvvm.wgmma_wait_group_sync_aligned(len(self.groups) - 1 - touched[-1])
            del self.groups[:touched[-1] + 1]
            self.settled = True
        elif self.groups and not self.settled and op.name != "tile.gemm" and \
                touches(op, self.deferred):
            nvvm.wgmma_wait_group_sync_aligned(len(self.groups))
            self.settled = True

    def before_branch(self, branch: ir.Operation) -> None:
        """At the insertion point, before `branch` (an op with regions the lowering descends
        into): the wait the first of its statements touching a pending gemm's registers
        would make inside it, where that wait leaves groups in flight (module docstring)."""
        for region in branch.regions:
            for block in region.blocks:
                for op in block.operations:
                    touched = [number for number, buffers in enumerate(self.groups)
                               if touches(op, buffers)]
                    if touched:
                        if touched[-1] < len(self.groups) - 1:
                            self.before(op)
                        return
                    self.before(op)  # settles, where it touches a deferred gemm's registers

    def keep_apart(self, branch: ir.Operation) -> None:
        """At the insertion point, before `branch` (an scf.if the lowering descends into while
        groups are in flight): its condition through an empty asm, which LLVM cannot see
        through, so jump threading does not merge it into a branch on the same condition
        before it (the rotated softmax's two parts: merged, P V's wait would head the whole
        softmax again)."""
        if self.groups:
            branch.operands[0] = opaque_condition(branch.operands[0])

    def drain(self) -> None:
        """At the insertion point: wait for every pending group."""
        if self.groups:
            nvvm.wgmma_wait_group_sync_aligned(0)
            self.groups.clear()
        self.settled = True
