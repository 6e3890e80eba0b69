"""Attention on tilec beside torch SDPA (flash and cuDNN backends) and a Triton kernel.

Forward, fp16, [batch, seq, heads, dim] = 8 x S x 32 x 128 for S from 512 to 16384, causal
and not: tilec's own kernel (examples/attention/flash_fwd.py) and TileLang's
`flash_attention/example_mha_fwd_bshd.py` compiled by tilec with only its imports changed
(at the configuration its main() uses and at TileLang's tuned one), against
torch.nn.functional.scaled_dot_product_attention pinned to its flash and cuDNN backends and
a Triton flash-attention forward written here (the shape of Triton's fused-attention
tutorial: online softmax in base 2, the causal diagonal tile masked apart from the others).
Every implementation runs in the same process, each output checked first (poisoned for the
tilec kernels) against a float32 reference on two (batch, head) slices; times are the median
of CUDA-event timings after warm-up with the L2 flushed (tilec.profiler.do_bench). TFLOP/s
counts 4 * B * H * S^2 * D (half of it causal); ratios are to cuDNN SDPA of the same row.

Two halves, as the GPU machine has no MLIR:

  python benchmarks/attention.py build CACHE_DIR [--examples DIR]    (compiler machine)
  TILEC_CACHE_DIR=CACHE_DIR python benchmarks/attention.py run --out attention.json   (GPU)

`build` compiles every tilec kernel for sm_90a into the cache and copies TileLang's example,
its imports rewritten, into CACHE_DIR/tilelang_examples/ (it never enters the repository);
`run` imports it from there and finds every kernel in the cache.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from tilelang_examples import rewrite_imports  # noqa: E402

DEFAULT_EXAMPLES = Path("/work/main/.tlex/examples")
TILELANG_EXAMPLE = "flash_attention/example_mha_fwd_bshd.py"
BATCH, HEADS, DIM = 8, 32, 128
SEQ_LENS = (512, 1024, 2048, 4096, 8192, 16384)
TARGET = "cuda:sm_90a"
OWN_FORWARD = "tilec flash_fwd"
EXAMPLE_MAIN = "tilelang example (main config)"
# TileLang 0.1.15 running the example itself on this H200, its main() configuration (128 x 128
# blocks, 1 stage, 128 threads), 8 x 32 x 4096 x 128 fp16: TFLOP/s by causal
TILELANG_BASELINE = "/work/shared/baselines/tilelang-0.1.15-h200-2026-11-30.json"
TILELANG_MAIN_CONFIG_TFLOPS = {False: 238.6, True: 208.1}
CHECK_SLICES = ((0, 0), (BATCH - 1, HEADS - 1))  # (batch, head) pairs checked against float32
TOLERANCE = 2e-2  # max abs error of an fp16 attention output against float32


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _cache_dir() -> Path:
    cache = os.environ.get("TILEC_CACHE_DIR")
    if not cache:
        raise SystemExit("set TILEC_CACHE_DIR to the folder `build` filled")
    return Path(cache)


def _tilelang_example() -> ModuleType:
    path = _cache_dir() / "tilelang_examples" / TILELANG_EXAMPLE
    if not path.exists():
        raise FileNotFoundError(f"{path} missing: run `attention.py build` with --examples")
    sys.path.insert(0, str(path.parent))
    return _load(path, "tilelang_example_mha_fwd_bshd")


def _own_forward() -> ModuleType:
    return _load(ROOT / "examples" / "attention" / "flash_fwd.py", "tilec_flash_fwd")


@dataclass(frozen=True)
class TilecForward:
    """A tilec forward kernel: how to compile it for a shape (q, k, v in bshd -> o)."""

    name: str
    compile: Callable[[int, bool], Any]  # (seq_len, causal) -> kernel
    config: dict[str, int] = field(default_factory=dict)


def tilec_forwards() -> list[TilecForward]:
    own = _own_forward().flash_fwd
    example = _tilelang_example().flashattn
    own_config = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}
    main_config = {"block_M": 128, "block_N": 128, "num_stages": 1, "threads": 128}
    tuned_config = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}
    return [
        TilecForward(OWN_FORWARD, lambda s, c: own(BATCH, HEADS, s, DIM, c, **own_config),
                     own_config),
        TilecForward(EXAMPLE_MAIN,
                     lambda s, c: example(BATCH, HEADS, s, DIM, c, **main_config), main_config),
        TilecForward("tilelang example (tuned config)",
                     lambda s, c: example(BATCH, HEADS, s, DIM, c, **tuned_config),
                     tuned_config),
    ]


# tilec's own forward at other tile configurations (S 4096 only, with --ablations): what the
# block shape, pipeline depth and warpgroup count are worth
ABLATIONS = (
    {"block_M": 128, "block_N": 128, "num_stages": 1, "threads": 256},
    {"block_M": 128, "block_N": 128, "num_stages": 3, "threads": 256},
    {"block_M": 128, "block_N": 64, "num_stages": 2, "threads": 256},
    {"block_M": 64, "block_N": 128, "num_stages": 2, "threads": 128},
)
ABLATION_SEQ = 4096


def ablation_forwards() -> list[TilecForward]:
    own = _own_forward().flash_fwd
    return [TilecForward(f"{OWN_FORWARD} ablation", lambda s, c, cfg=config: own(
        BATCH, HEADS, s, DIM, c, **cfg), config) for config in ABLATIONS]


def build(cache_dir: Path, examples: Path, seq_lens: tuple[int, ...]) -> None:
    os.environ["TILEC_CACHE_DIR"] = str(cache_dir.resolve())
    os.environ["TILEC_TARGET"] = TARGET
    source = examples / TILELANG_EXAMPLE
    copy = cache_dir / "tilelang_examples" / TILELANG_EXAMPLE
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(rewrite_imports(source.read_text()))
    jobs = [(forward, seq_len) for forward in tilec_forwards() for seq_len in seq_lens]
    jobs += [(forward, ABLATION_SEQ) for forward in ablation_forwards()]
    for forward, seq_len in jobs:
        for causal in (False, True):
            began = time.perf_counter()
            ptx = forward.compile(seq_len, causal).get_kernel_source()
            print(f"{forward.name:32} {forward.config} S={seq_len:5} causal={causal!s:5} "
                  f"{time.perf_counter() - began:5.1f} s: "
                  f"wgmma={ptx.count('wgmma.mma_async')} "
                  f"tma={'cp.async.bulk.tensor' in ptx} "
                  f"setmaxnreg={'setmaxnreg' in ptx}", flush=True)


# ---------------------------------------------------------------------------------------------
# peers


def _triton_forward() -> Callable:
    """The Triton peer (benchmarks/triton_attention.py), imported only where Triton is."""
    from triton_attention import forward

    return forward


def _sdpa(backend_name: str) -> Callable:
    """SDPA pinned to one backend, on bhsd tensors (its native layout) made once per shape."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = getattr(SDPBackend, backend_name)

    def forward(q, k, v, causal: bool):
        with sdpa_kernel(backend):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return forward


