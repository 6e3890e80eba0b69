"""Attention's loop opt-ins timed in interleaved rounds, so a variant's ratio comes with its noise.

benchmarks/attention.py times each row once, and a variant's row against a cuDNN timing taken
earlier in the run; one H100 run gave the rotated flash_fwd d128 0.71x cuDNN and TileLang's
example, whose rotated loop is the same SASS up to scheduling (nvdisasm: 16 HGMMA, the same
waits, all 66 MUFU.EX2 between them, 0 spills), 0.90x. Here every implementation of a shape is
timed once per round, cuDNN SDPA included, in an order shifted by one each round, so clock
drift and position fall on all of them alike, and each ratio is to the same round's cuDNN.

Shapes: 8 x 32 heads x S 4096, fp16, d 128 and 64, causal and not (`--seq-lens`, `--dims`: d
256 too). Implementations: cuDNN SDPA; tilec's flash_fwd (examples/attention/flash_fwd.py,
attention.py's tiles for its head dimension) plain (the default: rotated loop, denormals
flushed), rotated alone (TILEC_FAST_MATH_FTZ=0), denormals flushed alone
(TILEC_ROTATE_ATTENTION_LOOP=0) and neither (both =0: the loop before that default, the plain
row of the run at b3c290d, whose rounds made it the default), or the attention.VARIANTS
`--variants` names; at d 128 TileLang's example_mha_fwd_bshd.py (tuned config) compiled by
tilec, the same. Every output is checked against float32 first (tilec's NaN-poisoned), as
attention.py does.

With `--backward` the shapes are the backward's (d 128, `--seq-lens`, causal and not, and
`--kv-heads` for grouped queries) and the implementations cuDNN SDPA's backward (autograd of
its forward's output, the forward not timed) and attention.OWN_BACKWARDS: tilec's backward as
two kernels (dK / dV, then dQ), with dQ added by atomics from the dK / dV kernel, and that
with TILEC_DEFER_PIPELINE_GEMM_WAITS=1, each gradient checked against float32 autograd first
(attention.backward_rows' check); vs_plain is then a row over the two-kernel one.

    python benchmarks/attention_rounds.py build CACHE_DIR [--examples DIR] [SHAPE OPTIONS]
    TILEC_CACHE_DIR=CACHE_DIR python benchmarks/attention_rounds.py run --out FILE [--rounds 3]
        [SHAPE OPTIONS]     (the same SHAPE OPTIONS: --seq-lens, --dims, --variants,
                             --backward, --kv-heads)

The JSON holds each row's milliseconds and ratio per round and a summary per row: the median
ratio, its spread (largest minus smallest over the rounds) and the median of the per-round
ratios to the same shape's plain flash_fwd (or plain example).
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import attention  # noqa: E402
from attention import (  # noqa: E402
    OWN_BACKWARD,
    OWN_BACKWARDS,
    OWN_FORWARD,
    TilecForward,
    tilec_forwards,
    with_variant,
)

SEQ_LENS = (4096,)
DIMS = (128, 64)
CUDNN = "sdpa cudnn"
EXAMPLE = "tilelang example (tuned config)"
# attention.VARIANTS' suffixes timed here beside each plain kernel unless --variants names others
SUFFIXES = (" (rotated loop)", " (denormals flushed)", " (neither rotated nor flushed)")
OWN_CONFIG = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}


def forwards(dim: int, suffixes: tuple[str, ...] = SUFFIXES, main_config: bool = False
             ) -> list[TilecForward]:
    """The tilec kernels timed at head dimension `dim`: each plain and with `suffixes`; with
    `main_config` TileLang's example at its main() configuration too."""
    own = attention._own_forward().flash_fwd
    config = attention.HEAD_DIM_CONFIGS.get(dim, OWN_CONFIG)  # attention.py's tiles at d 256
    plain = [TilecForward(OWN_FORWARD, lambda s, c: own(
        attention.BATCH, attention.HEADS, s, dim, c, **config), config, dim)]
    if dim == attention.DIM:
        examples = (EXAMPLE, attention.EXAMPLE_MAIN) if main_config else (EXAMPLE,)
        plain += [f for f in tilec_forwards() if f.name in examples]
    return [variant for forward in plain
            for variant in [forward, *(with_variant(forward, s) for s in suffixes)]]


