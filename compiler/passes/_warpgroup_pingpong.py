"""The decision of plan-warpgroup-pingpong and its CUDA lowering (the TMA ring's consumers).

A `tile.tma_ring` loop marked `tile.pingpong = {barrier = B, together = T}` has two consumer
warpgroups and two wgmma gemms, each split over both warpgroups (attention: S = Q K^T, the
online softmax in registers, O += P V). The two warpgroups take turns issuing their gemms, as
FlashAttention-3's warp scheduler barriers do: named barrier B + g is warpgroup g's turn
(256 threads: g's 128 waiting with bar.sync, the other's 128 arriving with bar.arrive), so
while one warpgroup runs its softmax the other's gemms hold the tensor cores.

The loop as written (together = false) issues its gemms apart, the softmax between them: a
warpgroup's turn spans the second gemm of one iteration and the first of the next.

    before the loop:     warpgroup 1 arrives on B (warpgroup 0 goes first); g waits on B + g
    each iteration:      first gemm issued and committed -> arrive on B + 1 - g (the other's
                         turn) -> wait for the first gemm, the softmax -> wait on B + g ->
                         second gemm
    after the loop:      warpgroup 0 arrives on B + 1 (warpgroup 1's last second gemm)

A rotated loop (together = true: rotate-attention-loop issues Q K^T of tile k and P V of
tile k - 1 back to back, their waits deferred to the softmax) takes both gemms of an
iteration in one turn, FlashAttention-3's schedule with its intra-warpgroup overlap:

    before the loop:     warpgroup 1 arrives on B (warpgroup 0 goes first)
    each iteration:      wait on B + g -> both gemms issued and committed -> arrive on
                         B + 1 - g -> the softmax, under this warpgroup's own P V and the
                         other warpgroup's gemms
    after the loop:      warpgroup 0 waits on B (warpgroup 1's last hand-on)

Per tile each barrier gets as many arrivals as waits (N + 1 for N iterations), so nothing is
left pending between a persistent grid's tiles, and the turns alternate strictly: a
warpgroup's next arrival on a barrier needs a turn that the other's wait on it precedes. No
deadlock with the consumers' own block barriers in the body either: each warpgroup hands its
turn on before its softmax (plan-warpgroup-pingpong lets nothing but index arithmetic and
the ring's own copies stand between two gemms issued together). The turns change when a
warpgroup issues its wgmmas, never what they compute.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mlir import ir
from mlir.dialects import arith, nvvm, scf

from tilec.compiler.passes._ir_walk import op_error
from tilec.compiler.passes._scalar import constant
from tilec.compiler.passes._scheduling import decision_attr, read_decision
from tilec.compiler.passes._wgmma import WARPGROUP_THREADS, warpgroup_index

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

PINGPONG_ATTR = "tile.pingpong"
TURN_BARRIER = 4  # named barriers 4 and 5: after the consumers' (1) and slab barriers (2, 3)
TURNS = 2  # consumer warpgroups taking turns


@dataclass(frozen=True)
class PingPong:
    """tile.pingpong of a ring loop."""

    barrier: int = TURN_BARRIER  # warpgroup g's turn is named barrier `barrier + g`
    together: bool = False  # both gemms of an iteration in one turn (a rotated loop)

    def to_attr(self, context: ir.Context) -> ir.Attribute:
        return decision_attr({"barrier": self.barrier, "together": self.together}, context)

    @classmethod
    def of(cls, loop: ir.Operation) -> PingPong | None:
        fields = read_decision(loop, PINGPONG_ATTR)
        if fields is None:
            return None
        if "barrier" not in fields:
            raise op_error(loop, f"{PINGPONG_ATTR} needs barrier (plan-warpgroup-pingpong "
                                 "writes it)")
        barrier = int(fields["barrier"])
        if not 1 <= barrier <= 16 - TURNS:
            raise op_error(loop, f"{PINGPONG_ATTR} barrier = {barrier}: named barriers "
                                 f"{barrier} and {barrier + 1} must lie in 1..15")
        return cls(barrier, bool(fields.get("together", False)))


@dataclass
class Turns:
    """The turn-taking of one ring loop's consumers while it is lowered (module docstring):
    `begin` before the loop, `before_issue` / `after_commit` around each gemm of its body
    (lower_wgmma calls them), `end` after it."""

    pingpong: PingPong
    gemms: Sequence[ir.Operation]  # the body's two gemms, in program order
    group: ir.Value | None = field(default=None)
    own: ir.Value | None = field(default=None)
    other: ir.Value | None = field(default=None)

    def begin(self, tid: ir.Value) -> None:
        i32 = ir.IntegerType.get_signless(32)
        self.group = arith.index_cast(i32, warpgroup_index(tid))
        self.own = arith.addi(self.group, constant(i32, self.pingpong.barrier))
        self.other = arith.subi(constant(i32, self.pingpong.barrier + 1), self.group)
        self._if_group(1, lambda: self._arrive(constant(i32, self.pingpong.barrier)))
        if not self.pingpong.together:
            self._wait()

    def before_issue(self, gemm: ir.Operation) -> None:
        if gemm == self.gemms[0 if self.pingpong.together else 1]:
            self._wait()

    def after_commit(self, gemm: ir.Operation) -> None:
        if gemm == self.gemms[1 if self.pingpong.together else 0]:
            self._arrive(self.other)

    def end(self) -> None:
        i32 = ir.IntegerType.get_signless(32)
        if self.pingpong.together:
            self._if_group(0, self._wait)
        else:
            self._if_group(0, lambda: self._arrive(constant(i32, self.pingpong.barrier + 1)))

    def _threads(self) -> ir.Value:
        return constant(ir.IntegerType.get_signless(32), TURNS * WARPGROUP_THREADS)

    def _wait(self) -> None:
        nvvm.BarrierOp(None, barrierId=self.own, numberOfThreads=self._threads())

    def _arrive(self, barrier: ir.Value) -> None:
        nvvm.BarrierArriveOp(numberOfThreads=self._threads(), barrierId=barrier)

    def _if_group(self, group: int, emit: Callable[[], None]) -> None:
        """Warpgroup `group` alone (a warp-uniform condition) runs what `emit` builds."""
        i32 = ir.IntegerType.get_signless(32)
        branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, self.group, constant(i32, group)))
        with ir.InsertionPoint(branch.then_block):
            emit()
            scf.YieldOp([])
