"""TileLang's IKET instrumentation (`tilelang.tools.cuda.iket`), which tilec cannot offer.

IKET's markers and ranges (`iket.mark`, `iket.range`, `iket.payload`) become calls in the CUDA C
source TileLang prints for a kernel, and `iket.session` registers the source post-processing
callback that injects the event code and metadata there before nvcc runs; the external IKET
profiler then reads the events. tilec prints no CUDA C (a kernel goes from MLIR to PTX), so
there is nothing for IKET to instrument. The module imports (examples import it at their top);
every IKET call is an error at the caller's line, since ignoring it would leave a profile
without the events its author asked for. Profile tilec kernels with Nsight Systems or Nsight
Compute instead.
"""

from __future__ import annotations

from typing import Any

from tilec.errors import at_caller

# TileLang's public IKET names (tilelang/tools/cuda/iket/__init__.py)
_NAMES = frozenset({
    "PayloadSpec", "disable", "disable_runtime_payloads", "enable", "enable_runtime_payloads",
    "event_table", "is_enabled", "mark", "output_dir", "output_path", "payload",
    "profile_command", "range", "range_end", "range_pop", "range_push", "range_start", "reset",
    "runtime_payloads_enabled", "session", "set_output_dir", "trace_files",
})


def _unavailable(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise at_caller(f"iket.{name}: tilec cannot instrument kernels with IKET, which injects "
                        "its events into the CUDA C source TileLang prints; tilec generates no "
                        "CUDA C (kernels go from MLIR to PTX). Profile tilec kernels with Nsight "
                        "Systems or Nsight Compute")

    refuse.__name__ = name
    return refuse


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        return _unavailable(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
