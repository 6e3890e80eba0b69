"""`MatmulTemplate(M, N, K, ...).with_arch(arch).recommend_hints(topk)`: GEMM tiles for tilec.

The candidates are the tiles tilec's own tensor-core kernels take, as its scheduling passes
decide them: on wgmma chips (sm_90a), wgmma tiles (infer-mma-layout's consumer warpgroups and
instruction rules, `HopperGemmConfig`'s shape and shared-memory limits) whose K step is one
128-byte swizzle row, the TMA ring pipeline-async-copies builds; on mma.sync chips (sm_80,
sm_90), mma.sync tiles over infer-mma-layout's warp grid that `AmpereGemmConfig` accepts. Each
gets the deepest pipeline (up to 8 stages with wgmma, 4 with mma.sync, never more than K has
tiles) whose shared memory fits the arch.

The cost model ranks them by estimated cycles:

- shared memory fit: a candidate must fit a block's shared memory; how many blocks share an SM
  follows from shared memory and threads per SM;
- waves over SMs: ceil(tiles / (SMs x blocks per SM)) waves, each taking blocks-per-SM turns of
  one tile's time, so a grid that leaves SMs idle in its last wave pays for them;
- arithmetic intensity: one tile's time is the larger of its tensor-core time
  (2 * bm * bn * K FLOPs over the SM's rate, doubled for 8-bit and halved for tf32 operands)
  and its operand time ((bm + bn) * K elements over the SM's L2 rate): a tile moving fewer
  bytes per FLOP is faster while loads bound it.

Ties go to the tile of higher intensity. On the H200 this reproduces the per-shape winners of
benchmarks/gemm.py's configurations (128x256 at 4096^3, 128x64 / 64x128 at 1024^3 and for
128x8192x8192).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import tilec.language as T
from tilec.carver.arch import CUDA, SM_FIGURES, TileDevice
from tilec.carver.roller import Hint, NoRasterization, Rasterization2DRow
from tilec.errors import TilecError

OPERAND_TYPES = {"float16": "f16", "bfloat16": "bf16", "float8_e4m3": "e4m3",
                 "float8_e5m2": "e5m2", "int8": "s8", "float32": "tf32"}
OUTPUT_TYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "int32": "s32"}
SWIZZLE_ROW_BYTES = 128  # one K step of the wgmma kernels' TMA ring
MAX_STAGES = {"wgmma": 8, "mma.sync": 4}  # per tensor-core family
BLOCK_SIZES = (64, 128, 256)
SM90_BLOCK_N = (64, 128, 192, 256)
SM80_K_BYTES = (64, 128)
SM80_THREADS = (128, 256)


@dataclass(frozen=True)
class _Types:
    """The template's types as tilec's tensor-core kernels name them."""

    operand: str
    output: str
    trans_a: bool
    trans_b: bool

    @property
    def operand_bytes(self) -> int:
        from tilec.compiler.tensorcore.dtypes import OPERAND_BYTES

        return OPERAND_BYTES[self.operand]


@dataclass(frozen=True)
class _Candidate:
    block_m: int
    block_n: int
    block_k: int
    threads: int  # the kernel's T.Kernel threads
    launched_threads: int  # what runs (wgmma kernels add a producer warpgroup)
    warp: tuple[int, int]
    stages: int
    shared_bytes: int


def _deepest(limit: int, make: Any) -> tuple[int, int] | None:
    """(stages, shared bytes) of the deepest pipeline `make(stages)` builds within `limit`
    shared bytes, or None; `make` raises ValueError for a config the kernel rejects."""
    for stages in range(limit, 1, -1):
        try:
            return stages, make(stages).smem_bytes
        except ValueError:
            continue
    return None


def _sm90_candidates(types: _Types, k: int, shared_limit: int) -> list[_Candidate]:
    from tilec.compiler.passes.infer_mma_layout import (
        GemmProblem,
        consumer_warpgroups,
        wgmma_decision,
    )
    from tilec.compiler.passes.select_epilogue_store import tma_store_columns
    from tilec.compiler.tensorcore.hopper import HopperGemmConfig

    block_k = SWIZZLE_ROW_BYTES // types.operand_bytes
    depth = min(MAX_STAGES["wgmma"], max(2, math.ceil(k / block_k)))
    found = []
    for block_m in BLOCK_SIZES:
        for block_n in SM90_BLOCK_N:
            for consumers in (1, 2):
                threads = 128 * consumers
                problem = GemmProblem(block_m, block_n, block_k, types.operand, types.output,
                                      types.trans_a, types.trans_b, "shared")
                if (consumer_warpgroups(block_m, threads) != consumers
                        or wgmma_decision(problem, threads) is None):
                    continue
                fit = _deepest(depth, lambda stages, m=block_m, n=block_n, c=consumers:
                               HopperGemmConfig(block_m=m, block_n=n, block_k=block_k,
                                                stages=stages, consumers=c,
                                                epilogue_n=tma_store_columns(n),
                                                dtype=types.operand, out_dtype=types.output,
                                                trans_a=types.trans_a, trans_b=types.trans_b))
                if fit is None or fit[1] > shared_limit:
                    continue
                warp = (block_m // (4 * consumers), block_n)  # 4 warps per consumer warpgroup
                found.append(_Candidate(block_m, block_n, block_k, threads, threads + 128, warp,
                                        fit[0], fit[1]))
    return found


def _sm80_candidates(types: _Types, k: int, shared_limit: int) -> list[_Candidate]:
    from tilec.compiler.passes.infer_mma_layout import GemmProblem, warp_grid
    from tilec.compiler.tensorcore.ampere import AmpereGemmConfig

    found = []
    for block_m in BLOCK_SIZES:
        for block_n in BLOCK_SIZES:
            for k_bytes in SM80_K_BYTES:
                block_k = k_bytes // types.operand_bytes
                depth = min(MAX_STAGES["mma.sync"], max(2, math.ceil(k / block_k)))
                for threads in SM80_THREADS:
                    problem = GemmProblem(block_m, block_n, block_k, types.operand,
                                          types.output, types.trans_a, types.trans_b, "shared")
                    grid = warp_grid(problem, threads)
                    if grid is None:
                        continue
                    fit = _deepest(depth, lambda stages, m=block_m, n=block_n, bk=block_k,
                                   g=grid: AmpereGemmConfig(
                                       block_m=m, block_n=n, block_k=bk, stages=stages,
                                       warps_m=g[0], warps_n=g[1], dtype=types.operand,
                                       out_dtype=types.output, trans_a=types.trans_a,
                                       trans_b=types.trans_b))
                    if fit is None or fit[1] > shared_limit:
                        continue
                    warp = (block_m // grid[0], block_n // grid[1])
                    found.append(_Candidate(block_m, block_n, block_k, threads, threads, warp,
                                            fit[0], fit[1]))
    return found


def _tensor_flops_per_clock(arch: CUDA, types: _Types) -> float:
    """The SM's dense tensor-core rate for these operands: 16-bit's, x2 for 8-bit, /2 tf32."""
    return arch.sm_figures.tensor_flops_per_clock * 2 / types.operand_bytes


@dataclass(frozen=True)
class _Estimate:
    cycles: float
    waves: int
    intensity: float  # FLOPs per operand byte of one tile's K loop


def _estimate(candidate: _Candidate, m: int, n: int, k: int, arch: CUDA,
              types: _Types) -> _Estimate:
    """The cost model (module docstring): waves x blocks per SM x one tile's time."""
    figures = arch.sm_figures
    tiles = math.ceil(m / candidate.block_m) * math.ceil(n / candidate.block_n)
    per_sm = max(1, min(figures.shared_memory_per_sm // max(1, candidate.shared_bytes),
                        figures.max_threads_per_sm // candidate.launched_threads))
    waves = math.ceil(tiles / (arch.compute_max_core * per_sm))
    flops = 2 * candidate.block_m * candidate.block_n * k
    operand_bytes = (candidate.block_m + candidate.block_n) * k * types.operand_bytes
    tile_cycles = max(flops / _tensor_flops_per_clock(arch, types),
                      operand_bytes / figures.operand_bytes_per_clock)
    return _Estimate(waves * per_sm * tile_cycles, waves, flops / operand_bytes)


def _dtype_name(value: Any) -> str:
    return T.dtype(value).name


@dataclass
class MatmulTemplate:
    """C[M, N] = A @ B (A stored K x M when trans_A, B stored N x K when trans_B), as TileLang's
    carver template; `recommend_hints` gives tilec's tensor-core tiles ranked by the cost
    model, `equivalent_function` the tile program of this GEMM."""

    M: int | None = None
    N: int | None = None
    K: int | None = None
    trans_A: bool = False
    trans_B: bool = True
    in_dtype: Any = "float16"
    out_dtype: Any = "float16"
    accum_dtype: Any = "float16"
    with_bias: bool = False
    _arch: TileDevice | None = field(default=None, init=False, repr=False)

    def with_arch(self, arch: TileDevice) -> MatmulTemplate:
        self._arch = arch
        return self

    def has_arch(self) -> bool:
        return self._arch is not None

    @property
    def arch(self) -> TileDevice:
        if self._arch is None:
            raise TilecError("MatmulTemplate: no arch; call .with_arch(tilec.carver.arch.CUDA"
                             "('cuda')) first")
        return self._arch

    def _sizes(self) -> tuple[int, int, int]:
        sizes = (self.M, self.N, self.K)
        if not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in sizes):
            raise TilecError(f"MatmulTemplate: M, N, K must be positive integers, got {sizes}")
        return sizes  # type: ignore[return-value]

    def _types(self) -> _Types:
        from tilec.compiler.tensorcore.dtypes import accumulator, check_types

        in_dtype, out_dtype = _dtype_name(self.in_dtype), _dtype_name(self.out_dtype)
        accum_dtype = _dtype_name(self.accum_dtype)
        operand, output = OPERAND_TYPES.get(in_dtype), OUTPUT_TYPES.get(out_dtype)
        if operand is None or output is None:
            raise TilecError(f"MatmulTemplate: tilec's tensor cores take no {in_dtype} -> "
                             f"{out_dtype} GEMM")
        if OUTPUT_TYPES.get(accum_dtype) != accumulator(operand):
            wanted = "int32" if accumulator(operand) == "s32" else "float32"
            raise TilecError(f"MatmulTemplate: {in_dtype} operands accumulate in {wanted} on "
                             f"tilec's tensor cores, not {accum_dtype} "
                             f"(accum_dtype=T.{wanted})")
        try:
            check_types(operand, output, self.trans_A, self.trans_B)
        except ValueError as error:
            raise TilecError(f"MatmulTemplate: {error}") from None
        return _Types(operand, output, self.trans_A, self.trans_B)

    def recommend_hints(self, topk: int = 10) -> list[Hint]:
        """Up to `topk` tiles, fastest first by the cost model."""
        arch = self.arch
        if not isinstance(arch, CUDA) or arch.sm_figures is None:
            known = ", ".join(SM_FIGURES)
            raise TilecError(f"MatmulTemplate: tilec recommends tensor-core tiles for {known}, "
                             f"not {arch!r}")
        m, n, k = self._sizes()
        types = self._types()
        find = _sm90_candidates if arch.description.has_wgmma else _sm80_candidates
        candidates = find(types, k, arch.max_smem_usage)
        if not candidates:
            raise TilecError(f"MatmulTemplate: no tensor-core tile of tilec fits "
                             f"{m}x{n}x{k} {types.operand} on {arch!r}")
        ranked = sorted(((_estimate(c, m, n, k, arch, types), c) for c in candidates),
                        key=lambda pair: (pair[0].cycles, -pair[0].intensity, pair[1].threads))
        return [self._hint(candidate, estimate) for estimate, candidate in ranked[:topk]]

    def _hint(self, candidate: _Candidate, estimate: _Estimate) -> Hint:
        from tilec.compiler.passes.rasterize_blocks import DEFAULT_GROUP_M

        plan = Rasterization2DRow(DEFAULT_GROUP_M) if estimate.waves > 1 else NoRasterization()
        return Hint(block=[candidate.block_m, candidate.block_n], warp=list(candidate.warp),
                    rstep=[candidate.block_k], pipeline_stage=candidate.stages,
                    threads=candidate.threads, rasterization_plan=plan, arch=self.arch,
                    shared_memory_bytes=candidate.shared_bytes, waves=estimate.waves,
                    estimated_cycles=estimate.cycles)

    def equivalent_function(self, hint: Hint | None = None) -> T.PrimFunc:
        """The tile program of this GEMM, tiled as `hint` (the top recommendation if none);
        compile it with `tilec.compile(..., out_idx=[-1])`."""
        if self.with_bias:
            raise TilecError("MatmulTemplate: with_bias has no tile program in tilec")
        hint = hint or self.recommend_hints(topk=1)[0]
        m, n, k = self._sizes()
        panel = hint.rasterization_plan.panel_width
        return _matmul_program(m, n, k, self.trans_A, self.trans_B, _dtype_name(self.in_dtype),
                               _dtype_name(self.out_dtype), _dtype_name(self.accum_dtype),
                               hint.block[0], hint.block[1], hint.rstep[0],
                               hint.pipeline_stage, hint.threads, panel)


def _matmul_program(M: int, N: int, K: int, trans_A: bool, trans_B: bool, in_dtype: str,
                    out_dtype: str, accum_dtype: str, block_M: int, block_N: int, block_K: int,
                    num_stages: int, threads: int, panel: int) -> T.PrimFunc:
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def matmul(A: T.Tensor(A_shape, in_dtype), B: T.Tensor(B_shape, in_dtype),
               C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_tile, in_dtype)
            B_shared = T.alloc_shared(B_tile, in_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            if panel:
                T.use_swizzle(panel_size=panel)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, k * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A, transpose_B=trans_B)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return matmul
