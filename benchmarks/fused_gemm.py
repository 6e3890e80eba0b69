"""GEMMs with work around them, against the plain GEMM and torch's cuBLAS + separate epilogue.

The compiler must bring any tile program to the tensor cores, not only the quickstart: a
T.Parallel epilogue on the accumulator (bias + ReLU; scale + residual add), a batched GEMM on a
3-D grid with B transposed, transposed operands, and a register-A chain (A copied from shared
memory into a fragment, then T.gemm(A_frag, B_shared, C)). Each kernel is timed beside the plain
GEMM of the same tile config and beside the torch expression computing the same result
(cuBLAS plus elementwise kernels), in one process, after its output is checked against a
float32 reference with the output poisoned first, at the timed shape and at smaller ones
with partial tiles (CHECK_SHAPES).

Two halves, as the GPU machine has no MLIR:

  python benchmarks/fused_gemm.py build CACHE_DIR [--only ROW...]          (compiler machine)
  TILEC_CACHE_DIR=CACHE_DIR python benchmarks/fused_gemm.py run --out fused.json \
      [--rounds 3] [--only ROW...]                                              (GPU)

Every kernel is checked first; then all of them are timed in `--rounds` interleaved rounds
(each round every row's kernel and its torch expression, in CASES order), and each ratio
(to torch, to the plain GEMM of the same config, to the matcher's kernel) is the median of the
rounds' own ratios, with its spread (largest minus smallest). Why: the GPU's clock drifts over
a run (on the H100 of b3c290d torch's identical 8192^3 GEMM went from 692 to 650 TFLOP/s
between the first row and the register-A rows), so a row timed once, minutes after the plain
GEMM, compared two clocks. `--only` names rows (CASES or VARIANTS); the plain GEMM of each
named row's config is timed beside it. VARIANTS are per-op rows compiled under opt-in compile
settings (cache.COMPILE_SETTINGS), timed beside their row without them; `build` without
`--only` compiles them too.

The plain GEMM, the quickstart's own config (128x128x32, 128 threads, 3 stages), transposed
operands and the register-A chain are compiled with TILEC_PER_OP_GEMMS=0 (`matcher`: the
whole-kernel generator of lower-gemm-to-tensorcore, as by default); a `*_per_op` row is the
kernel of the row before it with an identity T.Parallel epilogue, which the matcher declines:
the per-op path's own kernel, timed beside the matcher's (`ratio_to_matcher`).
`build` reports for each kernel which path compiled it and whether its PTX has
wgmma (the tensor cores);
tests/test_fused_gemm_kernels.py checks the same kernels on the CPU target (ragged sizes).
"""

from __future__ import annotations

import datetime
import json
import math
import os
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from device_cli import build_or_run, compile_settings  # noqa: E402

import tilec  # noqa: E402
import tilec.language as T  # noqa: E402

TILE = {"block_M": 128, "block_N": 256, "block_K": 64, "threads": 256, "num_stages": 4}
QUICKSTART_TILE = {"block_M": 128, "block_N": 128, "block_K": 32, "threads": 128, "num_stages": 3}
SMALL_TILE = {"block_M": 64, "block_N": 64, "block_K": 32, "threads": 128, "num_stages": 2}


