"""name-live-lanes: every warp-collective op of a CUDA kernel names exactly the lanes that run it.

PTX's shfl.sync, vote.sync, match.sync, redux.sync and elect.sync take a member mask: the
lanes that execute the op together. A lane named there that never executes it (a block of 48
threads has a last warp of 16 lanes; `if tx < 16:` leaves 16 lanes out) is undefined
behaviour: the warp may wait for it, and its value is unpredictable. tilec's lowering writes
every such op over the whole warp (a reduction's xor shuffles, T.shfl_* / T.warp_reduce_* /
T.any_sync), so this pass, on the gpu.funcs after lower-tile-to-gpu, gives each the mask of the
lanes that reach it:

- the block's threads (`known_block_size`: a count that is not a multiple of 32 ends in a
  partial warp), narrowed by the scf.if branches around the op whose condition is computed
  from the thread index and constants (evaluated for every thread of the block, so a thread
  range, `tid < 16`, `tid % 2 == 0` and a warp index shuffled from lane 0 are exact at compile
  time; a condition the same for every thread, such as one on the block index or a loop
  variable, narrows nothing);
- under any other condition that differs between threads (a value loaded per thread), a
  T.shfl_* / vote / match / redux takes the mask at run time: a ballot of the condition over
  the lanes that reach the branch, made just before it (`__ballot_sync` as CUDA C writes it).
  The reductions' gpu.shuffle sit only under thread ranges and uniform conditions
  (check-thread-branches), so they take the compile-time mask; a partial one is a prefix of
  lanes, which gpu.shuffle's `width` states (its mask is the low `width` lanes).

A mask that is the same for every warp is a constant; one that differs (only a block's last
warp is partial) is chosen by the warp index. Ops whose lanes are every lane of their warp are
left as they are, so kernels of whole warps do not change.

Errors at the op's line: a T.shfl_* whose constant source lane is one that does not run it
(T.warp_reduce_sum in a block of 48 threads: lane 0 of the last warp reads lane 16, which the
block lacks; its value is undefined), and a warp-collective op in a loop whose trip count,
computed from the thread index, differs between the lanes of a warp (the lanes that left the
loop never arrive). Not checked: loop bounds that differ between threads at run time only
(loaded values), where the mask of the loop's lanes is kept.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, gpu, nvvm

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import as_operation, defining_op, op_error, walk
from tilec.compiler.passes._per_thread import AXES, WARP, PerThread

FULL = (1 << WARP) - 1
# the operand that is the member mask of each warp-collective op
MASK_OPERAND = {"nvvm.shfl.sync": 0, "nvvm.vote.sync": 0, "nvvm.match.sync": 0,
                "nvvm.redux.sync": 1}
COLLECTIVES = ("gpu.shuffle", "nvvm.elect.sync", *MASK_OPERAND)
# ops whose result is the same on every thread when their operands are
_PURE_PREFIXES = ("arith.", "index.", "math.")
_PURE = {"builtin.unrealized_conversion_cast", "llvm.insertvalue", "llvm.extractvalue",
         "llvm.mlir.constant", "llvm.mlir.poison", "llvm.mlir.undef", "llvm.mlir.zero",
         "memref.extract_aligned_pointer_as_index", "memref.reinterpret_cast",
         "memref.subview", "memref.cast", "memref.dim", "gpu.block_id", "gpu.grid_dim",
         "gpu.block_dim", "gpu.cluster_id"}


def lane_masks(live: np.ndarray) -> list[int]:
    """The 32-bit mask of each warp's live threads."""
    padded = np.zeros(math.ceil(len(live) / WARP) * WARP, dtype=bool)
    padded[:len(live)] = live
    weights = np.left_shift(np.ones(WARP, dtype=np.int64), np.arange(WARP, dtype=np.int64))
    return [int(row @ weights) for row in padded.reshape(-1, WARP).astype(np.int64)]


def is_prefix(mask: int) -> bool:
    return mask & (mask + 1) == 0


@dataclass
class Branch:
    """Lanes known only at run time: those of `parent` among `threads` (the threads that may
    reach the scf.if `branch`) for which `condition` is `taken`; the ballot is made right
    before the scf.if, once for both its branches (`votes`, which they share, keeps the lanes
    reaching it and the ballot)."""

    branch: ir.Operation
    condition: ir.Value
    taken: bool
    threads: np.ndarray
    parent: Branch | None
    votes: dict
    value: ir.Value | None = None


@dataclass
class Live:
    """The threads that reach a point: `threads[t]` for thread t of the block (exact, or an
    upper bound where `branch` narrows them at run time); `diverged` names a loop whose trip
    count differs between the lanes of a warp."""

    threads: np.ndarray
    branch: Branch | None = None
    diverged: ir.Operation | None = None


