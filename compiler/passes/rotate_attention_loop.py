"""rotate-attention-loop: attention's loop issues the next key tile's Q K^T before P V.

FlashAttention's loop body, written as a tile program, runs for key tile k

    prefix(k)   the copy of K_k (and whatever readies S: a T.clear, a causal fill)
    G1          S = Q K_k^T
    softmax(k)  row maxima and sums, P = exp2(S ...) cast, O *= rescale (reads S, writes P, O)
    feed(k)     the copy of V_k
    G2          O += P V_k

so each of a warpgroup's gemms waits for the one before it and the softmax sits between them
with the tensor cores idle. FlashAttention-3 rotates the loop by one gemm: key tile k's
Q K^T is issued before tile k - 1's P V, whose wgmmas then run under tile k's softmax. This
pass rewrites the loop so: it runs one iteration more, and iteration k is

    prefix(min(k, n - 1)); G1; feed(max(k - 1, 0)); G2; if k < n: softmax_S(k);
    if k < n: softmax_PO(k)

before the loop P is cleared. softmax_S is the softmax's statements before the first that
touches P or O (the row maxima, exp2 and sums of S), softmax_PO the rest: lower-tile-to-gpu
waits for G2 at softmax_PO's start, and ptxas places a wgmma wait at the start of the
block holding it, so with one branch it waited for P V before the whole softmax; with two,
softmax_S runs under P V (nvdisasm: all 66 exp2 of flash_fwd d128 between the two waits).
Iteration 0's G2 adds 0 * V_0 to O (nothing), iteration n's G1 recomputes tile n - 1's
scores, which no softmax reads; every other step is the original's, in the same order on
each buffer: O = (O + P_{k-1} V_{k-1}) * rescale_k is what the original
computes across its iterations k - 1 and k. The copies stay whole tiles of the same tensors
(their corners clamped into the loop's range), so a TMA ring or cp.async pipeline feeds the
rotated loop as it fed the original, a slot holding K_k beside V_{k-1}. The cost is one extra
gemm of each kind per block (1 / n of its work).

With the unit attribute `tile.rescale_under_qk` on the module (TILEC_RESCALE_UNDER_QK=1, opt-in
until a GPU has timed it) softmax_PO's statements that only rescale O (`Rotation.rescales`: they
touch O and neither P nor S, and read nothing the body computes or anything else up to the
next G1 writes) run one iteration later, under k > lower right after G1:

    prefix; G1; if k > lower: O *= rescale_{k-1}; feed; G2; softmax_S(k); softmax_P(k)

the same O = (O + P_{k-1} V_{k-1}) * rescale_k order on O, with P V's wait (at softmax_P's
start, where P is rewritten) followed only by P's conversion before the next iteration's
Q K^T, and O's multiplies (64 a thread for flash_fwd d 128) running under that Q K^T's
wgmmas, where FlashAttention-3 puts them for its large head dimensions.

What makes the rotation pay is that lower-tile-to-gpu then need not wait for G2's wgmma group
before the softmax, which touches neither O nor P until its last statements. The pass rotates
loops only in a module carrying the unit attribute `tile.rotate_attention_loop`: the CUDA
target sets it by default on sm_90a where fast math flushes f32 denormals (an H100's
interleaved rounds, benchmarks/results/2026-12-07-h100_attention-rounds-b3c290d.json: rotated
with ftz 1.02-1.18x the plain loop on all six rows; rotated without ftz 0.95-1.08x, for
without .ftz each exp2 is three instructions more and the softmax outlasts P V), and on any
chip with TILEC_ROTATE_ATTENTION_LOOP=1 (=0: never); the CPU target with =1 only, where it
checks the rotation's numerics (compiler/targets/cuda.py, rotate_attention_loops).

A `tile.pipelined` loop qualifies when
- it steps by 1 and has no `order`, `stage` or `group` schedule;
- its body holds exactly two tile.gemm ops, both statements of the body, the second (G2) its
  last statement, whose A is a fragment P, B a shared tile V and accumulator O, all three
  allocated outside the loop;
- G1's accumulator S is allocated outside the loop, is neither P nor O and is used only in
  it (the extra iteration leaves it holding other scores); G1 reads neither V nor P;
- the statements before G1 touch none of P, O and V and write only S and their copies'
  shared tiles, which only the loop uses (the extra iteration rewrites them);
- between the gemms, the copies into V (its feed) take their corners from pure index
  arithmetic, and the other statements (the softmax) do not touch V.
Other loops are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import (
    as_operation,
    constant_index,
    copy_parts,
    defining_op,
    kernels,
    scope,
    walk,
)
from tilec.compiler.passes._scheduling import RESCALE_UNDER_QK_ATTR, ROTATE_ATTENTION_LOOP_ATTR
from tilec.compiler.passes._tma_ring import clone_ops, recomputable
from tilec.compiler.passes._wgmma_waits import DEFERRED_WAIT_ATTR
from tilec.dialect import FillOp

SCHEDULE_ATTRS = ("order", "stage", "group")
DESTINATION = {"tile.fill": 0, "tile.gemm": 2, "tile.reduce": 1, "memref.store": 1}


def _memrefs(op: ir.Operation) -> list[ir.Value]:
    """The memref values `op` and the ops nested in it use."""
    return [operand for inner in [op, *walk(op)] for operand in inner.operands
            if isinstance(operand.type, ir.MemRefType)]


def _written(op: ir.Operation) -> list[ir.Value]:
    """The buffers `op` may write: a copy's, fill's, gemm's or reduction's destination and
    every memref.store's; any memref another op uses (unknown: counted as written)."""
    written = []
    for inner in [op, *walk(op)]:
        if inner.name == "tile.copy":
            written.append(copy_parts(inner)[3])
        elif inner.name in DESTINATION:
            written.append(inner.operands[DESTINATION[inner.name]])
        elif inner.name not in ("memref.load", "tile.parallel", "tile.yield", "scf.if",
                                "scf.yield", "tile.alloc") and not inner.name.startswith(
                                    ("arith.", "math.")):
            written += [o for o in inner.operands if isinstance(o.type, ir.MemRefType)]
    return written


