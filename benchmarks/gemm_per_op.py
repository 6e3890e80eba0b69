"""benchmarks/gemm.py's GEMM suite through the per-op path, beside the whole-kernel GEMM and the
library peer, in one process.

Each row's kernel is compiled twice from the same source: with TILEC_PER_OP_GEMMS=1
(lower-gemm-to-tensorcore declines the canonical GEMM, so its gemm lowers where it stands,
plan-wgmma-gemms, the TMA ring of plan-tma-pipelines: "per_op") and with TILEC_PER_OP_GEMMS=0,
as tilec compiles it by default (lower-gemm-to-tensorcore's whole-kernel generator: "matcher").
The variable is part of the cache key, so both kernels sit in one cache. Rows: the fp16 / bf16
shapes of the issue at the config an autotuner over gemm.py's CONFIGS keeps there (tuned
128x256x64; small for 128 rows; narrow at 1024^3) and the quickstart's own config at 8192^3,
against torch.matmul (cuBLAS); transposed layouts (f16 B as N x K, A as K x M; bf16 both) at 4096^3;
fp8 e4m3 / e5m2 (bf16 out) against torch._scaled_mm (unit scales, fast accumulation, as wgmma's
fp32 accumulators; it refuses e5m2 x e5m2, so e5m2 rows time it on A as e4m3, the same bytes;
a peer that fails leaves its reason in the row, "peer_failure"), int8 against torch._int_mm,
tf32 against torch.matmul with tf32 allowed;
e4m3 and int8 with B stored K x N too ("nn": per op only, through transpose-mn-major-operands'
K-major copy, TILEC_TRANSPOSE_MN_MAJOR_OPERANDS=1, on the cp.async pipeline ("per_op") and
with TILEC_RING_TRANSPOSES=1 on the TMA ring ("ring"), beside the kernel without the opt-in,
on CUDA cores ("no_opt_in"); the peers get B column-major, copied untimed). `--only e4m3/nn
s8/nn` runs those rows alone (`f16/nn/tuned/8192x8192x8192`: one row).
Every kernel is checked first against a float64 reference on fresh random inputs with its
output poisoned (NaN; int32's minimum), at the timed shape and at a ragged one; a wrong kernel
is not timed. Timing: tilec's profiler do_bench (CUDA events, median, L2 flushed), the three
contenders in alternating rounds, the median round kept. `--barriers` (build and run
alike) adds a "barriers" contender to the f16 / bf16 rows: the per-op kernel with
TILEC_RING_PRIVATE_TILES=0 and TILEC_FOLD_ACCUMULATOR_CLEARS=0 (consumer block barriers around
the ring loop and between persistent tiles, the accumulator cleared by register moves before
each tile), beside the per-op kernel of the defaults. The f16 register-A row (gemm.py's
matmul_register_a at the tuned config: each K tile copied from shared memory into a fragment,
then T.gemm(A_fragment, B_shared); the whole-kernel GEMM takes this form too, loading A by
ldmatrix per 32-byte K step) times a "steps" contender beside per_op: the per-op kernel with
TILEC_REGISTER_A_STEPS=1 (A's registers loaded per K step, the step's wgmma group left in
flight), and "steps1", the same with TILEC_REGISTER_A_STEP_GROUPS=1 (a step's loads wait
until one group is left, as the whole-kernel GEMM's).

  python benchmarks/gemm_per_op.py build CACHE_DIR                  (compiler machine)
  TILEC_CACHE_DIR=CACHE_DIR python benchmarks/gemm_per_op.py run --out gemm_per_op.json (GPU)
"""

from __future__ import annotations

import datetime
import json
import math
import os
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm import (  # noqa: E402
    CONFIGS,
    TYPE_CONFIGS,
    matmul,
    matmul_register_a,
    matmul_tn,
    matmul_tt,
    matmul_typed,
)
from gemm_device import PERF_SHAPES  # noqa: E402

import tilec.language as T  # noqa: E402

