"""Memory-bound kernels against the memory's speed: row norms, softmax, transpose, elementwise.

Each tilec kernel of examples/norm/ runs beside torch's own op for the same result (rms_norm,
layer_norm, softmax, transpose + contiguous, add, addcmul) and a standard Triton kernel
(benchmarks/bandwidth_triton.py), in one process, at shapes that fill the GPU; TileLang's own
norm examples (norm/rms_norm.py, norm/layernorm.py), compiled by tilec with only their imports
changed, run as further rows. Every tilec output is checked against a float32 reference first,
on outputs poisoned with NaN, at the timed shape and at a ragged one. Times are medians of
CUDA-event timings after warm-up with L2 flushed (tilec.profiler.do_bench); a row kernel runs
in two configurations (2 or 4 16-byte vectors of the row per thread), each checked and timed,
the faster one giving the row (both are listed); bytes are those a
kernel must move (each input read once, each output written once), GB/s = bytes / time, and
`fraction` is GB/s over the H200's measured device-to-device copy bandwidth (4.27 TB/s).

Two halves, as the GPU machine has no MLIR:

  python benchmarks/bandwidth.py build CACHE_DIR [--tilelang-examples DIR]   (compiler machine)
  TILEC_CACHE_DIR=CACHE_DIR python benchmarks/bandwidth.py run --out bandwidth.json     (GPU)

`build` compiles every kernel for sm_90a into CACHE_DIR and reports what its PTX moves memory
with (16-byte global vectors, shuffles, shared memory); TileLang's example files (never part of
this repository) are read from DIR, by default the checkout's `.tlex/examples`, and kept
beside the cache (CACHE_DIR/tilelang/) with their imports rewritten, so `run` finds the same
kernels there.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import tilec.language as T
from tilec.profiler import L2_FLUSHES

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "norm"
COPY_TBPS = 4.27  # the H200's device-to-device copy, read + write counted (shared/baselines)
TILELANG_FILES = ("norm/rms_norm.py", "norm/layernorm.py")
TARGET = "cuda:sm_90a"


def load_module(path: Path, name: str) -> ModuleType:
    """Import a file as module `name` (examples/norm has no package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def example(name: str) -> ModuleType:
    return sys.modules.get(f"norm_{name}") or load_module(EXAMPLES / f"{name}.py", f"norm_{name}")


@dataclass(frozen=True)
class Case:
    """One kernel at one shape and dtype: its inputs, float32 reference, peers and bytes."""

    name: str
    module: str  # the examples/norm file
    kernel: str  # the tilec kernel's name there
    shape: tuple[int, ...]
    dtype: str
    configs: tuple[dict, ...]  # timed each; the first also runs the ragged check
    inputs: Callable  # (torch, shape, dtype, device) -> list of tensors
    reference: Callable  # (*inputs) -> float32 result (a tuple for several outputs)
    torch_op: Callable  # (*inputs) -> torch's own op(s) for the result
    triton: str | None  # bandwidth_triton's run_* function
    check_shape: tuple[int, ...]

    @property
    def label(self) -> str:
        return f"{self.name} {'x'.join(map(str, self.shape))} {self.dtype}"

    def tilec_kernel(self):
        return getattr(example(self.module), self.kernel)

    def kwargs(self, config: dict) -> dict:
        return {"dtype": getattr(T, self.dtype), **config}


def _randn(torch, dtype, device, *sizes, scale=1.0, offset=0.0):
    return (torch.randn(*sizes, device=device) * scale + offset).to(getattr(torch, dtype))


def _rows(torch, shape, dtype, device, vectors=1, residual=False):
    m, n = shape
    tensors = [_randn(torch, dtype, device, m, n, scale=2.0, offset=0.5)]
    if residual:
        tensors.append(_randn(torch, dtype, device, m, n))
    return tensors + [_randn(torch, dtype, device, n) for _ in range(vectors)]


def _rms_ref(x, w, eps=1e-6):
    x = x.float()
    return x * (x.pow(2).mean(-1, keepdim=True) + eps).rsqrt() * w.float()


def _add_rms_ref(x, r, w):
    h = (x.float() + r.float()).to(x.dtype)
    return _rms_ref(h, w), h.float()


def _torch_add_rms(x, r, w):
    import torch

    h = x + r
    return torch.nn.functional.rms_norm(h, (h.shape[-1],), w, 1e-6), h


def _layer_norm_ref(x, w, b):
    import torch

    return torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), w.float(), b.float(), 1e-5)