def _among(value: ir.Value, values: list[ir.Value]) -> bool:
    return any(value == known for known in values)


def _outside(value: ir.Value, loop: ir.Operation) -> bool:
    """Whether `value` is defined outside `loop` (a block argument or an op not in it)."""
    owner = defining_op(value)
    return owner is None or not any(owner == op for op in walk(loop))


def _used_outside(value: ir.Value, loop: ir.Operation) -> bool:
    """Whether an op outside `loop` uses `value` (before it or after it)."""
    inside = walk(loop)
    return any(not any(use.owner == op for op in inside) for use in value.uses)


@dataclass
class Rotation:
    """A qualifying loop's parts (module docstring)."""

    loop: ir.Operation
    prefix: list[ir.Operation]
    first: ir.Operation
    feeds: list[ir.Operation]
    softmax: list[ir.Operation]
    second: ir.Operation

    @classmethod
    def of(cls, loop: ir.Operation) -> Rotation | None:
        if any(name in loop.attributes for name in SCHEDULE_ATTRS) or \
                constant_index(loop.operands[2]) != 1:
            return None
        statements = [as_operation(op) for op in loop.regions[0].blocks[0].operations
                      if as_operation(op).name != "tile.yield"]
        gemms = [i for i, op in enumerate(statements) if op.name == "tile.gemm"]
        nested = [op for op in walk(loop) if op.name == "tile.gemm"]
        if len(gemms) != 2 or len(nested) != 2 or gemms[1] != len(statements) - 1:
            return None
        first, second = statements[gemms[0]], statements[gemms[1]]
        p, v, o = second.operands[0], second.operands[1], second.operands[2]
        s = first.operands[2]
        if scope(p) != "fragment" or scope(v) != "shared" or \
                not all(_outside(value, loop) for value in (p, v, o, s)):
            return None
        if _among(s, [p, o]) or _among(v, list(first.operands)[:2]) or \
                _among(p, list(first.operands)[:2]) or _used_outside(s, loop):
            return None
        prefix = statements[:gemms[0]]
        copied = [copy_parts(op)[3] for op in prefix if op.name == "tile.copy"]
        if any(_among(value, [p, o, v]) for op in prefix for value in _memrefs(op)) or any(
                not _among(value, [s, *copied]) for op in prefix for value in _written(op)) or \
                any(_used_outside(tile, loop) for tile in copied):
            return None
        middle = statements[gemms[0] + 1:gemms[1]]
        feeds = [op for op in middle if op.name == "tile.copy" and copy_parts(op)[3] == v]
        softmax = [op for op in middle if not any(op == feed for feed in feeds)]
        if not feeds or any(_among(v, _memrefs(op)) for op in softmax):
            return None
        for feed in feeds:
            if not _outside(copy_parts(feed)[0], loop) or recomputable(
                    list(feed.operands), prefix + softmax) is None:
                return None
        return cls(loop, prefix, first, feeds, softmax, second)

    def split(self) -> int:
        """Where softmax_PO begins: at the first statement touching P or O, or earlier at a
        statement defining a value it or a later one uses (a cast's temporary fragment)."""
        p, o = self.second.operands[0], self.second.operands[2]
        touches = [any(_among(value, [p, o]) for value in _memrefs(op)) for op in self.softmax]
        split = touches.index(True) if any(touches) else len(self.softmax)
        while True:
            used = [operand for op in self.softmax[split:] for inner in [op, *walk(op)]
                    for operand in inner.operands]
            defining = [number for number, op in enumerate(self.softmax[:split])
                        if any(_among(result, used) for result in op.results)]
            if not defining:
                return split
            split = defining[0]

    def rescales(self, split: int) -> list[ir.Operation]:
        """softmax_PO's statements that may run one iteration later, right after G1 (O's
        rescale): each touches O and neither P nor S, uses no value the body defines (k
        included), and no other statement from its place to the next G1 (the rest of
        softmax_PO, the prefix, G1) touches O or writes a buffer it uses."""
        p, o, s = self.second.operands[0], self.second.operands[2], self.first.operands[2]
        k = self.loop.regions[0].blocks[0].arguments[0]
        part = self.softmax[split:]
        body = walk(self.loop)
        moved = []
        for op in part:
            used = _memrefs(op)
            if not _among(o, used) or _among(p, used) or _among(s, used):
                continue
            own = [op, *walk(op)]
            if any(operand == k or (
                    (owner := defining_op(operand)) is not None
                    and any(owner == inner for inner in body)
                    and not any(owner == inner for inner in own))
                    for inner in own for operand in inner.operands):
                continue
            others = [other for other in [*part, *self.prefix, self.first] if other != op]
            if any(_among(o, _memrefs(other)) or any(_among(value, used)
                                                     for value in _written(other))
                   for other in others):
                continue
            moved.append(op)
        return moved

    def rotate(self, rescale_under_qk: bool = False) -> None:
        """The rewrite (module docstring); with `rescale_under_qk`, O's rescale (`rescales`)
        one iteration later, under `k > lower` right after G1."""
        split = self.split()
        rescales = self.rescales(split) if rescale_under_qk else []
        loop, body = self.loop, self.loop.regions[0].blocks[0]
        k = body.arguments[0]
        lower, upper, step = loop.operands[0], loop.operands[1], loop.operands[2]
        p = self.second.operands[0]
        element = ir.MemRefType(p.type).element_type
        with loop.location, ir.InsertionPoint(loop):
            zero = arith.constant(element, 0.0) if isinstance(element, ir.FloatType) else \
                arith.constant(element, 0)
            FillOp(p, zero)
            ran = arith.cmpi(arith.CmpIPredicate.sgt, upper, lower)
            loop.operands[1] = arith.select(ran, arith.addi(upper, step), upper)
        with loop.location, ir.InsertionPoint.at_block_begin(body):
            current = arith.minsi(k, arith.subi(upper, step))
            previous = arith.maxsi(arith.subi(k, step), lower)
            active = arith.cmpi(arith.CmpIPredicate.slt, k, upper)
            later = arith.cmpi(arith.CmpIPredicate.sgt, k, lower) if rescales else None
        # the feeds' corners recomputed for tile k - 1, before the prefix's are rewritten
        with loop.location, ir.InsertionPoint(self.second):
            for feed in self.feeds:
                mapping = {k: previous}
                clone_ops(recomputable(list(feed.operands), self.prefix + self.softmax),
                          mapping)
                feed.move_before(self.second)
                for number, operand in enumerate(feed.operands):
                    if operand in mapping:
                        feed.operands[number] = mapping[operand]
        for op in self.prefix:
            for inner in [op, *walk(op)]:
                for number, operand in enumerate(inner.operands):
                    if operand == k:
                        inner.operands[number] = current
        rest = [op for op in self.softmax[split:] if not any(op == moved for moved in rescales)]
        _branch(later, rescales, self.first)
        anchor = self.second
        for part in (self.softmax[:split], rest):
            anchor = _branch(active, part, anchor)
        for gemm in (self.first, self.second):  # lower-tile-to-gpu waits where S, O, P are read
            gemm.attributes[DEFERRED_WAIT_ATTR] = ir.UnitAttr.get()


