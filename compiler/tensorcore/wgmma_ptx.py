"""wgmma at the instruction level: shared-memory matrix descriptors and `wgmma.mma_async` as
inline PTX, shared by the whole-kernel generator (`hopper.py`) and the per-op lowering of
`tile.gemm` (`compiler/passes/_wgmma.py`).

A descriptor is 64 bits: the operand's shared address >> 4 in bits 0..13, the leading byte
offset >> 4 in bits 16..29, the stride byte offset >> 4 in bits 32..45 and the swizzle mode in
bits 62..63. Only the address changes from one instruction to the next, so the other bits are
one constant per operand layout (`k_major_bits`, `mn_major_bits`) that the address is OR-ed
into. Operand layouts (16-byte chunks of a row XOR-ed with the row's position in the 1 KiB
swizzle atom, tiles 1 KiB aligned):

- K-major (A as M x K, B as N x K): rows of `span` bytes of K (32, 64 or 128: the swizzle
  span), 8-row groups `8 * span` bytes apart; a 32-byte K step moves the address along the row.
- MN-major (16-bit only: A as K x M, B as K x N): boxes 64 elements (128 bytes) wide, one K
  row of each box 128 bytes after the last, boxes `box_bytes` apart; a K step of 16 rows moves
  the address 16 * 128 bytes.
"""

from __future__ import annotations

from tilec.compiler.tensorcore.dtypes import accumulator

SWIZZLE_MODES = {128: 1, 64: 2, 32: 3}  # swizzle span in bytes -> descriptor bits 62..63
MN_BOX_BYTES = 128  # an MN-major operand's box row: 64 16-bit elements
MN_K_GROUP_BYTES = 1024  # 8 K rows of an MN-major box


def descriptor_bits(leading: int, stride: int, swizzle: int) -> int:
    """The address-independent bits of a wgmma shared-memory matrix descriptor."""
    return ((leading >> 4) << 16) | ((stride >> 4) << 32) | (SWIZZLE_MODES[swizzle] << 62)


def k_major_bits(span: int) -> int:
    """Descriptor bits of a K-major operand whose K rows span `span` bytes (its swizzle)."""
    return descriptor_bits(16, 8 * span, span)


def mn_major_bits(box_bytes: int) -> int:
    """Descriptor bits of an MN-major operand whose 64-element boxes lie `box_bytes` apart."""
    return descriptor_bits(box_bytes, MN_K_GROUP_BYTES, MN_BOX_BYTES)


def mma_async_text(dtype: str, n: int, k: int, operands: str, mn_major_a: bool | None,
                   mn_major_b: bool) -> str:
    """`wgmma.mma_async.sync.aligned.m64n{n}k{k}` for operand type `dtype`, scale-d from
    predicate p; `mn_major_a` None: A comes from registers (no transpose-A immediate)."""
    head = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{accumulator(dtype)}.{dtype}.{dtype}"
    if dtype == "s8":
        return f"{head} {operands}, p;"
    if dtype in ("f16", "bf16"):
        transpose = [mn_major_b] if mn_major_a is None else [mn_major_a, mn_major_b]
        return f"{head} {operands}, p, 1, 1, {', '.join(str(int(t)) for t in transpose)};"
    return f"{head} {operands}, p, 1, 1;"


def mma_async_asm(dtype: str, n: int, k: int, mn_major_a: bool | None, mn_major_b: bool
                  ) -> tuple[str, str]:
    """(PTX text, constraints) of one wgmma over n / 2 accumulator registers per thread.

    Operands, in order: the accumulators (tied to the results), A (one i64 descriptor, or four
    i32 fragment registers when `mn_major_a` is None), B's i64 descriptor, scale-d as i32
    (0: D = A * B, else D += A * B)."""
    count = n // 2
    a_count = 4 if mn_major_a is None else 1
    registers = ", ".join(f"${i}" for i in range(count))
    first_a = 2 * count
    a_text = f"${first_a}" if a_count == 1 else (
        "{" + ", ".join(f"${first_a + i}" for i in range(a_count)) + "}")
    b = first_a + a_count
    text = (f"{{ .reg .pred p; setp.ne.b32 p, ${b + 1}, 0; "
            + mma_async_text(dtype, n, k, f"{{{registers}}}, {a_text}, ${b}", mn_major_a,
                             mn_major_b)
            + " }")
    out = "=r" if accumulator(dtype) == "s32" else "=f"
    constraints = ",".join([out] * count + [str(i) for i in range(count)]
                           + ["r" if a_count == 4 else "l"] * a_count + ["l", "r"])
    return text, constraints
