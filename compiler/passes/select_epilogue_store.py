"""select-epilogue-store: how a tensor-core gemm's accumulator tile reaches global memory.

The epilogue is the one store of the accumulator after the gemm loop: a `tile.copy` from the
accumulator fragment (or from the fragment a pure conversion `tile.parallel` writes from it,
`dst[i, j] = truncf(acc[i, j])`) to a global tensor. For a gemm that infer-mma-layout put on the
tensor cores (`tile.mma`), that copy gets `tile.store`:

- sm_90a: `{kind = "tma", columns = E, swizzle = "128B"}`: the consumer warpgroups stage E
  columns of C at a time in 128B-swizzled shared memory (conflict-free for 16-bit output) and a
  TMA store clips the ragged edges, overlapping the next tile's MMAs. E = 128 when block_n is a
  multiple of 128, else 64: a wider staging buffer costs pipeline stages (shared memory).
- sm_80: `{kind = "shared-staged", vector_bytes = 16}`: the tile goes through padded shared
  memory so that each thread writes whole 16-byte rows pieces, with bounds checks.

Both need the global rows 16-byte aligned (TMA's strides; 16-byte vector stores): a store
whose rows are not provably so gets nothing and keeps its plain lowering.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._copy_rows import box_rows_aligned, row_pitch_aligned
from tilec.compiler.passes._ir_walk import as_operation, copy_parts, kernels, scope, walk
from tilec.compiler.passes._scheduling import (
    DecisionValue,
    decision_attr,
    target_description,
)
from tilec.compiler.passes.infer_mma_layout import MMA_ATTR
from tilec.compiler.targets.description import TargetDescription

STORE_ATTR = "tile.store"
TMA_SWIZZLE = "128B"
STAGED_VECTOR_BYTES = 16


def conversion_target(parallel: ir.Operation, acc: ir.Value) -> ir.Value | None:
    """The fragment a pure `dst[i, j] = truncf(acc[i, j])` tile.parallel writes, else None."""
    body = parallel.regions[0].blocks[0]
    ops = [as_operation(op) for op in body.operations]
    ops = [op for op in ops if op.name != "tile.yield"]
    if [op.name for op in ops] != ["memref.load", "arith.truncf", "memref.store"]:
        return None
    load, trunc, store = ops
    indices = list(body.arguments)
    if load.operands[0] != acc or list(load.operands[1:]) != indices:
        return None
    if trunc.operands[0] != load.results[0] or store.operands[0] != trunc.results[0]:
        return None
    if list(store.operands[2:]) != indices or scope(store.operands[1]) != "fragment":
        return None
    return store.operands[1]


def _after(op: ir.Operation, anchor: ir.Operation) -> bool:
    """Does `op` come after `anchor` (or after the ancestor of `anchor` in op's block)?"""
    block = op.block
    while True:
        parent = anchor.parent
        if parent is None:  # the module: op's block holds no ancestor of anchor
            return False
        if anchor.block == block:
            return anchor.is_before_in_block(op)
        anchor = as_operation(parent)


def accumulator_store(gemm: ir.Operation, kernel: ir.Operation) -> ir.Operation | None:
    """The one tile.copy of the gemm's whole accumulator (or its pure conversion) to global
    memory after the gemm, or None when there is no single such store."""
    acc = gemm.operands[2]
    sources = [acc]
    for op in walk(kernel):
        if op.name == "tile.parallel":
            converted = conversion_target(op, acc)
            if converted is not None:
                sources.append(converted)
    found = []
    for op in walk(kernel):
        if op.name != "tile.copy":
            continue
        src, _, src_box, dst, _, _ = copy_parts(op)
        if any(src == source for source in sources) and scope(dst) == "global":
            if src_box == list(ir.MemRefType(acc.type).shape) and _after(op, gemm):
                found.append(op)
    return found[0] if len(found) == 1 else None


def tma_store_columns(block_n: int) -> int:
    """Columns of C an sm_90a epilogue stages at a time for a block_n-wide tile."""
    return 128 if block_n % 128 == 0 else 64


def store_decision(target: TargetDescription, store: ir.Operation
                   ) -> dict[str, DecisionValue] | None:
    """The epilogue mechanism of one accumulator store, None when its rows do not allow one."""
    _, _, _, dst, dst_offsets, dst_box = copy_parts(store)
    if target.has_wgmma and target.has_tma:  # the wgmma kernel's TMA-store epilogue
        if not row_pitch_aligned(dst):  # TMA boxes start anywhere; strides are 16-byte multiples
            return None
        return {"kind": "tma", "columns": tma_store_columns(dst_box[-1]),
                "swizzle": TMA_SWIZZLE}
    if not box_rows_aligned(dst, dst_offsets, dst_box):
        return None
    return {"kind": "shared-staged", "vector_bytes": STAGED_VECTOR_BYTES}


@register
@dataclass
class SelectEpilogueStore(TilePass):
    """Choose the epilogue store of every tensor-core gemm's accumulator."""

    name = "select-epilogue-store"
    summary = "accumulator -> global tile.copy -> tile.store (TMA store / shared-staged vectors)"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        target = target_description(module, self.arch, self.name)
        for kernel in kernels(module):
            for gemm in walk(kernel):
                if gemm.name != "tile.gemm" or MMA_ATTR not in gemm.attributes:
                    continue
                store = accumulator_store(gemm, kernel)
                decision = None if store is None else store_decision(target, store)
                if decision is not None:
                    store.attributes[STORE_ATTR] = decision_attr(decision, module.context)