def plain_name(name: str) -> str:
    """The row `name` is a variant of (itself for a plain row)."""
    if name in OWN_BACKWARDS:
        return OWN_BACKWARD
    for suffix in attention.VARIANTS:
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def round_order(names: list[str], number: int) -> list[str]:
    """Round `number`'s timing order: `names` shifted left by `number`."""
    shift = number % len(names)
    return names[shift:] + names[:shift]


def timed_rounds(calls: dict[str, Callable[[], Any]], rounds: int) -> dict[str, list[float]]:
    """Each call's milliseconds per round, the calls timed in round_order's shifted order."""
    timings: dict[str, list[float]] = {name: [] for name in calls}
    for number in range(rounds):
        for name in round_order(list(calls), number):
            timings[name].append(attention._bench(calls[name]))
    return timings


def summarize(timings: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Per row, from its milliseconds per round (each shape's rows have one per round): the
    median ratio to the round's cuDNN, its spread over the rounds, and the median ratio to the
    round's plain row of the same kernel."""
    cudnn = timings[CUDNN]
    summary = {}
    for name, ms in timings.items():
        ratios = [base / value for base, value in zip(cudnn, ms, strict=True)]
        plain = timings[plain_name(name)]
        summary[name] = {
            "ratio_to_cudnn": statistics.median(ratios),
            "spread": max(ratios) - min(ratios),
            "vs_plain": statistics.median(p / value for p, value in zip(plain, ms, strict=True)),
        }
    return summary


def build(cache_dir: Path, examples: Path, seq_lens: tuple[int, ...] = SEQ_LENS,
          dims: tuple[int, ...] = DIMS, suffixes: tuple[str, ...] = SUFFIXES,
          main_config: bool = False, backward: bool = False,
          kv_heads: tuple[int, ...] = (attention.HEADS,)) -> None:
    """Compile every kernel `run` times into `cache_dir` (with TileLang's example copied)."""
    os.environ["TILEC_CACHE_DIR"] = str(cache_dir.resolve())
    os.environ["TILEC_TARGET"] = attention.TARGET
    if backward:
        for seq_len, causal, heads_kv in _backward_shapes(seq_lens, kv_heads):
            for name in OWN_BACKWARDS:
                kernels = attention.backward_kernels(seq_len, causal, heads_kv, name)
                print(f"{name} S={seq_len} causal={causal} kv heads {heads_kv}: wgmma=" + "/".join(
                    str(k.get_kernel_source().count("wgmma.mma_async")) for k in kernels),
                    flush=True)
        return
    copy = cache_dir / "tilelang_examples" / attention.TILELANG_EXAMPLE
    copy.parent.mkdir(parents=True, exist_ok=True)
    source = examples / attention.TILELANG_EXAMPLE
    copy.write_text(attention.rewrite_imports(source.read_text()))
    for seq_len in seq_lens:
        for dim in dims:
            for forward in forwards(dim, suffixes, main_config):
                for causal in (False, True):
                    ptx = forward.compile(seq_len, causal).get_kernel_source()
                    print(f"{forward.name} S={seq_len} d={dim} causal={causal}: "
                          f"wgmma={ptx.count('wgmma.mma_async')}", flush=True)


def _shape(seq_len: int, dim: int, causal: bool, rounds: int, suffixes: tuple[str, ...],
           main_config: bool) -> list[dict[str, Any]]:
    """One shape's rows: every implementation checked, then timed in `rounds` rounds."""
    import torch

    shape = (attention.BATCH, seq_len, attention.HEADS, dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
    qt, kt, vt = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    sdpa = attention._sdpa("CUDNN_ATTENTION")
    calls: dict[str, Callable[[], Any]] = {CUDNN: lambda: sdpa(qt, kt, vt, causal)}
    errors = {CUDNN: attention._max_error(calls[CUDNN]().transpose(1, 2), q, k, v, causal)}
    for forward in forwards(dim, suffixes, main_config):
        kernel = forward.compile(seq_len, causal)
        poisoned = kernel.get_profiler().run_poisoned(q, k, v)
        errors[forward.name] = attention._max_error(poisoned, q, k, v, causal)
        calls[forward.name] = lambda kernel=kernel: kernel(q, k, v)
    names = list(calls)
    timings = timed_rounds(calls, rounds)
    summary = summarize(timings)
    rows = []
    for name in names:
        row = {"impl": name, "seq_len": seq_len, "dim": dim, "causal": causal,
               "max_abs_error": errors[name], "passed": errors[name] < attention.TOLERANCE,
               "ms": timings[name], "tflops": attention._flops(seq_len, causal, dim) / 1e9
               / statistics.median(timings[name]), **summary[name]}
        rows.append(row)
        print(f"S={seq_len} d={dim:3} causal={causal!s:5} {name:52} "
              f"{row['tflops']:6.1f} TF/s x{row['ratio_to_cudnn']:.3f} cuDNN "
              f"(spread {row['spread']:.3f}) x{row['vs_plain']:.3f} plain  ms "
              + " ".join(f"{ms:.3f}" for ms in timings[name])
              + ("" if row["passed"] else f"  FAILED err {errors[name]:.2e}"), flush=True)
    return rows


def _backward_shapes(seq_lens: tuple[int, ...], kv_heads: tuple[int, ...]
                     ) -> list[tuple[int, bool, int]]:
    """(S, causal, K / V heads) of the backward rounds, MHA first."""
    return [(seq_len, causal, heads_kv) for heads_kv in kv_heads for seq_len in seq_lens
            for causal in (False, True)]


def _backward_shape(seq_len: int, causal: bool, heads_kv: int, rounds: int
                    ) -> list[dict[str, Any]]:
    """One backward shape's rows: cuDNN SDPA's backward and OWN_BACKWARDS, each checked
    against float32 autograd, then timed in `rounds` rounds."""
    import torch

    batch, heads, dim = attention.BATCH, attention.HEADS, attention.DIM
    q, do = (torch.randn(batch, seq_len, heads, dim, device="cuda", dtype=torch.float16)
             for _ in range(2))
    k, v = (torch.randn(batch, seq_len, heads_kv, dim, device="cuda", dtype=torch.float16)
            for _ in range(2))
    forward = attention._sdpa("CUDNN_ATTENTION")
    qt, kt, vt = (t.transpose(1, 2).contiguous().requires_grad_() for t in (q, k, v))
    out = forward(qt, kt, vt, causal)
    dot = do.transpose(1, 2).contiguous()

    def cudnn():
        return torch.autograd.grad(out, (qt, kt, vt), dot, retain_graph=True)
    calls: dict[str, Callable[[], Any]] = {CUDNN: cudnn}
    errors = {CUDNN: attention._grad_errors([g.transpose(1, 2) for g in cudnn()], q, k, v, do,
                                            causal)}
    for name in OWN_BACKWARDS:
        own = attention.tilec_backward(
            name, attention.backward_kernels(seq_len, causal, heads_kv, name), causal,
            q, k, v, do)
        errors[name] = attention._grad_errors(own.grads, q, k, v, do, causal)
        calls[name] = own.call
    names = list(calls)
    timings = timed_rounds(calls, rounds)
    summary = summarize(timings)
    flops = attention._backward_flops(seq_len, causal)
    rows = []
    for name in names:
        row = {"impl": name, "seq_len": seq_len, "dim": dim, "causal": causal,
               "heads_kv": heads_kv, "max_rel_error": errors[name],
               "passed": errors[name] < attention.TOLERANCE, "ms": timings[name],
               "tflops": flops / 1e9 / statistics.median(timings[name]), **summary[name]}
        rows.append(row)
        print(f"backward S={seq_len} kv heads {heads_kv:2} causal={causal!s:5} {name:36} "
              f"{row['tflops']:6.1f} TF/s x{row['ratio_to_cudnn']:.3f} cuDNN "
              f"(spread {row['spread']:.3f}) x{row['vs_plain']:.3f} plain  ms "
              + " ".join(f"{ms:.3f}" for ms in timings[name])
              + ("" if row["passed"] else f"  FAILED rel err {errors[name]:.2e}"), flush=True)
    return rows


def run(out: Path, rounds: int, seq_lens: tuple[int, ...] = SEQ_LENS,
        dims: tuple[int, ...] = DIMS, suffixes: tuple[str, ...] = SUFFIXES,
        main_config: bool = False, backward: bool = False,
        kv_heads: tuple[int, ...] = (attention.HEADS,)) -> None:
    import json

    import torch

    torch.manual_seed(0)
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rounds": rounds,
              "method": "one process; per shape each implementation checked against float32 "
                        "(tilec's outputs NaN-poisoned), then timed once per round "
                        "(tilec.profiler.do_bench, median of CUDA events, L2 flushed) in an "
                        "order shifted by one each round; ratios to the same round's cuDNN",
              "rows": []}
    for seq_len, causal, heads_kv in _backward_shapes(seq_lens, kv_heads) if backward else ():
        record["rows"] += _backward_shape(seq_len, causal, heads_kv, rounds)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(record, indent=1) + "\n")
        torch.cuda.empty_cache()
    for dim in () if backward else dims:  # the first head dimension's shapes first
        for seq_len in seq_lens:
            for causal in (False, True):
                record["rows"] += _shape(seq_len, dim, causal, rounds, suffixes, main_config)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(record, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    build_parser = modes.add_parser("build")
    build_parser.add_argument("cache_dir", type=Path)
    build_parser.add_argument("--examples", type=Path, default=attention.DEFAULT_EXAMPLES)
    run_parser = modes.add_parser("run")
    run_parser.add_argument("--out", type=Path, required=True)
    run_parser.add_argument("--rounds", type=int, default=3)
    for each in (build_parser, run_parser):
        each.add_argument("--seq-lens", type=_ints, default=SEQ_LENS)
        each.add_argument("--dims", type=_ints, default=DIMS)
        each.add_argument("--variants", type=_suffixes, default=SUFFIXES,
                          help="comma-separated keys of attention.VARIANTS (default: "
                          + ",".join(_key(s) for s in SUFFIXES) + ")")
        each.add_argument("--main-config", action="store_true",
                          help="also TileLang's example at its main() configuration (d 128)")
        each.add_argument("--backward", action="store_true",
                          help="the backward's shapes and implementations instead (d 128)")
        each.add_argument("--kv-heads", type=_ints, default=(attention.HEADS,),
                          help="K / V head counts of the backward's shapes (grouped below "
                          f"{attention.HEADS})")
    args = parser.parse_args()
    shapes = {"seq_lens": args.seq_lens, "dims": args.dims, "suffixes": args.variants,
              "main_config": args.main_config, "backward": args.backward,
              "kv_heads": args.kv_heads}
    if args.mode == "build":
        build(args.cache_dir, args.examples, **shapes)
    else:
        run(args.out, args.rounds, **shapes)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(","))


def _key(suffix: str) -> str:
    return attention.VARIANTS[suffix][1]


def _suffixes(text: str) -> tuple[str, ...]:
    """The attention.VARIANTS suffixes of comma-separated summary keys."""
    by_key = {key: suffix for suffix, (_, key) in attention.VARIANTS.items()}
    unknown = [key for key in text.split(",") if key not in by_key]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown variants {unknown}; known: {list(by_key)}")
    return tuple(by_key[key] for key in text.split(","))


if __name__ == "__main__":
    main()