PER_OP = "TILEC_PER_OP_GEMMS"
TRANSPOSE_OPT_IN = "TILEC_TRANSPOSE_MN_MAJOR_OPERANDS"
RING_TRANSPOSES = "TILEC_RING_TRANSPOSES"
PRIVATE_TILES = "TILEC_RING_PRIVATE_TILES"
FOLD_CLEARS = "TILEC_FOLD_ACCUMULATOR_CLEARS"
REGISTER_A_STEPS = "TILEC_REGISTER_A_STEPS"
REGISTER_A_STEP_GROUPS = "TILEC_REGISTER_A_STEP_GROUPS"
PATHS = ("per_op", "matcher")
# per-op kernels under other settings, timed between per_op and matcher: "barriers" on the
# f16 / bf16 rows with --barriers, "steps" on the register-A row; the values each sets
VARIANTS = {"barriers": {PRIVATE_TILES: "0", FOLD_CLEARS: "0"},
            "steps": {REGISTER_A_STEPS: "1"},
            "steps1": {REGISTER_A_STEPS: "1", REGISTER_A_STEP_GROUPS: "1"}}
TRANSPOSE_PATHS = ("per_op", "ring", "no_opt_in")  # an 8-bit / tf32 B stored K x N
ALL_PATHS = (*PATHS, *TRANSPOSE_PATHS[1:], *VARIANTS)
RAGGED_SHAPE = (1000, 1016, 1008)  # rows 16-byte aligned for every type, several K tiles
FP8_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)]
ROUNDS = 3
DEVICE = "cuda"
# torch dtype, tilec element, output, accumulator; tolerance of the relative (Frobenius) error:
# 16-bit output rounding, fp8's exact products summed in f32 then rounded to bf16, tf32's
# 10-bit inputs, int8 exact
TYPES = {
    "f16": ("float16", T.float16, T.float16, T.float32, 1e-2),
    "bf16": ("bfloat16", T.bfloat16, T.bfloat16, T.float32, 2e-2),
    "e4m3": ("float8_e4m3fn", T.float8_e4m3, T.bfloat16, T.float32, 2e-2),
    "e5m2": ("float8_e5m2", T.float8_e5m2, T.bfloat16, T.float32, 2e-2),
    "s8": ("int8", T.int8, T.int32, T.int32, 0.0),
    "tf32": ("float32", T.float32, T.float32, T.float32, 1e-2),
}


@dataclass(frozen=True)
class Row:
    dtype: str
    config: str
    shape: tuple[int, int, int]
    # how A and B are stored, gemm.py's letters: "t" = transposed (A as K x M, B as N x K);
    # 8-bit and tf32 wgmma read "nt" only
    layout: str = ""
    barriers: bool = False  # time the "barriers" path too (--barriers)

    @property
    def stored(self) -> str:
        return self.layout or ("nn" if self.dtype in ("f16", "bf16") else "nt")

    @property
    def transposes_b(self) -> bool:
        """An 8-bit / tf32 B stored K x N: wgmma reads it through transpose-mn-major-operands'
        K-major copy (its opt-in set), a per-op kernel only (the matcher takes no copy)."""
        return self.dtype not in ("f16", "bf16") and self.stored == "nn"

    @property
    def paths(self) -> tuple[str, ...]:
        if self.transposes_b:
            return TRANSPOSE_PATHS
        variants = ("steps", "steps1") * (self.config == "register_a") + \
            ("barriers",) * self.barriers
        return ("per_op", *variants, "matcher")

    @property
    def knobs(self) -> dict:
        return {**CONFIGS, **TYPE_CONFIGS, "register_a": CONFIGS["tuned"]}[self.config]


def best_config(shape: tuple[int, int, int]) -> str:
    """The config gemm.py's suite measured best at the shape (README's table)."""
    if shape[0] <= 128:
        return "small"
    return "narrow" if shape == (1024, 1024, 1024) else "tuned"


