"""TileLang's `tilelang.cuda.intrinsics.layout`: the swizzle of tensor-core operand tiles in
shared memory, and MMA tile sizes."""

from __future__ import annotations

from tilec.cuda.intrinsics.layout.mma_layout import get_swizzle_layout, make_mma_swizzle_layout
from tilec.errors import at_caller
from tilec.language import dtype


def get_mma_micro_size(dtype_name: str) -> tuple[int, int, int]:
    """The (m, n, k) of one mma.sync for operands of `dtype_name`: 16x16x16 for 16-bit floats,
    16x16x32 for 8-bit types."""
    bits = dtype(dtype_name).bits
    if bits not in (8, 16):
        raise at_caller(f"get_mma_micro_size: mma.sync tiles are for 8- and 16-bit operands, "
                        f"not {dtype(dtype_name).name}")
    return 16, 16, 256 // bits


__all__ = ["get_mma_micro_size", "get_swizzle_layout", "make_mma_swizzle_layout"]
