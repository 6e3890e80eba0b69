"""prefetch-epilogue-operands (opt-in, TILEC_EPILOGUE_PREFETCH=d): the global tensors a fused
GEMM's T.Parallel epilogue reads (benchmarks/fused_gemm.py's bias + ReLU and scale +
residual, and a per-row scale here) are prefetched into L2 in the loop's iteration
max(0, last - d). The CPU target runs the pass too: each kernel, its output NaN-poisoned, is
checked against a float32 reference on ragged shapes with the prefetch in the loop (its
stage shows it). sm_90a: the PTX's prefetch.global.L2 count per thread (a 128 x 256 f16
residual tile is 512 lines over 256 consumer threads: 2), none without the setting, and
ptxas assembles the kernel; sm_80 (no such instruction in LLVM's NVPTX): the same PTX.
The rewrite: lit_tests/passes/prefetch-epilogue-operands.mlir; GPU numerics and speed: the
rows of benchmarks/fused_gemm.py's VARIANTS (--only)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch

import tilec
import tilec.language as T
from tilec.compiler.tensorcore.ptx import ptxas_check

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import fused_gemm  # noqa: E402


@tilec.jit
def row_scale(A, B, scale, block_M=64, block_N=64, block_K=32, threads=128, num_stages=2):
    """C = (A @ B) * scale[i]: an operand read per row."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    scale: T.Tensor((M,), T.float32)
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
            C_f[i, j] = C_f[i, j] * scale[by * block_M + i]
        T.copy(C_f, C[by * block_M, bx * block_N])
    return C


def _case(name: str) -> fused_gemm.Case:
    return next(case for case in fused_gemm.CASES if case.name == name)


ROW_SCALE = fused_gemm.Case(
    "row_scale", row_scale,
    lambda torch, s, d: fused_gemm._mm_inputs(torch, s, d) + [torch.randn(s[0], device=d)],
    lambda a, b, scale: (a @ b) * scale[:, None], fused_gemm._gemm_flops)
CASES = [_case("bias_relu"), _case("scale_residual"), ROW_SCALE]


