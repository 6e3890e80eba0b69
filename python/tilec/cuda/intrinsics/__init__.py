"""TileLang's `tilelang.cuda.intrinsics`: shared-memory swizzles for tensor-core operands, MMA
tile sizes, and the hand-written MMA emitters (`TensorCoreIntrinEmitter`, built as the block-level
tile ops its warps amount to: `tilec.cuda.intrinsics.macro.mma_macro_generator`).
"""

from __future__ import annotations

from typing import Any

from tilec.cuda.intrinsics.layout import (
    get_mma_micro_size,
    get_swizzle_layout,
    make_mma_swizzle_layout,
)
from tilec.cuda.intrinsics.macro.mma_macro_generator import (
    TensorCoreIntrinEmitter,
    TensorCoreIntrinEmitterWithLadderTransform,
)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from tilec.tvm import NotInTilec

    raise NotInTilec(f"tilelang.cuda.intrinsics.{name} is not implemented by tilec")


__all__ = ["TensorCoreIntrinEmitter", "TensorCoreIntrinEmitterWithLadderTransform",
           "get_mma_micro_size", "get_swizzle_layout", "make_mma_swizzle_layout"]