# the other types first: a run cut short by its time budget keeps them
ROWS = ([Row("e4m3", "tuned", shape) for shape in FP8_SHAPES]
        + [Row("e5m2", "tuned", FP8_SHAPES[0]), Row("s8", "tuned", FP8_SHAPES[0]),
           Row("tf32", "tf32", FP8_SHAPES[0])]
        + [Row(dtype, "tuned", FP8_SHAPES[0], "nn") for dtype in ("e4m3", "s8")]
        + [Row("f16", "tuned", FP8_SHAPES[0], layout) for layout in ("nt", "tn")]
        + [Row("bf16", "tuned", FP8_SHAPES[0], "tt")]
        + [Row(dtype, best_config(shape), shape) for dtype in ("f16", "bf16")
           for shape in PERF_SHAPES]
        + [Row("f16", "quickstart", (8192, 8192, 8192)), Row("bf16", "quickstart",
                                                               (8192, 8192, 8192))]
        + [Row("f16", "register_a", (8192, 8192, 8192), "nt")])


# checked only, per op: A read from registers (T.copy(A_shared, A_fragment); T.gemm(A_fragment,
# ...)), each type's packing of wgmma's A registers (4 fp8 / int8 elements or 1 tf32 per register)
REGISTER_A_TYPES = ("e4m3", "s8", "tf32")
REGISTER_A_SHAPES = [RAGGED_SHAPE, (2048, 2048, 2048)]


def register_a_kernel(dtype: str, a, b, target: str | None = None):
    _, element, out, accum, _ = TYPES[dtype]
    with path_setting("per_op"):
        return matmul_register_a.compile(a, b, target=target, in_dtype=element, out_dtype=out,
                                         accum_dtype=accum, block_K=32 if dtype == "tf32" else 64)


@contextmanager
def path_setting(path: str, transposes_b: bool = False):
    """The per-op path's switch set to 1 (0 on the "matcher" path) while a kernel is compiled
    or looked up, and with `transposes_b` transpose-mn-major-operands' opt-in (not on the
    "no_opt_in" path; with TILEC_RING_TRANSPOSES on the "ring" one); a variant's settings on
    its path (VARIANTS), the others' cleared."""
    variant = VARIANTS.get(path, {})
    switches = {PER_OP: "0" if path == "matcher" else "1",
                **{setting: variant.get(setting) for settings in VARIANTS.values()
                   for setting in settings},
                TRANSPOSE_OPT_IN: "1" if transposes_b and path != "no_opt_in" else None,
                RING_TRANSPOSES: "1" if transposes_b and path == "ring" else None}
    before = {name: os.environ.pop(name, None) for name in switches}
    os.environ.update({name: value for name, value in switches.items() if value is not None})
    try:
        yield
    finally:
        for name, value in before.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value


def compile_kernel(row: Row, path: str, a, b, target: str | None = None):
    """The row's kernel for operands like `a`, `b` on the given path (and target: the GPU's
    when None)."""
    _, element, out, accum, _ = TYPES[row.dtype]
    with path_setting(path, row.transposes_b):
        if row.config == "register_a":
            return matmul_register_a.compile(a, b, target=target, in_dtype=element,
                                             out_dtype=out, accum_dtype=accum, **row.knobs)
        if row.stored == "nt" or row.transposes_b:
            return matmul_typed.compile(a, b, target=target, in_dtype=element, out_dtype=out,
                                        accum_dtype=accum, b_k_major=row.stored == "nt",
                                        **row.knobs)
        if row.stored == "nn":
            return matmul.compile(a, b, target=target, dtype=element, **row.knobs)
        kernel = {"tn": matmul_tn, "tt": matmul_tt}[row.stored]
        return kernel.compile(a, b, target=target, dtype=element, out_dtype=out, **row.knobs)


def operands(torch, row: Row, shape: tuple[int, int, int], device: str):
    """A and B as the row stores them (A M x K or K x M, B K x N or N x K), random normal
    (int8: uniform over its range)."""
    m, n, k = shape
    torch_type = getattr(torch, TYPES[row.dtype][0])
    a_shape = (k, m) if row.stored[0] == "t" else (m, k)
    b_shape = (n, k) if row.stored[1] == "t" else (k, n)
    if device == "meta":
        return (torch.empty(*a_shape, dtype=torch_type, device="meta"),
                torch.empty(*b_shape, dtype=torch_type, device="meta"))
    if row.dtype == "s8":
        return (torch.randint(-128, 128, a_shape, dtype=torch.int8, device=device),
                torch.randint(-128, 128, b_shape, dtype=torch.int8, device=device))
    return (torch.randn(*a_shape, device=device).to(torch_type),
            torch.randn(*b_shape, device=device).to(torch_type))