@tilec.jit
def plain(A, B, block_M=128, block_N=128, block_K=32, threads=128, num_stages=3, per_op=False):
    """The quickstart's GEMM; `per_op` adds an identity T.Parallel epilogue, which the
    whole-kernel matcher declines: the per-op path's own plain GEMM, timed beside the
    matcher's."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), T.float16)
        B_s = T.alloc_shared((block_K, block_N), T.float16)
        C_f = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_s)
            T.copy(B[k * block_K, bx * block_N], B_s)
            T.gemm(A_s, B_s, C_f)
        if per_op:
            for i, j in T.Parallel(block_M, block_N):
                C_f[i, j] = C_f[i, j]
        T.copy(C_f, C[by * block_M, bx * block_N])
    return C


@tilec.jit
def bias_relu(A, B, bias, block_M=128, block_N=128, block_K=32, threads=128, num_stages=3):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    bias: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), T.float16)
        B_s = T.alloc_shared((block_K, block_N), T.float16)
        C_f = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_s)
            T.copy(B[k * block_K, bx * block_N], B_s)
            T.gemm(A_s, B_s, C_f)
        for i, j in T.Parallel(block_M, block_N):
            C_f[i, j] = T.max(C_f[i, j] + bias[bx * block_N + j], 0.0)
        T.copy(C_f, C[by * block_M, bx * block_N])
    return C


@tilec.jit
def scale_residual(A, B, R, alpha=0.5, block_M=128, block_N=128, block_K=32, threads=128,
                   num_stages=3):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    R: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), T.float16)
        B_s = T.alloc_shared((block_K, block_N), T.float16)
        C_f = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_s)
            T.copy(B[k * block_K, bx * block_N], B_s)
            T.gemm(A_s, B_s, C_f)
        for i, j in T.Parallel(block_M, block_N):
            C_f[i, j] = C_f[i, j] * alpha + R[by * block_M + i, bx * block_N + j]
        T.copy(C_f, C[by * block_M, bx * block_N])
    return C


@tilec.jit
def batched_nt(A, B, block_M=128, block_N=128, block_K=32, threads=128, num_stages=3):
    """C[b] = A[b] @ B[b]^T in bf16: B stored N x K per batch (transpose_B), a 3-D grid."""
    batch, M, N, K = T.const("batch, M, N, K")
    A: T.Tensor((batch, M, K), T.bfloat16)
    B: T.Tensor((batch, N, K), T.bfloat16)
    C = T.empty((batch, M, N), T.bfloat16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), batch,
                  threads=threads) as (bx, by, bz):
        A_s = T.alloc_shared((block_M, block_K), T.bfloat16)
        B_s = T.alloc_shared((block_N, block_K), T.bfloat16)
        C_f = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[bz, by * block_M, k * block_K], A_s)
            T.copy(B[bz, bx * block_N, k * block_K], B_s)
            T.gemm(A_s, B_s, C_f, transpose_B=True)
        T.copy(C_f, C[bz, by * block_M, bx * block_N])
    return C


@tilec.jit
def transposed_tn(A, B, block_M=128, block_N=128, block_K=32, threads=128, num_stages=3,
                  per_op=False):
    """C = A^T @ B^T: A stored K x M, B stored N x K (`per_op`: as plain's)."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((K, M), T.float16)
    B: T.Tensor((N, K), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_s = T.alloc_shared((block_K, block_M), T.float16)
        B_s = T.alloc_shared((block_N, block_K), T.float16)
        C_f = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[k * block_K, by * block_M], A_s)
            T.copy(B[bx * block_N, k * block_K], B_s)
            T.gemm(A_s, B_s, C_f, transpose_A=True, transpose_B=True)
        if per_op:
            for i, j in T.Parallel(block_M, block_N):
                C_f[i, j] = C_f[i, j]
        T.copy(C_f, C[by * block_M, bx * block_N])
    return C


@tilec.jit
def register_a(A, B, block_M=128, block_N=128, block_K=32, threads=128, num_stages=3,
               per_op=False):
    """A goes shared -> fragment before the gemm (the form attention's P @ V takes;
    `per_op`: as plain's)."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), T.float16)
        A_f = T.alloc_fragment((block_M, block_K), T.float16)
        B_s = T.alloc_shared((block_K, block_N), T.float16)
        C_f = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_s)
            T.copy(B[k * block_K, bx * block_N], B_s)
            T.copy(A_s, A_f)
            T.gemm(A_f, B_s, C_f)
        if per_op:
            for i, j in T.Parallel(block_M, block_N):
                C_f[i, j] = C_f[i, j]
        T.copy(C_f, C[by * block_M, bx * block_N])
    return C


@dataclass(frozen=True)
class Case:
    """One fused kernel: how to make its inputs, the torch expression it equals, its flops,
    its tile config (TILE unless given), whether it is the per-op form of a kernel the
    whole-kernel matcher takes (`per_op`: the kernel's identity epilogue) and whether it is
    compiled by the matcher (`matcher`: TILEC_PER_OP_GEMMS=0)."""

    name: str
    kernel: Callable
    inputs: Callable  # (torch, shape, device) -> list of tensors
    reference: Callable  # (*inputs) -> the same result with torch ops (cuBLAS + epilogue)
    flops: Callable  # shape -> multiply-adds x 2
    config: dict | None = None
    per_op: bool = False
    matcher: bool = False
    # compile settings (cache.COMPILE_SETTINGS) the kernel is compiled and looked up under
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def tile(self) -> dict:
        return TILE if self.config is None else self.config

    @property
    def options(self) -> dict:
        """The kernel's compile arguments: the tile config, and per_op where asked."""
        return {**self.tile, "per_op": True} if self.per_op else dict(self.tile)


def _mm_inputs(torch, shape, device, dtype="float16"):
    m, n, k = shape
    dt = getattr(torch, dtype)
    return [torch.randn(m, k, device=device).to(dt), torch.randn(k, n, device=device).to(dt)]


def _gemm_flops(shape) -> float:
    return 2.0 * math.prod(shape)


def _tn_inputs(torch, shape, device):
    m, n, k = shape
    return [torch.randn(k, m, device=device).half(), torch.randn(n, k, device=device).half()]


CASES = [
    Case("plain", plain, _mm_inputs, lambda a, b: a @ b, _gemm_flops, matcher=True),
    Case("plain_per_op", plain, _mm_inputs, lambda a, b: a @ b, _gemm_flops, per_op=True),
    Case("quickstart", plain, _mm_inputs, lambda a, b: a @ b, _gemm_flops, QUICKSTART_TILE,
         matcher=True),
    Case("quickstart_per_op", plain, _mm_inputs, lambda a, b: a @ b, _gemm_flops,
         QUICKSTART_TILE, per_op=True),
    Case("bias_relu", bias_relu,
         lambda torch, s, d: _mm_inputs(torch, s, d) + [torch.randn(s[1], device=d).half()],
         lambda a, b, bias: (a @ b + bias).clamp_min(0), _gemm_flops),
    Case("scale_residual", scale_residual,
         lambda torch, s, d: _mm_inputs(torch, s, d) + [torch.randn(s[0], s[1], device=d).half()],
         lambda a, b, r: (a @ b) * 0.5 + r, _gemm_flops),
    Case("transposed_tn", transposed_tn, _tn_inputs, lambda a, b: a.t() @ b.t(), _gemm_flops,
         matcher=True),
    Case("transposed_tn_per_op", transposed_tn, _tn_inputs, lambda a, b: a.t() @ b.t(),
         _gemm_flops, per_op=True),
    Case("register_a", register_a, _mm_inputs, lambda a, b: a @ b, _gemm_flops, matcher=True),
    Case("register_a_per_op", register_a, _mm_inputs, lambda a, b: a @ b, _gemm_flops,
         per_op=True),
    Case("batched_nt", batched_nt,
         lambda torch, s, d: [torch.randn(s[0], s[1], s[3], device=d).bfloat16(),
                              torch.randn(s[0], s[2], s[3], device=d).bfloat16()],
         lambda a, b: a @ b.transpose(1, 2), lambda s: 2.0 * math.prod(s)),
]


def _variant(base: str, suffix: str, settings: dict[str, str]) -> Case:
    """Row `base` (of CASES or a variant before) as `base_suffix`, compiled under
    `settings`, its base's included."""
    case = next(case for case in CASES + VARIANTS if case.name == base)
    return replace(case, name=f"{base}_{suffix}", settings={**case.settings, **settings})


# per-op opt-ins timed beside the row they vary (sm_90a only: the CPU target ignores them)
VARIANTS: list[Case] = []
for _base, _suffix, _settings in (
        ("register_a_per_op", "steps", {"TILEC_REGISTER_A_STEPS": "1"}),
        ("register_a_per_op", "steps1", {"TILEC_REGISTER_A_STEPS": "1",
                                         "TILEC_REGISTER_A_STEP_GROUPS": "1"}),
        # the per-op defaults turned off: the accumulator cleared by register moves before
        # each tile, the consumers' block barriers around the ring loop and between tiles
        ("register_a_per_op_steps", "unfolded", {"TILEC_FOLD_ACCUMULATOR_CLEARS": "0"}),
        ("plain_per_op", "barriers", {"TILEC_RING_PRIVATE_TILES": "0"}),
        ("batched_nt", "barriers", {"TILEC_RING_PRIVATE_TILES": "0"}),
        ("plain_per_op", "unfolded", {"TILEC_FOLD_ACCUMULATOR_CLEARS": "0"}),
        ("batched_nt", "unfolded", {"TILEC_FOLD_ACCUMULATOR_CLEARS": "0"}),
        ("batched_nt_unfolded", "barriers", {"TILEC_RING_PRIVATE_TILES": "0"}),
        # prefetch-epilogue-operands: the epilogue's operands into L2 8 K tiles ahead, and the
        # residual tile into registers under the last K tile's wgmmas
        ("bias_relu", "prefetch8", {"TILEC_EPILOGUE_PREFETCH": "8"}),
        ("scale_residual", "prefetch8", {"TILEC_EPILOGUE_PREFETCH": "8"}),
        ("scale_residual", "preload", {"TILEC_EPILOGUE_PRELOAD": "1"}),  # the default on sm_90+
        ("scale_residual", "nopreload", {"TILEC_EPILOGUE_PRELOAD": "0"}),
        ("scale_residual_preload", "prefetch8", {"TILEC_EPILOGUE_PREFETCH": "8"}),
        ("bias_relu_prefetch8", "barriers", {"TILEC_RING_PRIVATE_TILES": "0"}),
        ("scale_residual_preload_prefetch8", "barriers", {"TILEC_RING_PRIVATE_TILES": "0"}),
        # the residual tile's loads issued n K tiles before the loop's end (TILEC_EPILOGUE_PRELOAD
        # =n), in flight under the last n K tiles' wgmmas where n = 1 has one K tile to land
        ("scale_residual", "preload2", {"TILEC_EPILOGUE_PRELOAD": "2"}),
        ("scale_residual", "preload4", {"TILEC_EPILOGUE_PRELOAD": "4"}),
        ("scale_residual", "preload8", {"TILEC_EPILOGUE_PRELOAD": "8"}),
        ("scale_residual_preload4", "prefetch8", {"TILEC_EPILOGUE_PREFETCH": "8"}),
        ("scale_residual_preload4", "barriers", {"TILEC_RING_PRIVATE_TILES": "0"}),
        # the residual tile through shared memory: TMA-loaded by the ring's producer into the
        # slots the last K tiles drain (stage-epilogue-source)
        ("scale_residual", "tmasource", {"TILEC_EPILOGUE_SHARED_SOURCE": "1"}),
        ("scale_residual_tmasource", "barriers", {"TILEC_RING_PRIVATE_TILES": "0"})):
    VARIANTS.append(_variant(_base, _suffix, _settings))
SHAPES = {case.name: (16, 2048, 2048, 1024) for case in CASES + VARIANTS
          if case.name.startswith("batched_nt")}
DEFAULT_SHAPE = (8192, 8192, 8192)
# checked before timing: partial tiles in M, N and K (the last K tile past the tensor's end),
# and whole tiles; rows stay 16-byte multiples, as TMA needs
CHECK_SHAPES = {name: [(3, 136, 200, 96), (5, 520, 264, 328), (2, 256, 512, 256)]
                for name in SHAPES}
DEFAULT_CHECK_SHAPES = [(136, 200, 96), (1000, 1016, 520), (512, 768, 1024)]
DEVICE = "cuda"


def _meta(case: Case, shape):
    import torch

    return case.inputs(_MetaTorch(torch), shape, "meta")


class _MetaTorch:
    """torch with randn building meta tensors, so `build` allocates nothing."""

    def __init__(self, torch):
        self._torch = torch

    def __getattr__(self, name):
        return getattr(self._torch, name)

    def randn(self, *sizes, device=None):
        return self._torch.empty(*sizes, device="meta")


def _shapes(case: Case) -> list[tuple[int, ...]]:
    """The timed shape, then the checked ones."""
    return [SHAPES.get(case.name, DEFAULT_SHAPE), *CHECK_SHAPES.get(case.name,
                                                                    DEFAULT_CHECK_SHAPES)]


def selected(only: list[str] | None) -> list[Case]:
    """The rows named in `only` (CASES when None), in CASES then VARIANTS order, with the
    plain GEMM of each one's config (the ratios' reference) and, for a variant, its base row."""
    if not only:
        return list(CASES)
    rows = {case.name: case for case in CASES + VARIANTS}
    unknown = [name for name in only if name not in rows]
    if unknown:
        raise SystemExit(f"unknown rows {unknown}; known: {', '.join(rows)}")
    wanted = set(only)
    for name in only:
        case = rows[name]
        wanted.add(next(base.name for base in CASES if base.kernel is plain
                        and not base.per_op and base.tile == case.tile))
        while rows[name].settings:  # a variant's base rows, down to the one in CASES
            name = name[:name.rindex("_")]
            wanted.add(name)
    return [case for case in CASES + VARIANTS if case.name in wanted]


def _compile(case: Case, inputs, **target):
    matcher = {"TILEC_PER_OP_GEMMS": "0"} if case.matcher else {}
    with compile_settings({**case.settings, **matcher}):
        return case.kernel.compile(*inputs, **target, **case.options)


def build(cache_dir: Path, only: list[str] | None) -> None:
    os.environ["TILEC_CACHE_DIR"] = str(cache_dir.resolve())
    for case in selected(only) if only else CASES + VARIANTS:
        for shape in _shapes(case):
            kernel = _compile(case, _meta(case, shape), target="cuda:sm_90a")
            source = kernel.get_kernel_source()
            print(f"{case.name:17} {shape}: whole_kernel={_whole_kernel(kernel)} "
                  f"wgmma={'wgmma.mma_async' in source} "
                  f"mma.sync={'mma.sync' in source} "
                  f"tma={'cp.async.bulk.tensor' in source}", flush=True)


def _whole_kernel(kernel) -> bool:
    """Whether lower-gemm-to-tensorcore replaced the kernel (else: the per-op path)."""
    return "tile.tensorcore" in kernel.asm.get("tile-cuda", "")


def _relative_error(result, expected) -> float:
    expected = expected.float()
    return ((result.float() - expected).norm() / expected.norm()).item()


def _check(torch, case: Case) -> tuple[dict, list, object]:
    """The case's kernel checked at its checked shapes and its timed one (outputs poisoned
    first): the row's correctness fields, the timed shape's inputs and its kernel."""
    checks = []
    for shape in _shapes(case)[1:]:
        inputs = case.inputs(torch, shape, DEVICE)
        result = _compile(case, inputs).get_profiler().run_poisoned(*inputs)
        error = _relative_error(result, case.reference(*[t.float() for t in inputs]))
        checks.append({"shape": list(shape), "relative_error": error})
    shape = _shapes(case)[0]
    inputs = case.inputs(torch, shape, DEVICE)
    kernel = _compile(case, inputs)
    result = kernel.get_profiler().run_poisoned(*inputs)
    error = _relative_error(result, case.reference(*[t.float() for t in inputs]))
    errors = [error] + [check["relative_error"] for check in checks]
    source = kernel.get_kernel_source()
    row = {"kernel": case.name, "shape": list(shape), "config": case.tile,
           "settings": case.settings, "relative_error": error, "checks": checks,
           "passed": all(math.isfinite(e) and e < 1e-2 for e in errors),
           "whole_kernel": _whole_kernel(kernel), "wgmma": "wgmma.mma_async" in source,
           "tma": "cp.async.bulk.tensor" in source}
    return row, inputs, kernel


def _median_ratio(row: dict, name: str, numerators: list[float], denominators: list[float]
                  ) -> None:
    """row[name]: the median over the rounds of numerator / denominator (times: the other's
    over this one's is this one's speed-up), and its spread."""
    ratios = [a / b for a, b in zip(numerators, denominators, strict=True)]
    row[name] = statistics.median(ratios)
    row[name + "_spread"] = max(ratios) - min(ratios)


def run(out: Path, rounds: int, only: list[str] | None) -> None:
    import torch

    torch.manual_seed(0)
    cases = selected(only)
    rows, timed = [], []
    for case in cases:
        row, inputs, kernel = _check(torch, case)
        rows.append(row)
        print(f"{case.name:24} checked: error {row['relative_error']:.1e} "
              f"passed={row['passed']} whole_kernel={row['whole_kernel']}", flush=True)
        if row["passed"]:  # a wrong kernel is not timed
            timed.append((case, row, inputs, kernel.get_profiler()))
    for number in range(rounds):
        for case, row, inputs, profiler in timed:
            row.setdefault("tilec_ms_rounds", []).append(
                profiler.do_bench(input_tensors=inputs, return_mode="median"))
            row.setdefault("torch_ms_rounds", []).append(
                profiler.do_bench(case.reference, input_tensors=inputs, return_mode="median"))
            # the log keeps every timing should the run be cut short before the JSON
            print(f"round {number + 1}: {case.name:24} tilec {row['tilec_ms_rounds'][-1]:.4f} ms "
                  f"torch {row['torch_ms_rounds'][-1]:.4f} ms", flush=True)
    by_name = {case.name: row for case, row, _, _ in timed}
    for case, row, _, _ in timed:
        tilec_ms, torch_ms = row["tilec_ms_rounds"], row["torch_ms_rounds"]
        flops = case.flops(tuple(row["shape"]))
        row.update(tilec_ms=statistics.median(tilec_ms), torch_ms=statistics.median(torch_ms))
        row.update(tilec_tflops=flops / row["tilec_ms"] / 1e9,
                   torch_tflops=flops / row["torch_ms"] / 1e9)
        _median_ratio(row, "ratio_to_torch", torch_ms, tilec_ms)
        plain_row = next((by_name[base.name] for base in CASES if base.kernel is plain
                          and not base.per_op and base.tile == case.tile
                          and base.name in by_name
                          and by_name[base.name]["shape"] == row["shape"]), None)
        if plain_row is not None:
            _median_ratio(row, "ratio_to_plain", plain_row["tilec_ms_rounds"], tilec_ms)
            # torch's own form against its plain GEMM: what the form costs cuBLAS (a
            # transposed layout on this chip, an epilogue kernel)
            _median_ratio(row, "torch_ratio_to_plain", plain_row["torch_ms_rounds"], torch_ms)
        # a per-op row's matcher kernel: its row without per_op; a variant's base: its row
        # without the settings
        base = case.name[:case.name.rindex("_")] if case.settings else \
            case.name.removesuffix("_per_op") if case.per_op else None
        if base in by_name:
            name = "ratio_to_base" if case.settings else "ratio_to_matcher"
            _median_ratio(row, name, by_name[base]["tilec_ms_rounds"], tilec_ms)
        print(f"{case.name:24} {tuple(row['shape'])} tilec {row['tilec_tflops']:6.1f} TF/s "
              f"torch {row['torch_tflops']:6.1f} "
              + ", ".join(f"{name} x{row[name]:.3f} (spread {row[name + '_spread']:.3f})"
                          for name in ("ratio_to_torch", "ratio_to_plain", "ratio_to_matcher",
                                       "ratio_to_base", "torch_ratio_to_plain") if name in row))
    record = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name() if DEVICE == "cuda" else DEVICE,
        "torch": torch.__version__, "rounds": rounds,
        "method": "every kernel checked first against a float32 reference with NaN-poisoned "
                  "outputs (a wrong one is not timed); then tilec's profiler do_bench (CUDA "
                  "events, median after warm-up, L2 flushed) of every row's kernel and its "
                  f"torch expression, in one process, in {rounds} interleaved rounds; each "
                  "ratio the median of the rounds' own ratios, with its spread",
        "rows": rows,
    }
    out.write_text(json.dumps(record, indent=1) + "\n")


def _options(build_parser, run_parser) -> None:
    for parser in (build_parser, run_parser):
        parser.add_argument("--only", nargs="+", metavar="ROW",
                            help="rows of CASES or VARIANTS (default: CASES; build: all)")
    run_parser.add_argument("--rounds", type=int, default=3)


def main() -> None:
    build_or_run(__doc__, "fused_gemm.json", lambda args: build(args.cache_dir, args.only),
                 lambda args: run(args.out, args.rounds, args.only), _options)


if __name__ == "__main__":
    main()
