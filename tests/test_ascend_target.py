"""The ascend target: AscendC source for the CUDA suite's kernels and TileLang-syntax kernels,
compiled with the host C++ compiler against ascend_include/kernel_operator.h (a syntax and type
check: nothing runs), and the clear errors for what it does not lower."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest
import torch

import tilec
import tilec.language as T
from tilec.compiler.targets.ascend import check_source
from tilec.errors import CompileError, LaunchError

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_artifacts import compile_spec  # noqa: E402
from kernels import all_kernels  # noqa: E402

# CI sets TILEC_REQUIRE_CXX=1: there a missing compiler fails these tests instead of skipping
needs_compiler = pytest.mark.skipif(
    shutil.which("c++") is None and shutil.which("g++") is None
    and os.environ.get("TILEC_REQUIRE_CXX") != "1", reason="needs a host C++ compiler")

# the CUDA suite's kernels the ascend target emits; each of the others is a CompileError
EMITTED = {
    "vector_add_float32", "vector_add_float16", "gemm_float16_128x128x32",
    "gemm_bfloat16_128x128x32", "gemm_float16_64x128x32", "gemm_float16_64x128x32_cp_async3",
    "gemm_float32_128x128x32", "gemm_float32_128x128x64", "gemm_float16_64x64x32_tb_bias_relu",
    "broadcast_float32", "broadcast_float16", "softmax_float32_512",
    "softmax_float16_512", "reduce_sum_float32", "reduce_max_float32", "reduce_min_float32",
    "reduce_abssum_float32", "reduce_absmax_float32", "row_sum_float32_cp_async2",
    "row_sum_float32_cp_async3", "row_sum_float32_cp_async4", "row_sum_float16_cp_async3",
    "softmax_long_float32_cp_async2", "softmax_long_float16_cp_async3",
    "gemm_float32_64x64x32_cp_async4", "column_sum_float32",
}
REFUSED: dict[str, str] = {}  # what each of the others needs that the target does not lower
SPECS = list(all_kernels())


@needs_compiler
@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_suite_kernel_emits_checked_source_or_a_clear_error(spec) -> None:
    if spec.name not in EMITTED:
        reason = next((v for k, v in REFUSED.items() if spec.name.startswith(k)), None)
        with pytest.raises(CompileError, match=reason or "the ascend target"):
            compile_spec(spec, "ascend")
        return
    artifact = compile_spec(spec, "ascend")
    assert artifact.binary_kind == "ascendc"
    source = artifact.binary.decode()
    assert f"void tilec_{spec.name}(" in source
    check_source(source)


def test_the_list_covers_the_suite() -> None:
    names = {s.name for s in SPECS}
    assert EMITTED <= names
    assert all(any(n.startswith(k) for k in REFUSED) for n in names - EMITTED), (
        names - EMITTED)


# -- TileLang-syntax kernels --------------------------------------------------------------


def matmul(M: int, N: int, K: int, block_M: int = 64, block_N: int = 64, block_K: int = 32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def scaled_cast(N: int, block: int = 512):
    @T.prim_func
    def main(X: T.Tensor((N,), "float16"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            x = T.alloc_fragment((block,), "float16")
            y = T.alloc_fragment((block,), "float32")
            T.copy(X[bx * block], x)
            for i in T.Parallel(block):
                y[i] = T.exp(T.cast(x[i], "float32")) - 1.0
            T.copy(y, Y[bx * block])

    return main


def relu_epilogue(M: int, N: int, K: int):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as _:
            A_shared = T.alloc_shared((M, K), "float16")
            B_shared = T.alloc_shared((K, N), "float16")
            C_local = T.alloc_fragment((M, N), "float32")
            T.clear(C_local)
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(M, N):
                C_local[i, j] = T.max(C_local[i, j], 0.0)
            T.copy(C_local, C)

    return main


@needs_compiler
def test_gemm_runs_on_the_cube() -> None:
    source = tilec.compile(matmul(512, 256, 256), target="ascend").get_kernel_source()
    for expected in ("TQue<TPosition::A1, 3>", "TQue<TPosition::B1, 3>", "TPosition::A2",
                     "TPosition::B2", "TQue<TPosition::CO1, 1>", "Nd2NzParams", "LoadData(",
                     "Mmad(", "Fixpipe(", "GetBlockIdx()"):
        assert expected in source, expected
    check_source(source)


@needs_compiler
def test_the_quickstart_converts_on_the_fixpipe() -> None:
    """The quickstart's f32 accumulator copied into an f16 tensor: the conversion T.Parallel
    the frontend makes leaves no code, the Fixpipe converts on its way out of L0C."""
    path = Path(__file__).resolve().parent.parent / "examples" / "quickstart.py"
    spec = importlib.util.spec_from_file_location("quickstart", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    quickstart = module.matmul
    a = torch.randn(512, 256).half()
    b = torch.randn(256, 384).half()
    source = quickstart.compile(a, b, target="ascend").get_kernel_source()
    assert "GetValue" not in source and "Cast(" not in source
    assert source.count("Fixpipe(gm2[") == 1
    check_source(source)


@needs_compiler
def test_elementwise_runs_on_the_vector_unit() -> None:
    source = tilec.compile(scaled_cast(4096), target="ascend").get_kernel_source()
    body = source[source.index("GetBlockIdx"):]
    calls = [line.strip().split("(")[0] for line in body.splitlines()
             if line.strip().startswith(("Cast", "Exp", "Adds", "DataCopy"))]
    assert calls == ["DataCopy", "Cast", "Exp", "Adds", "DataCopy"], calls
    assert "RoundMode::CAST_NONE" in body and "static_cast<float>(-(1.0f))" in body
    assert "GetValue" not in body  # no scalar loop
    check_source(source)


@needs_compiler
def test_the_check_fails_on_a_type_error() -> None:
    """The header check is a check: a vector Add on a global tensor does not compile."""
    source = tilec.compile(scaled_cast(4096), target="ascend").get_kernel_source()
    broken = source.replace("Exp(", "Exp(gm1, ", 1)
    with pytest.raises(CompileError, match="does not compile"):
        check_source(broken)


@needs_compiler
def test_the_cpu_suites_kernels() -> None:
    """tests/test_numerics_cpu.py's kernels: those the target lowers compile against the
    header; the other (an accumulator the vector unit reads between gemms, as flash attention
    rescales its output) is an error at its line."""
    import test_numerics_cpu as cpu

    emitted = {
        "matmul": lambda: cpu.matmul.compile(torch.randn(64, 64).half(),
                                             torch.randn(64, 64).half(), target="ascend"),
        "add_row_bias": lambda: cpu.add_row_bias.compile(M=64, N=64, target="ascend"),
        "outer_scale": lambda: tilec.compile(cpu.outer_scale(64, 64), target="ascend"),
        "softmax": lambda: tilec.compile(cpu.softmax(64, 64), out_idx=[1], target="ascend"),
        "dynamic_scale": lambda: tilec.compile(cpu.dynamic_scale(), out_idx=[1],
                                               target="ascend"),
        "unary_math": lambda: tilec.compile(cpu.unary_math(64, "exp"), target="ascend"),
        "control_flow": lambda: tilec.compile(cpu.control_flow(64), target="ascend"),
        "row_scale": lambda: cpu.row_scale.compile(torch.randn(64, 16), torch.randn(16),
                                                   target="ascend"),
        "gemm_bias_relu": lambda: tilec.compile(cpu.gemm_bias_relu(64, 64, 64), out_idx=[-1],
                                                target="ascend"),
        "column_sum": lambda: tilec.compile(cpu.column_sum(64, 64), target="ascend"),
    }
    for make in emitted.values():
        check_source(make().get_kernel_source())
    refused = {
        "that a later tile.gemm accumulates into": lambda: tilec.compile(
            cpu.flash_attention(1, 2, 64, 16, False), out_idx=[3], target="ascend"),
    }
    for message, make in refused.items():
        with pytest.raises(CompileError, match=message) as raised:
            make()
        assert raised.value.filename == cpu.__file__


@needs_compiler
def test_while_loops_and_variables_run_on_the_scalar_unit() -> None:
    import test_numerics_cpu as cpu

    source = tilec.compile(cpu.control_flow(64), target="ascend").get_kernel_source()
    assert "int32_t t" in source and "[1] = {};" in source  # T.alloc_var: scalar variables
    assert "while (true) {" in source and ") break;" in source


@needs_compiler
def test_a_transposed_operand_flips_its_load() -> None:
    """Q @ K^T: B stored N x K is loaded into L0B without the transpose a K x N B takes."""

    def scores(M: int, N: int, K: int):
        @T.prim_func
        def main(Q: T.Tensor((M, K), "float16"), Kt: T.Tensor((N, K), "float16"),
                 S: T.Tensor((M, N), "float32")):
            with T.Kernel(1, threads=128) as _:
                Q_shared = T.alloc_shared((M, K), "float16")
                K_shared = T.alloc_shared((N, K), "float16")
                S_local = T.alloc_fragment((M, N), "float32")
                T.copy(Q, Q_shared)
                T.copy(Kt, K_shared)
                T.gemm(Q_shared, K_shared, S_local, transpose_B=True, clear_accum=True)
                T.copy(S_local, S)

        return main

    source = tilec.compile(scores(64, 128, 32), target="ascend").get_kernel_source()
    assert "MmadParams{64, 128, 32," in source
    assert source.count("false, 0});") == 2  # neither load transposes
    check_source(source)


@needs_compiler
def test_an_epilogue_reaches_the_vector_unit_through_the_workspace() -> None:
    """The 910B's L0C has no path to UB: after the last gemm the accumulator goes out to the
    core's slice of a global workspace (Fixpipe) and back into UB (DataCopy), where the ReLU
    runs; the copy out is then a plain DataCopy from UB."""
    kernel = tilec.compile(relu_epilogue(64, 64, 32), target="ascend")
    source = kernel.get_kernel_source()
    assert "GM_ADDR p2, GM_ADDR workspace)" in source
    assert kernel.artifact.launch["workspace_elements"] == 64 * 64
    body = source[source.index("Mmad("):]
    steps = ["Fixpipe(ws[0]", "WaitFlag<HardEvent::FIX_MTE2>", "DataCopy(t3_ub, ws[0], 4096)",
             "Maxs(t3_ub, t3_ub", "DataCopy(gm2[0 * 64 + 0], t3_ub, DataCopyParams"]
    places = [body.index(step) for step in steps]
    assert places == sorted(places), body
    check_source(source)


def atomic_sum(N: int, block: int = 64):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), total: T.Tensor((1,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            x = T.alloc_fragment((block,), "float32")
            s = T.alloc_fragment((1,), "float32")
            T.copy(X[bx * block], x)
            T.reduce_sum(x, s, dim=0)
            for _ in T.Parallel(1):  # once per block (check-scalar-stores)
                T.atomic_add(total[0], s[0])

    return main


@needs_compiler
def test_atomic_adds_into_gm_go_out_through_mte3() -> None:
    """Each AI core's partial sum is added into GM by an MTE3 copy with the atomic add set,
    from a UB scratch element the scalar unit wrote; the pipes are ordered around it."""
    source = tilec.compile(atomic_sum(1000), target="ascend").get_kernel_source()
    body = source[source.index("GetBlockIdx()"):]
    steps = ["if (true) {", "SetFlag<HardEvent::S_MTE3>", "SetAtomicAdd<float>();",
             "DataCopyPad(gm1[0], tmp", "SetAtomicNone();", "WaitFlag<HardEvent::MTE3_S>"]
    places = [body.index(step) for step in steps]
    assert places == sorted(places), body
    check_source(source)


def test_an_atomic_returning_the_previous_value_is_a_clear_error() -> None:
    @T.prim_func
    def previous(X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=1) as _:
            old = T.atomic_add(X[0], 1.0, return_prev=True)
            Y[0] = old

    with pytest.raises(CompileError, match="no atomic that returns the element's previous "
                                           "value") as raised:
        tilec.compile(previous, target="ascend")
    assert raised.value.filename == __file__


def test_an_ascend_kernel_does_not_run_here() -> None:
    kernel = tilec.compile(scaled_cast(1024), out_idx=[-1], target="ascend")
    with pytest.raises(LaunchError, match="no runtime for target 'ascend'"):
        kernel(torch.randn(1024).half())


def test_an_unknown_chip_is_a_clear_error() -> None:
    with pytest.raises(CompileError, match="unsupported Ascend chip '310p'"):
        tilec.compile(scaled_cast(1024), target="ascend:310p")


def test_a_tile_past_an_ai_cores_memory_is_an_error() -> None:
    """An AI core of the 910B has 192 KB of UB (here x, y and the two vector temporaries of
    32768 elements: 64 + 3 x 128 KB) and 128 KB of L0C."""
    with pytest.raises(CompileError, match="keeps 458752 bytes in UB; an AI core of the 910b "
                                           "has 196608"):
        tilec.compile(scaled_cast(1 << 16, block=1 << 15), target="ascend")
    with pytest.raises(CompileError, match="keeps 262144 bytes in L0C"):
        tilec.compile(matmul(256, 256, 64, block_M=256, block_N=256), target="ascend")