def build(cache_dir: Path, only: list[str] = (), barriers: bool = False) -> None:
    import torch

    os.environ["TILEC_CACHE_DIR"] = str(cache_dir.resolve())
    for row in selected(only, barriers):
        for shape in (row.shape, RAGGED_SHAPE):
            for path in row.paths:
                start = time.time()
                kernel = compile_kernel(row, path, *operands(torch, row, shape, "meta"),
                                        target="cuda:sm_90a")
                whole = "tile.tensorcore" in kernel.asm.get("tile-cuda", "")
                if whole != (path == "matcher"):
                    raise RuntimeError(f"{row} {shape} {path}: compiled by the "
                                       f"{'whole-kernel' if whole else 'per-op'} path")
                ptx = kernel.get_kernel_source()
                print(f"{row.dtype:5} {row.stored} {row.config:10} {shape} {path:8} "
                      f"wgmma={'wgmma.mma_async' in ptx} tma={'cp.async.bulk.tensor' in ptx} "
                      f"({time.time() - start:.1f} s)", flush=True)
    for dtype in () if only else REGISTER_A_TYPES:
        for shape in REGISTER_A_SHAPES:
            row = Row(dtype, "register_a", shape)
            kernel = register_a_kernel(dtype, *operands(torch, row, shape, "meta"), "cuda:sm_90a")
            tile_cuda = kernel.asm.get("tile-cuda", "")
            print(f"{dtype:5} register_a {shape} per_op "
                  f"a_registers={'a_registers = true' in tile_cuda}", flush=True)


def as_m_by_k_and_k_by_n(row: Row, a, b):
    """The operands as A (M x K) and B (K x N) views of their stored tensors."""
    return (a.T if row.stored[0] == "t" else a), (b.T if row.stored[1] == "t" else b)


def reference(torch, row: Row, a, b):
    a_mk, b_kn = as_m_by_k_and_k_by_n(row, a.double(), b.double())
    return a_mk @ b_kn


def relative_error(result, expected) -> float:
    return ((result.double() - expected).norm() / expected.norm()).item()


def peer(torch, row: Row, a, b) -> tuple[str, Callable]:
    """The library call computing the same product."""
    a, b_kn = as_m_by_k_and_k_by_n(row, a, b)  # column-major views of transposed ones
    if row.transposes_b:  # cuBLASLt's fp8 / int8 take B column-major: copied, untimed
        b_kn = b_kn.T.contiguous().T
    if row.dtype in ("e4m3", "e5m2"):
        one = torch.ones((), device=a.device, dtype=torch.float32)
        name = "torch._scaled_mm(use_fast_accum=True)"
        if row.dtype == "e5m2":  # it refuses e5m2 x e5m2: the same bytes as e4m3 x e5m2
            a = a.float().to(torch.float8_e4m3fn)
            name = "torch._scaled_mm(use_fast_accum=True) on A as e4m3 (no e5m2 x e5m2)"
        return name, lambda: torch._scaled_mm(
            a, b_kn, one, one, out_dtype=torch.bfloat16, use_fast_accum=True)
    if row.dtype == "s8":
        return "torch._int_mm", lambda: torch._int_mm(a, b_kn)
    if row.dtype == "tf32":
        def tf32_matmul():
            torch.backends.cuda.matmul.allow_tf32 = True
            try:
                return torch.matmul(a, b_kn)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = False
        return "torch.matmul (tf32)", tf32_matmul
    return "torch.matmul (cuBLAS)", lambda: torch.matmul(a, b_kn)


def check(torch, row: Row, path: str, shape: tuple[int, int, int]) -> tuple[float, object]:
    """Relative error of the path's kernel at `shape` (outputs poisoned first), and the
    kernel with its inputs."""
    a, b = operands(torch, row, shape, DEVICE)
    kernel = compile_kernel(row, path, a, b)
    result = kernel.get_profiler().run_poisoned(a, b)
    return relative_error(result, reference(torch, row, a, b)), (kernel, a, b)