def _branch(condition: ir.Value, ops: list[ir.Operation], anchor: ir.Operation
            ) -> ir.Operation:
    """`ops` moved into an scf.if on `condition` right after `anchor` (the branch, or
    `anchor` where there are none)."""
    if not ops:
        return anchor
    with anchor.location, ir.InsertionPoint(anchor):
        branch = scf.IfOp(condition)
    branch.operation.move_after(anchor)
    with ir.InsertionPoint(branch.then_block):
        end = scf.YieldOp([])
    for op in ops:
        op.move_before(as_operation(end))
    return branch.operation


@register
@dataclass
class RotateAttentionLoop(TilePass):
    """Issue the next key tile's Q K^T before this one's P V (FlashAttention-3's rotation)."""

    name = "rotate-attention-loop"
    summary = "two-gemm T.Pipelined loops (attention's) rotated by one gemm (sm_90a default)"

    def run(self, module: ir.Module) -> None:
        if ROTATE_ATTENTION_LOOP_ATTR not in module.operation.attributes:
            return
        for kernel in kernels(module):
            for loop in [op for op in walk(kernel) if op.name == "tile.pipelined"]:
                rotation = Rotation.of(loop)
                if rotation is not None:
                    rotation.rotate(RESCALE_UNDER_QK_ATTR in module.operation.attributes)
