"""mma.sync and ldmatrix at the instruction level (sm_80), as inline PTX: the per-op lowering of
`tile.gemm` (`compiler/passes/_mma_sync.py`) builds its instructions from these.

- `ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16`: four 8 x 8 matrices of 16-bit elements
  (8 rows of 16 bytes each), every lane giving the shared address of one row; lane l receives
  row l / 4, bytes 4 (l % 4) .. + 3 of each matrix, one 32-bit register per matrix (with
  .trans, of the transposed matrix). In bytes that is the A and B fragment of every operand
  type: one 32-byte K step of an mma.sync is two 16-byte chunks.
- `mma.sync.aligned.m16n8k{16,32,8}.row.col`: D = A * B + C over one warp's 16 x 8 tile,
  A in four 32-bit registers, B in two, C and D in four (f32, or s32 for s8 operands).
"""

from __future__ import annotations

from tilec.compiler.tensorcore.dtypes import accumulator

MMA_SHAPES = {"f16": "m16n8k16", "bf16": "m16n8k16", "s8": "m16n8k32", "tf32": "m16n8k8"}


def ldmatrix_asm(transpose: bool, offset: int = 0) -> tuple[str, str]:
    """(PTX text, constraints) of one x4 ldmatrix: four i32 results from one i32 shared
    address operand, `offset` bytes past it (an immediate of the instruction)."""
    trans = ".trans" if transpose else ""
    at = f"$4+{offset}" if offset else "$4"
    return (f"ldmatrix.sync.aligned.m8n8.x4{trans}.shared.b16 {{$0, $1, $2, $3}}, [{at}];",
            "=r,=r,=r,=r,r")


def mma_sync_asm(dtype: str) -> tuple[str, str]:
    """(PTX text, constraints) of one mma.sync for operand type `dtype`. Operands, in order:
    A's four i32 registers, B's two, then C's four accumulators (tied to the four results)."""
    acc = accumulator(dtype)
    text = (f"mma.sync.aligned.{MMA_SHAPES[dtype]}.row.col.{acc}.{dtype}.{dtype}.{acc} "
            "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};")
    out = "=r" if acc == "s32" else "=f"
    return text, ",".join([out] * 4 + ["r"] * 6 + ["0", "1", "2", "3"])
