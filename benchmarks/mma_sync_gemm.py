"""sm_80's tensor-core GEMMs, timed on one GPU: the per-op path (plan-mma-sync-gemms: ldmatrix +
mma.sync where each gemm stands) against the whole-kernel generator's sm_80 kernel
(lower-gemm-to-tensorcore + compiler/tensorcore/ampere.py) on the quickstart GEMM, and the
fused forms of benchmarks/fused_gemm.py (bias + ReLU, scale + residual, transposed, register-A,
batched bf16) beside torch's cuBLAS + separate epilogue.

Two halves, as the GPU machine has no MLIR:

  python benchmarks/mma_sync_gemm.py build CACHE_DIR                  (compiler machine)
  TILEC_CACHE_DIR=CACHE_DIR python benchmarks/mma_sync_gemm.py run --out mma_sync.json   (GPU)

Every kernel is compiled for cuda:sm_80; on a Hopper GPU the runtime loads its sm_80 PTX,
which the driver compiles for it (an sm_80 cubin loads on 8.x GPUs only), so it runs the sm_80
instruction mix. "plain_per_op" is the quickstart GEMM compiled with lower-gemm-to-tensorcore
left out of the tile-cuda stage, into CACHE_DIR/per_op: the kernel sm_80 gets once the
generator is gone. Outputs are checked against a float32 reference (poisoned first) at the
timed shape and at a smaller one with partial tiles. Results:
benchmarks/results/2026-12-01-h200_mma-sync-gemm-*.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fused_gemm import CASES, CHECK_SHAPES, DEFAULT_CHECK_SHAPES, SHAPES, Case, _meta  # noqa: E402

TARGET = "cuda:sm_80"
# the quickstart's tile (the generator's sm_80 default) and a wider one (64 x 64 warp tiles)
CONFIGS = {
    "quickstart": {"block_M": 128, "block_N": 128, "block_K": 32, "threads": 128,
                   "num_stages": 3},
    "wide": {"block_M": 128, "block_N": 256, "block_K": 32, "threads": 256, "num_stages": 3},
}
TIMED_SHAPE = (8192, 8192, 8192)
PER_OP = "plain_per_op"
# fused_gemm's plain GEMM at its own tiles and the quickstart's, and their identity-epilogue
# twins: here the plain GEMM is timed at each config, by the generator and per op
PLAIN_FORMS = ("plain", "plain_per_op", "quickstart", "quickstart_per_op")


def _shapes(case: Case) -> list[tuple[int, ...]]:
    return [SHAPES.get(case.name, TIMED_SHAPE), *CHECK_SHAPES.get(case.name,
                                                                   DEFAULT_CHECK_SHAPES)[:1]]


def _cases(only: list[str] | None = None) -> list[tuple[str, Case]]:
    """(row name, case): the plain GEMM twice (generator, per op), then the fused forms; only
    those named in `only` when given."""
    plain = next(case for case in CASES if case.name == "plain")
    found = [("plain", plain), (PER_OP, plain)] + [(case.name, case) for case in CASES
                                                   if case.name not in PLAIN_FORMS
                                                   and not case.per_op]
    return [(name, case) for name, case in found if only is None or name in only]


@contextmanager
def _cache(cache_dir: Path, name: str):
    """The cache a row's kernels live in: CACHE_DIR, or CACHE_DIR/per_op for plain_per_op (the
    same specialization, so the in-memory cache is emptied on the way in and out)."""
    from tilec import cache

    previous = os.environ.get("TILEC_CACHE_DIR")
    os.environ["TILEC_CACHE_DIR"] = str((cache_dir / "per_op") if name == PER_OP else cache_dir)
    cache.clear_memory()
    try:
        yield
    finally:
        cache.clear_memory()
        if previous is None:
            del os.environ["TILEC_CACHE_DIR"]
        else:
            os.environ["TILEC_CACHE_DIR"] = previous


@contextmanager
def _without_generator():
    """The CUDA target with lower-gemm-to-tensorcore left out (the per-op path for the
    canonical GEMM too)."""
    from tilec.compiler.pipeline import tile_passes
    from tilec.compiler.targets import cuda

    original = cuda._tile_cuda
    cuda._tile_cuda = lambda module, options: tile_passes(
        "tile-cuda", cuda.TILE_PASSES).run(module, options)
    try:
        yield
    finally:
        cuda._tile_cuda = original


def build(cache_dir: Path, configs: list[str], only: list[str] | None = None) -> None:
    cache_dir = cache_dir.resolve()
    for name, case in _cases(only):
        for config in configs:
            knobs = CONFIGS[config]
            for shape in _shapes(case):
                with _cache(cache_dir, name):
                    if name == PER_OP:
                        with _without_generator():
                            kernel = case.kernel.compile(*_meta(case, shape), target=TARGET,
                                                         **knobs)
                    else:
                        kernel = case.kernel.compile(*_meta(case, shape), target=TARGET, **knobs)
                tile_cuda = kernel.asm.get("tile-cuda", "")
                path = "generator" if "tile.tensorcore" in tile_cuda else (
                    "per-op" if "tile.mma_sync" in tile_cuda else "simt")
                print(f"{name:15} {config:10} {shape}: {path}, "
                      f"mma.sync={'mma.sync' in kernel.get_kernel_source()}", flush=True)


def _relative_error(result, expected) -> float:
    expected = expected.float()
    return ((result.float() - expected).norm() / expected.norm()).item()


def run(cache_dir: Path, out: Path, configs: list[str], only: list[str] | None = None) -> None:
    import torch

    torch.manual_seed(0)
    rows: list[dict] = []
    record = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "target": TARGET,
        "method": "sm_80 PTX JIT-compiled by the driver; tilec's profiler do_bench (CUDA "
                  "events, median after warm-up, L2 flushed) for the tilec kernel and the torch "
                  "expression, same process; outputs checked against float32 with NaN-poisoned "
                  "outputs first",
        "rows": rows,
    }
    for config in configs:
        knobs = CONFIGS[config]
        generator_tflops = None
        for name, case in _cases(only):
            errors = []
            for shape in reversed(_shapes(case)):  # the checked shape, then the timed one
                inputs = case.inputs(torch, shape, "cuda")
                with _cache(cache_dir, name):
                    kernel = case.kernel.compile(*inputs, target=TARGET, **knobs)
                source = kernel.get_kernel_source()
                profiler = kernel.get_profiler()
                result = profiler.run_poisoned(*inputs)
                errors.append(_relative_error(result, case.reference(*[t.float()
                                                                       for t in inputs])))
            tilec_ms = profiler.do_bench(input_tensors=inputs, return_mode="median")
            torch_ms = profiler.do_bench(case.reference, input_tensors=inputs,
                                         return_mode="median")
            flops = case.flops(shape)
            row = {
                "kernel": name, "config": config, "knobs": knobs, "shape": list(shape),
                "relative_errors": errors,
                "passed": all(math.isfinite(e) and e < 1e-2 for e in errors),
                "mma_sync": "mma.sync" in source, "ldmatrix": "ldmatrix" in source,
                "generator": "tile.tensorcore" in kernel.asm.get("tile-cuda", ""),
                "tilec_ms": tilec_ms, "torch_ms": torch_ms,
                "tilec_tflops": flops / tilec_ms / 1e9, "torch_tflops": flops / torch_ms / 1e9,
            }
            if name == "plain":
                generator_tflops = row["tilec_tflops"]
            elif generator_tflops is not None and tuple(shape) == TIMED_SHAPE:
                row["ratio_to_generator"] = row["tilec_tflops"] / generator_tflops
            rows.append(row)
            out.write_text(json.dumps(record, indent=1) + "\n")  # each row as it comes
            print(f"{config:10} {name:15} {shape} err {max(errors):.1e} "
                  f"tilec {row['tilec_tflops']:6.1f} TF/s torch {row['torch_tflops']:6.1f}"
                  + (f" x{row['ratio_to_generator']:.2f} of the generator's"
                     if "ratio_to_generator" in row else ""), flush=True)


def main() -> None:
    from device_cli import build_or_run  # beside this script

    def options(builder: argparse.ArgumentParser, runner: argparse.ArgumentParser) -> None:
        runner.add_argument("--cache-dir", type=Path,
                            default=Path(os.environ.get("TILEC_CACHE_DIR", "tilec-cache")))
        for command in (builder, runner):
            command.add_argument("--configs", default=",".join(CONFIGS),
                                 help="tile configs, comma-separated (default: all)")
            command.add_argument("--rows", default=None,
                                 help="rows, comma-separated (default: all; the ratios to the "
                                      "generator need its row, plain)")

    def rows(args: argparse.Namespace) -> list[str] | None:
        return args.rows.split(",") if args.rows else None

    build_or_run(__doc__, "mma_sync_gemm.json",
                 lambda args: build(args.cache_dir, args.configs.split(","), rows(args)),
                 lambda args: run(args.cache_dir, args.out, args.configs.split(","), rows(args)),
                 options)


if __name__ == "__main__":
    main()