SETTINGS = {"prefetch": {"TILEC_EPILOGUE_PREFETCH": "2"},
            "preload": {"TILEC_EPILOGUE_PRELOAD": "1"},
            # issued 4 iterations before the end: K = 96 has 3 (the copy in the first), 328 11
            "preload4": {"TILEC_EPILOGUE_PRELOAD": "4"},
            "both": {"TILEC_EPILOGUE_PREFETCH": "2", "TILEC_EPILOGUE_PRELOAD": "1"}}


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("shape", [(136, 200, 96), (200, 136, 328)])
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_prefetched_epilogue_matches_torch_on_cpu(case, shape, setting, tmp_path,
                                                  monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    for name, value in SETTINGS[setting].items():
        monkeypatch.setenv(name, value)
    torch.manual_seed(2)
    inputs = case.inputs(torch, shape, "cpu")
    kernel = case.kernel.compile(*inputs, target="cpu", **fused_gemm.SMALL_TILE)
    # preloading alone prefetches only where it preloads a tile (scale + residual's R)
    prefetches = "PREFETCH" in str(SETTINGS[setting]) or case.name == "scale_residual"
    assert ("memref.prefetch" in kernel.asm["loops"]) == prefetches
    # the residual tile (scale + residual's R) preloaded: no load of it after the loop
    assert ("tile.epilogue_preload" in kernel.asm["loops"]) == ("PRELOAD" in str(
        SETTINGS[setting]))
    result = kernel.get_profiler().run_poisoned(*inputs)
    expected = case.reference(*[t.float() for t in inputs])
    assert fused_gemm._relative_error(result, expected) < 1e-2


def _ptx(case: fused_gemm.Case, monkeypatch, distance: str | None, arch: str = "sm_90a",
         tile: dict = fused_gemm.TILE) -> str:
    """The kernel's PTX with the L2 prefetch at `distance` (None: unset), the preload as the
    environment has it (the CUDA target's default, n = 1, where unset)."""
    if distance is None:
        monkeypatch.delenv("TILEC_EPILOGUE_PREFETCH", raising=False)
    else:
        monkeypatch.setenv("TILEC_EPILOGUE_PREFETCH", distance)
    meta = case.inputs(fused_gemm._MetaTorch(torch), (1024, 1024, 1024), "meta")
    return case.kernel.compile(*meta, target=f"cuda:{arch}", **tile).get_kernel_source()


# in a consumer thread's PTX: the residual tile's 128 rows x 4 lines over 256 threads (2), the
# bias row's 4 lines and the row scale's 128 f32 (4 lines), each a point some threads repeat
PREFETCHES = {"bias_relu": 1, "scale_residual": 2, "row_scale": 1}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_sm90a_prefetches_the_epilogue_operands(case, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_EPILOGUE_PRELOAD", "0")  # the prefetch alone
    plain = _ptx(case, monkeypatch, None)
    prefetched = _ptx(case, monkeypatch, "4")
    assert "prefetch.global.L2" not in plain
    assert prefetched.count("prefetch.global.L2") == PREFETCHES[case.name]
    assert "wgmma.mma_async" in prefetched
    report = ptxas_check(prefetched, "sm_90a")
    assert report.ok, report.log


@pytest.mark.parametrize("iterations", [1, 4])
def test_sm90a_preloads_the_residual_tile_under_the_last_wgmmas(iterations, tmp_path,
                                                                monkeypatch) -> None:
    """TILEC_EPILOGUE_PRELOAD=n (n = 1 the CUDA target's default, 0 off): scale + residual's R
    tile is loaded in the loop's iteration upper - n (1024 / 64 = 16 K tiles: the loop counter
    compared with 16 - n there), so its global loads come before the wgmma wait_group 0 after
    the loop (without it, all after), as 32-bit vectors of the accumulator layout's pairs (64 a
    consumer thread), and ptxas assembles it without spilling, the 64 registers held through the
    last n K tiles."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    case = _case("scale_residual")

    def loads_before_last_wait(ptx: str) -> int:
        head = ptx[:re.search(r"wgmma\.wait_group\.sync\.aligned\s+0;", ptx).start()]
        return head.count("ld.global")

    monkeypatch.setenv("TILEC_EPILOGUE_PRELOAD", "0")
    assert loads_before_last_wait(_ptx(case, monkeypatch, None)) == 0
    if iterations == 1:  # the default
        monkeypatch.delenv("TILEC_EPILOGUE_PRELOAD")
    else:
        monkeypatch.setenv("TILEC_EPILOGUE_PRELOAD", str(iterations))
    preloaded = _ptx(case, monkeypatch, None)
    assert loads_before_last_wait(preloaded) >= 64
    assert preloaded.count("ld.global.b32") == 64
    report = ptxas_check(preloaded, "sm_90a")
    assert report.ok and report.spill_bytes == 0, report.log


def test_preload_iterations_place_the_copy(tmp_path, monkeypatch) -> None:
    """TILEC_EPILOGUE_PRELOAD=n issues the residual tile's copy in the loop's iteration
    max(lower, upper - n): in the tile stage, the copy's branch compares the loop variable
    with max(0, 16 - n) for 16 K tiles (the L2 prefetch, d = 8, with max(0, 16 - 9)); another
    n is another kernel (a compile setting)."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_EPILOGUE_PREFETCH", "8")
    case = _case("scale_residual")
    meta = case.inputs(fused_gemm._MetaTorch(torch), (1024, 1024, 1024), "meta")
    stages = {}
    for iterations in ("1", "4"):
        monkeypatch.setenv("TILEC_EPILOGUE_PRELOAD", iterations)
        kernel = case.kernel.compile(*meta, target="cuda:sm_90a", **fused_gemm.TILE)
        stages[iterations] = kernel.asm["tile-cuda"]
    for iterations, text in stages.items():
        assert f"tile.epilogue_preload = {iterations} : i64" in text
        assert re.search(rf"arith\.subi %c16\w*, %c{iterations}\w* : index\n\s*%\w+ = "
                         r"arith\.maxsi %c0\w*, %\w+ : index\n\s*%\w+ = arith\.cmpi eq",
                         text), text


def test_sm80_has_no_l2_prefetch_and_keeps_its_kernel(tmp_path, monkeypatch) -> None:
    """LLVM's NVPTX backend selects prefetch.global.L2 for sm_90 and later only (an abort on
    sm_80): there the setting changes nothing."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    case = _case("scale_residual")
    plain = _ptx(case, monkeypatch, None, "sm_80", fused_gemm.QUICKSTART_TILE)
    assert _ptx(case, monkeypatch, "2", "sm_80", fused_gemm.QUICKSTART_TILE) == plain
    assert "mma.sync" in plain and "prefetch" not in plain


def test_prefetches_keep_a_ring_s_consumers_private(tmp_path, monkeypatch) -> None:
    """With TILEC_RING_PRIVATE_TILES=1 the consumers of a ring GEMM meet only at the TMA
    store's barriers of their own slabs: the prefetch and preload branches touch no shared
    memory, so none is added around the loop or between tiles (2 consumer warpgroups: no
    barrier over all 256 consumer threads)."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_RING_PRIVATE_TILES", "1")
    monkeypatch.setenv("TILEC_EPILOGUE_PRELOAD", "1")
    ptx = _ptx(_case("scale_residual"), monkeypatch, "8")
    assert ptx.count("prefetch.global.L2") == 2 and ptx.count("ld.global.b32") == 64
    assert ptx.count("bar.sync \t1, 256") == 0