# ---------------------------------------------------------------------------------------------
# run


def _reference(q, k, v, causal: bool, b: int, h: int):
    """The float32 attention output of one (batch, head) of bshd inputs: [seq, dim]."""
    import torch

    qs, ks, vs = (t[b, :, h].float() for t in (q, k, v))
    scores = qs @ ks.T / math.sqrt(qs.shape[-1])
    if causal:
        keep = torch.ones_like(scores, dtype=torch.bool).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    return scores.softmax(-1) @ vs


def _max_error(out_bshd, q, k, v, causal: bool) -> float:
    errors = [(out_bshd[b, :, h].float() - _reference(q, k, v, causal, b, h)).abs().max().item()
              for b, h in CHECK_SLICES]
    return max(errors)


def _flops(seq_len: int, causal: bool) -> float:
    return 4.0 * BATCH * HEADS * seq_len * seq_len * DIM * (0.5 if causal else 1.0)


def _bench(fn: Callable[[], Any]) -> float:
    from tilec.profiler import do_bench

    return do_bench(fn, warmup=25, rep=100, return_mode="median")


class Recorder:
    """Rows written to the JSON as they come, so a run stopped early keeps what it measured."""

    def __init__(self, out: Path, header: dict[str, Any]):
        self.out = out
        self.record = {**header, "forward": [], "summary": {}}

    def add(self, row: dict[str, Any]) -> None:
        self.record["forward"].append(row)
        self.write()

    def write(self) -> None:
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.out.write_text(json.dumps(self.record, indent=1) + "\n")


