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
counts 4 * B * H * S^2 * D (half of it causal); ratios are to cuDNN SDPA of the same shape.
`--ablations` (to `build` and `run`) adds tilec's forward at other tile configurations and with
its loop's two gemms alone (no softmax) at S 4096: what the configuration and the softmax cost.

Decode: one query token per sequence against a KV cache (examples/attention/flash_decode.py:
split-KV, then the combine), 32 query heads on 8 KV heads, d 128, beside SDPA (GQA), in
microseconds and GB/s of the cache read against the 4.27 TB/s a device copy reaches.

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
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from device_cli import compile_settings  # noqa: E402
from tilelang_examples import rewrite_imports  # noqa: E402

import tilec  # noqa: E402
import tilec.language as T  # noqa: E402
from tilec.errors import TilecError  # noqa: E402

DEFAULT_EXAMPLES = ROOT / ".tlex" / "examples"  # as benchmarks/tilelang_examples.py extracts them
TILELANG_EXAMPLE = "flash_attention/example_mha_fwd_bshd.py"
BATCH, HEADS, DIM = 8, 32, 128
SEQ_LENS = (512, 1024, 2048, 4096, 8192, 16384)
TARGET = "cuda:sm_90a"
OWN_FORWARD = "tilec flash_fwd"
EXAMPLE_MAIN = "tilelang example (main config)"
# TileLang 0.1.15 running the example itself on this H200, its main() configuration (128 x 128
# blocks, 1 stage, 128 threads), 8 x 32 x 4096 x 128 fp16: TFLOP/s by causal
TILELANG_BASELINE = "tilelang-0.1.15-h200-2026-11-30.json (peer baselines, same H200)"
TILELANG_MAIN_CONFIG_TFLOPS = {False: 238.6, True: 208.1}
CHECK_SLICES = ((0, 0), (BATCH - 1, HEADS - 1))  # (batch, head) pairs checked against float32
TOLERANCE = 2e-2  # max abs error of an fp16 attention output against float32
SECTIONS = ("forward", "backward", "decode", "mla")


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


def _copy_example(examples: Path, cache_dir: Path, example: str) -> None:
    """TileLang's `example` (a path under its examples folder), its imports rewritten to
    tilec's, into CACHE_DIR/tilelang_examples/ (never into the repository)."""
    copy = cache_dir / "tilelang_examples" / example
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(rewrite_imports((examples / example).read_text()))


def _example_copy(example: str) -> ModuleType:
    """The copy `build` made of TileLang's `example`, imported."""
    path = _cache_dir() / "tilelang_examples" / example
    if not path.exists():
        raise FileNotFoundError(f"{path} missing: run `attention.py build` with --examples")
    sys.path.insert(0, str(path.parent))
    return _load(path, "tilelang_" + Path(example).stem)


def _tilelang_example() -> ModuleType:
    return _example_copy(TILELANG_EXAMPLE)


def _own_forward() -> ModuleType:
    return _load(ROOT / "examples" / "attention" / "flash_fwd.py", "tilec_flash_fwd")


@dataclass(frozen=True)
class TilecForward:
    """A tilec forward kernel: how to compile it for a shape (q, k, v in bshd -> o)."""

    name: str
    compile: Callable[[int, bool], Any]  # (seq_len, causal) -> kernel
    config: dict[str, int] = field(default_factory=dict)
    dim: int = DIM


# the compiler's settings beside its default: the same sources compiled with them are rows of
# their own, named with the variant's suffix (the variables are part of the cache key, so
# `build` and `run` both set them around these compiles only): the consumers' ping-pong
# (plan-warpgroup-pingpong), P V left in flight into the next iteration (overlap-ring-gemms),
# and both, each on the loop as written; the loop rotated by one gemm, Q K^T of tile k issued
# before P V of tile k - 1 (rotate-attention-loop), and fast math flushing f32 denormals (one
# MUFU.EX2 per exp2, as nvcc's --use_fast_math), each alone and both. Both together are the
# default on sm_90a under fast math, so the plain row is that, and "neither" is the loop before
# that default; the ping-pong on that default loop (a turn of both gemms: FlashAttention-3's
# schedule) is "rotated loop, ping-pong"; on that default loop O's rescale one iteration
# later, right after Q K^T's issue and under its wgmmas (rotate-attention-loop's
# rescale_under_qk), is "O rescaled under Q K^T"
PINGPONG = "TILEC_WARPGROUP_PINGPONG"
OVERLAP = "TILEC_OVERLAP_RING_GEMMS"
ROTATE = "TILEC_ROTATE_ATTENTION_LOOP"
FTZ = "TILEC_FAST_MATH_FTZ"
RESCALE = "TILEC_RESCALE_UNDER_QK"
AS_WRITTEN = {ROTATE: "0", FTZ: "0"}  # the measured defaults off
VARIANTS = {  # suffix -> (variables set, summary key suffix)
    " (warpgroup ping-pong)": ({**AS_WRITTEN, PINGPONG: "1"}, "pingpong"),
    " (P V in flight)": ({**AS_WRITTEN, OVERLAP: "1"}, "overlap"),
    " (P V in flight, ping-pong)": ({**AS_WRITTEN, OVERLAP: "1", PINGPONG: "1"},
                                    "overlap_pingpong"),
    " (rotated loop)": ({ROTATE: "1", FTZ: "0"}, "rotate"),
    " (denormals flushed)": ({ROTATE: "0", FTZ: "1"}, "ftz"),
    " (rotated loop, denormals flushed)": ({ROTATE: "1", FTZ: "1"}, "rotate_ftz"),
    " (neither rotated nor flushed)": (AS_WRITTEN, "as_written"),
    " (rotated loop, ping-pong)": ({ROTATE: "1", FTZ: "1", PINGPONG: "1"}, "rotate_pingpong"),
    " (O rescaled under Q K^T)": ({RESCALE: "1"}, "rescale_under_qk"),
}
VARIANT_SEQS = (4096, 8192)  # the sequence lengths the variants' rows run at
ALL_VARIANTS = tuple(key for _, key in VARIANTS.values())


def with_variant(forward: TilecForward, suffix: str) -> TilecForward:
    """`forward` compiled with the settings of VARIANTS[suffix]."""
    def compile_with_settings(seq_len: int, causal: bool) -> Any:
        with compile_settings(VARIANTS[suffix][0]):
            return forward.compile(seq_len, causal)
    return TilecForward(forward.name + suffix, compile_with_settings, forward.config, forward.dim)


