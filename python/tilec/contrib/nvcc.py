"""The CUDA compute capability queries of TileLang's `tilelang.contrib.nvcc`."""

from __future__ import annotations

import re

from tilec.errors import TilecError


def get_target_compute_version(target: str | None = None) -> str:
    """"9.0" for sm_90 / sm_90a: from a target naming an arch ("cuda:sm_90a", "sm_80",
    "cuda -arch=sm_80"), else the current GPU's; no arch and no GPU is a TilecError."""
    if target is not None:
        found = re.search(r"sm_(\d+)(\d)[a-z]?\b", str(target))
        if found:
            return f"{found.group(1)}.{found.group(2)}"
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        raise TilecError("no CUDA arch was named and no GPU is visible")
    major, minor = torch.cuda.get_device_capability()
    return f"{major}.{minor}"


def parse_compute_version(version: str) -> tuple[int, int]:
    """(9, 0) for "9.0"."""
    found = re.fullmatch(r"(\d+)\.(\d+)", str(version).strip())
    if found is None:
        raise TilecError(f"not a compute version: {version!r} (expected major.minor, e.g. 9.0)")
    return int(found.group(1)), int(found.group(2))
