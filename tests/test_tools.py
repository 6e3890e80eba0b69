"""tilec.tools as TileLang's tilelang.tools: plot_layout (fragment maps, swizzles and their bank
conflicts, in the trace page too) and the Analyzer (FLOPs, global bytes, roofline time)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

import tilec
import tilec.language as T
from tilec.carver.arch import CPU, CUDA
from tilec.compiler.layouts.linear import LinearLayout
from tilec.compiler.layouts.nvidia import mma_accumulator
from tilec.errors import CompileError, TilecError
from tilec.tools import Analyzer, plot_layout
from tilec.tools.analyzer import PEAKS
from tilec.tools.layout_plot import fragment_map, shared_map, wavefronts
from tilec.tools.trace_page import page_data

PNG = b"\x89PNG\r\n\x1a\n"

# ----- layout models -----------------------------------------------------------------------


def test_mma_accumulator_map_names_each_elements_thread_and_register() -> None:
    found = fragment_map(mma_accumulator(16, 8))
    assert (found.rows, found.columns, found.threads, found.registers) == (16, 8, 32, 4)
    assert len(found.holders) == 16 * 8
    assert all(len(cell) == 1 for cell in found.holders.values())
    # PTX's m16n8 C fragment: c0, c1 at (lane / 4, 2 * (lane % 4) + {0, 1}), c2, c3 8 rows down
    for lane in range(32):
        row, column = lane // 4, 2 * (lane % 4)
        assert found.holders[(row, column)] == [(lane, 0)]
        assert found.holders[(row, column + 1)] == [(lane, 1)]
        assert found.holders[(row + 8, column)] == [(lane, 2)]


def test_t_fragment_and_its_text_form_map_alike() -> None:
    fragment = T.Fragment((4, 8), forward_fn=lambda i, j: (i * 4 + j // 2, j % 2))
    found = fragment_map(fragment)
    assert found.holders[(3, 5)] == [(14, 1)]
    linear = LinearLayout.from_holders((4, 8), fragment.holders(), 16)
    assert fragment_map(str(linear)).holders == found.holders


def test_a_broadcast_fragment_lists_every_copy() -> None:
    reduced = mma_accumulator(16, 8).slice(1)  # what a row reduction leaves: 4 copies a row
    found = fragment_map(reduced)
    assert found.rows == 1 and found.columns == 16
    assert {len(cell) for cell in found.holders.values()} == {4}


def test_bank_conflicts_of_column_reads() -> None:
    # 8 rows of 128 bytes, chunk 0 of each: the same 4 banks 8 times
    assert wavefronts([row * 128 for row in range(8)]) == 8
    assert wavefronts([row * 16 for row in range(8)]) == 1
    assert wavefronts([0, 4, 8, 12], access_bytes=4) == 1
    assert wavefronts([0, 128, 256], access_bytes=4) == 3
    plain = shared_map("none", (64, 64), 2)
    assert {w for row in plain.wavefronts for w in row} == {8}
    for swizzle in ("128B", "#tile.swizzle<128B>", "xor"):
        found = shared_map(swizzle, (64, 64), 2)
        assert {w for row in found.wavefronts for w in row} == {1}, swizzle
    # mma.sync's xor swizzle on rows of 64 bytes (4 chunks): still conflict-free
    assert {w for row in shared_map("xor", (32, 32), 2).wavefronts for w in row} == {1}
    padded = shared_map("#tile.swizzle<none, pad = 8>", (64, 64), 2)
    assert {w for row in padded.wavefronts for w in row} == {1}


# ----- pictures ----------------------------------------------------------------------------

def test_plot_layout_writes_the_files_asked_for(tmp_path: Path) -> None:
    png = plot_layout(mma_accumulator(16, 8), tmp_path / "c.png")
    assert png == [tmp_path / "c.png"] and png[0].read_bytes()[:8] == PNG
    written = plot_layout("128B", tmp_path / "out", name="a_shared", formats="png,svg",
                          shape=(64, 64), dtype=T.float16)
    assert [p.name for p in written] == ["a_shared.png", "a_shared.svg"]
    assert "<svg" in written[1].read_text()
    transpose = T.Layout((4, 4), lambda i, j: (j, i))
    assert plot_layout(transpose, tmp_path / "t.pdf")[0].read_bytes()[:4] == b"%PDF"
    with pytest.raises(TilecError, match="formats are"):
        plot_layout(transpose, tmp_path, formats="gif")
    with pytest.raises(TilecError, match="shape= and dtype="):
        plot_layout("128B", tmp_path / "x.png")
    with pytest.raises(TilecError, match="cannot draw"):
        plot_layout(42, tmp_path / "x.png")


def test_plot_layout_takes_a_make_swizzled_layout_request(tmp_path: Path) -> None:
    from tilec.layout import SwizzledLayout

    request = SwizzledLayout((64, 64), "float16", "64B")
    assert plot_layout(request, tmp_path / "s.png")[0].read_bytes()[:8] == PNG


@tilec.jit(target="cpu")
def f32_gemm(A, B, block=16):
    M, N, K = T.const("M, N, K")
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=32) as (bx, by):
        A_shared = T.alloc_shared((block, block), T.float32)
        B_shared = T.alloc_shared((block, block), T.float32)
        C_local = T.alloc_fragment((block, block), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block), num_stages=2):
            T.copy(A[by * block, k * block], A_shared)
            T.copy(B[k * block, bx * block], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block, bx * block])
    return C


def _pictures(trace: object, step: str) -> dict[str, str]:
    data = page_data([trace])
    steps = data["kernels"][0]["steps"]
    chosen = next(s for s in steps if s["name"] == step)
    return {d["name"]: d["picture"] for d in chosen["decisions"] if d["op"] == "tile.alloc"}


def test_trace_page_shows_fragment_and_swizzle_pictures() -> None:
    simt = f32_gemm.compile(M=32, N=32, K=32, target="cuda:sm_80").trace()
    layout = next(d for d in simt.step("infer-fragment-layout").decisions if d.name == "C_local")
    assert layout.attributes["tile.layout"].startswith("#tile.linear<[16, 16]")
    pictures = _pictures(simt, "infer-fragment-layout")
    assert base64.b64decode(pictures["C_local"].split(",", 1)[1])[:8] == PNG
    assert pictures["A_shared"] == ""  # no layout attribute: nothing to draw
    quickstart = Path(__file__).resolve().parents[1] / "examples" / "quickstart.py"
    from tilec.cli import _load_module

    matmul = _load_module(quickstart).matmul
    tensorcore = matmul.compile(M=128, N=128, K=64, target="cuda:sm_80").trace()
    swizzled = _pictures(tensorcore, "select-shared-swizzle")
    assert swizzled["A_shared"].startswith("data:image/png;base64,")
    shared = next(d for d in tensorcore.step("select-shared-swizzle").decisions
                  if d.name == "A_shared")
    assert shared.attributes["tile.swizzle"] == '"xor"'
    assert json.loads(json.dumps(swizzled))  # plain strings the page embeds


# ----- the Analyzer ------------------------------------------------------------------------

M = N = K = 256


@tilec.jit
def nt_gemm(A, B, block_M=None, block_N=None, block_K=None, num_stages=None, dtype=T.float16):
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((N, K), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_N, block_K), dtype)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[bx * block_N, k * block_K], B_shared)
            T.gemm(A_shared, B_shared, C_local, transpose_B=True)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


@tilec.jit
def bias_relu(X, Y, block=64):
    R, S = T.const("R, S")
    X: T.Tensor((R, S), T.float32)
    Y: T.Tensor((S,), T.float32)
    Z = T.empty((R, S), T.float32)
    with T.Kernel(T.ceildiv(R, block), threads=128) as bx:
        for i, j in T.Parallel(block, S):
            Z[bx * block + i, j] = T.max(X[bx * block + i, j] + Y[j], 0.0)
    return Z


def test_analyzer_counts_gemm_flops_and_copy_bytes_of_the_grid() -> None:
    tir = nt_gemm.get_tir(block_M=64, block_N=128, block_K=32, num_stages=2)
    device = CUDA("cuda:sm_90a")
    result = Analyzer.analysis(tir, device)
    assert result.total_flops == 2 * M * N * K
    blocks = (N // 128) * (M // 64)
    per_block = (K // 32) * (64 * 32 + 128 * 32) * 2 + 64 * 128 * 2
    assert result.total_global_bytes == blocks * per_block
    peak = PEAKS["sm_90a"]
    flops_16 = 4096 * device.compute_max_core * peak.clock_hz
    assert result.expected_tflops == round(flops_16 / 1e12, 1) == 989.4
    assert result.expected_bandwidth_GBps == 4800.0
    assert result.estimated_time == pytest.approx(max(result.total_flops / flops_16,
                                                      result.total_global_bytes / 4.8e12))
    # the same numbers from a compiled kernel, and A100 figures for sm_80
    kernel = nt_gemm.compile(block_M=64, block_N=128, block_K=32, num_stages=2, target="cpu")
    assert Analyzer.analysis(kernel, device) == result
    a100 = Analyzer.analysis(tir, CUDA("cuda:sm_80"))
    assert a100.expected_tflops == 311.9 and a100.expected_bandwidth_GBps == 2039.0


def test_analyzer_peak_follows_the_operand_type() -> None:
    tir = nt_gemm.get_tir(block_M=64, block_N=64, block_K=32, num_stages=2, dtype=T.float32)
    result = Analyzer.analysis(tir, CUDA("cuda:sm_90a"))
    assert result.expected_tflops == 494.7  # tf32: half the 16-bit rate
    assert result.total_flops == 2 * M * N * K


def test_analyzer_counts_parallel_loads_and_stores_per_point() -> None:
    result = Analyzer.analysis(bias_relu.get_tir(R=300, S=96), CUDA("cuda:sm_90a"))
    blocks = -(-300 // 64)
    assert result.total_flops == 0 and result.expected_tflops is None
    assert result.total_global_bytes == blocks * 64 * 96 * 3 * 4  # X, Y read, Z written
    assert result.estimated_time == pytest.approx(result.total_global_bytes / 4.8e12)


def test_analyzer_rejects_what_it_cannot_count() -> None:
    with pytest.raises(TilecError, match="no peak figures"):
        Analyzer.analysis(bias_relu.get_tir(R=64, S=32), CPU())
    with pytest.raises(TilecError, match="tile IR"):
        Analyzer.analysis("not a kernel", CUDA("cuda:sm_90a"))

    @tilec.jit
    def dynamic_rows(X):
        R = T.dynamic("R")
        X: T.Tensor((R, 32), T.float32)
        Y = T.empty((R, 32), T.float32)
        with T.Kernel(T.ceildiv(R, 32), threads=32) as bx:
            T.copy(X[bx * 32, 0], Y[bx * 32, 0])
        return Y

    with pytest.raises(CompileError, match="run-time size") as error:
        Analyzer.analysis(dynamic_rows.get_tir(), CUDA("cuda:sm_90a"))
    assert re.search(r"test_tools\.py:\d+", str(error.value))
