"""TileLang's metadata of 2:4 structured sparsity (`sparse_layout`), shared by a sparse
operand's compressor and the kernel that reads it: per dtype, how many of each group of
elements are kept, and how many elements one metadata element describes.
"""

from __future__ import annotations

from tilec.language import (
    DType,
    bfloat16,
    dtype,
    float8_e4m3,
    float8_e5m2,
    float16,
    float32,
    int8,
    uint8,
)

# dtype -> (elements kept, group size): 1:2 for 32-bit floats, 2:4 otherwise
GROUP_CONFIG: dict[DType, tuple[int, int]] = {
    float32: (1, 2), float16: (2, 4), bfloat16: (2, 4), int8: (2, 4), uint8: (2, 4),
    float8_e4m3: (2, 4), float8_e5m2: (2, 4),
}

_BITS_PER_GROUP = 4  # the metadata bits of one group (two 2-bit positions)


def get_e_factor(a_dtype: DType, meta_dtype: DType) -> int:
    """How many `a_dtype` elements one `meta_dtype` metadata element indexes."""
    _, group = GROUP_CONFIG[dtype(a_dtype)]
    return dtype(meta_dtype).bits // _BITS_PER_GROUP * group


def get_e_replicate_factor(a_dtype: DType) -> int:
    """How many neighbouring threads share one metadata value: 1 for 8-bit operands, else 2."""
    return 1 if dtype(a_dtype).bits <= 8 else 2


__all__ = ["GROUP_CONFIG", "get_e_factor", "get_e_replicate_factor"]
