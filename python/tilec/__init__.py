"""tilec: TileLang's tile language compiled through MLIR (`import tilec as tilelang`).

Importing tilec imports neither MLIR nor torch: the runtime side (cache hits, kernel calls)
works on machines without the compiler. The host API of TileLang's package is here too:
`PassConfigKey`, `TensorSupplyType`, `cdiv`, `next_power_of_2`, `set_log_level` and, imported
on first use, the `carver`, `contrib`, `cuda`, `engine`, `env`, `layout`, `profiler`, `testing`,
`tvm` and `utils` modules, `Profiler` and `DataType`. A plain `import tvm` finds tilec.tvm where
no TVM is installed.
"""

__version__ = "0.1.0"

import importlib
import logging
from typing import Any

from tilec import _tvm_alias, language  # noqa: E402
from tilec.autotuner import autotune  # noqa: E402
from tilec.cache import disable_cache, enable_cache  # noqa: E402
from tilec.errors import CompileError, LaunchError, TilecError  # noqa: E402
from tilec.jit import JITFunction, JITKernel, compile, jit  # noqa: E402
from tilec.math import cdiv, next_power_of_2  # noqa: E402
from tilec.transform import PassConfigKey  # noqa: E402
from tilec.utils.tensor import TensorSupplyType  # noqa: E402

_LAZY_MODULES = ("carver", "contrib", "cuda", "engine", "env", "layout", "profiler", "testing",
                 "tvm", "utils")
_LAZY_NAMES = {"Profiler": "tilec.profiler", "DataType": "tilec.tvm"}
_tvm_alias.install()


def set_log_level(level: int | str) -> None:
    """The level of tilec's log messages (the autotuner's, ...): logging.INFO or "INFO"."""
    logging.getLogger("tilec").setLevel(level.upper() if isinstance(level, str) else level)


def __getattr__(name: str) -> Any:
    """The host-API modules and names, imported when first used (keeps `import tilec` fast)."""
    if name in _LAZY_MODULES:
        return importlib.import_module(f"tilec.{name}")
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(_LAZY_NAMES[name]), name)
    raise AttributeError(f"module 'tilec' has no attribute '{name}'")


__all__ = [
    "CompileError", "DataType", "JITFunction", "JITKernel", "LaunchError", "PassConfigKey",
    "Profiler", "TensorSupplyType", "TilecError", "__version__", "autotune", "cdiv", "compile",
    "disable_cache", "enable_cache", "jit", "language", "layout", "next_power_of_2", "profiler",
    "set_log_level", "testing", "tvm", "utils",
]