class _Function(PerThread):
    """One gpu.func: its threads' values, and which values all its threads share."""

    def __init__(self, function: ir.Operation, block: list[int]) -> None:
        super().__init__(block)
        self.function = function
        self.uniform: dict[ir.Value, bool] = {}

    def is_uniform(self, value: ir.Value) -> bool:
        """Whether `value` is the same on every thread of the block: computed from constants,
        block indices and sizes, kernel arguments, variables of loops with such bounds, and
        loads of memory other than a thread's own at such indices."""
        if value not in self.uniform:
            self.uniform[value] = False
            try:
                self.uniform[value] = self._is_uniform(value)
            except RecursionError:  # deeper than Python's stack: not shown uniform
                return False
        return self.uniform[value]

    def _is_uniform(self, value: ir.Value) -> bool:
        op = defining_op(value)
        if op is None:
            owner = as_operation(value.owner.owner)
            if owner == self.function:
                return True
            return owner.name == "scf.for" and value.arg_number == 0 and all(
                self.is_uniform(v) for v in list(owner.operands)[:3])
        if len(op.regions):
            return False
        if op.name in ("memref.load", "vector.load"):
            buffer = defining_op(op.operands[0])
            if buffer is not None and buffer.name == "memref.alloca":
                return False
        elif not (op.name.startswith(_PURE_PREFIXES) or op.name in _PURE):
            return False
        return all(self.is_uniform(v) for v in op.operands)