def _causal_ref(x, softmax=None):
    import torch

    size = x.shape[-1]
    future = torch.ones(size, size, dtype=torch.bool, device=x.device).triu(1)
    scores = x if softmax is not None else x.float()
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)


def _cases() -> list[Case]:
    import torch

    F = torch.nn.functional  # noqa: N806
    norm = dict(inputs=_rows, check_shape=(1000, 3000))
    cases = []
    for shape, dtype in (((16384, 4096), "float16"), ((16384, 8192), "bfloat16")):
        # a row per block, 2 or 4 16-byte vectors of it per thread (two rows per block, the
        # LayerNorm's weight and bias read once for both, measured slower: README)
        row = tuple({"block_M": 1, "threads": shape[1] // (8 * vectors)} for vectors in (2, 4))
        cases += [
            Case("rms_norm", "rms_norm", "rms_norm", shape, dtype, row, reference=_rms_ref,
                 torch_op=lambda x, w: F.rms_norm(x, (x.shape[-1],), w, 1e-6),
                 triton="run_rms_norm", **norm),
            Case("add_rms_norm", "rms_norm", "add_rms_norm", shape, dtype, row,
                 inputs=lambda t, s, d, dev: _rows(t, s, d, dev, residual=True),
                 reference=_add_rms_ref, torch_op=_torch_add_rms, triton="run_add_rms_norm",
                 check_shape=(1000, 3000)),
            Case("layer_norm", "layer_norm", "layer_norm", shape, dtype, row,
                 inputs=lambda t, s, d, dev: _rows(t, s, d, dev, vectors=2),
                 reference=_layer_norm_ref,
                 torch_op=lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
                 triton="run_layer_norm", check_shape=(1000, 3000)),
            Case("softmax", "softmax", "softmax", shape, dtype, row,
                 inputs=lambda t, s, d, dev: _rows(t, s, d, dev, vectors=0),
                 reference=lambda x: torch.softmax(x.float(), -1),
                 torch_op=lambda x: torch.softmax(x, -1), triton="run_softmax",
                 check_shape=(1000, 3000)),
        ]
    cases += [
        Case("causal_softmax", "softmax", "causal_softmax", (4, 4096, 4096), "float16",
             ({"block_M": 1, "threads": 256}, {"block_M": 1, "threads": 128},
              # the masked column blocks not read
              {"block_M": 1, "threads": 256, "parts": 8},
              {"block_M": 1, "threads": 256, "parts": 16}),
             inputs=lambda t, s, d, dev: [_randn(t, d, dev, *s, scale=3.0)],
             reference=_causal_ref, torch_op=lambda x: _causal_ref(x, softmax=True),
             triton="run_causal_softmax", check_shape=(3, 1000, 1000)),
        Case("transpose", "transpose", "transpose", (16384, 8192), "float16",
             ({"block_M": 64, "block_N": 64, "threads": 256},
              {"block_M": 64, "block_N": 64, "threads": 128},
              {"block_M": 128, "block_N": 64, "threads": 256}),
             inputs=lambda t, s, d, dev: [_randn(t, d, dev, *s)],
             reference=lambda x: x.float().t(), torch_op=lambda x: x.t().contiguous(),
             triton="run_transpose", check_shape=(1000, 1500)),
        Case("add", "elementwise", "add", (16384, 8192), "float16",
             ({"block_M": 8, "block_N": 1024, "threads": 256},),
             inputs=lambda t, s, d, dev: [_randn(t, d, dev, *s), _randn(t, d, dev, *s)],
             reference=lambda a, b: a.float() + b.float(), torch_op=torch.add,
             triton="run_add", check_shape=(1000, 3000)),
        Case("scale_shift", "elementwise", "scale_shift", (16384, 8192), "bfloat16",
             ({"block_M": 8, "block_N": 1024, "threads": 256},),
             inputs=lambda t, s, d, dev: [_randn(t, d, dev, *s), _randn(t, d, dev, s[0]),
                                          _randn(t, d, dev, s[1])],
             reference=lambda a, s, t: a.float() * s.float()[:, None] + t.float()[None, :],
             torch_op=lambda a, s, t: torch.addcmul(t, a, s[:, None]),
             triton="run_scale_shift", check_shape=(1000, 3000)),
    ]
    return cases


# ----- TileLang's own norm examples, compiled by tilec ------------------------------------------

@dataclass(frozen=True)
class TileLangCase:
    name: str
    file: str
    shape: tuple[int, ...]
    dtype: str
    compile: Callable  # (module) -> the kernel object
    inputs: Callable  # (torch, device) -> list of tensors
    reference: Callable  # (module, *inputs) -> float32 result
    torch_op: Callable  # (*inputs) -> torch's op for the same result
    outputs: int  # how many of the kernel's results are compared (the first ones)


def _tilelang_cases() -> list[TileLangCase]:
    import torch

    F = torch.nn.functional  # noqa: N806
    m, n = 8192, 8192
    rows, d = 4096, 8192
    return [
        TileLangCase(
            "tilelang rms_norm", "norm/rms_norm.py", (m, n), "float32",
            compile=lambda module: module.rms_norm.compile(M=m, N=n, blk_m=1),
            inputs=lambda t, dev: [t.randn(m, n, device=dev)],
            reference=lambda module, x: module.ref_program(x.float()),
            torch_op=lambda x: F.rms_norm(x, (x.shape[-1],), None, 1e-12), outputs=1),
        TileLangCase(
            "tilelang layernorm", "norm/layernorm.py", (rows, d), "bfloat16",
            compile=lambda module: module._layernorm_fwd(rows, d, eps=1e-5),
            inputs=lambda t, dev: [t.randn(rows, d, device=dev).bfloat16(),
                                   t.randn(d, device=dev).bfloat16(),
                                   t.randn(d, device=dev).bfloat16()],
            reference=lambda module, x, g, b: F.layer_norm(x.float(), (d,), g.float(), b.float(),
                                                           1e-5),
            torch_op=lambda x, g, b: F.layer_norm(x, (d,), g, b, 1e-5), outputs=1),
    ]


def tilelang_module(cache: Path, file: str) -> ModuleType:
    path = cache / "tilelang" / file
    return load_module(path, "tilelang_" + re.sub(r"\W", "_", file.removesuffix(".py")))


def stage_tilelang(examples: Path, cache: Path) -> None:
    """TileLang's example files with only their imports rewritten, kept in CACHE/tilelang."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from tilelang_examples import rewrite_imports

    for file in TILELANG_FILES:
        target = cache / "tilelang" / file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(rewrite_imports((examples / file).read_text()))


# ----- build ---------------------------------------------------------------------------------

def ptx_summary(source: str) -> dict:
    """How a kernel's PTX moves memory: counts of the instructions that matter here."""
    patterns = {"ld.global.v4": r"ld\.global(\.\w+)*\.v4",
                "st.global.v4": r"st\.global(\.\w+)*\.v4",
                "ld.global.scalar": r"ld\.global(\.nc)?\.(b|u|f|s)\d+\s",
                "shfl": r"shfl\.sync", "st.shared": r"st\.shared", "ld.shared": r"ld\.shared",
                "bar.sync": r"bar\.sync"}
    return {name: len(re.findall(pattern, source)) for name, pattern in patterns.items()}


def _meta(case: Case, shape):
    import torch

    return case.inputs(torch, shape, case.dtype, "meta")


def build(cache: Path, examples: Path, only: str | None = None) -> None:
    os.environ["TILEC_CACHE_DIR"] = str(cache.resolve())
    for case in _cases():
        if only and not re.search(only, case.label):
            continue
        runs = [(case.check_shape, case.configs[0])] + [(case.shape, c) for c in case.configs]
        for shape, config in runs:
            kernel = case.tilec_kernel().compile(*_meta(case, shape), target=TARGET,
                                                 **case.kwargs(config))
            print(f"{case.name:15} {shape} {case.dtype} {config}: "
                  f"{ptx_summary(kernel.get_kernel_source())}", flush=True)
    if not examples.is_dir():
        print(f"TileLang's examples not found at {examples}: their rows are left out")
        return
    stage_tilelang(examples, cache)
    os.environ["TILEC_TARGET"] = TARGET
    for case in _tilelang_cases():
        if only and not re.search(only, case.name):
            continue
        kernel = case.compile(tilelang_module(cache, case.file))
        print(f"{case.name:15} {case.shape} {case.dtype}: "
              f"{ptx_summary(kernel.get_kernel_source())}", flush=True)


# ----- run -----------------------------------------------------------------------------------

def _as_tuple(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def _check(results, expected, dtype: str) -> dict:
    """Max abs error and whether every element is within atol + rtol * |expected|."""
    tolerance = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 2e-2}[dtype]
    worst, passed = 0.0, True
    for result, want in zip(_as_tuple(results), _as_tuple(expected), strict=False):
        difference = (result.float() - want.float()).abs()
        worst = max(worst, difference.max().item())
        passed &= bool((difference <= tolerance + tolerance * want.float().abs()).all().item())
    return {"max_abs_error": worst, "passed": passed}


def _timings(bench, inputs, outputs, **fns) -> dict:
    moved = _nbytes(inputs) + _nbytes(outputs)
    row = {"bytes": moved}
    for name, fn in fns.items():
        if fn is None:
            continue
        try:
            ms = bench(fn)
        except Exception as error:  # a peer that fails is recorded, the row goes on
            row[f"{name}_error"] = f"{type(error).__name__}: {error}"[:500]
            continue
        gbps = moved / ms / 1e6
        row.update({f"{name}_us": ms * 1e3, f"{name}_gbps": gbps,
                    f"{name}_fraction": gbps / (COPY_TBPS * 1e3)})
    return row


def run_case(torch, bench, triton_peers, case: Case, peers: bool = True) -> dict:
    """The ragged check with the first config, then each config checked and timed at the
    timed shape; the row's tilec time is the fastest config's (every config is listed)."""
    row = {"kernel": case.name, "shape": list(case.shape), "dtype": case.dtype}
    inputs = case.inputs(torch, case.check_shape, case.dtype, "cuda")
    kernel = case.tilec_kernel().compile(*inputs, **case.kwargs(case.configs[0]))
    checks = [{"shape": list(case.check_shape), "config": case.configs[0],
               **_check(kernel.get_profiler().run_poisoned(*inputs), case.reference(*inputs),
                        case.dtype)}]
    inputs = case.inputs(torch, case.shape, case.dtype, "cuda")
    expected = case.reference(*inputs)
    timed = []
    for config in case.configs:
        kernel = case.tilec_kernel().compile(*inputs, **case.kwargs(config))
        result = kernel.get_profiler().run_poisoned(*inputs)
        checks.append({"shape": list(case.shape), "config": config,
                       **_check(result, expected, case.dtype)})
        timing = _timings(bench, inputs, _as_tuple(result), tilec=lambda kernel=kernel: kernel(
            *inputs))
        timed.append({"config": config, "ptx": ptx_summary(kernel.get_kernel_source()),
                      **{k: v for k, v in timing.items() if k != "bytes"}})
    del expected
    row["checks"] = checks
    row["passed"] = all(check["passed"] for check in checks)
    row["configs"] = timed
    best = min((t for t in timed if "tilec_us" in t), key=lambda t: t["tilec_us"],
               default=timed[0])
    row["config"] = best["config"]
    peer = getattr(triton_peers, case.triton) if triton_peers and case.triton else None
    row.update(_timings(bench, inputs, _as_tuple(result),
                        torch=(lambda: case.torch_op(*inputs)) if peers else None,
                        triton=(lambda: peer(*inputs)) if peer and peers else None))
    row.update({k: v for k, v in best.items() if k.startswith("tilec_") or k == "ptx"})
    return row


def run_tilelang_case(torch, bench, cache: Path, case: TileLangCase, peers: bool = True
                      ) -> dict:
    module = tilelang_module(cache, case.file)
    kernel = case.compile(module)
    inputs = case.inputs(torch, "cuda")
    result = _as_tuple(kernel.get_profiler().run_poisoned(*inputs))
    row = {"kernel": case.name, "file": case.file, "shape": list(case.shape),
           "dtype": case.dtype}
    check = _check(result[:case.outputs], case.reference(module, *inputs), case.dtype)
    row.update(check, ptx=ptx_summary(kernel.get_kernel_source()))
    row.update(_timings(bench, inputs, result, tilec=lambda: kernel(*inputs),
                        torch=(lambda: case.torch_op(*inputs)) if peers else None))
    return row


def _print(row: dict) -> None:
    parts = [f"{row['kernel']:18} {'x'.join(map(str, row['shape'])):15} {row['dtype']:9}"]
    if "error" in row:
        parts.append(f"ERROR {row['error'][:200]}")
    else:
        parts.append("ok " if row["passed"] else "WRONG")
        for name in ("tilec", "torch", "triton"):
            if f"{name}_us" in row:
                parts.append(f"{name} {row[f'{name}_us']:8.1f} us {row[f'{name}_gbps']:6.0f} GB/s"
                             f" ({row[f'{name}_fraction']:.2f})")
    print("  ".join(parts), flush=True)


def run(out: Path, only: str | None, peers: bool, l2_flush: str = "write") -> None:
    import torch
    from device_cli import copy_tb_s  # beside this script

    from tilec.profiler import do_bench

    torch.manual_seed(0)
    copy = copy_tb_s(torch, l2_flush)
    print(f"copy {copy:.2f} TB/s after the {l2_flush!r} flush", flush=True)
    triton_peers = None
    try:
        if peers:
            import bandwidth_triton as triton_peers
    except Exception as error:  # no Triton: the rows go on without it
        print(f"Triton peers unavailable: {error}")
    cache = Path(os.environ.get("TILEC_CACHE_DIR", "")).expanduser()

    def bench(fn) -> float:
        fn()
        torch.cuda.synchronize()
        return do_bench(fn, warmup=25, rep=100, return_mode="median", l2_flush=l2_flush)

    rows: list[dict] = []
    jobs = [(case.label, lambda case=case: run_case(torch, bench, triton_peers, case, peers))
            for case in _cases()]
    if (cache / "tilelang").is_dir():
        jobs += [(case.name, lambda case=case: run_tilelang_case(torch, bench, cache, case,
                                                                    peers))
                 for case in _tilelang_cases()]
    for label, job in jobs:
        if only and not re.search(only, label):
            continue
        try:
            row = job()
        except Exception as error:
            row = {"kernel": label.split()[0], "shape": [], "dtype": "", "error":
                   f"{type(error).__name__}: {error}"[:2000],
                   "traceback": traceback.format_exc()[-4000:]}
        rows.append(row)
        _print(row)
        # after each row: a run stopped early keeps its rows
        write_record(out, torch, rows, l2_flush, copy)
        torch.cuda.empty_cache()


def write_record(out: Path, torch, rows: list[dict], l2_flush: str, copy: float) -> None:
    fractions = [row["tilec_fraction"] for row in rows if "tilec_fraction" in row]
    record = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
        "copy_tbps": COPY_TBPS,
        "method": f"tilec.profiler.do_bench (CUDA events, median after warm-up, L2 flush "
                  f"{l2_flush!r} before each call) for the tilec kernel object, torch's op and "
                  "the Triton peer, same process; tilec outputs checked against a float32 "
                  "reference on NaN-poisoned outputs at the timed shape and a ragged one; bytes "
                  "= inputs read once + outputs written once; copy_tb_s: a 1 GiB copy under "
                  "the same flush",
        "summary": {"min_bandwidth_fraction": min(fractions) if fractions else None,
                    "l2_flush": l2_flush, "copy_tb_s": copy,
                    "all_passed": all(row.get("passed", False) for row in rows)},
        "rows": rows,
    }
    out.write_text(json.dumps(record, indent=1) + "\n")


def main() -> None:
    from device_cli import build_or_run  # beside this script

    def options(build_parser: argparse.ArgumentParser,
                run_parser: argparse.ArgumentParser) -> None:
        build_parser.add_argument("--tilelang-examples", type=Path,
                                  default=ROOT / ".tlex" / "examples")
        build_parser.add_argument("--only", help="a regular expression: compile the rows whose "
                                  "label matches")
        run_parser.add_argument("--only", help="a regular expression: the rows whose label "
                                "matches")
        run_parser.add_argument("--no-peers", action="store_true",
                                help="time tilec's kernels only (no torch or Triton rows)")
        run_parser.add_argument("--l2-flush", choices=L2_FLUSHES, default="write",
                                help="the L2 flush before every timed call (tilec.profiler)")

    build_or_run(__doc__, "bandwidth.json",
                 lambda args: build(args.cache_dir, args.tilelang_examples, args.only),
                 lambda args: run(args.out, args.only, not args.no_peers, args.l2_flush),
                 options)


if __name__ == "__main__":
    main()