def with_variants(forward: TilecForward, keys: tuple[str, ...] = ALL_VARIANTS
                  ) -> list[TilecForward]:
    """`forward` with each variant whose summary key is among `keys`."""
    return [with_variant(forward, suffix) for suffix, (_, key) in VARIANTS.items()
            if key in keys]


def tilec_forwards() -> list[TilecForward]:
    own = _own_forward().flash_fwd
    example = _tilelang_example().flashattn
    own_config = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}
    main_config = {"block_M": 128, "block_N": 128, "num_stages": 1, "threads": 128}
    tuned_config = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}
    forwards = [
        TilecForward(OWN_FORWARD, lambda s, c: own(BATCH, HEADS, s, DIM, c, **own_config),
                     own_config),
        TilecForward(EXAMPLE_MAIN,
                     lambda s, c: example(BATCH, HEADS, s, DIM, c, **main_config), main_config),
        TilecForward("tilelang example (tuned config)",
                     lambda s, c: example(BATCH, HEADS, s, DIM, c, **tuned_config),
                     tuned_config),
    ]
    return forwards


THREE_SLOTS = {"block_M": 128, "block_N": 128, "num_stages": 3, "threads": 256}


def variant_forwards(seq_len: int, keys: tuple[str, ...] = ALL_VARIANTS
                     ) -> list[TilecForward]:
    """tilec's flash_fwd with each of VARIANTS opted in; at the first of VARIANT_SEQS also
    TileLang's tuned example with each, and flash_fwd at three stages alone and with the
    ping-pong: overlap-ring-gemms deepens the two-stage ring to three, so these tell the slot
    from the overlap."""
    forwards = tilec_forwards()
    if seq_len != VARIANT_SEQS[0]:
        return with_variants(forwards[0], keys)
    own = _own_forward().flash_fwd
    three = TilecForward(OWN_FORWARD + " (3 stages)", lambda s, c: own(
        BATCH, HEADS, s, DIM, c, **THREE_SLOTS), THREE_SLOTS)
    return with_variants(forwards[0], keys) + with_variants(forwards[2], keys) + [three] + [
        with_variant(three, " (warpgroup ping-pong)")] * ("pingpong" in keys)


# tilec's own forward at other tile configurations (S 4096 only, with --ablations): what the
# block shape, pipeline depth and warpgroup count are worth
ABLATIONS = (
    {"block_M": 128, "block_N": 128, "num_stages": 1, "threads": 256},
    {"block_M": 128, "block_N": 128, "num_stages": 3, "threads": 256},
    {"block_M": 128, "block_N": 64, "num_stages": 2, "threads": 256},
    {"block_M": 64, "block_N": 128, "num_stages": 2, "threads": 128},
)
ABLATION_SEQ = 4096


GEMMS_ONLY = "ablation: the loop's two gemms alone"


@tilec.jit(out_idx=[3])
def gemms_only(batch, heads, seq_len, dim, is_causal, block_M=128, block_N=128, num_stages=2,
               threads=256):
    """flash_fwd's loop without its softmax (P = S cast to fp16): what the gemms, copies and
    their pipeline cost alone. Not attention; its output is not checked."""
    shape = [batch, seq_len, heads, dim]

    @T.prim_func
    def main(Q: T.Tensor(shape, "float16"), K: T.Tensor(shape, "float16"),
             V: T.Tensor(shape, "float16"), Output: T.Tensor(shape, "float16")):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], "float16")
            K_shared = T.alloc_shared([block_N, dim], "float16")
            V_shared = T.alloc_shared([block_N, dim], "float16")
            O_shared = T.alloc_shared([block_M, dim], "float16")
            scores = T.alloc_fragment([block_M, block_N], "float32")
            probs = T.alloc_fragment([block_M, block_N], "float16")
            acc_o = T.alloc_fragment([block_M, dim], "float32")
            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            key_tiles = T.ceildiv(seq_len, block_N)
            if is_causal:
                key_tiles = T.min(key_tiles, T.ceildiv((bx + 1) * block_M, block_N))
            for k in T.Pipelined(key_tiles, num_stages=num_stages):
                T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
                T.clear(scores)
                T.gemm(Q_shared, K_shared, scores, transpose_B=True)
                T.copy(scores, probs)
                T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], V_shared)
                T.gemm(probs, V_shared, acc_o)
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])

    return main


def ablation_forwards() -> list[TilecForward]:
    own = _own_forward().flash_fwd
    return [TilecForward(f"{OWN_FORWARD} ablation", lambda s, c, cfg=config: own(
        BATCH, HEADS, s, DIM, c, **cfg), config) for config in ABLATIONS] + [
        TilecForward(GEMMS_ONLY, lambda s, c: gemms_only(BATCH, HEADS, s, DIM, c))]


# tilec's own forward at the other head dimensions (S 4096), against the peers at the same
# dimension: d 256 takes 64-key tiles (its output accumulator alone is 128 registers a thread)
HEAD_DIM_CONFIGS = {
    64: {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256},
    256: {"block_M": 128, "block_N": 64, "num_stages": 2, "threads": 256},
}
HEAD_DIM_SEQ = 4096


def head_dim_forwards(variants: tuple[str, ...] = ALL_VARIANTS) -> list[TilecForward]:
    own = _own_forward().flash_fwd
    forwards = [TilecForward(OWN_FORWARD, lambda s, c, d=dim, cfg=config: own(
        BATCH, HEADS, s, d, c, **cfg), config, dim) for dim, config in HEAD_DIM_CONFIGS.items()]
    return forwards + [variant for forward in forwards
                       for variant in with_variants(forward, variants)]