def selected(only: list[str], barriers: bool = False) -> list[Row]:
    """The rows `only` names (all when empty), each as the leading parts of
    `dtype/layout/config/MxNxK` (gemm.py's letters: e4m3/nn, f16/nn/quickstart,
    f16/nn/tuned/8192x8192x8192), in the order of the first part naming them (a run cut
    short by its budget keeps the first named); with `barriers`, the f16 / bf16 ones time
    the "barriers" path too."""
    def name(row: Row) -> list[str]:
        return [row.dtype, row.stored, row.config, "x".join(map(str, row.shape))]

    wanted = [prefix.split("/") for prefix in only] or [[]]
    first = {row: next((number for number, parts in enumerate(wanted)
                        if name(row)[:len(parts)] == parts), None) for row in ROWS}
    return [replace(row, barriers=barriers and row.dtype in ("f16", "bf16"))
            for row in sorted((row for row in ROWS if first[row] is not None),
                              key=lambda row: first[row])]


def run(out: Path, budget_s: float, only: list[str] = (), barriers: bool = False) -> None:
    import torch

    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    started = time.time()
    rows = []
    record = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
        "method": "per_op (TILEC_PER_OP_GEMMS=1) and matcher (TILEC_PER_OP_GEMMS=0: the "
                  "whole-kernel generator, the default) kernels "
                  "of one source, and the library peer, timed by tilec's profiler do_bench "
                  f"(CUDA events, median, L2 flushed) in {ROUNDS} alternating rounds, the "
                  "median round kept; every kernel checked against float64 with NaN-poisoned "
                  "outputs at the timed shape and at a ragged one first",
        "rows": rows,
    }
    record["register_a_checks"] = [] if only else register_a_checks(torch)
    out.write_text(json.dumps(record, indent=1) + "\n")
    for row in selected(only, barriers):
        if time.time() - started > budget_s:
            print(f"budget of {budget_s} s spent: {row} and later rows not run", flush=True)
            break
        tolerance = TYPES[row.dtype][4]
        entry = {"dtype": row.dtype, "layout": row.stored, "config": row.config,
                 "shape": list(row.shape),
                 "knobs": row.knobs, "tolerance": tolerance}
        timed = {}
        for path in row.paths:
            try:
                ragged, _ = check(torch, row, path, RAGGED_SHAPE)
                error, timed[path] = check(torch, row, path, row.shape)
            except Exception as failure:  # one kernel failing must not stop the others
                entry[f"{path}_failure"] = f"{type(failure).__name__}: {failure}"[-400:]
                timed.pop(path, None)
                continue
            entry[f"{path}_relative_error"] = error
            entry[f"{path}_ragged_relative_error"] = ragged
            correct = all(math.isfinite(e) and e <= tolerance for e in (error, ragged))
            entry[f"{path}_correct"] = correct
            if not correct:
                timed.pop(path)
        if timed:
            kernel, a, b = next(iter(timed.values()))
            contenders = {path: (lambda k=k, x=x, y=y: k(x, y)) for path, (k, x, y) in
                          timed.items()}
            try:  # a peer the library lacks or refuses leaves the others' times
                entry["peer"], library = peer(torch, row, a, b)
                library()
                torch.cuda.synchronize()
                contenders["peer"] = library
            except Exception as failure:
                entry["peer_failure"] = f"{type(failure).__name__}: {failure}"[-300:]
            profiler = kernel.get_profiler()
            times: dict[str, list[float]] = {key: [] for key in contenders}
            for _ in range(ROUNDS):
                for key, fn in contenders.items():
                    times[key].append(profiler.do_bench(fn, warmup=25, rep=60, input_tensors=[],
                                                        return_mode="median"))
            flops = 2.0 * math.prod(row.shape)
            for key, values in times.items():
                entry[f"{key}_ms"] = sorted(values)[len(values) // 2]
                entry[f"{key}_tflops"] = flops / entry[f"{key}_ms"] / 1e9
            for path in timed:
                if "peer_ms" in entry:
                    entry[f"{path}_ratio_to_peer"] = entry["peer_ms"] / entry[f"{path}_ms"]
            for path in ("per_op", *VARIANTS):
                if "matcher" in timed and path in timed:
                    entry[f"{path}_ratio_to_matcher"] = entry["matcher_ms"] / entry[f"{path}_ms"]
        rows.append(entry)
        print(json.dumps(entry), flush=True)
        out.write_text(json.dumps(record, indent=1) + "\n")  # kept if a later row hangs
        del timed
        torch.cuda.empty_cache()
    record["summary"] = summary(rows)
    record["summary"]["incorrect"] += [f"{c['dtype']} register_a {c['shape']} per_op"
                                       for c in record["register_a_checks"] if not c["correct"]]
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record["summary"], indent=1))