def _time_row(name: str, kind: str, call: Callable[[], Any], check: Callable[[Any], float],
              seq_len: int, causal: bool, config: dict | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {"impl": name, "kind": kind, "seq_len": seq_len, "causal": causal,
                           "batch": BATCH, "heads": HEADS, "dim": DIM, "dtype": "float16"}
    if config:
        row["config"] = config
    try:
        error = check(call())
        row["max_abs_error"] = error
        row["passed"] = math.isfinite(error) and error < TOLERANCE
        ms = _bench(call)
        row.update(ms=ms, tflops=_flops(seq_len, causal) / ms / 1e9)
    except Exception as exc:  # a peer or kernel that fails here is a row saying why
        row["error"] = f"{type(exc).__name__}: {exc}"[:500]
    return row


def _shape_rows(seq_len: int, causal: bool, forwards: list[TilecForward],
                peers: dict[str, Callable]) -> list[dict[str, Any]]:
    """Every implementation at one shape, on the same random inputs."""
    import torch

    shape = (BATCH, seq_len, HEADS, DIM)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
    qt, kt, vt = (t.transpose(1, 2).contiguous() for t in (q, k, v))  # bhsd for SDPA

    def check(result_bshd) -> float:
        return _max_error(result_bshd, q, k, v, causal)

    rows = []
    for name, forward in peers.items():
        if name.startswith("sdpa"):
            rows.append(_time_row(name, "peer", partial(forward, qt, kt, vt, causal),
                                  lambda out: check(out.transpose(1, 2)), seq_len, causal))
        else:
            rows.append(_time_row(name, "peer", partial(forward, q, k, v, causal), check,
                                  seq_len, causal))
    for forward in forwards:
        try:
            kernel = forward.compile(seq_len, causal)
            poisoned = kernel.get_profiler().run_poisoned(q, k, v)
            rows.append(_time_row(forward.name, "tilec", partial(kernel, q, k, v),
                                  lambda _, p=poisoned: check(p), seq_len, causal,
                                  forward.config))
        except Exception as exc:  # a kernel that fails to load is a row saying why
            rows.append({"impl": forward.name, "kind": "tilec", "seq_len": seq_len,
                         "causal": causal, "error": f"{type(exc).__name__}: {exc}"[:500]})
    cudnn = next((r for r in rows if r["impl"] == "sdpa cudnn" and "ms" in r), None)
    for row in rows:
        if cudnn is not None and "ms" in row:
            row["ratio_to_cudnn"] = cudnn["ms"] / row["ms"]
    return rows


def run(out: Path, seq_lens: tuple[int, ...], budget_s: float, peers: tuple[str, ...],
        ablations: bool) -> None:
    import torch

    began = time.perf_counter()
    torch.manual_seed(0)
    recorder = Recorder(out, {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
        "method": "one process; each output checked against float32 on (batch, head) slices "
                  f"{list(CHECK_SLICES)} (tilec outputs NaN-poisoned first), then "
                  "tilec.profiler.do_bench: CUDA events, median after warm-up, L2 flushed; "
                  "TFLOP/s = 4*B*H*S^2*D (x0.5 causal); ratio = cuDNN SDPA ms / ms",
    })
    forwards = tilec_forwards()
    peer_calls = {"sdpa cudnn": _sdpa("CUDNN_ATTENTION"), "sdpa flash": _sdpa("FLASH_ATTENTION")}
    if "triton" in peers:
        try:
            peer_calls["triton"] = _triton_forward()
        except ImportError as exc:
            recorder.record["triton_error"] = str(exc)
    shapes = [(seq_len, causal, forwards, peer_calls) for seq_len in seq_lens
              for causal in (False, True)]
    if ablations:
        shapes += [(ABLATION_SEQ, causal, ablation_forwards(), {}) for causal in (False, True)]
    for seq_len, causal, kernels, peers in shapes:
        if time.perf_counter() - began > budget_s:
            recorder.record["stopped"] = f"budget of {budget_s} s spent before S={seq_len}"
            break
        for row in _shape_rows(seq_len, causal, kernels, peers):
            recorder.add(row)
            print(f"S={seq_len:5} causal={causal!s:5} {row['impl']:32} "
                  + (f"{row['tflops']:6.1f} TF/s x{row.get('ratio_to_cudnn', 0):.2f} "
                     f"err {row['max_abs_error']:.1e}" if "tflops" in row
                     else row.get("error", "?")), flush=True)
        torch.cuda.empty_cache()
    recorder.record["summary"] = summary(recorder.record["forward"])
    recorder.record["seconds"] = time.perf_counter() - began
    recorder.write()


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """fwd_d128_vs_cudnn: the lowest ratio to cuDNN of tilec's own forward over S >= 4096,
    causal and not; tilelang_example_vs_tilelang: TileLang's example through tilec at its
    main() configuration over TileLang 0.1.15's own time for it (S 4096, the lower of causal
    and not; TileLang's numbers from TILELANG_BASELINE, not this run)."""
    own = [r["ratio_to_cudnn"] for r in rows if r["impl"] == OWN_FORWARD
           and r["seq_len"] >= 4096 and "ratio_to_cudnn" in r and r.get("passed")]
    example = {r["causal"]: r["tflops"] / TILELANG_MAIN_CONFIG_TFLOPS[r["causal"]]
               for r in rows if r["impl"] == EXAMPLE_MAIN and r["seq_len"] == 4096
               and r.get("passed")}
    return {"fwd_d128_vs_cudnn": min(own) if own else None,
            "tilelang_example_vs_tilelang": min(example.values()) if len(example) == 2 else None,
            "tilelang_baseline": TILELANG_BASELINE}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    build_parser = sub.add_parser("build")
    build_parser.add_argument("cache_dir", type=Path)
    build_parser.add_argument("--examples", type=Path, default=DEFAULT_EXAMPLES,
                              help="TileLang's examples folder (its example is copied from here)")
    run_parser = sub.add_parser("run")
    run_parser.add_argument("--out", type=Path, default=Path("attention.json"))
    run_parser.add_argument("--budget", type=float, default=float("inf"),
                            help="seconds after which no new shape is started")
    run_parser.add_argument("--no-triton", action="store_true")
    run_parser.add_argument("--ablations", action="store_true",
                            help=f"also tilec's forward at ABLATIONS (S {ABLATION_SEQ})")
    for p in (build_parser, run_parser):
        p.add_argument("--seq-lens", type=lambda s: tuple(int(x) for x in s.split(",")),
                       default=SEQ_LENS)
    args = parser.parse_args()
    if args.command == "build":
        build(args.cache_dir, args.examples, args.seq_lens)
    else:
        run(args.out, args.seq_lens, args.budget, () if args.no_triton else ("triton",),
            args.ablations)


if __name__ == "__main__":
    main()
