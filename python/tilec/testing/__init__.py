"""Test helpers of TileLang's `tilelang.testing`: asserts, seeds and hardware requirements.

The `requires_*` decorators put a `pytest.mark.skipif` on the test: under pytest a test whose GPU,
compute capability or package is missing is skipped with the reason; called directly, the test
runs (as in TileLang). `main()` runs pytest on the file that calls it. `process_func` and
`regression` are TileLang's perf-regression entry points: they run `regression_*` functions and
print the latencies they report.
"""

from __future__ import annotations

import importlib.util
import inspect
import operator
import random
import sys
from collections.abc import Callable
from typing import Any

from tilec.errors import TilecError
from tilec.utils.tensor import torch_assert_close

Test = Callable[..., Any]
_COMPARISONS = {"ge": operator.ge, "gt": operator.gt, "le": operator.le, "lt": operator.lt,
                "eq": operator.eq}


def _skip_unless(condition: bool, reason: str) -> Callable[[Test], Test]:
    """Mark a test to be skipped (under pytest) unless `condition` holds."""

    def mark(test: Test) -> Test:
        try:
            import pytest
        except ImportError:  # no pytest, no skipping: the test runs when called
            return test
        return pytest.mark.skipif(not condition, reason=reason)(test)

    return mark


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def compute_version() -> tuple[int, int]:
    """The current GPU's compute capability, (0, 0) without one."""
    if not cuda_available():
        return (0, 0)
    from tilec.contrib.nvcc import get_target_compute_version, parse_compute_version

    return parse_compute_version(get_target_compute_version())


def requires_cuda(test: Test) -> Test:
    """Skip the test where no CUDA GPU is visible."""
    return _skip_unless(cuda_available(), "needs a CUDA GPU")(test)


def requires_cuda_compute_version(major: int, minor: int = 0,
                                  mode: str = "ge") -> Callable[[Test], Test]:
    """Skip the test unless a CUDA GPU is there and its compute capability compares to
    (major, minor) as `mode` says: "ge", "gt", "le", "lt" or "eq"."""
    if mode not in _COMPARISONS:
        raise TilecError(f"unknown compute-version mode {mode!r}; known: "
                         f"{', '.join(_COMPARISONS)}")
    have = compute_version()
    holds = cuda_available() and _COMPARISONS[mode](have, (major, minor))
    reason = (f"needs CUDA compute capability {mode} {major}.{minor}, this machine has "
              f"{have[0]}.{have[1]}" if cuda_available() else "needs a CUDA GPU")
    return _skip_unless(holds, reason)


def requires_cuda_compute_version_ge(major: int, minor: int = 0) -> Callable[[Test], Test]:
    return requires_cuda_compute_version(major, minor, "ge")


def requires_cuda_compute_version_gt(major: int, minor: int = 0) -> Callable[[Test], Test]:
    return requires_cuda_compute_version(major, minor, "gt")


def requires_cuda_compute_version_le(major: int, minor: int = 0) -> Callable[[Test], Test]:
    return requires_cuda_compute_version(major, minor, "le")


def requires_cuda_compute_version_lt(major: int, minor: int = 0) -> Callable[[Test], Test]:
    return requires_cuda_compute_version(major, minor, "lt")


def requires_cuda_compute_version_eq(major: int, minor: int = 0) -> Callable[[Test], Test]:
    return requires_cuda_compute_version(major, minor, "eq")


def requires_package(*names: str) -> Callable[[Test], Test]:
    """Skip the test unless every named Python package can be imported."""
    missing = [name for name in names if importlib.util.find_spec(name) is None]
    return _skip_unless(not missing, f"needs the package(s) {', '.join(missing)}")


def requires_llvm(test: Test) -> Test:
    """Skip the test unless tilec's CPU backend (llvmlite) is installed."""
    return requires_package("llvmlite")(test)


def requires_rocm(test: Test) -> Test:
    """Always skipped: tilec emits AMD code but runs no ROCm device."""
    return _skip_unless(False, "tilec runs no ROCm device")(test)


def requires_metal(test: Test) -> Test:
    """Always skipped: tilec emits Metal code but runs no Metal device."""
    return _skip_unless(False, "tilec runs no Metal device")(test)


def set_random_seed(seed: int = 42) -> None:
    """Seed Python's, numpy's and torch's generators (the GPU's too)."""
    random.seed(seed)
    try:
        import numpy
    except ImportError:
        pass
    else:
        numpy.random.seed(seed)
    import torch

    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def assert_allclose(actual: Any, desired: Any, rtol: float = 1e-7, atol: float = 1e-7) -> None:
    """Every element of `actual` within atol + rtol * |desired| (numpy's assert_allclose, on
    torch tensors, numpy arrays or numbers; compared in float64)."""
    import torch

    torch_assert_close(torch.as_tensor(actual), torch.as_tensor(desired), rtol=rtol, atol=atol,
                       max_mismatched_ratio=0.0, check_device=False, check_dtype=False,
                       base_name="actual", ref_name="desired")


def main() -> None:
    """Run pytest on the calling file (with this process's command-line arguments)."""
    import pytest

    caller = inspect.getsourcefile(sys._getframe(1))
    sys.exit(pytest.main([caller, *sys.argv[1:]]))


_LATENCIES: list[tuple[str, float]] = []


def process_func(func: Callable[..., float], name: str | None = None, /, **kwargs: Any) -> None:
    """Call a perf function (it returns a latency) and record the latency under `name`."""
    label = name or getattr(func, "__module__", "<unknown>")
    latency = float(func(**kwargs))
    if latency <= 0:
        raise TilecError(f"{label} reported a latency of {latency}: not a measurement")
    _LATENCIES.append((label.removeprefix("regression_"), latency))


def regression(prefixes: tuple[str, ...] = ("regression_",), verbose: bool = True) -> None:
    """Run the caller's module-level functions named with one of `prefixes` (in name order),
    then print every latency they recorded through process_func."""
    caller = sys._getframe(1).f_globals
    _LATENCIES.clear()
    for name in sorted(caller):
        value = caller[name]
        if callable(value) and name.startswith(prefixes):
            if verbose:
                print(f"running {name}", flush=True)
            value()
    for label, latency in _LATENCIES:
        print(f"{label}: {latency}")


__all__ = [
    "assert_allclose", "compute_version", "cuda_available", "main", "process_func", "regression",
    "requires_cuda", "requires_cuda_compute_version", "requires_cuda_compute_version_eq",
    "requires_cuda_compute_version_ge", "requires_cuda_compute_version_gt",
    "requires_cuda_compute_version_le", "requires_cuda_compute_version_lt", "requires_llvm",
    "requires_metal", "requires_package", "requires_rocm", "set_random_seed",
    "torch_assert_close",
]
