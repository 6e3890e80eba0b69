"""mask-scores-after-gemm: a mask written into a gemm's accumulator before it is applied after it.

TileLang's attention examples mask the scores by initialising them and letting Q K^T add to
them:

    for i, j in T.Parallel(M, N):
        S[i, j] = T.if_then_else(causal_keep(i, j), 0, -T.infinity(S.dtype))
    T.gemm(Q, K, S, transpose_B=True)          # S += Q K^T

Every element starts at 0 or -inf, so the gemm leaves Q K^T where it kept and -inf where it
masked. The same result comes from clearing S in the gemm and masking afterwards,

    T.gemm(Q, K, S, transpose_B=True, clear_accum=True)
    for i, j in T.Parallel(M, N):
        S[i, j] = T.if_then_else(causal_keep(i, j), S[i, j], -T.infinity(S.dtype))

for 0 + x is x and -inf + x is -inf for every finite x (fp16 or bf16 products summed in f32
stay finite; NaN or infinite inputs at masked elements give -inf here where the first form
gave NaN). Written first, the mask is computed by every thread before the gemm is issued: in
TileLang's causal example 230 SASS instructions per key tile before Q K^T's first HGMMA,
with the tensor cores idle (nvdisasm, sm_90a, 128 x 128 tiles). Written after, it is part of
the softmax, which rotate-attention-loop runs under the previous tile's P V.

The pass runs where that rotation does (the module's `tile.rotate_attention_loop`: by default
on sm_90a under fast math, see rotate-attention-loop), before it. It rewrites a tile.gemm
without clear_accum whose accumulator is a fragment when the statement right before it is a
tile.parallel over the accumulator's whole shape that only stores, at its own point,
`select(c, 0.0, -inf)` or
`select(c, -inf, 0.0)` computed from arith ops (no loads, so nothing the gemm could change):
the gemm clears, the parallel moves after it, and the 0.0 becomes a load of the element.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import memref

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import defining_op, kernels, scope, walk
from tilec.compiler.passes._scheduling import ROTATE_ATTENTION_LOOP_ATTR


def _float_constant(value: ir.Value) -> float | None:
    """The value of an arith.constant float or of its arith.negf (the frontend's
    -T.infinity before canonicalization, which the CPU target does not run first), else None."""
    owner = defining_op(value)
    if owner is not None and owner.name == "arith.negf":
        negated = _float_constant(owner.operands[0])
        return None if negated is None else -negated
    if owner is None or owner.name != "arith.constant" or \
            not isinstance(owner.attributes["value"], ir.FloatAttr):
        return None
    return ir.FloatAttr(owner.attributes["value"]).value


@dataclass
class MaskInit:
    """A tile.parallel initialising gemm's accumulator to 0 or -inf (module docstring)."""

    parallel: ir.Operation
    gemm: ir.Operation
    select: ir.Operation
    zero_operand: int  # the select's operand (1 or 2) that is 0.0

    @classmethod
    def of(cls, gemm: ir.Operation) -> MaskInit | None:
        if "clear_accum" in gemm.attributes and \
                ir.BoolAttr(gemm.attributes["clear_accum"]).value:
            return None
        accumulator = gemm.operands[2]
        if scope(accumulator) != "fragment" or any(
                operand == accumulator for operand in list(gemm.operands)[:2]):
            return None
        block_ops = list(gemm.block.operations)
        position = next(i for i, op in enumerate(block_ops) if op.operation == gemm)
        if position == 0 or block_ops[position - 1].operation.name != "tile.parallel":
            return None
        parallel = block_ops[position - 1].operation
        extents = list(ir.DenseI64ArrayAttr(parallel.attributes["extents"]))
        if extents != list(ir.MemRefType(accumulator.type).shape):
            return None
        body = parallel.regions[0].blocks[0]
        inner = walk(parallel)
        stores = [op for op in inner if op.name == "memref.store"]
        if len(stores) != 1 or any(
                op.name not in ("memref.store", "tile.yield") and not op.name.startswith("arith.")
                for op in inner):
            return None
        store = stores[0]
        if store.operands[1] != accumulator or list(store.operands[2:]) != list(body.arguments):
            return None
        select = defining_op(store.operands[0])
        if select is None or select.name != "arith.select":
            return None
        values = [_float_constant(select.operands[i]) for i in (1, 2)]
        for zero_operand, (zero, masked) in ((1, values), (2, values[::-1])):
            if zero == 0.0 and masked == -math.inf:
                return cls(parallel, gemm, select, zero_operand)
        return None

    def rewrite(self) -> None:
        self.gemm.attributes["clear_accum"] = ir.BoolAttr.get(True)
        self.parallel.move_after(self.gemm)
        body = self.parallel.regions[0].blocks[0]
        with self.select.location, ir.InsertionPoint(self.select):
            element = memref.load(self.gemm.operands[2], list(body.arguments))
        self.select.operands[self.zero_operand] = element


@register
@dataclass
class MaskScoresAfterGemm(TilePass):
    """Apply a 0 / -inf initialisation of a gemm's accumulator as a mask after the gemm."""

    name = "mask-scores-after-gemm"
    summary = "a 0 / -inf mask written before a gemm into its accumulator, applied after it"

    def run(self, module: ir.Module) -> None:
        if ROTATE_ATTENTION_LOOP_ATTR not in module.operation.attributes:
            return
        for kernel in kernels(module):
            for gemm in [op for op in walk(kernel) if op.name == "tile.gemm"]:
                init = MaskInit.of(gemm)
                if init is not None:
                    init.rewrite()