def build(cache_dir: Path, examples: Path, seq_lens: tuple[int, ...],
          sections: tuple[str, ...] = SECTIONS, ablations: bool = False,
          head_dims: bool = True, variants: tuple[str, ...] = ALL_VARIANTS) -> None:
    os.environ["TILEC_CACHE_DIR"] = str(cache_dir.resolve())
    os.environ["TILEC_TARGET"] = TARGET
    jobs = []
    if "forward" in sections:
        _copy_example(examples, cache_dir, TILELANG_EXAMPLE)
        jobs = [(forward, seq_len) for forward in tilec_forwards() for seq_len in seq_lens]
        jobs += [(forward, seq_len) for seq_len in VARIANT_SEQS if seq_len in seq_lens
                 and variants for forward in variant_forwards(seq_len, variants)]
        jobs += [(forward, ABLATION_SEQ) for forward in ablation_forwards() if ablations]
        jobs += [(forward, HEAD_DIM_SEQ) for forward in head_dim_forwards(variants)
                 if head_dims]
    for shape in DECODE_SHAPES if "decode" in sections else ():
        ptx = _decode_kernel(shape).get_kernel_source()
        print(f"{OWN_DECODE} {shape}: wgmma={ptx.count('wgmma.mma_async')} "
              f"tma={'cp.async.bulk.tensor' in ptx}", flush=True)
    if "mla" in sections:
        _copy_example(examples, cache_dir, TILELANG_MLA_EXAMPLE)
    for shape in MLA_SHAPES if "mla" in sections else ():
        kernels = {OWN_MLA + suffix: _mla_kernel(shape, suffix) for suffix in MLA_VARIANTS}
        kernels[TILELANG_MLA] = _tilelang_mla_kernel(shape)
        for name, kernel in kernels.items():
            ptx = kernel.get_kernel_source()
            print(f"{name} {shape}: wgmma={ptx.count('wgmma.mma_async')} "
                  f"cp.async={ptx.count('cp.async.cg')} "
                  f"tma={ptx.count('cp.async.bulk.tensor')}", flush=True)
    for seq_len in _backward_seq_lens(seq_lens) if "backward" in sections else ():
        for causal in (False, True):
            began = time.perf_counter()
            gqa = (HEADS, BACKWARD_GQA[1]) if seq_len == BACKWARD_GQA[0] else (HEADS,)
            for name in OWN_BACKWARDS:
                kernels = [kernel for heads_kv in gqa
                           for kernel in backward_kernels(seq_len, causal, heads_kv, name)[2:]]
                print(f"{name} S={seq_len} causal={causal} "
                      f"{time.perf_counter() - began:5.1f} s: wgmma=" + "/".join(
                          str(k.get_kernel_source().count("wgmma.mma_async")) for k in kernels),
                      flush=True)
    for forward, seq_len in jobs:
        for causal in (False, True):
            began = time.perf_counter()
            label = (f"{forward.name:32} {forward.config} d={forward.dim} S={seq_len:5} "
                     f"causal={causal!s:5}")
            try:
                ptx = forward.compile(seq_len, causal).get_kernel_source()
            except TilecError as exc:  # the run reports the missing kernel as its row's error
                print(f"{label} not built: {exc}", flush=True)
                continue
            print(f"{label} {time.perf_counter() - began:5.1f} s: "
                  f"wgmma={ptx.count('wgmma.mma_async')} tma={'cp.async.bulk.tensor' in ptx} "
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
            return torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=causal, enable_gqa=k.shape[1] != q.shape[1])

    return forward


# ---------------------------------------------------------------------------------------------
# decode

COPY_TBPS = 4.27  # device-to-device copy on the H200, read + write (/work/shared/baselines)
DECODE_SHAPES = ({"batch": 16, "heads": 32, "heads_kv": 8, "seqlen_kv": 8192, "dim": 128},
                 {"batch": 4, "heads": 32, "heads_kv": 8, "seqlen_kv": 32768, "dim": 128})
DECODE_CONFIG = {"num_split": 8, "block_N": 64, "num_stages": 2}
OWN_DECODE = "tilec flash_decode"


def _own_decode() -> ModuleType:
    return _load(ROOT / "examples" / "attention" / "flash_decode.py", "tilec_flash_decode")


def _decode_kernel(shape: dict[str, int]) -> Any:
    return _own_decode().flash_decode(shape["batch"], shape["heads"], shape["heads_kv"],
                                      shape["seqlen_kv"], shape["dim"], **DECODE_CONFIG)


def _decode_bytes(shape: dict[str, int]) -> int:
    """What a decode step must read and write: the whole K and V cache, Q and O."""
    cache = 2 * shape["batch"] * shape["seqlen_kv"] * shape["heads_kv"] * shape["dim"]
    return 2 * (cache + 2 * shape["batch"] * shape["heads"] * shape["dim"])


def decode_rows(shape: dict[str, int], peers: bool) -> list[dict[str, Any]]:
    """tilec's split-KV decode (full caches, the lengths still read from cache_seqlens) and
    SDPA on the same step, checked against float32 (tilec's output poisoned first)."""
    import torch

    decode = _own_decode()
    batch, heads, heads_kv, seqlen, dim = (shape[k] for k in (
        "batch", "heads", "heads_kv", "seqlen_kv", "dim"))
    q = torch.randn(batch, heads, dim, device="cuda", dtype=torch.float16)
    k = torch.randn(batch, seqlen, heads_kv, dim, device="cuda", dtype=torch.float16)
    v = torch.randn(batch, seqlen, heads_kv, dim, device="cuda", dtype=torch.float16)
    lengths = torch.full((batch,), seqlen, dtype=torch.int32, device="cuda")
    expected = decode.reference(q, k, v, lengths)
    calls = {}
    if peers:
        qt = q.unsqueeze(2)  # [batch, heads, 1, dim]
        kt, vt = (t.transpose(1, 2).contiguous() for t in (k, v))

        def sdpa():
            return torch.nn.functional.scaled_dot_product_attention(
                qt, kt, vt, enable_gqa=True).squeeze(2)
        calls["sdpa"] = (sdpa, None)
    try:
        kernel = _decode_kernel(shape)
        calls[OWN_DECODE] = (partial(kernel, q, k, v, lengths),
                             kernel.get_profiler().run_poisoned(q, k, v, lengths))
    except Exception as exc:  # a kernel that fails to load is a row saying why
        calls[OWN_DECODE] = (None, exc)
    rows = []
    for name, (call, first) in calls.items():
        row: dict[str, Any] = {"impl": name, **shape}
        if name == OWN_DECODE:
            row["config"] = DECODE_CONFIG
        try:
            if isinstance(first, Exception):
                raise first
            result = call() if first is None else first
            error = (result.float() - expected).abs().max().item()
            row.update(max_abs_error=error, passed=math.isfinite(error) and error < TOLERANCE)
            ms = _bench(call)
            gbps = _decode_bytes(shape) / ms / 1e6
            row.update(us=ms * 1e3, gb_per_s=gbps, fraction_of_copy=gbps / (COPY_TBPS * 1e3))
        except Exception as exc:  # a peer that cannot run this is a row saying why
            row["error"] = f"{type(exc).__name__}: {exc}"[:500]
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------
# MLA decode

