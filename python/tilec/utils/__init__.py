"""Host-side helpers of TileLang's `tilelang.utils`: input supplies, checks, dtype and target
names."""

from __future__ import annotations

from tilec.utils.tensor import (
    TensorSupplyType,
    get_tensor_supply,
    map_torch_type,
    torch_assert_close,
)


def determine_target(target: str | None = "auto") -> str:
    """The target a kernel compiles for: "auto" becomes "cuda:sm_XX" with a GPU, else "cpu"."""
    from tilec.jit import resolve_target

    return resolve_target(target)


__all__ = ["TensorSupplyType", "determine_target", "get_tensor_supply", "map_torch_type",
           "torch_assert_close"]
