"""The GEMM as a user runs it: `@tilec.jit` kernel → tilec's runtime (TMA maps, native launcher).

benchmarks/gemm.py times the generated kernels with a minimal loader; this times the same
TileLang-style kernel through the whole user path (cache hit, kernel object, argument checks,
output allocation, launch) beside torch.matmul (cuBLAS), both with tilec's profiler (CUDA
events, median after warm-up, L2 flushed). Two halves, as the GPU machine has no MLIR:

  python benchmarks/gemm_runtime.py build CACHE_DIR                (compiler machine)
  TILEC_CACHE_DIR=CACHE_DIR python benchmarks/gemm_runtime.py run --out results.json  (GPU)

It also runs the autotuner that way: `build` precompiles every configuration of
`tuned_matmul` for the shapes where the best tile differs, `run` times them from the cache and
keeps the fastest per shape.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm import CONFIGS, matmul  # noqa: E402

import tilec  # noqa: E402

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 28672, 8192), (1000, 1016, 1000)]
DTYPES = ["float16", "bfloat16"]
CONFIG_NAMES = ["quickstart", "tuned"]
TUNED_SHAPES = [(128, 8192, 8192), (1024, 1024, 1024), (4096, 4096, 4096)]
tuned_matmul = tilec.autotune(
    configs=[CONFIGS[name] for name in ("tuned", "mid", "narrow", "small")])(matmul)


def cases() -> list[tuple[tuple[int, int, int], str, str]]:
    return [(shape, dtype, config) for shape in SHAPES for dtype in DTYPES
            for config in CONFIG_NAMES]


def relative_error(c, a, b) -> float:
    """||C - A @ B|| / ||A @ B|| against a float32 reference."""
    reference = a.float() @ b.float()
    return ((c.float() - reference).norm() / reference.norm()).item()


def build(cache_dir: Path) -> None:
    import torch

    import tilec.language as T

    os.environ["TILEC_CACHE_DIR"] = str(cache_dir.resolve())
    for (m, n, k), dtype, config in cases():
        a = torch.empty(m, k, dtype=getattr(torch, dtype), device="meta")
        b = torch.empty(k, n, dtype=getattr(torch, dtype), device="meta")
        kernel = matmul.compile(a, b, target="cuda:sm_90a", **CONFIGS[config],
                                dtype=T.dtype(dtype))
        on_tensor_cores = "wgmma.mma_async" in kernel.get_kernel_source()
        print(f"{m}x{n}x{k} {dtype} {config}: wgmma={on_tensor_cores}")
    for m, n, k in TUNED_SHAPES:
        a = torch.empty(m, k, dtype=torch.float16, device="meta")
        b = torch.empty(k, n, dtype=torch.float16, device="meta")
        errors = tuned_matmul.precompile(a, b, target="cuda:sm_90a")
        print(f"autotune {m}x{n}x{k}: {len(errors)} configs, errors {errors}")


def run(out: Path) -> None:
    import torch

    import tilec.language as T

    rows = []
    for (m, n, k), dtype, config in cases():
        torch_dtype = getattr(torch, dtype)
        a = torch.randn(m, k, device="cuda").to(torch_dtype)
        b = torch.randn(k, n, device="cuda").to(torch_dtype)
        kernel = matmul.compile(a, b, **CONFIGS[config], dtype=T.dtype(dtype))
        profiler = kernel.get_profiler()
        error = relative_error(profiler.run_poisoned(a, b), a, b)
        tilec_ms = profiler.do_bench(input_tensors=[a, b], return_mode="median")
        cublas_ms = profiler.do_bench(torch.matmul, input_tensors=[a, b], return_mode="median")
        flops = 2 * m * n * k
        row = {"shape": [m, n, k], "dtype": dtype, "config": config,
               "relative_error": error, "passed": math.isfinite(error) and error < 1e-2,
               "tilec_ms": tilec_ms, "cublas_ms": cublas_ms,
               "tilec_tflops": flops / tilec_ms / 1e9, "cublas_tflops": flops / cublas_ms / 1e9,
               "ratio_to_cublas": cublas_ms / tilec_ms}
        rows.append(row)
        print(f"{m}x{n}x{k} {dtype:8} {config:10} err {error:.1e}  tilec "
              f"{row['tilec_tflops']:6.1f} TF/s  cuBLAS {row['cublas_tflops']:6.1f}  "
              f"x{row['ratio_to_cublas']:.2f}")
    tuned = []
    for m, n, k in TUNED_SHAPES:
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(k, n, device="cuda").half()
        result = tuned_matmul.tune(a, b)
        error = relative_error(result.kernel.get_profiler().run_poisoned(a, b), a, b)
        cublas_ms = result.kernel.get_profiler().do_bench(
            torch.matmul, input_tensors=[a, b], return_mode="median")
        tuned.append({"shape": [m, n, k], "best_config": result.config,
                      "best_ms": result.latency, "cublas_ms": cublas_ms,
                      "ratio_to_cublas": cublas_ms / result.latency,
                      "relative_error": error,
                      "timings": [{"config": trial.config, "ms": trial.latency}
                                  for trial in result.trials]})
        print(f"autotune {m}x{n}x{k}: best {result.config} {result.latency:.3f} ms, "
              f"cuBLAS {cublas_ms:.3f} ms (x{cublas_ms / result.latency:.2f}), err {error:.1e}")
    record = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
        "method": "tilec's profiler do_bench (CUDA events, median after warm-up, L2 flushed) "
                  "for the tilec kernel object and torch.matmul, same process; outputs checked "
                  "against a float32 reference with NaN-poisoned outputs first",
        "rows": rows,
        "autotune": tuned,
    }
    out.write_text(json.dumps(record, indent=1) + "\n")


def main() -> None:
    from device_cli import build_or_run  # beside this script

    build_or_run(__doc__, "gemm_runtime.json", lambda args: build(args.cache_dir),
                 lambda args: run(args.out))


if __name__ == "__main__":
    main()