def register_a_checks(torch) -> list[dict]:
    """Relative errors of the register-A kernels (outputs poisoned first)."""
    checks = []
    for dtype in REGISTER_A_TYPES:
        for shape in REGISTER_A_SHAPES:
            row = Row(dtype, "register_a", shape)
            entry = {"dtype": dtype, "shape": list(shape), "tolerance": TYPES[dtype][4]}
            try:
                a, b = operands(torch, row, shape, DEVICE)
                result = register_a_kernel(dtype, a, b).get_profiler().run_poisoned(a, b)
                entry["relative_error"] = relative_error(result, reference(torch, row, a, b))
                entry["correct"] = math.isfinite(entry["relative_error"]) and \
                    entry["relative_error"] <= entry["tolerance"]
            except Exception as failure:  # recorded; the timed rows still run
                entry["failure"] = f"{type(failure).__name__}: {failure}"[-400:]
                entry["correct"] = False
            print(json.dumps(entry), flush=True)
            checks.append(entry)
    return checks


def summary(rows: list[dict]) -> dict:
    """Geomeans of each path's ratio to the peer over the fp16 / bf16 rows at the best config,
    and the lowest; the other rows' ratios by name."""
    out: dict = {}
    suite = [r for r in rows if r["dtype"] in ("f16", "bf16") and r["config"] != "quickstart"
             and r["layout"] == "nn"]
    for path in PATHS:
        ratios = [r[f"{path}_ratio_to_peer"] for r in suite if f"{path}_ratio_to_peer" in r]
        if ratios:
            out[f"{path}_f16_bf16_geomean"] = math.exp(sum(map(math.log, ratios)) / len(ratios))
            out[f"{path}_f16_bf16_lowest"] = min(ratios)
            out[f"{path}_f16_bf16_rows"] = len(ratios)
    for r in rows:
        if r not in suite:
            name = f"{r['dtype']}_{r['layout']}_{r['config']}_{'x'.join(map(str, r['shape']))}"
            keys = [f"{path}_ratio_to_peer" for path in ALL_PATHS] + [
                f"{path}_ratio_to_matcher" for path in ("per_op", *VARIANTS)]
            out[name] = {key: r[key] for key in keys if key in r}
    out["incorrect"] = [f"{r['dtype']} {r['config']} {r['shape']} {p}" for r in rows
                        for p in ALL_PATHS if r.get(f"{p}_correct") is False
                        or f"{p}_failure" in r]
    return out


def main() -> None:
    from device_cli import build_or_run  # beside this script

    def options(build_parser, run_parser) -> None:
        run_parser.add_argument("--budget", type=float, default=120.0,
                                help="seconds after which no further row starts")
        for parser in (build_parser, run_parser):
            parser.add_argument("--only", nargs="*", default=[],
                                help="rows as leading parts of dtype/layout/config/MxNxK "
                                     "(e4m3/nn, f16/nn/quickstart): these alone, no "
                                     "register-A checks")
            parser.add_argument("--barriers", action="store_true",
                                help="f16 / bf16 rows also time the per-op kernel with "
                                     "TILEC_RING_PRIVATE_TILES=0 and "
                                     "TILEC_FOLD_ACCUMULATOR_CLEARS=0 (the 'barriers' path)")

    build_or_run(__doc__, "gemm_per_op.json",
                 lambda args: build(args.cache_dir, args.only, args.barriers),
                 lambda args: run(args.out, args.budget, args.only, args.barriers),
                 options)


if __name__ == "__main__":
    main()
