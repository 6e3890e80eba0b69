"""TileLang's swizzle of tensor-core operand tiles in shared memory (`mma_layout`).

`get_swizzle_layout` is the index map itself, evaluated on ints or on kernel values: rows of
16-byte vectors whose vector index is XORed with the row (mod 8), over groups of 128, 64 or 32
bytes, so that the 8 rows an ldmatrix reads hit 8 different bank groups. `make_mma_swizzle_layout`
asks tilec to swizzle a shared buffer for `T.annotate_layout`: tilec places shared buffers by its
own XOR swizzles (`tilec.layout`), the same kind of map, and every read and write of the buffer
goes through it, so the values a kernel sees do not depend on the swizzle chosen.
"""

from __future__ import annotations

from typing import Any

from tilec.errors import at_caller
from tilec.language import dtype as tile_dtype

_VECTOR_BYTES = 16  # one ldmatrix row segment
_ROWS = 8  # rows of one swizzle atom


def get_swizzle_layout(row_idx: Any, col_idx: Any, row_size: int, dtype: Any,
                       swizzle_bytes: int | None = None) -> tuple[Any, Any, Any]:
    """Where element (row_idx, col_idx) of a row-major tile with `row_size` elements of `dtype`
    per row goes: (column group, row, swizzled column in the group). A group is `swizzle_bytes`
    wide (default: the row, at most 128 bytes); rows must be multiples of 32 bytes."""
    bits = tile_dtype(getattr(dtype, "dtype", dtype)).bits
    row_bytes = bits * row_size // 8
    if row_bytes % 32 != 0:
        raise at_caller(f"get_swizzle_layout: a row of {row_bytes} bytes; the swizzle needs "
                        "rows of a multiple of 32 bytes")
    group_bytes = min(128, row_bytes) if swizzle_bytes is None else int(swizzle_bytes)
    if group_bytes not in (32, 64, 128):
        raise at_caller(f"get_swizzle_layout: swizzle_bytes is 32, 64 or 128, not {group_bytes}")
    per_vector = _VECTOR_BYTES * 8 // bits
    vectors = group_bytes // _VECTOR_BYTES  # 16-byte vectors per group: 8, 4 or 2
    vector, within = col_idx // per_vector, col_idx % per_vector
    row_phase = (row_idx % _ROWS) // (_ROWS // vectors)
    return vector // vectors, row_idx, ((vector % vectors) ^ row_phase) * per_vector + within


def make_mma_swizzle_layout(shared_buf: Any, is_smooth: bool = False) -> Any:
    """The swizzle for a shared operand tile, for `T.annotate_layout`: a row of a multiple of 64
    bytes is swizzled (tilec.layout.make_swizzled_layout), anything else, or `is_smooth`, is
    left in row order (tilec.layout.make_linear_layout), as TileLang decides."""
    from tilec.layout import make_linear_layout, make_swizzled_layout

    shape, dtype = getattr(shared_buf, "shape", None), getattr(shared_buf, "dtype", None)
    if shape is None or dtype is None:
        raise at_caller(f"make_mma_swizzle_layout takes a shared buffer, got "
                        f"{type(shared_buf).__name__}")
    row_bits = shape[-1] * tile_dtype(dtype).bits
    if is_smooth or row_bits % 512 != 0:
        return make_linear_layout(shared_buf)
    return make_swizzled_layout(shared_buf)


__all__ = ["get_swizzle_layout", "make_mma_swizzle_layout"]
