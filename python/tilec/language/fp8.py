"""TileLang's `tilelang.language.fp8`: the FP8 dtype of the GPU torch runs on.

On NVIDIA GPUs (tilec's CUDA target) these are the OCP formats, float8_e4m3fn and float8_e5m2.
ROCm's FNUZ variants are not tilec dtypes: asking for them on a ROCm build of torch is an error.
"""

from __future__ import annotations

from typing import Any, Literal

from tilec.errors import at_caller
from tilec.language import DType, float8_e4m3fn, float8_e5m2

_FORMATS = {"e4m3": float8_e4m3fn, "e5m2": float8_e5m2}


def determine_fp8_type(fp8_format: Literal["e4m3", "e5m2"] = "e4m3") -> DType:
    """T.float8_e4m3fn for "e4m3", T.float8_e5m2 for "e5m2" (CUDA's FP8 formats)."""
    import torch

    if fp8_format not in _FORMATS:
        raise at_caller(f"determine_fp8_type: unknown FP8 format {fp8_format!r} (e4m3 or e5m2)")
    if torch.version.hip is not None:
        raise at_caller("determine_fp8_type: torch is built for ROCm, whose FP8 formats (FNUZ) "
                        "tilec has no dtypes for; tilec targets NVIDIA GPUs and the CPU")
    return _FORMATS[fp8_format]


def determine_torch_fp8_type(fp8_format: Literal["e4m3", "e5m2"] = "e4m3") -> Any:
    """The torch dtype of `determine_fp8_type(fp8_format)`."""
    return determine_fp8_type(fp8_format).as_torch()


__all__ = ["determine_fp8_type", "determine_torch_fp8_type"]
