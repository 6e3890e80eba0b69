"""tilec's compiler (passes, pipelines, targets). It needs the MLIR wheels; a runtime-only
install (no `compiler` extra) runs kernels compiled elsewhere and stops here with a clear
error when asked to compile."""

try:
    import mlir.ir  # noqa: F401
except ModuleNotFoundError:
    from tilec.errors import TilecError

    raise TilecError("compiling a kernel needs tilec's compiler, the MLIR wheels: pip install "
                     "'tilec[compiler]' (this install runs kernels compiled elsewhere, found in "
                     "TILEC_CACHE_DIR)") from None
