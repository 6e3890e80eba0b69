"""select-shared-swizzle: how each shared-memory operand of a tensor-core gemm is swizzled.

The tensor cores read shared tiles row by row (wgmma through matrix descriptors, mma.sync
through ldmatrix); without a swizzle the rows of one access fall into the same banks. The
pattern must match what the instruction was told (the descriptor's layout field, the ldmatrix
addressing) and what the copy that fills the tile writes, so it is chosen once, here, and
recorded as `tile.swizzle` on the operand's tile.alloc:

- wgmma (sm_90a): a K-major operand (A as M x K, B as N x K) takes the widest of the 128-,
  64- and 32-byte swizzles that divides its row (K extent x element bytes): a swizzle span
  must not run past the row. An MN-major operand is laid out as boxes 64 elements wide
  (128-byte rows), so it takes "128B".
- mma.sync (sm_80): "xor", the 16-byte-chunk XOR of the row index that keeps ldmatrix and
  ldmatrix.trans free of bank conflicts for any tile width.

Only gemms with a `tile.mma` (infer-mma-layout) are looked at; A read from registers has no
shared tile. A K-major row narrower than 32 bytes gets no swizzle. A tile two gemms read gets
the same choice from both: wgmma's N and M extents are multiples of 64, so a tile read K-major
by one and MN-major by another has 128-byte multiples as rows either way.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import defining_op, kernels, scope, walk
from tilec.compiler.passes._scheduling import (
    OPERAND_TYPES,
    read_decision,
    target_arch,
    tensorcore_type,
)
from tilec.compiler.passes.infer_mma_layout import MMA_ATTR
from tilec.compiler.tensorcore.dtypes import OPERAND_BYTES

SWIZZLE_ATTR = "tile.swizzle"
SWIZZLE_SPANS = (128, 64, 32)  # bytes, widest first


def k_major_swizzle(row_bytes: int) -> str | None:
    """The widest swizzle span dividing a K-major row, or None when the row is too narrow."""
    for span in SWIZZLE_SPANS:
        if row_bytes % span == 0:
            return f"{span}B"
    return None


def operand_swizzle(operand: ir.Value, k_major: bool, kind: str) -> str | None:
    """The swizzle of one shared operand tile for the instruction `kind` that reads it."""
    if kind == "mma.sync":
        return "xor"
    if kind != "wgmma":
        return None
    if not k_major:
        return "128B"
    memref = ir.MemRefType(operand.type)
    dtype = tensorcore_type(memref.element_type, OPERAND_TYPES)
    if dtype is None:
        return None
    return k_major_swizzle(memref.shape[-1] * OPERAND_BYTES[dtype])


@register
@dataclass
class SelectSharedSwizzle(TilePass):
    """Record on each shared gemm operand the swizzle its tensor-core instruction reads."""

    name = "select-shared-swizzle"
    summary = "shared tile.alloc read by a tensor-core gemm -> tile.swizzle (128B/64B/32B/xor)"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        target_arch(module, self.arch, self.name)  # the kind in tile.mma already follows it
        context = module.context
        for kernel in kernels(module):
            for gemm in (op for op in walk(kernel) if op.name == "tile.gemm"):
                mma = read_decision(gemm, MMA_ATTR)
                if mma is None:
                    continue
                trans_a = ir.BoolAttr(gemm.attributes["transpose_a"]).value
                trans_b = ir.BoolAttr(gemm.attributes["transpose_b"]).value
                for operand, k_major in ((gemm.operands[0], not trans_a),
                                         (gemm.operands[1], trans_b)):
                    alloc = defining_op(operand)
                    if scope(operand) != "shared" or alloc is None or alloc.name != "tile.alloc":
                        continue
                    swizzle = operand_swizzle(operand, k_major, str(mma["kind"]))
                    if swizzle is not None:
                        alloc.attributes[SWIZZLE_ATTR] = ir.StringAttr.get(swizzle, context)