@register
@dataclass
class NameLiveLanes(TilePass):
    """Member masks of warp-collective ops: the lanes that execute them."""

    name = "name-live-lanes"
    summary = "shfl / vote / match / redux / elect.sync member masks = the lanes that run them"

    def run(self, module: ir.Module) -> None:
        for function in walk(module.operation):
            if function.name != "gpu.func" or "known_block_size" not in function.attributes:
                continue
            if not any(op.name in COLLECTIVES for op in walk(function)):
                continue
            block = list(ir.DenseI32ArrayAttr(function.attributes["known_block_size"]))
            state = _Function(function, block)
            everyone = Live(np.ones(state.count, dtype=bool))
            self._visit(state, function.regions[0].blocks[0], everyone)

    def _visit(self, state: _Function, block: ir.Block, live: Live) -> None:
        for op in list(block.operations):
            op = as_operation(op)
            if op.name in COLLECTIVES:
                self._name(state, op, live)
            elif op.name == "scf.if":
                self._branches(state, op, live)
            elif op.name == "scf.for":
                self._loop(state, op, live)
            else:
                for region in op.regions:
                    for inner in region.blocks:
                        self._visit(state, inner, live)

    def _branches(self, state: _Function, op: ir.Operation, live: Live) -> None:
        condition = op.operands[0]
        values = state.evaluate(condition)
        votes: dict = {}
        for taken, region in zip((True, False), op.regions, strict=True):
            if not region.blocks:
                continue
            if values is not None:
                inner = Live(live.threads & ((values != 0) == taken), live.branch,
                             live.diverged)
            elif state.is_uniform(condition):
                inner = live
            else:
                inner = Live(live.threads,
                             Branch(op, condition, taken, live.threads, live.branch, votes),
                             live.diverged)
            self._visit(state, region.blocks[0], inner)

    def _loop(self, state: _Function, op: ir.Operation, live: Live) -> None:
        bounds = [state.evaluate(v) for v in list(op.operands)[:3]]
        inner = live
        if all(bound is not None for bound in bounds):
            lower, upper, step = bounds
            trips = np.where(step > 0, np.maximum(0, -(-(upper - lower) // np.maximum(step, 1))),
                             0)
            for warp in range(math.ceil(state.count / WARP)):
                lanes = slice(warp * WARP, (warp + 1) * WARP)
                if len(set(trips[lanes][live.threads[lanes]].tolist())) > 1:
                    inner = Live(live.threads, live.branch, op)
                    break
        self._visit(state, op.regions[0].blocks[0], inner)

    # ----- one warp-collective op -----------------------------------------------------------
    def _name(self, state: _Function, op: ir.Operation, live: Live) -> None:
        if live.diverged is not None:
            raise op_error(op, "a warp shuffle, vote or reduction in a loop whose trip count "
                               "differs between the lanes of a warp: the lanes that left the "
                               "loop never arrive (make the loop's bounds the same for every "
                               "thread of a warp)")
        masks = lane_masks(live.threads)
        if op.name == "gpu.shuffle":
            self._name_shuffle(state, op, masks)
            return
        if op.name == "nvvm.shfl.sync" and live.branch is None:
            _check_sources(op, state, masks)
        if live.branch is None and all(mask in (0, FULL) for mask in masks):
            return
        with ir.InsertionPoint(op), op.location:
            mask = self._mask_value(state, live)
            if op.name == "nvvm.elect.sync":
                elected = nvvm.ElectSyncOp(op.results[0].type, membermask=mask)
                op.results[0].replace_all_uses_with(elected.result)
                op.erase()
                return
        op.operands[MASK_OPERAND[op.name]] = mask

    def _name_shuffle(self, state: _Function, op: ir.Operation, masks: list[int]) -> None:
        """A reduction's gpu.shuffle: the mask is the low `width` lanes, so a partial warp's
        prefix of lanes is stated as its width."""
        if all(mask in (0, FULL) for mask in masks):
            return
        if not all(is_prefix(mask) for mask in masks):
            raise op_error(op, "a reduction's lanes in this warp are not its first ones; "
                               "the shuffles of a reduction run on whole warps or on a "
                               "block's last, partial warp only")
        widths = [bin(mask).count("1") for mask in masks]
        with ir.InsertionPoint(op), op.location:
            op.operands[2] = self._per_warp(state, widths)

    def _mask_value(self, state: _Function, live: Live) -> ir.Value:
        """The i32 mask of the lanes `live` names, made at the insertion point."""
        masks = lane_masks(live.threads)
        if live.branch is None:
            return self._per_warp(state, masks)
        ballot = self._ballot(state, live.branch)
        if masks == lane_masks(live.branch.threads):  # no narrower than the ballot's lanes
            return ballot
        return arith.andi(ballot, self._per_warp(state, masks))

    def _ballot(self, state: _Function, branch: Branch) -> ir.Value:
        """The lanes that take `branch`: a ballot of its condition over the lanes reaching
        its scf.if, made right before it."""
        if branch.value is None:
            with ir.InsertionPoint(branch.branch), branch.branch.location:
                if not branch.votes:
                    outer = self._per_warp(state, lane_masks(branch.threads))
                    if branch.parent is not None:
                        outer = arith.andi(self._ballot(state, branch.parent), outer)
                    i32 = ir.IntegerType.get_signless(32)
                    branch.votes["outer"] = outer
                    branch.votes["taken"] = nvvm.VoteSyncOp(
                        i32, outer, branch.condition, nvvm.VoteSyncKind.ballot).res
                outer, taken = branch.votes["outer"], branch.votes["taken"]
                branch.value = taken if branch.taken else \
                    arith.andi(outer, arith.xori(taken, _i32(-1)))
        return branch.value

    @staticmethod
    def _per_warp(state: _Function, values: list[int]) -> ir.Value:
        """An i32 that is values[w] on warp w (warps whose value is 0, which no lane reaches,
        take any): a constant, or selects on the warp index."""
        reached = [v for v in values if v != 0] or [FULL]
        common = Counter(reached).most_common(1)[0][0]
        result = _i32(common)
        others = {w: v for w, v in enumerate(values) if v not in (0, common)}
        if not others:
            return result
        warp = arith.divui(_linear_thread(state.block), _index(WARP))
        for number, value in others.items():
            chosen = arith.cmpi(arith.CmpIPredicate.eq, warp, _index(number))
            result = arith.select(chosen, _i32(value), result)
        return result


def _check_sources(op: ir.Operation, state: _Function, masks: list[int]) -> None:
    """A shuffle whose source lane, known at compile time, is one that does not execute it
    reads an undefined value: an error naming the first such lane."""
    offset, control = (state.evaluate(v) for v in list(op.operands)[2:4])
    if offset is None or control is None:
        return
    kind = str(op.attributes["kind"]).split()[-1].strip("#>").split("<")[-1]
    for warp, mask in enumerate(masks):
        for lane in range(WARP):
            t = warp * WARP + lane
            if not mask >> lane & 1:
                continue
            source = _source_lane(kind, lane, int(offset[t]), int(control[t]))
            if not mask >> source & 1:
                raise op_error(op, f"this warp shuffle reads lane {source} on lane {lane} of "
                                   f"warp {warp}, and lane {source} does not run it (the "
                                   f"block has {state.count} threads{_why(masks, warp)}): its "
                                   f"value would be undefined; shuffle within the lanes that "
                                   f"run it, or reduce with T.reduce_* over a fragment")


def _why(masks: list[int], warp: int) -> str:
    lanes = bin(masks[warp]).count("1")
    return f"; {lanes} of warp {warp}'s lanes reach this shuffle" if lanes < WARP else ""


def _source_lane(kind: str, lane: int, offset: int, control: int) -> int:
    """PTX shfl.sync's source lane j (the lane itself where j falls outside the clamp)."""
    segment = control >> 8 & 0x1F
    low = lane & segment
    high = low | (control & 0x1F & ~segment)
    if kind == "up":
        j = lane - offset
        return j if j >= high else lane
    j = {"down": lane + offset, "bfly": lane ^ offset,
         "idx": low | (offset & 0x1F & ~segment)}[kind]
    return j if j <= high else lane


def _linear_thread(block: list[int]) -> ir.Value:
    linear = None
    stride = 1
    for axis, extent in zip(AXES, block, strict=True):
        if extent == 1:
            continue
        term = gpu.thread_id(getattr(gpu.Dimension, axis))
        term = arith.muli(term, _index(stride)) if stride != 1 else term
        linear = term if linear is None else arith.addi(linear, term)
        stride *= extent
    return _index(0) if linear is None else linear


def _i32(value: int) -> ir.Value:
    value &= FULL
    return arith.constant(ir.IntegerType.get_signless(32), value - (1 << 32) if value >> 31
                          else value)


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)
