"""conv2d NHWC as an implicit GEMM (examples/convolution/conv2d.py) beside cuDNN.

At ResNet-50's 3x3 convolutions, batch 64, fp16 with float32 accumulation: tilec's kernel and
`torch.nn.functional.conv2d` on the same NHWC tensors (channels_last, cuDNN autotuned with
cudnn.benchmark), in one process. Each tilec config is checked first against a float32
conv2d (TF32 off) on a NaN-poisoned output, at a ragged small shape (pixels that fill no
tile) and at the timed shape. Times are medians of CUDA-event timings after warm-up with L2
flushed (tilec.profiler.do_bench; `run --l2-flush read` flushes with reads, write by default);
TFLOP/s count 2 * N * OH * OW * F * C * KH * KW.

  python benchmarks/convolution.py build CACHE_DIR                    (compiler machine)
  TILEC_CACHE_DIR=CACHE_DIR python benchmarks/convolution.py run --out conv2d.json     (GPU)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "convolution"))

import conv2d  # noqa: E402

from tilec.profiler import L2_FLUSHES  # noqa: E402

TARGET = "cuda:sm_90a"
# (name, N, H, W, C, F, kernel, stride, pad): ResNet-50's 3x3 stages at batch 64
SHAPES = [
    ("conv2_x", 64, 56, 56, 64, 64, 3, 1, 1),
    ("conv3_x", 64, 28, 28, 128, 128, 3, 1, 1),
    ("conv4_x", 64, 14, 14, 256, 256, 3, 1, 1),
    ("conv5_x", 64, 7, 7, 512, 512, 3, 1, 1),
]
CONFIGS = [
    {"block_M": 128, "block_N": 128, "block_K": 64, "num_stages": 3, "threads": 256},
    {"block_M": 128, "block_N": 64, "block_K": 64, "num_stages": 3, "threads": 128},
    # more, smaller blocks: conv5_x has 25 x 4 tiles of 128 x 128 for 132 SMs
    {"block_M": 64, "block_N": 128, "block_K": 64, "num_stages": 3, "threads": 128},
]
CHECK = (2, 9, 9)  # N, H, W of the ragged check (162 output pixels), the timed C, F, kernel
# compile-time opt-ins timed beside the default kernel (cache.COMPILE_SETTINGS): name -> variables
VARIANTS = {"": {}, "synchronous gathers": {"TILEC_ASYNC_GATHERS": "0"},
            # the epilogue's alignment check as LLVM placed it, ahead of the drain's last wgmma
            # wait, where ptxas serialized every wgmma (C7514)
            "checks before the drain": {"TILEC_DRAINED_CHECKS": "0"}}


@contextlib.contextmanager
def _variant(name: str):
    """The variant's variables set while its kernels compile (they are part of the key)."""
    saved = {key: os.environ.get(key) for key in VARIANTS[name]}
    os.environ.update(VARIANTS[name])
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _configs(f: int) -> list[dict]:
    return [config for config in CONFIGS if config["block_N"] <= f]


def _label(name: str, config: dict, variant: str = "") -> str:
    return f"{name} {config}" + (f" ({variant})" if variant else "")


def _tensors(torch, n: int, h: int, w: int, c: int, f: int, kernel: int, device: str):
    if device == "meta":
        return (torch.empty(n, h, w, c, dtype=torch.float16, device="meta"),
                torch.empty(kernel, kernel, c, f, dtype=torch.float16, device="meta"))
    data = torch.randn(n, h, w, c, device=device).half()
    weight = (torch.randn(kernel, kernel, c, f, device=device) / math.sqrt(c * kernel * kernel)
              ).half()
    return data, weight


def _builds(only: str | None):
    for name, n, h, w, c, f, kernel, stride, pad in SHAPES:
        for config in _configs(f):
            for variant in VARIANTS:
                if only and not re.search(only, _label(name, config, variant)):
                    continue
                for shape in ((n, h, w), CHECK):
                    yield (*shape, c, f, kernel, stride, pad, config, variant)


def build(cache_dir: Path, only: str | None = None) -> None:
    import torch

    os.environ["TILEC_CACHE_DIR"] = str(cache_dir.resolve())
    for n, h, w, c, f, kernel, stride, pad, config, variant in _builds(only):
        data, weight = _tensors(torch, n, h, w, c, f, kernel, "meta")
        with _variant(variant):
            source = conv2d.conv2d_nhwc.compile(data, weight, stride=stride, pad=pad,
                                                target=TARGET, **config).get_kernel_source()
        print(f"{n}x{h}x{w}x{c} -> {f} {_label('', config, variant)}: "
              f"wgmma={source.count('wgmma.mma_async')} "
              f"ld.global.v4={source.count('ld.global.v4')} "
              f"cp.async={source.count('cp.async.cg')}", flush=True)


