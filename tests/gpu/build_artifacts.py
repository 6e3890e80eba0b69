"""Compiles the CUDA suite's kernels (tests/gpu/kernels.py) into artifact folders.

Runs where MLIR is (this machine); the GPU machine then runs tests/gpu/ from the folder with
tilec's runtime only:  python tests/gpu/build_artifacts.py OUT_DIR [--arch sm_90a]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernels import KernelSpec, all_kernels  # noqa: E402


def compile_spec(spec: KernelSpec, target: str):
    """The artifact of one kernel for `target` ("cuda:sm_90a"...)."""
    from mlir import ir

    import tilec.dialect
    from tilec.compiler.driver import compile_module

    with tilec.dialect.new_context(), ir.Location.unknown():
        module = ir.Module.parse(spec.tile_ir)
        return compile_module(module, spec.params, target, launch=spec.launch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--arch", default="sm_90a")
    options = parser.parse_args()
    for spec in all_kernels():
        began = time.perf_counter()
        artifact = compile_spec(spec, f"cuda:{options.arch}")
        artifact.save(options.out / spec.name)
        print(f"{spec.name}: {artifact.binary_kind} {len(artifact.binary)} bytes, "
              f"shared {artifact.launch['shared_bytes']} B, {time.perf_counter() - began:.2f} s")


if __name__ == "__main__":
    main()
