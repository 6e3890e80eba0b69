"""TileLang's `tilelang.language.dtypes`: the dtypes (the same objects as `T.float16`, ...),
`dtype`, and the tables between them and torch's dtypes. Unlike `tilec.language`, it imports
torch.
"""

from __future__ import annotations

import torch

from tilec.language import (  # noqa: F401 - TileLang's dtype names, re-exported
    DTYPES,
    DType,
    bfloat16,
    bool,
    dtype,
    float,
    float4_e2m1fn,
    float8_e4m3,
    float8_e4m3fn,
    float8_e5m2,
    float16,
    float16x2,
    float32,
    float64,
    half,
    int,
    int4,
    int8,
    int16,
    int32,
    int64,
    tfloat32,
    uint,
    uint8,
    uint16,
    uint32,
    uint64,
)


def _torch_table() -> dict[torch.dtype, str]:
    """Every torch dtype with a tilec dtype, to that dtype's name (a dtype named after its own
    torch dtype wins over an alias of it: float32, not tfloat32)."""
    table: dict[torch.dtype, str] = {}
    for made in DTYPES.values():
        found = getattr(torch, made.torch_name, None) if made.torch_name else None
        if isinstance(found, torch.dtype) and (found not in table or made.torch_name == made.name):
            table[found] = made.name
    return table


_TORCH_DTYPE_TO_STR: dict[torch.dtype, str] = _torch_table()
_STR_TO_TORCH_DTYPE: dict[str, torch.dtype] = {name: t for t, name in _TORCH_DTYPE_TO_STR.items()}

__all__ = ["DType", "dtype", *DTYPES]
