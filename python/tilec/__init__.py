"""tilec: TileLang's tile language compiled through MLIR (`import tilec as tilelang`).

Importing tilec imports neither MLIR nor torch: the runtime side (cache hits, kernel calls)
works on machines without the compiler.
"""

__version__ = "0.1.0"

from tilec import language  # noqa: E402
from tilec.autotuner import autotune  # noqa: E402
from tilec.cache import disable_cache, enable_cache  # noqa: E402
from tilec.errors import CompileError, LaunchError, TilecError  # noqa: E402
from tilec.jit import JITFunction, JITKernel, compile, jit  # noqa: E402

__all__ = [
    "CompileError", "JITFunction", "JITKernel", "LaunchError", "TilecError", "__version__",
    "autotune", "compile", "disable_cache", "enable_cache", "jit", "language",
]
