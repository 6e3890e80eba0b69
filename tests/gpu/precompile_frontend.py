"""Compiles the Python (frontend) kernels of the CUDA suite into a cache directory.

    python tests/gpu/precompile_frontend.py CACHE_DIR [--arch sm_90a]

The GPU machine then runs tests/gpu/test_frontend_kernels.py with TILEC_CACHE_DIR=CACHE_DIR:
every kernel is a cache hit there, so no MLIR is needed.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
import time
from pathlib import Path
from types import ModuleType
from unittest import mock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("cache_dir", type=Path)
    parser.add_argument("--arch", default="sm_90a")
    options = parser.parse_args()
    os.environ["TILEC_CACHE_DIR"] = str(options.cache_dir.resolve())
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import torch
    from frontend_kernels import (
        MATMUL_RELU_SIZES,
        NORMALIZE_ROWS_SHAPE,
        QUICKSTART_DTYPES,
        QUICKSTART_SHAPES,
        STREAM_K_PROBLEMS,
        VARLEN_ROWS_PROBLEM,
        WARP_SPECIALIZED_SHAPES,
        WS_GEMM_SHAPES,
        cases,
        matmul,
        matmul_producer_consumer,
        matmul_relu,
        matmul_split_warpgroups,
        matmul_stream_k,
        normalize_rows,
        scaled_copy,
        varlen_rows,
        warp_specialized_scale,
    )

    import tilec
    from tilec.compiler.targets.description import describe

    target = f"cuda:{options.arch}"
    for case in cases():
        began = time.perf_counter()
        tilec.compile(case.factory(), out_idx=case.out_idx, target=target)
        print(f"{case.name}: {time.perf_counter() - began:.2f} s")
    tilec.compile(scaled_copy(), out_idx=[1], target=target)
    lengths, dim = VARLEN_ROWS_PROBLEM
    tilec.compile(varlen_rows(sum(lengths), dim, len(lengths)), target=target)
    for M, N, K in QUICKSTART_SHAPES:
        for dtype in QUICKSTART_DTYPES:
            began = time.perf_counter()
            a = torch.empty(M, K, dtype=getattr(torch, dtype))
            b = torch.empty(K, N, dtype=getattr(torch, dtype))
            matmul.compile(a, b, target=target)
            print(f"quickstart {dtype} {M}x{N}x{K}: {time.perf_counter() - began:.2f} s")
    from test_frontend_kernels import (
        REGISTER_A_DTYPES,
        REGISTER_A_SHAPES,
        REGISTER_A_TILES,
        register_a_kernel,
    )

    for shape in REGISTER_A_SHAPES:
        for dtype in REGISTER_A_DTYPES:
            for tile in REGISTER_A_TILES:
                began = time.perf_counter()
                register_a_kernel(shape, dtype, tile, "cpu", target)
                print(f"register-A {tile} {dtype} {'x'.join(map(str, shape))}: "
                      f"{time.perf_counter() - began:.2f} s")
    M, N, K = MATMUL_RELU_SIZES
    matmul_relu.compile(M=M, N=N, K=K, block_M=128, block_N=128, block_K=32, target=target)
    normalize_rows.compile(torch.empty(*NORMALIZE_ROWS_SHAPE), target=target)
    for M, N, K, programs in STREAM_K_PROBLEMS:
        matmul_stream_k.compile(M=M, N=N, K=K, programs=programs, target=target)
    if describe(options.arch).has_tma:
        for M, K in WARP_SPECIALIZED_SHAPES:
            warp_specialized_scale.compile(M=M, K=K, target=target)
        for M, N, K in WS_GEMM_SHAPES:
            matmul_producer_consumer.compile(M=M, N=N, K=K, target=target)
            matmul_split_warpgroups.compile(M=M, N=N, K=K, target=target)
    from mma_sync_kernels import CASES as MMA_SYNC_CASES
    from mma_sync_kernels import TARGET as MMA_SYNC_TARGET

    for mma_sync_case in MMA_SYNC_CASES:  # sm_80 whatever the suite's arch: its PTX runs on both
        tilec.compile(mma_sync_case.factory(), out_idx=[-1], target=MMA_SYNC_TARGET)
    from debug_kernels import compile_all as compile_debug_kernels

    compile_debug_kernels(target)  # T.print and the checked mode (test_debug_features.py)
    from integer_kernels import compile_all as compile_integer_kernels

    compile_integer_kernels(target)  # test_integer_semantics.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from test_bad_inputs_parallel_updates import allowed_updates
    from test_bad_inputs_scalar_stores import portable_forms

    for checked in (allowed_updates, portable_forms):  # test_parallel_updates_gpu.py
        tilec.compile(checked(), target=target)
    # every test module that compiles in process where the compiler is (thread ranges and
    # branches, per-thread cp.async, the MMA emitter, slices, K x N operands, the opt-in passes):
    # its `precompile`, each under its own copy of os.environ (their settings are part of the keys)
    for module in modules_with_precompile():
        if getattr(module, "HOPPER_ONLY", False) and not describe(options.arch).has_tma:
            continue
        began = time.perf_counter()
        with mock.patch.dict(os.environ):
            if inspect.signature(module.precompile).parameters:
                module.precompile(target)
            else:  # a module whose kernels name their own targets
                module.precompile()
        print(f"{module.__name__}: {time.perf_counter() - began:.2f} s")
    from test_partial_warps_gpu import compile_all as compile_partial_warp_kernels

    compile_partial_warp_kernels(target)
    # what examples/quickstart.py runs on a GPU (the README's main command)
    big = torch.empty(4096, 4096, dtype=torch.float16)
    matmul.compile(big, big, target=target)


def modules_with_precompile() -> list[ModuleType]:
    """The tests/gpu/test_*.py modules that define `precompile`, in name order."""
    modules = []
    for path in sorted(Path(__file__).resolve().parent.glob("test_*.py")):
        module = importlib.import_module(path.stem)
        if callable(getattr(module, "precompile", None)):
            modules.append(module)
    return modules


if __name__ == "__main__":
    main()