OWN_MLA = "tilec mla_decode"
MLA_SHAPES = ({"batch": 64, "heads": 128, "seqlen_kv": 4096, "num_split": 1},
              {"batch": 64, "heads": 128, "seqlen_kv": 4096, "num_split": 2})
MLA_PAGE = 64
TABLE_LOADS = "TILEC_PIPELINE_TABLE_LOADS"
SPLIT_N = "TILEC_SPLIT_WGMMA_N"
# the example's tilings and the compiler settings they need, each a row of its own: suffix ->
# (settings, mla_decode's keyword arguments, summary key suffix). The default is a block per
# half of the latent columns (128 threads), its pages on a TMA ring (pipeline-async-copies'
# table loads: the producer loads the block table again); the same with synchronous page
# copies (table loads off); a block for all 512 columns over two warpgroups (the scores once
# per head group, each warpgroup an N share: split-N wgmma)
MLA_VARIANTS = {
    "": ({}, {"threads": 128}, ""),
    " (synchronous pages)": ({TABLE_LOADS: "0"}, {"threads": 128}, "_synchronous"),
    " (whole rows)": ({SPLIT_N: "1"}, {"threads": 256}, "_whole_rows"),
}


def _own_mla() -> ModuleType:
    return _load(ROOT / "examples" / "attention" / "mla_decode.py", "tilec_mla_decode")


def _mla_kernel(shape: dict[str, int], suffix: str = "") -> Any:
    """tilec's MLA decode at `shape`, compiled as MLA_VARIANTS[suffix] says."""
    variables, config, _ = MLA_VARIANTS[suffix]
    pages = math.ceil(shape["seqlen_kv"] / MLA_PAGE)
    with compile_settings(variables):
        return _own_mla().mla_decode(shape["batch"], shape["heads"], shape["batch"] * pages,
                                     pages, MLA_PAGE, shape["num_split"], **config)


# TileLang's paged MLA decode example (64 heads a block over 256 threads, all 512 columns, as
# the whole-rows tiling) compiled by tilec with the opt-ins its gemms and pages need; it takes
# the latent and rotary parts of Q and of the cache as separate tensors
TILELANG_MLA_EXAMPLE = "deepseek_mla/example_mla_decode_paged.py"
TILELANG_MLA = "tilelang example_mla_decode_paged (split-N)"
TILELANG_MLA_OPT_INS = {SPLIT_N: "1"}


def _tilelang_mla_kernel(shape: dict[str, int]) -> Any:
    example = _example_copy(TILELANG_MLA_EXAMPLE)
    with compile_settings(TILELANG_MLA_OPT_INS):
        return example.mla_decode_tilelang(
            shape["batch"], shape["heads"], 1, shape["seqlen_kv"], 512, 64, 64, 64,
            shape["num_split"], MLA_PAGE, 576 ** -0.5)


def _tilelang_mla_call(shape: dict[str, int], q, kv, table, lengths) -> Callable[[], Any]:
    """The example's kernel on the benchmark's paged cache: the latent and rotary columns as
    the separate [tokens, 1, D] tensors it reads (page p's tokens at rows 64 p ...)."""
    import torch

    kernel = _tilelang_mla_kernel(shape)
    rows = kv.shape[0] * kv.shape[1]
    q_nope, q_pe = q[..., :512].contiguous(), q[..., 512:].contiguous()
    kv_nope = kv[..., :512].reshape(rows, 1, 512).contiguous()
    k_pe = kv[..., 512:].reshape(rows, 1, 64).contiguous()
    glse = torch.empty(shape["batch"], shape["heads"], shape["num_split"], device=q.device,
                       dtype=q.dtype)
    partial_out = torch.empty(shape["batch"], shape["heads"], shape["num_split"], 512,
                              device=q.device, dtype=q.dtype)
    return partial(kernel, q_nope, q_pe, kv_nope, k_pe, table, lengths, glse, partial_out)


def _mla_flops(shape: dict[str, int]) -> float:
    """Scores over the 576 columns and P V over the 512: 2 * (576 + 512) per head and token."""
    return 2.0 * shape["batch"] * shape["heads"] * shape["seqlen_kv"] * (576 + 512)


def mla_rows(shape: dict[str, int]) -> list[dict[str, Any]]:
    """tilec's MLA decode (each of MLA_VARIANTS) and TileLang's paged example through tilec
    over full caches of seqlen_kv tokens in randomly ordered pages, all on the same inputs,
    checked against float32 (outputs poisoned); GB/s counts the cache read once, Q and O;
    TFLOP/s the two products (at 128 heads the tensor cores bound it before the bytes do: 73
    GFLOP at batch 64 x 4096 is 110 us at 660 TFLOP/s, the bytes 71 us at the copy's 4.27
    TB/s)."""
    import torch

    mla = _own_mla()
    kv, table = mla.paged_cache(shape["batch"], shape["seqlen_kv"], MLA_PAGE, "cuda")
    q = torch.randn(shape["batch"], shape["heads"], mla.LATENT + mla.ROPE, device="cuda",
                    dtype=torch.float16)
    lengths = torch.full((shape["batch"],), shape["seqlen_kv"], dtype=torch.int32,
                         device="cuda")
    expected = mla.reference(q, kv, table, lengths)
    calls: dict[str, tuple[dict[str, str], dict[str, int], Callable[[], Callable]]] = {
        OWN_MLA + suffix: (variables, config, lambda s=suffix: partial(
            _mla_kernel(shape, s), q, kv, table, lengths))
        for suffix, (variables, config, _) in MLA_VARIANTS.items()}
    calls[TILELANG_MLA] = (TILELANG_MLA_OPT_INS, {"threads": 256}, lambda: _tilelang_mla_call(
        shape, q, kv, table, lengths))
    rows = []
    for name, (variables, config, make) in calls.items():
        row: dict[str, Any] = {"impl": name, **shape, "page_size": MLA_PAGE,
                               "config": config, "settings": variables}
        try:
            call = make()
            out = call.func.get_profiler().run_poisoned(*call.args)
            error = (out.float() - expected).abs().max().item()
            row.update(max_abs_error=error, passed=math.isfinite(error) and error < TOLERANCE)
            ms = _bench(call)
            moved = 2 * (kv.numel() + q.numel() + out.numel())
            gbps = moved / ms / 1e6
            row.update(us=ms * 1e3, gb_per_s=gbps, fraction_of_copy=gbps / (COPY_TBPS * 1e3),
                       tflops=_mla_flops(shape) / ms / 1e9)
        except Exception as exc:  # a kernel that fails to load or run is a row saying why
            row["error"] = f"{type(exc).__name__}: {exc}"[:500]
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------
# backward

