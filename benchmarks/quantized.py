"""Weight-only quantized GEMV / small-batch GEMM: tilec beside cuBLAS fp16 on the dequantized
weight.

Each kernel's output is checked against a float32 torch reference (random activations, weights,
scales and zeros; the output poisoned first) at the timed shape and at a smaller one, then timed
beside `torch.matmul(A, W.T)` with W the fp16 dequantized weight (what cuBLAS does without a
quantized kernel). Reported: µs, the GB/s of the bytes a kernel must read (packed weights,
scales, zeros, activations) and the fraction of the weight-bandwidth floor (the packed weight's
bytes at the H200's measured copy bandwidth, COPY_TB_S).

Two halves, as the GPU machine has no MLIR:

  python benchmarks/quantized.py build CACHE_DIR                       (compiler machine)
  TILEC_CACHE_DIR=CACHE_DIR python benchmarks/quantized.py run --out quantized.json   (GPU)

(`--only REGEX` on both: the rows whose label, `kernel MxNxK config`, matches; `run
--bandwidth-json FILE` adds benchmarks/bandwidth.py's min_bandwidth_fraction of the same device
to the summary; `--ablation` on both: the ABLATION variants, the opt-in code generation of the
GEMVs (TILEC_UNSWITCH_INVARIANT_CONDITIONS, TILEC_FUSE_LOP3, TILEC_PACK_HALF_PAIRS,
TILEC_PREFETCH_LOOP_LOADS on the int4 rows, TILEC_PREFETCH_L2 on int4 and int2,
TILEC_LOOP_LOAD_RING on the half2 rows, TILEC_STREAMED_LOAD_HINTS on the half2 and element
rows) beside the
default, each row tagged with its variant, the summary's `ablation_us` the headline shape's
times per variant; `--only` then picks variants by name; `run --l2-flush write|read|none
[...]`: the L2 flush before every timed call, of every contender alike (tilec.profiler.do_bench's
`l2_flush`): "write" (the default, TileLang's and Triton's) leaves L2 full of dirty lines
whose write-back falls inside the next call, about 12 µs on the H200, "read" leaves clean
ones. With several, each row is compiled and checked once and timed after each (its `flushes`;
its top-level times are the first's), and the run times a 1 GiB device copy after each, the
summary's `copy_tb_s`; the summary's `flush_us` holds the headline shape's times per flush.)
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "quantized"))

import gemv  # noqa: E402
from gemm_fp4 import gemm_mxfp4  # noqa: E402
from gemm_int4 import gemm_int4, gemm_int4_words  # noqa: E402

from tilec.cache import compile_settings  # noqa: E402
from tilec.profiler import L2_FLUSHES  # noqa: E402

COPY_TB_S = 4.27  # measured device-to-device copy bandwidth of the H200 (shared/baselines)
TILEC_TARGET = "cuda:sm_90a"


@dataclass(frozen=True)
class Case:
    """One quantized kernel and the weight format it reads."""

    name: str
    kernel: Callable
    fmt: str  # a format of examples/quantized/gemv.py
    words: bool = False  # the packed weights passed as uint32 words (gemv_uint4_words)
    takes_bits: bool = False  # a kernel of int4 and int2 (gemv_uint, gemv_uint_half2: bits=)
    integer_zeros: bool = False  # integer zeros, folded into the decode (integer_zeros=)

    def inputs(self, torch, m: int, n: int, k: int, device: str):
        """The kernel's inputs and the float32 (N, K) weight (None on the meta device)."""
        if device == "meta":
            a = torch.empty(m, k, dtype=torch.float16, device="meta")
            args, weight = gemv.meta_weights(self.fmt, n, k), None
        else:
            a = torch.randn(m, k, device=device).half()
            args, weight = gemv.weights(self.fmt, n, k, device, self.integer_zeros)
        if self.words:
            args[0] = args[0].view(torch.uint32)
        return [a, *args], weight

    def weight_bytes(self, n: int, k: int) -> int:
        return n * k * gemv.BITS[self.fmt] // 8

    def extra_bytes(self, m: int, n: int, k: int) -> int:
        """Scales (and zeros), activations and output."""
        scales = {"uint4": 4 * n * (k // 128), "uint2": 4 * n * (k // 128),
                  "nf4": 2 * n * (k // 128), "mxfp4": n * (k // 32)}[self.fmt]
        return scales + 2 * m * k + 2 * m * n

    def options(self, config: dict) -> dict:
        if not self.takes_bits:
            return config
        folded = {"integer_zeros": True} if self.integer_zeros else {}
        return {**gemv.compile_options(self.fmt), **folded, **config}


CASES = {
    "int4_g128_gemv": Case("int4_g128_gemv", gemv.gemv_uint, "uint4", takes_bits=True),
    "int4_g128_gemv_words": Case("int4_g128_gemv_words", gemv.gemv_uint4_words, "uint4",
                                 words=True),
    "int4_g128_gemv_half2": Case("int4_g128_gemv_half2", gemv.gemv_uint_half2, "uint4",
                                 words=True, takes_bits=True),
    "int4_g128_gemv_half2_intzeros": Case("int4_g128_gemv_half2_intzeros",
                                          gemv.gemv_uint_half2, "uint4", words=True,
                                          takes_bits=True, integer_zeros=True),
    "int2_g128_gemv": Case("int2_g128_gemv", gemv.gemv_uint, "uint2", takes_bits=True),
    "int2_g128_gemv_half2_intzeros": Case("int2_g128_gemv_half2_intzeros",
                                          gemv.gemv_uint_half2, "uint2", words=True,
                                          takes_bits=True, integer_zeros=True),
    "int2_g128_gemv_half2": Case("int2_g128_gemv_half2", gemv.gemv_uint_half2, "uint2",
                                 words=True, takes_bits=True),
    "nf4_g128_gemv": Case("nf4_g128_gemv", gemv.gemv_nf4, "nf4"),
    "mxfp4_gemv": Case("mxfp4_gemv", gemv.gemv_mxfp4, "mxfp4"),
    "int4_g128_gemm_tile": Case("int4_g128_gemm_tile", gemm_int4, "uint4"),
    "int4_g128_gemm_words": Case("int4_g128_gemm_words", gemm_int4_words, "uint4", words=True),
    "mxfp4_gemm_tile": Case("mxfp4_gemm_tile", gemm_mxfp4, "mxfp4"),
}
HEADLINE = (1, 28672, 8192)
# (kernel, timed shape, config): the first row of a kernel at a shape is its default config;
# configs measured slower on the H200 are left out (README)
TIMED = [
    ("int4_g128_gemv", HEADLINE, {}),
    ("int4_g128_gemv", HEADLINE, {"rows_per_warp": 4}),
    ("int4_g128_gemv", HEADLINE, {"warps": 2, "rows_per_warp": 4}),
    ("int4_g128_gemv_half2", HEADLINE, {}),
    ("int4_g128_gemv_half2", HEADLINE, {"rows_per_warp": 2}),
    ("int4_g128_gemv_half2", HEADLINE, {"rows_per_warp": 8}),
    # bytes in flight: the weight loads of k_unroll steps issued before the first decode
    ("int4_g128_gemv_half2", HEADLINE, {"k_unroll": 2}),
    ("int4_g128_gemv_half2", HEADLINE, {"k_unroll": 4}),
    ("int4_g128_gemv_half2", HEADLINE, {"rows_per_warp": 2, "k_unroll": 2}),
    ("int4_g128_gemv_half2", HEADLINE, {"warps": 8, "k_unroll": 2}),
    # the zero applied to the step's sums of a * q and of a: an HSUB2 less per two weights
    ("int4_g128_gemv_half2", HEADLINE, {"zero_from_sums": True}),
    ("int4_g128_gemv_half2", HEADLINE, {"zero_from_sums": True, "k_unroll": 2}),
    ("int4_g128_gemv_half2", HEADLINE, {"zero_from_sums": True, "rows_per_warp": 2,
                                        "k_unroll": 2}),
    # smaller steps, more warps: 4- or 8-byte weight loads, 1 or 2 rows a warp
    ("int4_g128_gemv_half2", HEADLINE, {"words": 1, "rows_per_warp": 1}),
    ("int4_g128_gemv_half2", HEADLINE, {"words": 1, "rows_per_warp": 1, "zero_from_sums": True}),
    ("int4_g128_gemv_half2", HEADLINE, {"words": 1, "rows_per_warp": 4}),
    ("int4_g128_gemv_half2", HEADLINE, {"words": 2, "rows_per_warp": 2}),
    ("int4_g128_gemv_half2", (1, 8192, 8192), {}),
    ("int4_g128_gemv_half2", (4, 28672, 8192), {"block_m": 4, "rows_per_warp": 2}),
    ("int2_g128_gemv_half2", HEADLINE, {}),
    ("int2_g128_gemv_half2", HEADLINE, {"rows_per_warp": 2}),
    ("int2_g128_gemv_half2", HEADLINE, {"k_unroll": 2}),
    ("int2_g128_gemv_half2", HEADLINE, {"rows_per_warp": 2, "k_unroll": 2}),
    ("int2_g128_gemv_half2", HEADLINE, {"zero_from_sums": True}),
    ("int2_g128_gemv_half2", HEADLINE, {"zero_from_sums": True, "rows_per_warp": 8}),
    ("int2_g128_gemv_half2", HEADLINE, {"words": 1, "rows_per_warp": 1}),
    ("int2_g128_gemv_half2", HEADLINE, {"words": 2, "rows_per_warp": 2, "zero_from_sums": True}),
    # integer zeros folded into the decode's HFMA2: 1.5 instructions a weight, exact
    ("int2_g128_gemv_half2_intzeros", HEADLINE, {}),
    ("int2_g128_gemv_half2_intzeros", HEADLINE, {"rows_per_warp": 8}),
    ("int4_g128_gemv_half2_intzeros", HEADLINE, {}),
    ("int4_g128_gemv_words", HEADLINE, {}),
    ("int4_g128_gemv_words", HEADLINE, {"prefetch": True}),
    ("int4_g128_gemv_words", (1, 8192, 8192), {}),
    ("int4_g128_gemv_words", (4, 28672, 8192), {"block_m": 4, "rows_per_warp": 1}),
    ("int2_g128_gemv", HEADLINE, {}),
    ("nf4_g128_gemv", HEADLINE, {}),
    ("mxfp4_gemv", HEADLINE, {}),
    ("int4_g128_gemv", (1, 8192, 8192), {}),
    ("int4_g128_gemv", (1, 4096, 4096), {}),
    ("int4_g128_gemv", (4, 28672, 8192), {"block_m": 4}),
    ("int4_g128_gemv", (16, 28672, 8192), {"block_m": 4}),
    ("int4_g128_gemm_tile", (4, 28672, 8192), {}),
    ("int4_g128_gemm_tile", (16, 28672, 8192), {}),
    ("int4_g128_gemm_tile", (64, 28672, 8192), {}),
    # two warpgroups decoding (twice the warps to hide the decode's latencies), a deeper ring
    ("int4_g128_gemm_tile", (16, 28672, 8192), {"threads": 256}),
    ("int4_g128_gemm_tile", (16, 28672, 8192), {"num_stages": 3}),
    ("int4_g128_gemm_words", HEADLINE, {}),
    ("int4_g128_gemm_words", (4, 28672, 8192), {}),
    ("int4_g128_gemm_words", (16, 28672, 8192), {}),
    ("int4_g128_gemm_words", (64, 28672, 8192), {}),
    ("mxfp4_gemm_tile", (16, 28672, 8192), {}),
    ("mxfp4_gemm_tile", (64, 28672, 8192), {}),
    ("mxfp4_gemm_tile", (64, 28672, 8192), {"threads": 256}),
    ("mxfp4_gemm_tile", (4096, 8192, 8192), {}),
]
# the opt-in code generation measured against the default, in one process (`--ablation`):
# each variant the variables set while its kernels compile and run (they are part of their
# key) and the rows (a regular expression over their labels) it times
CODEGEN = ("TILEC_UNSWITCH_INVARIANT_CONDITIONS", "TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS")
# the loads issued a step ahead (prefetch-loop-loads): 1 caps the kernel at 128 registers, a
# number at that many; unset in every variant that does not name it
PREFETCH = "TILEC_PREFETCH_LOOP_LOADS"
PREFETCH_L2 = "TILEC_PREFETCH_L2"  # the distance of prefetch-loop-loads-to-l2
RING = "TILEC_LOOP_LOAD_RING"  # ring-loop-loads: 1 (two slots) or its slots
STREAM = "TILEC_STREAMED_LOAD_HINTS"  # hint-streamed-loads: weights L1 no-allocate, L2 evict-first
STREAM_REGISTERS = "TILEC_STREAM_MAX_REGISTERS"  # the register cap of the hinted functions
_HEAD = r"1x28672x8192 "
HEADLINE_ROW = r"^int4_g128_gemv_half2 " + _HEAD + r"\{\}$"
ABLATION_ROWS = (r"^(int4_g128_gemv_half2 " + _HEAD
                 + r"(\{\}|\{'k_unroll': 2\}|\{'zero_from_sums': True\})"
                 r"|int4_g128_gemv_half2_intzeros " + _HEAD + r"\{\}"
                 r"|int2_g128_gemv_half2(_intzeros)? " + _HEAD + r"\{\})$")
OPTED_IN_ROWS = ABLATION_ROWS[:-2] + r"|int4_g128_gemv_half2 " + _HEAD + r"\{'rows_per_warp': 8\})$"
# the T.uint4 / T.uint2 / float4 element kernels, whose fields fuse-lop3 takes from their words
DECODE_ROWS = r"^(int4_g128_gemv|int2_g128_gemv|mxfp4_gemv) " + _HEAD + r"\{\}$"
# the int4 kernels the prefetch is timed on, beside 'all' on the same rows
PREFETCH_ROWS = r"^(int4_g128_gemv_half2|int4_g128_gemv) " + _HEAD + r"\{\}$"
# the GEMVs the L2 prefetch is timed on (int4, and int2 with integer zeros folded), beside 'all'
L2_ROWS = r"^(int4_g128_gemv_half2|int2_g128_gemv_half2_intzeros) " + _HEAD + r"\{\}$"
# the half2 GEMVs the shared-memory ring is timed on (int4 and int2, both zero forms)
RING_ROWS = r"^(int4|int2)_g128_gemv_half2(_intzeros)? " + _HEAD + r"\{\}$"
# the GEMVs the streamed-load hints are timed on: the half2 ones and the element kernels
STREAM_ROWS = (r"^((int4|int2)_g128_gemv_half2(_intzeros)?|int4_g128_gemv|int2_g128_gemv"
               r"|mxfp4_gemv) " + _HEAD + r"\{\}$")


def _either(*patterns: str) -> str:
    return "|".join(f"(?:{pattern})" for pattern in patterns)


ABLATION = {
    "plain": ((), _either(ABLATION_ROWS, DECODE_ROWS)),
    "lop3": (("TILEC_FUSE_LOP3",), _either(HEADLINE_ROW, DECODE_ROWS)),
    "half pairs": (("TILEC_PACK_HALF_PAIRS",), HEADLINE_ROW),
    "unswitch": (("TILEC_UNSWITCH_INVARIANT_CONDITIONS",), HEADLINE_ROW),
    # "all" without the loop versions, on the same rows
    "lop3 + half pairs": (("TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS"), OPTED_IN_ROWS),
    "all": (CODEGEN, _either(OPTED_IN_ROWS, DECODE_ROWS)),
    "all, prefetch rows": (CODEGEN, PREFETCH_ROWS),
    "prefetch": ((*CODEGEN, f"{PREFETCH}=1"), PREFETCH_ROWS),
    "prefetch 96": ((*CODEGEN, f"{PREFETCH}=96"), PREFETCH_ROWS),
    # the weights of the step d ahead prefetched into L2 (prefetch-loop-loads-to-l2): no
    # registers; alone, at distances 1 and 2 (auto's for these), and beside the register
    # prefetch
    "all, l2 rows": (CODEGEN, L2_ROWS),
    "prefetch, l2 rows": ((*CODEGEN, f"{PREFETCH}=1"), L2_ROWS),
    "l2": ((*CODEGEN, f"{PREFETCH_L2}=2"), L2_ROWS),
    "l2 d1": ((*CODEGEN, f"{PREFETCH_L2}=1"), L2_ROWS),
    "l2 + prefetch": ((*CODEGEN, f"{PREFETCH_L2}=2", f"{PREFETCH}=1"), L2_ROWS),
    # the weights, scales and zeros of the next step (ring 3: of the next two) copied by
    # cp.async into per-thread shared-memory slots (ring-loop-loads), beside 'all' on the
    # same rows
    "all, ring rows": (CODEGEN, RING_ROWS),
    "ring": ((*CODEGEN, f"{RING}=1"), RING_ROWS),
    "ring 3": ((*CODEGEN, f"{RING}=3"), RING_ROWS),
    # the element kernels (int4 / int2 fields, mxfp4 with its float8 block scales): the ring
    # beside the same code without it
    "all, decode rows": (CODEGEN, DECODE_ROWS),
    "ring, decode rows": ((*CODEGEN, f"{RING}=1"), DECODE_ROWS),
    # the packed weights' loads with L1::no_allocate and an L2 evict-first policy
    # (hint-streamed-loads), beside the same code without them
    "all, stream rows": (CODEGEN, STREAM_ROWS),
    "stream": ((*CODEGEN, STREAM), STREAM_ROWS),
    # the hinted half2 GEMVs (the ring's four rows) at a register cap: ptxas, at its own 56
    # (int4) or 80 (int2) registers, issues two rows' weights and zeros of a step a round trip
    # after the others; auto (int4 80, int2 96) gives it room to issue them all at the step's
    # start, 72 a cap between (7 blocks an SM); beside the same rows without the hints and
    # without any opt-in (tilec's default)
    "plain, ring rows": ((), RING_ROWS),
    "stream, ring rows": ((*CODEGEN, STREAM), RING_ROWS),
    **{f"stream {cap}": ((*CODEGEN, STREAM, f"{STREAM_REGISTERS}={cap}"), RING_ROWS)
       for cap in ("auto", 72)},
}
# every (kernel, config) is checked first at these shapes: ragged N, K past the last step
CHECKED = [(1, 256, 1536), (3, 514, 2048)]


@contextlib.contextmanager
def _settings(names: tuple[str, ...]):
    """CODEGEN's variables, PREFETCH, PREFETCH_L2, RING, STREAM and STREAM_REGISTERS: those
    named set (to 1, or NAME=VALUE's value), the others unset, while the block runs."""
    saved = {name: os.environ.pop(name, None)
             for name in (*CODEGEN, PREFETCH, PREFETCH_L2, RING, STREAM, STREAM_REGISTERS)}
    os.environ.update(dict((*name.split("=", 1), "1")[:2] for name in names))
    try:
        yield
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value


def _label(name: str, shape: tuple[int, int, int], config: dict) -> str:
    """A timed row's label, what `--only` matches: kernel MxNxK config."""
    return f"{name} {'x'.join(map(str, shape))} {config}"


def _builds(only: str | None = None) -> list[tuple[Case, tuple[int, int, int], dict]]:
    """Every compile the run needs (of the rows `only` matches): the timed shapes and the
    checked ones of each config."""
    builds, seen = [], set()
    for name, shape, config in TIMED:
        if only and not re.search(only, _label(name, shape, config)):
            continue
        builds.append((CASES[name], shape, config))
        key = (name, tuple(sorted(config.items())))
        if key not in seen:
            seen.add(key)
            builds += [(CASES[name], check, config) for check in CHECKED]
    return builds


def _variants(only: str | None, ablation: bool) -> list[tuple[str, tuple]]:
    """(variant, (variables, rows)): ABLATION's (those whose name `only` matches) with
    `ablation`, else one unnamed variant of the rows `only` matches."""
    if not ablation:
        return [("", ((), only))]
    return [(name, variant) for name, variant in ABLATION.items()
            if only is None or re.search(only, name)]


def build(cache_dir: Path, only: str | None = None, ablation: bool = False) -> None:
    import torch

    os.environ["TILEC_CACHE_DIR"] = str(cache_dir.resolve())
    for _, (names, rows) in _variants(only, ablation):
        with _settings(names):
            for case, (m, n, k), config in _builds(rows):
                _build_row(torch, case, (m, n, k), config)


def _build_row(torch, case: Case, shape: tuple[int, int, int], config: dict) -> None:
    m, n, k = shape
    inputs, _ = case.inputs(torch, m, n, k, "meta")
    kernel = case.kernel.compile(*inputs, target=TILEC_TARGET, **case.options(config))
    source = kernel.get_kernel_source()
    print(f"{case.name:20} {m}x{n}x{k} {config} {compile_settings() or ''}: "
          f"ld.global.v4={source.count('ld.global.v4')} "
          f"shfl={source.count('shfl.sync')} ld.local={source.count('ld.local')} "
          f"wgmma={source.count('wgmma.mma_async')} mma={source.count('mma.sync')}")


def _relative_error(result, expected) -> float:
    return ((result.float() - expected).norm() / expected.norm()).item()


def torch_dequantize(torch, fmt: str, args: list):
    """The fp16 (N, K) weight of a kernel's weight arguments (after A) computed by torch ops:
    the dequantize half of torch's dequantize-then-matmul, the peer of a fused kernel."""
    packed = args[0].view(torch.uint8)
    bits = gemv.BITS[fmt]
    mask = (1 << bits) - 1  # the fields in bytes, as a torch user unpacks them
    codes = torch.stack([(packed >> shift) & mask for shift in range(0, 8, bits)],
                        -1).flatten(-2)
    if fmt in ("uint4", "uint2"):
        group = codes.shape[-1] // args[1].shape[-1]
        return ((codes.half() - args[2].repeat_interleave(group, 1))
                * args[1].repeat_interleave(group, 1))
    if fmt == "nf4":
        return args[2].half()[codes.int()] * args[1].repeat_interleave(128, 1)
    values = torch.tensor(gemv.FP4_VALUES, device=packed.device, dtype=torch.float16)
    scales = torch.exp2(args[1].view(torch.uint8).float() - 127).half()
    return values[codes.int()] * scales.repeat_interleave(32, 1)


def _time(kernel, inputs: list, dense, fmt: str,
          l2_flush: str) -> tuple[float, float, float]:
    """Milliseconds of the tilec kernel, of cuBLAS on the fp16 weight `dense` (N x K) and of
    torch's dequantize-then-matmul from the packed weight arguments, each after `l2_flush`."""
    import torch

    from tilec.profiler import do_bench

    def timed(fn: Callable) -> float:
        return do_bench(fn, return_mode="median", l2_flush=l2_flush)

    tilec_ms = timed(lambda: kernel(*inputs))
    cublas_ms = timed(lambda: torch.matmul(inputs[0], dense.t()))
    dequant_ms = timed(lambda: torch.matmul(inputs[0], torch_dequantize(
        torch, fmt, inputs[1:]).t()))
    return tilec_ms, cublas_ms, dequant_ms


def _check(case: Case, shape: tuple[int, int, int], config: dict) -> float:
    """The relative error of the kernel's poisoned run against float32 torch."""
    import torch

    inputs, weight = case.inputs(torch, *shape, "cuda")
    kernel = case.kernel.compile(*inputs, **case.options(config))
    result = kernel.get_profiler().run_poisoned(*inputs)
    return _relative_error(result, inputs[0].float() @ weight.t())


def _record(torch, rows: list[dict], bandwidth: Path | None,
            copies: dict[str, float]) -> dict:
    headline = [r for r in rows if r["kernel"].startswith("int4_g128_gemv")
                and tuple(r["shape"]) == HEADLINE and r["passed"]]
    # the headline takes any fp16 zero; integer zeros (a narrower format) are reported apart
    folded = [r for r in headline if r["kernel"].endswith("_intzeros")]
    headline = [r for r in headline if not r["kernel"].endswith("_intzeros")]
    l2_flush = next(iter(copies))
    summary = {"l2_flush": l2_flush, "copy_tb_s": copies}
    if headline:
        best = min(headline, key=lambda r: r["tilec_us"])
        summary = {"int4_gemv_28672x8192_us": best["tilec_us"], "kernel": best["kernel"],
                   "config": best["config"],
                   "speedup_vs_cublas_fp16": best["speedup_vs_cublas_fp16"],
                   "fraction_of_weight_floor": best["fraction_of_weight_floor"]}
    if folded:
        summary["int4_gemv_integer_zeros_28672x8192_us"] = min(r["tilec_us"] for r in folded)
    variants = {}
    for r in rows:
        if "variant" in r and r["passed"] and tuple(r["shape"]) == HEADLINE:
            variants.setdefault(r["variant"], {})[f"{r['kernel']} {r['config']}"] = r["tilec_us"]
    if len(copies) > 1:
        headline_rows = [r for r in rows if r["passed"] and tuple(r["shape"]) == HEADLINE]
        summary["flush_us"] = {flush: {f"{r['kernel']} {r['config']} {r.get('variant', '')}"
                                       .strip(): r["flushes"][flush] for r in headline_rows}
                               for flush in copies}
    if variants:
        summary["ablation_us"] = variants
        if headline:
            summary["variant"] = best.get("variant", "")
    if bandwidth is not None and bandwidth.is_file():  # the memory-bound kernels' run
        summary["min_bandwidth_fraction"] = json.loads(bandwidth.read_text())["summary"][
            "min_bandwidth_fraction"]
        summary["bandwidth_json"] = bandwidth.name
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
        "method": f"tilec's do_bench (CUDA events, median after warm-up, L2 flush "
                  f"{l2_flush!r} before each call) for the tilec kernel object and torch.matmul "
                  "on the fp16 dequantized weight, same process; outputs checked against a "
                  "float32 reference with NaN-poisoned outputs first; floor = packed weight "
                  "bytes / 4.27 TB/s (measured copy); copy_tb_s: a 1 GiB copy under each "
                  f"flush ({', '.join(copies)}; rows' `flushes`: the times after each)",
        "summary": summary, "rows": rows,
    }


def run(out: Path, only: str | None = None, bandwidth: Path | None = None,
        ablation: bool = False, l2_flushes: tuple[str, ...] = ("write",)) -> None:
    """Checks and times every row (those whose label `kernel MxNxK config` matches `only`),
    writing the JSON after each (a run cut short keeps its rows); with `ablation`, the rows
    of each ABLATION variant under its variables, in one process; each row timed after each
    of `l2_flushes`."""
    import torch
    from device_cli import copy_tb_s  # beside this script

    torch.manual_seed(0)
    copies = {flush: copy_tb_s(torch, flush) for flush in l2_flushes}
    print(f"copy TB/s after each flush: {copies}", flush=True)
    rows: list[dict] = []
    for variant, (names, variant_rows) in _variants(only, ablation):
        with _settings(names):
            for name, (m, n, k), config in TIMED:
                if variant_rows and not re.search(variant_rows, _label(name, (m, n, k), config)):
                    continue
                try:
                    rows.append(_row(torch, name, (m, n, k), config, l2_flushes))
                except Exception as error:  # noqa: BLE001 - recorded; the other rows still run
                    rows.append({"kernel": name, "shape": [m, n, k], "config": config,
                                 "passed": False, "error": f"{type(error).__name__}: {error}"})
                    print(f"{name:20} {m}x{n}x{k} {config} failed: {rows[-1]['error']}",
                          flush=True)
                if variant:
                    rows[-1]["variant"] = variant
                record = _record(torch, rows, bandwidth, copies)
                out.write_text(json.dumps(record, indent=1) + "\n")


def _row(torch, name: str, shape: tuple[int, int, int], config: dict,
         l2_flushes: tuple[str, ...]) -> dict:
    """One timed row: checks at CHECKED and at the shape, then tilec and cuBLAS times."""
    m, n, k = shape
    case = CASES[name]
    checks = [{"shape": list(check), "relative_error": _check(case, check, config)}
              for check in CHECKED]
    inputs, weight = case.inputs(torch, m, n, k, "cuda")
    kernel = case.kernel.compile(*inputs, **case.options(config))
    result = kernel.get_profiler().run_poisoned(*inputs)
    error = _relative_error(result, inputs[0].float() @ weight.t())
    dequantized = torch_dequantize(torch, case.fmt, inputs[1:]).float()
    dequant_error = _relative_error(dequantized, weight)
    del dequantized
    flushes = {flush: _time(kernel, inputs, weight.half(), case.fmt, flush)
               for flush in l2_flushes}
    tilec_ms, cublas_ms, dequant_ms = next(iter(flushes.values()))
    del weight
    weight_bytes = case.weight_bytes(n, k)
    moved = weight_bytes + case.extra_bytes(m, n, k)
    floor_us = weight_bytes / (COPY_TB_S * 1e12) * 1e6
    errors = [error] + [c["relative_error"] for c in checks]
    row = {
        "kernel": name, "shape": [m, n, k], "config": config, "relative_error": error,
        "checks": checks, "passed": all(math.isfinite(e) and e < 1e-2 for e in errors),
        "tilec_us": tilec_ms * 1e3, "cublas_fp16_us": cublas_ms * 1e3,
        "speedup_vs_cublas_fp16": cublas_ms / tilec_ms,
        "torch_dequant_matmul_us": dequant_ms * 1e3, "torch_dequant_error": dequant_error,
        "speedup_vs_torch_dequant_matmul": dequant_ms / tilec_ms,
        "tilec_gb_s": moved / (tilec_ms * 1e-3) / 1e9,
        "weight_floor_us": floor_us,
        "fraction_of_weight_floor": floor_us / (tilec_ms * 1e3),
        "flushes": {flush: {"tilec_us": times[0] * 1e3, "cublas_fp16_us": times[1] * 1e3,
                            "torch_dequant_matmul_us": times[2] * 1e3}
                    for flush, times in flushes.items()},
    }
    print(f"{name:20} {m}x{n}x{k} {config} err {max(errors):.1e} tilec "
          f"{row['tilec_us']:7.1f} us ({row['tilec_gb_s']:6.0f} GB/s, "
          f"{row['fraction_of_weight_floor']:.2f} of floor) cuBLAS fp16 "
          f"{row['cublas_fp16_us']:7.1f} us x{row['speedup_vs_cublas_fp16']:.2f} torch "
          f"dequant+matmul {row['torch_dequant_matmul_us']:7.1f} us "
          f"x{row['speedup_vs_torch_dequant_matmul']:.2f}",
          flush=True)
    for flush, times in list(row["flushes"].items())[1:]:
        print(f"    after the {flush!r} flush: tilec {times['tilec_us']:7.1f} us cuBLAS fp16 "
              f"{times['cublas_fp16_us']:7.1f} us", flush=True)
    return row


def main() -> None:
    from device_cli import build_or_run  # beside this script

    def options(build_parser: argparse.ArgumentParser,
                run_parser: argparse.ArgumentParser) -> None:
        build_parser.add_argument("--only", help="a regular expression: compile the rows whose "
                                  "label (kernel MxNxK config) matches")
        run_parser.add_argument("--bandwidth-json", type=Path, help="benchmarks/bandwidth.py's "
                                "JSON of the same device: its min_bandwidth_fraction goes into "
                                "the summary")
        run_parser.add_argument("--only", help="a regular expression: the rows whose label "
                                "(kernel MxNxK config) matches")
        run_parser.add_argument("--l2-flush", choices=L2_FLUSHES, nargs="+", default=["write"],
                                help="the L2 flush before every timed call; several: each row "
                                "timed after each (module docstring)")
        for part in (build_parser, run_parser):
            part.add_argument("--ablation", action="store_true", help="the ABLATION variants' "
                              "rows, each under its variables (--only then matches the "
                              "variants' names)")

    build_or_run(__doc__, "quantized.json",
                 lambda args: build(args.cache_dir, args.only, args.ablation),
                 lambda args: run(args.out, args.only, args.bandwidth_json, args.ablation,
                                  tuple(args.l2_flush)),
                 options)


if __name__ == "__main__":
    main()