def _checked(torch, kernel_fn, data, weight, stride: int, pad: int, config: dict) -> float:
    kernel = kernel_fn.compile(data, weight, stride=stride, pad=pad, **config)
    result = kernel.get_profiler().run_poisoned(data, weight)
    expected = conv2d.reference(data, weight, stride, pad, 1)
    return ((result.float() - expected).norm() / expected.norm()).item()


def _row(torch, shape: tuple, config: dict, variant: str, l2_flush: str) -> dict:
    from tilec.profiler import do_bench

    name, n, h, w, c, f, kernel, stride, pad = shape
    check = _checked(torch, conv2d.conv2d_nhwc,
                     *_tensors(torch, *CHECK, c, f, kernel, "cuda"), stride, pad, config)
    data, weight = _tensors(torch, n, h, w, c, f, kernel, "cuda")
    error = _checked(torch, conv2d.conv2d_nhwc, data, weight, stride, pad, config)
    compiled = conv2d.conv2d_nhwc.compile(data, weight, stride=stride, pad=pad, **config)
    tilec_ms = do_bench(lambda: compiled(data, weight), return_mode="median", l2_flush=l2_flush)
    nchw = data.permute(0, 3, 1, 2)  # channels_last views of the same memory
    filters = weight.permute(3, 2, 0, 1)
    cudnn_ms = do_bench(lambda: torch.nn.functional.conv2d(nchw, filters, stride=stride,
                                                          padding=pad),
                        return_mode="median", l2_flush=l2_flush)
    oh = conv2d.out_size(h, kernel, stride, pad, 1)
    ow = conv2d.out_size(w, kernel, stride, pad, 1)
    flops = 2 * n * oh * ow * f * c * kernel * kernel
    row = {"shape": name, "nhwc": [n, h, w, c], "filters": f, "kernel": kernel,
           "stride": stride, "pad": pad, "config": config, "variant": variant,
           "relative_error": error,
           "check_relative_error": check,
           "passed": all(math.isfinite(e) and e < 1e-2 for e in (error, check)),
           "tilec_us": tilec_ms * 1e3, "cudnn_us": cudnn_ms * 1e3,
           "tilec_tflops": flops / tilec_ms / 1e9, "cudnn_tflops": flops / cudnn_ms / 1e9,
           "speedup_vs_cudnn": cudnn_ms / tilec_ms}
    print(f"{_label(name, config, variant)} err {max(error, check):.1e} "
          f"tilec {row['tilec_us']:8.1f} us "
          f"({row['tilec_tflops']:5.0f} TFLOP/s) cuDNN {row['cudnn_us']:8.1f} us "
          f"({row['cudnn_tflops']:5.0f}) x{row['speedup_vs_cudnn']:.2f}", flush=True)
    return row


def run(out: Path, only: str | None = None, l2_flush: str = "write") -> None:
    import torch

    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    for shape in SHAPES:
        for config, variant in [(c, v) for c in _configs(shape[5]) for v in VARIANTS]:
            label = _label(shape[0], config, variant)
            if only and not re.search(only, label):
                continue
            try:
                with _variant(variant):
                    rows.append(_row(torch, shape, config, variant, l2_flush))
            except Exception as error:  # noqa: BLE001 - recorded; the other rows still run
                rows.append({"shape": shape[0], "config": config, "variant": variant,
                             "passed": False, "error": f"{type(error).__name__}: {error}"})
                print(f"{label} failed: {rows[-1]['error']}", flush=True)
            best = {}  # the fastest passing config per shape and variant
            for r in rows:
                key = _label(r["shape"], {}, r["variant"]).replace(" {}", "")
                if r["passed"] and (key not in best or r["tilec_us"] < best[key]["tilec_us"]):
                    best[key] = r
            summary = {key: {"speedup_vs_cudnn": r["speedup_vs_cudnn"], "config": r["config"]}
                       for key, r in best.items()}
            out.write_text(json.dumps({
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds"),
                "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                "cudnn": torch.backends.cudnn.version(),
                "method": f"tilec's do_bench (CUDA events, median after warm-up, L2 flush "
                          f"{l2_flush!r} before each call), tilec kernel object and torch "
                          "conv2d on channels_last views (cudnn.benchmark) in one process; "
                          "outputs checked against float32 conv2d (TF32 off) on NaN-poisoned "
                          "outputs first",
                "summary": summary, "rows": rows}, indent=1) + "\n")


def main() -> None:
    from device_cli import build_or_run  # beside this script

    def options(build_parser: argparse.ArgumentParser,
                run_parser: argparse.ArgumentParser) -> None:
        for parser in (build_parser, run_parser):
            parser.add_argument("--only", help="a regular expression over 'shape config "
                                               "(variant)'")
        run_parser.add_argument("--l2-flush", choices=L2_FLUSHES, default="write",
                                help="the L2 flush before every timed call (tilec.profiler)")

    build_or_run(__doc__, "conv2d.json", lambda args: build(args.cache_dir, args.only),
                 lambda args: run(args.out, args.only, args.l2_flush), options)


if __name__ == "__main__":
    main()