OWN_BACKWARD = "tilec flash_bwd"
# dQ added by atomics from the dK / dV kernel: five gemms per tile pair where the default's two
# kernels take seven (examples/attention/flash_bwd.py flash_bwd_fused)
OWN_BACKWARD_FUSED = "tilec flash_bwd (dQ by atomics)"
# the same with its gemms' wgmma groups left in flight until used (defer-pipeline-gemm-waits)
OWN_BACKWARD_DEFERRED = "tilec flash_bwd (dQ by atomics, deferred waits)"
# backward -> (the COMPILE_SETTINGS its dK / dV kernel is compiled with, summary key suffix)
OWN_BACKWARDS = {OWN_BACKWARD: ({}, ""), OWN_BACKWARD_FUSED: ({}, "_dq_atomics"),
                 OWN_BACKWARD_DEFERRED: ({"TILEC_DEFER_PIPELINE_GEMM_WAITS": "1"},
                                         "_dq_atomics_deferred_waits")}
BACKWARD_SEQ_LENS = (4096, 8192)
BACKWARD_GQA = (4096, 8)  # a grouped-query row: S 4096, K and V with 8 heads (4 queries each)
BACKWARD_CONFIG = {"block_M": 128, "block_N": 64, "num_stages": 2, "threads": 256}
BACKWARD_CHECK_SLICES = ((0, 0), (BATCH - 1, HEADS - 1))


def _backward_seq_lens(seq_lens: tuple[int, ...]) -> tuple[int, ...]:
    """The backward's sequence lengths among those asked for (--seq-lens)."""
    return tuple(s for s in BACKWARD_SEQ_LENS if s in seq_lens)


def _own_backward() -> ModuleType:
    sys.path.insert(0, str(ROOT / "examples" / "attention"))
    return _load(ROOT / "examples" / "attention" / "flash_bwd.py", "tilec_flash_bwd")


def backward_kernels(seq_len: int, causal: bool, heads_kv: int = HEADS, name: str = OWN_BACKWARD
                     ) -> list[Any]:
    """Every tilec kernel the backward `name` (OWN_BACKWARDS) runs: the forward (O and LSE),
    the backward's preprocess, then the dK / dV kernel and the dQ kernel, or for the others
    the dK / dV kernel adding dQ by atomics (compiled with the backward's settings) and dQ's
    conversion (K and V with `heads_kv` heads)."""
    bwd = _own_backward()
    own_config = {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}
    shape = (BATCH, HEADS, seq_len, DIM, causal)
    kernels = [_own_forward().flash_fwd(*shape, heads_kv, **own_config),
               bwd.flash_bwd_preprocess(BATCH, HEADS, seq_len, DIM)]
    if name != OWN_BACKWARD:
        with compile_settings(OWN_BACKWARDS[name][0]):
            fused = bwd.flash_bwd_fused(*shape, heads_kv=heads_kv, **BACKWARD_CONFIG)
        return kernels + [fused, bwd.flash_bwd_dq_convert(BATCH, HEADS, seq_len, DIM)]
    return kernels + [bwd.flash_bwd(*shape, heads_kv=heads_kv, **BACKWARD_CONFIG),
                      bwd.flash_bwd_dq(*shape, heads_kv=heads_kv, **BACKWARD_CONFIG)]


class TilecBackward(NamedTuple):
    """One tilec backward ready to time: its gradients from NaN-poisoned outputs, the call
    timed (preprocess to dQ), each kernel's own call by its row key, the forward's O check."""
    grads: tuple[Any, Any, Any]
    call: Callable[[], Any]
    kernel_calls: dict[str, Callable[[], Any]]
    forward_max_abs_error: float


def tilec_backward(name: str, kernels: list[Any], causal: bool, q, k, v, do) -> TilecBackward:
    """Runs the forward and the backward `name`'s kernels (backward_kernels) on q, k, v, do,
    every output poisoned first. A fused backward's float32 dQ sum is zeroed in each timed
    call (its kernel's own call adds on: the time is the same)."""
    import torch

    fwd, pre, main, last = kernels
    o, lse = fwd.get_profiler().run_poisoned(q, k, v)
    delta = pre.get_profiler().run_poisoned(o, do)
    if name != OWN_BACKWARD:
        # run_poisoned runs a kernel twice: dK and dV from that, the sum from a call of its own
        dk, dv = main.get_profiler().run_poisoned(q, k, v, do, lse, delta,
                                                  torch.zeros(q.shape, device=q.device))
        dq_sum = torch.zeros(q.shape, device=q.device)
        main(q, k, v, do, lse, delta, dq_sum)
        dq = last.get_profiler().run_poisoned(dq_sum)

        def grads():
            delta = pre(o, do)
            dq_sum.zero_()
            dk, dv = main(q, k, v, do, lse, delta, dq_sum)
            return last(dq_sum), dk, dv
        kernel_calls = {"dkdv_dq_kernel_ms": partial(main, q, k, v, do, lse, delta, dq_sum),
                        "dq_convert_kernel_ms": partial(last, dq_sum)}
    else:
        dk, dv = main.get_profiler().run_poisoned(q, k, v, do, lse, delta)
        dq = last.get_profiler().run_poisoned(q, k, v, do, lse, delta)

        def grads():
            delta = pre(o, do)
            return last(q, k, v, do, lse, delta), *main(q, k, v, do, lse, delta)
        kernel_calls = {"dkdv_kernel_ms": partial(main, q, k, v, do, lse, delta),
                        "dq_kernel_ms": partial(last, q, k, v, do, lse, delta)}
    return TilecBackward((dq, dk, dv), grads, kernel_calls,
                         _max_error(o, q, k, v, causal))


def _backward_flops(seq_len: int, causal: bool) -> float:
    """Five S x S x D matmuls (QK^T, dP = dO V^T, dV, dK, dQ): 2.5 times the forward's."""
    return 2.5 * _flops(seq_len, causal)


def _grad_errors(grads_bshd, q, k, v, do, causal: bool) -> float:
    """The largest error of dQ, dK, dV on BACKWARD_CHECK_SLICES against float32 autograd,
    relative to the largest magnitude of that gradient."""
    import torch

    worst = 0.0
    groups = q.shape[2] // k.shape[2]
    for b, h in BACKWARD_CHECK_SLICES:
        # a KV head's gradients sum over its group's query heads: all of them enter
        heads = range(h - h % groups, h - h % groups + groups)
        qs = q[b, :, heads.start:heads.stop].float().requires_grad_()
        ks, vs = (t[b, :, h // groups].float().requires_grad_() for t in (k, v))
        scores = torch.einsum("qhd,kd->hqk", qs, ks) / math.sqrt(DIM)
        if causal:
            keep = torch.ones_like(scores[0], dtype=torch.bool).tril()
            scores = scores.masked_fill(~keep, float("-inf"))
        out = torch.einsum("hqk,kd->qhd", scores.softmax(-1), vs)
        out.backward(do[b, :, heads.start:heads.stop].float())
        got_q, got_k, got_v = grads_bshd
        for got, want in ((got_q[b, :, heads.start:heads.stop], qs.grad),
                          (got_k[b, :, h // groups], ks.grad), (got_v[b, :, h // groups], vs.grad)):
            error = (got.float() - want).abs().max().item()
            worst = max(worst, error / want.abs().max().item())
    return worst


def backward_rows(seq_len: int, causal: bool, peers: bool, heads_kv: int = HEADS
                  ) -> list[dict[str, Any]]:
    """tilec's backward (its three kernels) beside SDPA's backward on the
    cuDNN and flash backends (autograd.grad of the forward's output, the forward not timed),
    all checked against float32 on two (batch, head) slices (tilec's outputs poisoned); K and
    V with `heads_kv` heads (grouped-query attention below HEADS)."""
    import torch

    shape = (BATCH, seq_len, HEADS, DIM)
    q, do = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(2))
    k, v = (torch.randn(BATCH, seq_len, heads_kv, DIM, device="cuda", dtype=torch.float16)
            for _ in range(2))
    calls: dict[str, Any] = {}
    if peers:
        for backend in ("CUDNN_ATTENTION", "FLASH_ATTENTION"):
            forward = _sdpa(backend)
            qt, kt, vt = (t.transpose(1, 2).contiguous().requires_grad_() for t in (q, k, v))
            out = forward(qt, kt, vt, causal)
            dot = do.transpose(1, 2).contiguous()

            def sdpa_grads(out=out, inputs=(qt, kt, vt), dot=dot):
                return torch.autograd.grad(out, inputs, dot, retain_graph=True)
            calls[f"sdpa {backend.split('_')[0].lower()}"] = sdpa_grads
    rows = []
    for name, call in calls.items():
        row: dict[str, Any] = {"impl": name, "kind": "peer", "seq_len": seq_len,
                               "causal": causal, "dim": DIM, "heads_kv": heads_kv}
        try:
            grads = [g.transpose(1, 2) for g in call()]
            error = _grad_errors(grads, q, k, v, do, causal)
            row.update(max_rel_error=error, passed=math.isfinite(error) and error < TOLERANCE)
            ms = _bench(call)
            row.update(ms=ms, tflops=_backward_flops(seq_len, causal) / ms / 1e9)
        except Exception as exc:  # a backend that cannot run this shape is a row saying why
            row["error"] = f"{type(exc).__name__}: {exc}"[:500]
        rows.append(row)
    for name in OWN_BACKWARDS:
        row = {"impl": name, "kind": "tilec", "seq_len": seq_len, "causal": causal,
               "dim": DIM, "heads_kv": heads_kv, "config": BACKWARD_CONFIG}
        try:
            own = tilec_backward(name, backward_kernels(seq_len, causal, heads_kv, name), causal,
                                 q, k, v, do)
            row["forward_max_abs_error"] = own.forward_max_abs_error
            error = _grad_errors(own.grads, q, k, v, do, causal)
            row.update(max_rel_error=error, passed=math.isfinite(error) and error < TOLERANCE)
            ms = _bench(own.call)
            row.update(ms=ms, tflops=_backward_flops(seq_len, causal) / ms / 1e9)
            row.update({key: _bench(call) for key, call in own.kernel_calls.items()})
        except Exception as exc:  # a kernel that fails to load or run is a row saying why
            row["error"] = f"{type(exc).__name__}: {exc}"[:500]
        rows.append(row)
    fastest = min((r["ms"] for r in rows if r["kind"] == "peer" and r.get("passed")),
                  default=None)
    for r in rows:
        if fastest is not None and "ms" in r:
            r["ratio_to_sdpa"] = fastest / r["ms"]
    return rows


# ---------------------------------------------------------------------------------------------
# run


def _reference(q, k, v, causal: bool, b: int, h: int):
    """The float32 attention output of one (batch, head) of bshd inputs: [seq, dim]."""
    import torch

    groups = q.shape[2] // k.shape[2]  # grouped queries: query head h reads KV head h / groups
    qs, ks, vs = q[b, :, h].float(), k[b, :, h // groups].float(), v[b, :, h // groups].float()
    scores = qs @ ks.T / math.sqrt(qs.shape[-1])
    if causal:
        keep = torch.ones_like(scores, dtype=torch.bool).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    return scores.softmax(-1) @ vs


def _max_error(out_bshd, q, k, v, causal: bool) -> float:
    if isinstance(out_bshd, tuple | list):  # tilec's flash_fwd returns (O, LSE)
        out_bshd = out_bshd[0]
    errors = [(out_bshd[b, :, h].float() - _reference(q, k, v, causal, b, h)).abs().max().item()
              for b, h in CHECK_SLICES]
    return max(errors)


def _flops(seq_len: int, causal: bool, dim: int = DIM) -> float:
    return 4.0 * BATCH * HEADS * seq_len * seq_len * dim * (0.5 if causal else 1.0)


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
              seq_len: int, causal: bool, config: dict | None = None, dim: int = DIM
              ) -> dict[str, Any]:
    row: dict[str, Any] = {"impl": name, "kind": kind, "seq_len": seq_len, "causal": causal,
                           "batch": BATCH, "heads": HEADS, "dim": dim, "dtype": "float16"}
    if config:
        row["config"] = config
    try:
        if name == GEMMS_ONLY:
            call()
        else:
            error = check(call())
            row["max_abs_error"] = error
            row["passed"] = math.isfinite(error) and error < TOLERANCE
        ms = _bench(call)
        row.update(ms=ms, tflops=_flops(seq_len, causal, dim) / ms / 1e9)
    except Exception as exc:  # a peer or kernel that fails here is a row saying why
        row["error"] = f"{type(exc).__name__}: {exc}"[:500]
    return row


def _shape_rows(seq_len: int, causal: bool, forwards: list[TilecForward],
                peers: dict[str, Callable], dim: int = DIM) -> list[dict[str, Any]]:
    """Every implementation at one shape, on the same random inputs."""
    import torch

    shape = (BATCH, seq_len, HEADS, dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
    qt, kt, vt = (t.transpose(1, 2).contiguous() for t in (q, k, v))  # bhsd for SDPA

    def check(result_bshd) -> float:
        return _max_error(result_bshd, q, k, v, causal)

    rows = []
    for name, forward in peers.items():
        if name.startswith("sdpa"):
            rows.append(_time_row(name, "peer", partial(forward, qt, kt, vt, causal),
                                  lambda out: check(out.transpose(1, 2)), seq_len, causal,
                                  dim=dim))
        else:
            rows.append(_time_row(name, "peer", partial(forward, q, k, v, causal), check,
                                  seq_len, causal, dim=dim))
    for forward in forwards:
        try:
            kernel = forward.compile(seq_len, causal)
            poisoned = kernel.get_profiler().run_poisoned(q, k, v)
            rows.append(_time_row(forward.name, "tilec", partial(kernel, q, k, v),
                                  lambda _, p=poisoned: check(p), seq_len, causal,
                                  forward.config, dim))
        except Exception as exc:  # a kernel that fails to load is a row saying why
            rows.append({"impl": forward.name, "kind": "tilec", "seq_len": seq_len,
                         "causal": causal, "dim": dim, "config": forward.config,
                         "error": f"{type(exc).__name__}: {exc}"[:500]})
    return rows


def run(out: Path, seq_lens: tuple[int, ...], budget_s: float, peers: tuple[str, ...],
        ablations: bool, head_dims: bool, sections: tuple[str, ...] = SECTIONS,
        variants: tuple[str, ...] = ALL_VARIANTS) -> None:
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
    forwards = tilec_forwards() if "forward" in sections else []
    peer_calls = {"sdpa cudnn": _sdpa("CUDNN_ATTENTION"),
                  "sdpa flash": _sdpa("FLASH_ATTENTION")} if "sdpa" in peers else {}
    if "triton" in peers:
        try:
            peer_calls["triton"] = _triton_forward()
        except ImportError as exc:
            recorder.record["triton_error"] = str(exc)
    shapes = []
    for seq_len in seq_lens if "forward" in sections else ():
        shapes += [(seq_len, causal, forwards, peer_calls, DIM) for causal in (False, True)]
        if seq_len in VARIANT_SEQS and variants:
            shapes += [(seq_len, causal, variant_forwards(seq_len, variants), {}, DIM)
                       for causal in (False, True)]
        if ablations and seq_len == ABLATION_SEQ:
            shapes += [(seq_len, causal, ablation_forwards(), {}, DIM)
                       for causal in (False, True)]
        if head_dims and seq_len == HEAD_DIM_SEQ:
            by_dim = head_dim_forwards(variants)
            shapes += [(seq_len, causal, [f for f in by_dim if f.dim == dim], peer_calls, dim)
                       for dim in HEAD_DIM_CONFIGS for causal in (False, True)]
    cudnn_ms: dict[tuple[int, bool, int], float] = {}
    for seq_len, causal, kernels, shape_peers, dim in shapes:
        if time.perf_counter() - began > budget_s:
            recorder.record["stopped"] = f"budget of {budget_s} s spent before S={seq_len}"
            break
        for row in _shape_rows(seq_len, causal, kernels, shape_peers, dim):
            if row["impl"] == "sdpa cudnn" and "ms" in row:
                cudnn_ms[seq_len, causal, dim] = row["ms"]
            if "ms" in row and (seq_len, causal, dim) in cudnn_ms:
                row["ratio_to_cudnn"] = cudnn_ms[seq_len, causal, dim] / row["ms"]
            recorder.add(row)
            print(f"S={seq_len:5} d={dim} causal={causal!s:5} {row['impl']:32} "
                  f"{row.get('config', '')} "
                  + (f"{row['tflops']:6.1f} TF/s x{row.get('ratio_to_cudnn', 0):.2f} "
                     f"err {row.get('max_abs_error', float('nan')):.1e}" if "tflops" in row
                     else row.get("error", "?")), flush=True)
        torch.cuda.empty_cache()
    recorder.record["backward"] = []
    for seq_len in _backward_seq_lens(seq_lens) if "backward" in sections else ():
        for causal in (False, True):
            if time.perf_counter() - began > budget_s:
                recorder.record["stopped"] = f"budget of {budget_s} s spent before backward"
                break
            gqa = (HEADS, BACKWARD_GQA[1]) if seq_len == BACKWARD_GQA[0] else (HEADS,)
            for row in (row for heads_kv in gqa
                        for row in backward_rows(seq_len, causal, "sdpa" in peers, heads_kv)):
                recorder.record["backward"].append(row)
                recorder.write()
                print(f"backward S={seq_len:5} causal={causal!s:5} kv heads {row['heads_kv']:2} "
                      f"{row['impl']:20} " + (
                    f"{row['tflops']:6.1f} TF/s x{row.get('ratio_to_sdpa', 0):.2f} "
                    f"rel err {row['max_rel_error']:.1e}" if "tflops" in row
                    else row.get("error", "?")), flush=True)
            torch.cuda.empty_cache()
    recorder.record["mla"] = []
    for shape in MLA_SHAPES if "mla" in sections else ():
        if time.perf_counter() - began > budget_s:
            recorder.record["stopped"] = f"budget of {budget_s} s spent before MLA {shape}"
            break
        for row in mla_rows(shape):
            recorder.record["mla"].append(row)
            recorder.write()
            print(f"mla {shape} {row['impl']:48} " + (
                f"{row['us']:8.1f} us {row['gb_per_s']:7.1f} GB/s {row['tflops']:6.1f} TF/s "
                f"({row['fraction_of_copy']:.0%} of copy) err {row['max_abs_error']:.1e}"
                if "us" in row else row.get("error", "?")), flush=True)
        torch.cuda.empty_cache()
    recorder.record["decode"] = []
    for shape in DECODE_SHAPES if "decode" in sections else ():
        if time.perf_counter() - began > budget_s:
            recorder.record["stopped"] = f"budget of {budget_s} s spent before decode {shape}"
            break
        for row in decode_rows(shape, "sdpa" in peers):
            recorder.record["decode"].append(row)
            recorder.write()
            print(f"decode {shape} {row['impl']:20} " + (
                f"{row['us']:8.1f} us {row['gb_per_s']:7.1f} GB/s "
                f"({row['fraction_of_copy']:.0%} of copy) err {row['max_abs_error']:.1e}"
                if "us" in row else row.get("error", "?")), flush=True)
        torch.cuda.empty_cache()
    recorder.record["summary"] = summary(recorder.record["forward"],
                                         recorder.record["backward"], recorder.record["mla"])
    recorder.record["seconds"] = time.perf_counter() - began
    recorder.write()


def summary(rows: list[dict[str, Any]], backward: list[dict[str, Any]] = (),
            mla: list[dict[str, Any]] = ()) -> dict[str, Any]:
    """fwd_d128_vs_cudnn: the lowest ratio to cuDNN of tilec's own forward over S >= 4096,
    causal and not; tilelang_example_vs_tilelang: TileLang's example through tilec at its
    main() configuration over TileLang 0.1.15's own time for it (S 4096, the lower of causal
    and not; TileLang's numbers from TILELANG_BASELINE, not this run); bwd_vs_sdpa: the
    lowest ratio of tilec's backward to the faster SDPA backward over S >= 4096, causal and
    not (bwd_gqa_vs_sdpa with grouped queries; suffixed the other OWN_BACKWARDS');
    mla_decode_fraction_of_copy{key}: the lowest of tilec's MLA decode (over its splits),
    each of MLA_VARIANTS, mla_tilelang_example_fraction_of_copy that of TileLang's example;
    fwd_d{D}_vs_cudnn_{variant}: the same of the forward with a VARIANTS opt-in."""
    def lowest(impl: str, dim: int = DIM) -> float | None:
        return min((r["ratio_to_cudnn"] for r in rows if r["impl"] == impl and r["dim"] == dim
                    and r["seq_len"] >= 4096 and "ratio_to_cudnn" in r and r.get("passed")),
                   default=None)
    by_dim = {f"fwd_d{dim}_vs_cudnn{key}": lowest(OWN_FORWARD + suffix, dim)
              for dim in (DIM, *HEAD_DIM_CONFIGS)
              for suffix, key in (("", ""), *((s, "_" + k) for s, (_, k) in VARIANTS.items()))}
    example = {r["causal"]: r["tflops"] / TILELANG_MAIN_CONFIG_TFLOPS[r["causal"]]
               for r in rows if r["impl"] == EXAMPLE_MAIN and r["seq_len"] == 4096
               and r.get("passed")}
    def lowest_backward(impl: str, grouped: bool) -> float | None:
        return min((r["ratio_to_sdpa"] for r in backward if r["impl"] == impl
                    and (r.get("heads_kv", HEADS) != HEADS) == grouped and r["seq_len"] >= 4096
                    and "ratio_to_sdpa" in r and r.get("passed")), default=None)
    def mla_fraction(impl: str) -> float | None:
        return min((r["fraction_of_copy"] for r in mla if r["impl"] == impl
                    and "fraction_of_copy" in r and r.get("passed")), default=None)
    return {**by_dim,
            **{f"bwd{gqa}_vs_sdpa{key}": lowest_backward(name, bool(gqa))
               for name, (_, key) in OWN_BACKWARDS.items() for gqa in ("", "_gqa")},
            **{f"mla_decode_fraction_of_copy{key}": mla_fraction(OWN_MLA + suffix)
               for suffix, (_, _, key) in MLA_VARIANTS.items()},
            "mla_tilelang_example_fraction_of_copy": mla_fraction(TILELANG_MLA),
            "tilelang_example_vs_tilelang": min(example.values()) if len(example) == 2 else None,
            "tilelang_baseline": TILELANG_BASELINE}


def main() -> None:
    from device_cli import build_or_run  # beside this script

    def options(build_parser: argparse.ArgumentParser,
                run_parser: argparse.ArgumentParser) -> None:
        build_parser.add_argument("--examples", type=Path, default=DEFAULT_EXAMPLES,
                                  help="TileLang's examples folder (its example is copied from "
                                  "here)")
        run_parser.add_argument("--budget", type=float, default=float("inf"),
                                help="seconds after which no new shape is started")
        run_parser.add_argument("--no-triton", action="store_true")
        run_parser.add_argument("--no-peers", action="store_true",
                                help="tilec's kernels only (no SDPA, no Triton)")
        for p in (build_parser, run_parser):
            p.add_argument("--ablations", action="store_true",
                           help=f"also tilec's forward at ABLATIONS (S {ABLATION_SEQ})")
            p.add_argument("--variants", type=_variants, default=ALL_VARIANTS,
                           help=f"comma-separated, of {','.join(ALL_VARIANTS)}: the opt-in "
                           "variants whose rows run (default: all)")
            p.add_argument("--no-variants", action="store_true",
                           help=f"leave out the opt-in variants' rows (S {VARIANT_SEQS}, and "
                           "at the other head dimensions)")
            p.add_argument("--no-head-dims", action="store_true",
                           help=f"leave out d {sorted(HEAD_DIM_CONFIGS)} (S {HEAD_DIM_SEQ})")
            p.add_argument("--seq-lens", type=lambda s: tuple(int(x) for x in s.split(",")),
                           default=SEQ_LENS, help="the forward's sequence lengths")
            p.add_argument("--sections", type=_sections, default=SECTIONS,
                           help=f"comma-separated, of {','.join(SECTIONS)} (default: all)")

    def build_attention(args: argparse.Namespace) -> None:
        build(args.cache_dir, args.examples, args.seq_lens, args.sections, args.ablations,
              not args.no_head_dims, () if args.no_variants else args.variants)

    def run_attention(args: argparse.Namespace) -> None:
        peers = () if args.no_peers else ("sdpa",) if args.no_triton else ("sdpa", "triton")
        run(args.out, args.seq_lens, args.budget, peers, args.ablations,
            not args.no_head_dims, args.sections, () if args.no_variants else args.variants)

    build_or_run(__doc__, "attention.json", build_attention, run_attention, options)


def _variants(text: str) -> tuple[str, ...]:
    keys = tuple(text.split(","))
    unknown = [key for key in keys if key not in ALL_VARIANTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown variants {unknown}; known: {ALL_VARIANTS}")
    return keys


def _sections(text: str) -> tuple[str, ...]:
    sections = tuple(text.split(","))
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown sections {unknown}; known: {SECTIONS}")
    return sections


if __name__ == "__main__":
    main()
