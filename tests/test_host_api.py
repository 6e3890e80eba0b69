"""TileLang's host API on tilec: PassConfigKey and the configs a kernel honours (seen in its
stage IR), cdiv / math, tilec.testing's decorators and asserts."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import tilec
import tilec.language as T
import tilec.testing
from tilec import PassConfigKey
from tilec.compiler.targets.cuda import ptxas_path
from tilec.errors import TilecError
from tilec.transform import codegen_settings, normalize_pass_configs

TMA_OFF = {PassConfigKey.TL_DISABLE_TMA_LOWER: True}
WARP_SPECIALIZATION_OFF = {PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True}
FAST_MATH = {PassConfigKey.TL_ENABLE_FAST_MATH: True}
FAST_MATH_FLAGS = "fastmath<arcp,contract,afn>"


@tilec.jit
def matmul(A, B, block_M=128, block_N=128, block_K=64):
    M, N, K = T.const("M, N, K")
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_K, block_N), T.float16)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


def row_softmax(M: int, N: int, block_M: int = 4):
    @T.prim_func
    def kernel(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            rows = T.alloc_fragment((block_M, N), "float32")
            row_max = T.alloc_fragment((block_M,), "float32")
            row_sum = T.alloc_fragment((block_M,), "float32")
            T.copy(X[bx * block_M, 0], rows)
            T.reduce_max(rows, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                rows[i, j] = T.exp(rows[i, j] - row_max[i])
            T.reduce_sum(rows, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                rows[i, j] = rows[i, j] / row_sum[i]
            T.copy(rows, Y[bx * block_M, 0])

    return kernel


def gemm_operands(m: int = 512, n: int = 512, k: int = 512) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.empty(m, k, dtype=torch.float16), torch.empty(k, n, dtype=torch.float16)


# ----- PassConfigKey ----------------------------------------------------------------------------


def test_pass_config_key_is_a_str_enum_with_tilelang_values() -> None:
    pairs = {
        "TL_DISABLE_WARP_SPECIALIZED": "tl.disable_warp_specialized",
        "TL_ENABLE_FAST_MATH": "tl.enable_fast_math",
        "TL_DISABLE_TMA_LOWER": "tl.disable_tma_lower",
        "TL_DISABLE_THREAD_STORAGE_SYNC": "tl.disable_thread_storage_sync",
        "TL_SIMPLIFY": "tl.Simplify",
        "TIR_DISABLE_VECTORIZE": "tirx.disable_vectorize",
        "CUDA_KERNELS_OUTPUT_DIR": "cuda.kernels_output_dir",
    }
    for name, value in pairs.items():
        key = PassConfigKey[name]
        assert key == value and str(key) == value and hash(key) == hash(value)
        assert PassConfigKey(value) is key and isinstance(key, str)
    assert tilec.transform.PassConfigKey is PassConfigKey
    assert {PassConfigKey.TL_ENABLE_FAST_MATH: 1}["tl.enable_fast_math"] == 1


def test_normalize_accepts_members_strings_and_legacy_tir_keys() -> None:
    configs = normalize_pass_configs({
        PassConfigKey.TL_DISABLE_TMA_LOWER: True,
        "tl.disable_warp_specialized": False,
        "tir.disable_vectorize": True,  # TileLang's spelling before tirx
        PassConfigKey.TL_SIMPLIFY: {PassConfigKey.TL_SIMPLIFY_ENABLE_LET_INLINE: False},
    })
    assert configs == {
        "tirx.disable_vectorize": True, "tl.Simplify": {"enable_simplify_let_inline": False},
        "tl.disable_tma_lower": True, "tl.disable_warp_specialized": False,
    }
    assert all(type(key) is str for key in configs)
    assert normalize_pass_configs(None) == {}


@pytest.mark.parametrize(("configs", "message"), [
    ({"tl.disable_tma_lowering": True}, "unknown pass config 'tl.disable_tma_lowering'.*"
                                        "did you mean 'tl.disable_tma_lower'"),
    ({3: True}, "PassConfigKey members or their string values"),
    ({PassConfigKey.TL_ENABLE_FAST_MATH: "yes"}, "takes True or False"),
    ({PassConfigKey.TL_SIMPLIFY_ENABLE_LET_INLINE: False}, "is an option of .*TL_SIMPLIFY"),
    ({PassConfigKey.TL_SIMPLIFY: {"tl.disable_tma_lower": True}}, "not a tl.Simplify option"),
    ({PassConfigKey.TL_ENABLE_FAST_MATH: True, PassConfigKey.TL_DISABLE_FAST_MATH: True},
     "both True"),
    ([("tl.enable_fast_math", True)], "must be a dict"),
])
def test_bad_pass_configs_are_clear_errors(configs, message: str) -> None:
    with pytest.raises(TilecError, match=message):
        normalize_pass_configs(configs)


def test_an_unknown_key_in_jit_names_the_kernel() -> None:
    with pytest.raises(TilecError, match="unknown pass config") as raised:
        @tilec.jit(pass_configs={"tl.no_such_key": True})
        def kernel(A):
            pass
    assert raised.value.filename == __file__


def test_codegen_settings_follow_the_honoured_keys() -> None:
    assert codegen_settings({}) == codegen_settings({"tl.disable_thread_storage_sync": True})
    assert codegen_settings(normalize_pass_configs(FAST_MATH)).fast_math
    assert codegen_settings(normalize_pass_configs(TMA_OFF)).disable_tma
    assert codegen_settings(normalize_pass_configs(WARP_SPECIALIZATION_OFF)).disable_tma
    assert not codegen_settings({"tl.disable_tma_lower": False}).disable_tma


# ----- honoured configs in the stage IR -------------------------------------------------------


def test_tma_ring_by_default_on_sm90a() -> None:
    a, b = gemm_operands()
    stage = matmul.compile(a, b, target="cuda:sm_90a").asm["tile-schedule"]
    assert 'mechanism = "tma-mbarrier"' in stage and "tile.warp_specialize" in stage
    assert "tile.disable_tma" not in stage


@pytest.mark.parametrize("configs", [TMA_OFF, WARP_SPECIALIZATION_OFF], ids=["tma", "ws"])
def test_disabling_tma_or_warp_specialization_gives_the_cp_async_kernel(configs) -> None:
    a, b = gemm_operands()
    jitted = tilec.jit(matmul.fn, pass_configs=configs)
    kernel = jitted.compile(a, b, target="cuda:sm_90a")
    stage = kernel.asm["tile-schedule"]
    assert "tile.disable_tma" in stage
    assert 'mechanism = "cp.async"' in stage and "tma-mbarrier" not in stage
    assert "tile.warp_specialize" not in stage
    assert "tile.tensorcore" not in kernel.asm["tile-cuda"]  # no TMA/wgmma kernel
    assert "cp.async" in kernel.asm["ptx"]
    assert kernel.pass_configs == normalize_pass_configs(configs)
    assert kernel.ignored_pass_configs == {}


def test_compile_time_configs_override_the_decorators() -> None:
    a, b = gemm_operands()
    jitted = tilec.jit(matmul.fn, pass_configs=TMA_OFF)
    spec = jitted.specialize((a, b), {}, "cuda:sm_90a", {"tl.disable_tma_lower": False})
    assert spec.pass_configs == {"tl.disable_tma_lower": False}
    assert not codegen_settings(spec.pass_configs).disable_tma


def test_configs_are_part_of_the_cache_key() -> None:
    a, b = gemm_operands()
    plain = matmul.specialize((a, b), {}, "cuda:sm_90a")
    keys = {plain.key}
    for configs in (TMA_OFF, WARP_SPECIALIZATION_OFF, FAST_MATH):
        keys.add(tilec.jit(matmul.fn, pass_configs=configs).specialize((a, b), {},
                                                                        "cuda:sm_90a").key)
    assert len(keys) == 4
    assert tilec.jit(matmul.fn, pass_configs={}).specialize((a, b), {}, "cuda:sm_90a").key == (
        plain.key)


def test_compile_settings_are_part_of_the_cache_key(monkeypatch) -> None:
    """A kernel compiled under one of the CUDA target's opt-in variables is another kernel:
    neither the disk cache nor the process's kernels hand the one compiled without it back."""
    from tilec.cache import COMPILE_SETTINGS

    a, b = gemm_operands()
    keys = {matmul.specialize((a, b), {}, "cuda:sm_90a").key}
    for name in COMPILE_SETTINGS:
        monkeypatch.setenv(name, "1")
        keys.add(matmul.specialize((a, b), {}, "cuda:sm_90a").key)
        monkeypatch.delenv(name)
    assert len(keys) == 1 + len(COMPILE_SETTINGS)
    assert matmul.specialize((a, b), {}, "cuda:sm_90a").key in keys


@pytest.mark.parametrize("value", [None, "", "1", "ring"])
def test_settings_read_as_os_environ_has_them(monkeypatch, value: str | None) -> None:
    """cache.environment / compile_settings read os.environ's own dict (os.environ.get's
    KeyError per unset name cost an eager call most of its host time): the same answers for a
    name set, empty or unset within the process, in COMPILE_SETTINGS' order."""
    from tilec import cache

    monkeypatch.setenv("TILEC_FAST_MATH_FTZ", "1")  # set first, listed after TILEC_FUSE_LOP3
    for name in ("TILEC_FUSE_LOP3", "TILEC_TARGET"):
        monkeypatch.delenv(name, raising=False)
        if value is not None:
            monkeypatch.setenv(name, value)
        assert cache.environment(name) == os.environ.get(name)
    expected = {"TILEC_FUSE_LOP3": value} if value else {}
    assert list(cache.compile_settings().items()) == [*expected.items(),
                                                      ("TILEC_FAST_MATH_FTZ", "1")]


def test_compile_settings_are_part_of_the_in_memory_kernels(tmp_path, monkeypatch) -> None:
    """The kernels a process keeps by call (an eager jit function's, the autotuner's results)
    are keyed by the opt-in variables too: an autotuned factory given every tuned argument,
    called again under TILEC_WARPGROUP_PINGPONG=1, handed back the kernel compiled without it
    (benchmarks/attention.py's ping-pong rows of TileLang's example ran the plain kernel)."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))

    @tilec.autotune(configs=[{"block_M": 4}, {"block_M": 8}], warmup=1, rep=1)
    @tilec.jit(out_idx=[-1], target="cpu")
    def double(M, block_M=4):
        @T.prim_func
        def kernel(X: T.Tensor((M,), "float32"), Y: T.Tensor((M,), "float32")):
            with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
                for i in T.Parallel(block_M):
                    Y[bx * block_M + i] = X[bx * block_M + i] * 2.0
        return kernel

    plain = double(16, block_M=4)
    assert double(16, block_M=4) is plain
    monkeypatch.setenv("TILEC_WARPGROUP_PINGPONG", "1")
    assert double(16, block_M=4) is not plain
    monkeypatch.delenv("TILEC_WARPGROUP_PINGPONG")
    a = torch.randn(128, 64, dtype=torch.float16)
    b = torch.randn(64, 128, dtype=torch.float16)
    eager = tilec.jit(matmul.fn, target="cpu")
    eager(a, b)
    monkeypatch.setenv("TILEC_WARPGROUP_PINGPONG", "1")
    eager(a, b)
    assert len(eager._kernels) == 2


def test_a_factory_called_again_with_the_same_sizes_is_not_run_again(monkeypatch) -> None:
    """A prim_func factory's kernel is kept in memory by its arguments, as TileLang keeps it:
    linear_attention/example_linear_attn_bwd.py calls its factory inside the function it
    times, where running it again (and hashing its source) took 25 ms a call. Other sizes, a
    setting of the key's environment, or the cache turned off run it again."""
    runs = []

    @tilec.jit(out_idx=[-1], target="cpu")
    def double(M, block_M=4):
        runs.append(M)

        @T.prim_func
        def kernel(X: T.Tensor((M,), "float32"), Y: T.Tensor((M,), "float32")):
            with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
                for i in T.Parallel(block_M):
                    Y[bx * block_M + i] = X[bx * block_M + i] * 2.0
        return kernel

    first = double(16)
    assert double(16) is first and double(M=16) is not None and runs == [16, 16]
    assert double(M=16) is double(M=16) and runs == [16, 16]
    assert double(32) is not first and runs == [16, 16, 32]
    monkeypatch.setenv("TILEC_WARPGROUP_PINGPONG", "1")
    assert double(16) is not first and runs[-1] == 16 and len(runs) == 4
    monkeypatch.delenv("TILEC_WARPGROUP_PINGPONG")
    monkeypatch.setenv("TILEC_DISABLE_CACHE", "1")
    double(16)
    double(16)
    assert len(runs) == 6
    x = torch.randn(16)
    torch.testing.assert_close(first(x), x * 2.0)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_fast_math_marks_the_ops_and_changes_the_ptx() -> None:
    exact = tilec.compile(row_softmax(8, 64), out_idx=[-1], target="cuda:sm_90a")
    fast = tilec.compile(row_softmax(8, 64), out_idx=[-1], target="cuda:sm_90a",
                         pass_configs=FAST_MATH)
    assert FAST_MATH_FLAGS in fast.asm["tile-schedule"]
    assert "fastmath" not in exact.asm["tile-schedule"]
    assert "math.exp %" in fast.asm["tile-schedule"]
    # libdevice's exact expf (an fma polynomial around ex2.approx.ftz) against one ex2.approx,
    # its .ftz form as fast math flushes f32 denormals (nvcc's --use_fast_math does too)
    assert "ex2.approx.ftz.f32" in exact.asm["ptx"] and "fma.rn.f32" in exact.asm["ptx"]
    assert "ex2.approx.ftz.f32" in fast.asm["ptx"] and "fma.rn.f32" not in fast.asm["ptx"]


def test_fast_math_on_the_cpu_keeps_the_results(rng: torch.Generator) -> None:
    kernel = tilec.compile(row_softmax(8, 64), out_idx=[-1], target="cpu",
                           pass_configs=FAST_MATH)
    assert FAST_MATH_FLAGS in kernel.asm["loops"]
    x = torch.randn(8, 64, generator=rng) * 4
    torch.testing.assert_close(kernel(x).double(), torch.softmax(x.double(), dim=1),
                               rtol=1e-5, atol=1e-6)
    assert kernel.ignored_pass_configs == {}


def test_unused_configs_are_accepted_and_reported() -> None:
    configs = {PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True, "tl.disable_tma_lower": True,
               PassConfigKey.TL_PTXAS_REGISTER_USAGE_LEVEL: 10}
    kernel = tilec.compile(row_softmax(8, 64), out_idx=[-1], target="cpu", pass_configs=configs)
    assert kernel.pass_configs == {"tl.disable_thread_storage_sync": True,
                                   "tl.disable_tma_lower": True,
                                   "tl.ptxas_register_usage_level": 10}
    # the CPU has no TMA: disabling it changes nothing there
    assert kernel.ignored_pass_configs == kernel.pass_configs
    ampere = tilec.compile(row_softmax(8, 64), out_idx=[-1], target="cuda:sm_80",
                           pass_configs=configs)
    assert ampere.ignored_pass_configs == kernel.pass_configs  # nor does sm_80
    hopper = tilec.compile(row_softmax(8, 64), out_idx=[-1], target="cuda:sm_90a",
                           pass_configs=configs)
    assert hopper.ignored_pass_configs == {"tl.disable_thread_storage_sync": True,
                                           "tl.ptxas_register_usage_level": 10}


def test_compile_with_a_bad_config_names_the_kernel() -> None:
    with pytest.raises(TilecError, match="unknown pass config") as raised:
        tilec.compile(row_softmax(8, 64), out_idx=[-1], target="cpu",
                      pass_configs={"tl.fast": True})
    assert raised.value.filename == __file__


# ----- cdiv and tilec.math ------------------------------------------------------------------


def test_cdiv_and_powers_of_two() -> None:
    assert tilec.cdiv(10, 3) == 4 and tilec.cdiv(9, 3) == 3 and tilec.math.cdiv(1, 128) == 1
    assert [tilec.next_power_of_2(v) for v in (0, 1, 2, 3, 64, 65, 1000)] == [
        1, 1, 2, 4, 64, 128, 1024]
    assert tilec.math.next_power_of_2(129) == 256
    with pytest.raises(TilecError, match="non-negative"):
        tilec.next_power_of_2(-4)


def test_cdiv_of_run_time_sizes_inside_a_kernel(rng: torch.Generator) -> None:
    @tilec.jit(target="cpu")
    def double(A, block=16):
        N = T.const("N")
        A: T.Tensor((N,), T.float32)
        B = T.empty((N,), T.float32)
        with T.Kernel(tilec.cdiv(N, block), threads=32) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    B[bx * block + i] = A[bx * block + i] * 2
        return B

    a = torch.randn(50, generator=rng)
    torch.testing.assert_close(double(a), a * 2)


# ----- tilec.testing ---------------------------------------------------------------------------


def _skip_condition(test) -> tuple[bool, str]:
    (mark,) = [m for m in test.pytestmark if m.name == "skipif"]
    return mark.args[0], mark.kwargs["reason"]


def test_requires_decorators_mark_skips(monkeypatch) -> None:
    monkeypatch.setattr(tilec.testing, "cuda_available", lambda: True)
    monkeypatch.setattr(tilec.testing, "compute_version", lambda: (9, 0))

    def probe() -> None: ...

    testing = tilec.testing
    assert _skip_condition(testing.requires_cuda(probe)) == (False, "needs a CUDA GPU")
    for decorator, skipped in [(testing.requires_cuda_compute_version_ge(9, 0), False),
                               (testing.requires_cuda_compute_version_gt(9, 0), True),
                               (testing.requires_cuda_compute_version_le(9, 0), False),
                               (testing.requires_cuda_compute_version_lt(9, 0), True),
                               (testing.requires_cuda_compute_version_eq(8, 0), True),
                               (testing.requires_cuda_compute_version(8, 6), False)]:
        def test() -> None: ...

        skip, reason = _skip_condition(decorator(test))
        assert skip is skipped and "this machine has 9.0" in reason
    with pytest.raises(TilecError, match="compute-version mode"):
        testing.requires_cuda_compute_version(9, 0, mode="above")


def test_decorated_tests_still_run_when_called() -> None:
    calls = []

    @tilec.testing.requires_package("no_such_package_for_tilec")
    def test() -> None:
        calls.append(1)

    assert _skip_condition(test)[0] is True
    test()
    assert calls == [1]


def test_main_runs_pytest_and_skips_what_the_machine_lacks(tmp_path: Path) -> None:
    script = tmp_path / "example_test.py"
    script.write_text(textwrap.dedent("""
        import tilec as tilelang
        import tilec.testing

        @tilelang.testing.requires_package("no_such_package_for_tilec")
        def test_needs_a_package():
            raise AssertionError("must be skipped")

        @tilelang.testing.requires_cuda_compute_version_ge(99, 0)
        def test_needs_a_future_gpu():
            raise AssertionError("must be skipped")

        @tilelang.testing.requires_llvm
        def test_runs_here():
            pass

        if __name__ == "__main__":
            tilelang.testing.main()
    """))
    result = subprocess.run([sys.executable, str(script), "-q", "-p", "no:cacheprovider"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 2 skipped" in result.stdout


def test_set_random_seed_makes_draws_repeat() -> None:
    tilec.testing.set_random_seed(7)
    first = torch.randn(16)
    tilec.testing.set_random_seed(7)
    assert torch.equal(first, torch.randn(16))


def test_testing_asserts() -> None:
    expected = torch.linspace(-1, 1, 100, dtype=torch.float64)
    tilec.testing.assert_allclose(expected.float(), expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(AssertionError, match="1 of 100 elements mismatched"):
        tilec.testing.assert_allclose(expected.clone().index_fill_(0, torch.tensor([5]), 9.0),
                                      expected)
    off = expected.clone()
    off[:3] += 1
    tilec.testing.torch_assert_close(off, expected, max_mismatched_ratio=0.05)
    with pytest.raises(AssertionError, match=r"3 of 100 elements mismatched \(3.0000%"):
        tilec.testing.torch_assert_close(off, expected, max_mismatched_ratio=0.02)
    with pytest.raises(AssertionError, match="differ in dtype"):
        tilec.testing.torch_assert_close(expected.float(), expected)


def test_perf_regression_entry_points(capsys) -> None:
    def regression_fast() -> None:
        tilec.testing.process_func(lambda scale: 0.5 * scale, "regression_fast", scale=2)

    namespace = {"regression_fast": regression_fast, "other": lambda: 1 / 0}
    exec("import tilec.testing\ntilec.testing.regression()", namespace)  # noqa: S102
    assert "fast: 1.0" in capsys.readouterr().out
    with pytest.raises(TilecError, match="latency of 0"):
        tilec.testing.process_func(lambda: 0.0, "broken")


# ----- tilec.tvm, tilec.layout, the package --------------------------------------------------


def test_data_type_reads_dtype_names() -> None:
    from tilec.tvm import DataType

    assert tilec.DataType is DataType
    assert [DataType(name).bits for name in ("float16", "bfloat16", "int8", "uint32", "bool",
                                            "float8_e4m3fn", "int4", "float64")] == [
        16, 16, 8, 32, 1, 8, 4, 64]
    assert DataType(T.float16).bits == 16 and DataType(torch.bfloat16).bits == 16
    vector = DataType("float16x4")
    assert (vector.bits, vector.lanes, vector.itemsize, str(vector)) == (16, 4, 8, "float16x4")
    assert DataType("uint8") == "uint8" and DataType("uint8").is_uint()
    assert DataType("bfloat16").is_float() and DataType("int32").is_int()
    assert len({DataType("int8"), DataType("int8")}) == 1
    with pytest.raises(TilecError, match="tvm.DataType\\('floaty'\\)"):
        DataType("floaty")


def test_tirx_calls_build_kernel_code(rng: torch.Generator) -> None:
    from tilec.tvm import tir, tirx

    assert tir is tirx

    @tilec.jit(target="cpu")
    def clamp_shift(A, block=16):
        N = T.const("N")
        A: T.Tensor((N,), T.float32)
        B = T.empty((N,), T.float32)
        with T.Kernel(tilec.cdiv(N, block), threads=32) as bx:
            for i in T.Parallel(block):
                x = A[bx * block + i]
                y = tirx.Select(x > 0, x, tirx.const(0, T.float32))
                one = tirx.Cast(T.float32, tirx.IntImm(T.int32, 1))
                B[bx * block + i] = tirx.Min(y, one) + tirx.FloatImm(T.float32, 0.5)
        return B

    a = torch.randn(64, generator=rng)
    torch.testing.assert_close(clamp_shift(a), a.clamp(0, 1) + 0.5)


def test_tirx_outside_a_kernel_and_unknown_names() -> None:
    from tilec.tvm import NotInTilec, tirx

    with pytest.raises(TilecError, match="only be used inside a tilec kernel"):
        tirx.const(1, "int32")
    with pytest.raises(NotInTilec, match="tvm.tirx.IndexMap is not part of tilec"):
        tirx.IndexMap  # noqa: B018
    assert not hasattr(tilec.tvm, "relax")  # an AttributeError too
    with pytest.raises(TilecError, match="tvm.relax is not part of tilec"):
        tilec.tvm.relax  # noqa: B018
    assert tilec.tvm.testing is tilec.testing
    with pytest.raises(NotInTilec, match="transform.LetInline is one of TileLang's"):
        tilec.transform.LetInline  # noqa: B018


def test_tvm_target_names_a_tilec_target() -> None:
    from tilec.tvm.target import Target

    assert Target("llvm") == "cpu" and Target("cuda") == "cuda"
    assert Target("cuda -arch=sm_80") == "cuda:sm_80"
    with pytest.raises(TilecError, match="tilec compiles for 'llvm'"):
        Target("hip -mcpu=gfx950")


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_plain_tvm_imports_find_the_stand_in() -> None:
    import importlib.machinery

    if importlib.machinery.PathFinder.find_spec("tvm") is not None:
        pytest.skip("a real TVM is installed: it is the one `import tvm` finds")
    out = run_python("""
        import tilec as tilelang
        from tvm import DataType, tirx
        from tvm.tirx import PrimExpr
        import tvm, tvm.tir, tvm.testing
        print(tvm is tilelang.tvm, tirx is tilelang.tvm.tirx, tvm.tir is tirx,
              DataType("int8").bits, PrimExpr.__name__, tvm.testing is tilelang.testing)
        try:
            import tvm.script
        except ModuleNotFoundError as error:
            print(error)
    """)
    assert out.splitlines()[0] == "True True True 8 PrimExpr True"
    assert "No module named 'tvm.script': tilec has no TVM" in out


def test_import_tilec_stays_light() -> None:
    out = run_python("""
        import sys
        import tilec
        heavy = ["torch", "mlir", "pytest", "tilec.profiler", "tilec.testing", "tilec.tvm",
                 "tilec.layout", "tilec.compiler", "tilec.frontend"]
        print([name for name in heavy if name in sys.modules])
        tilec.profiler, tilec.testing, tilec.layout, tilec.Profiler
        print(tilec.tvm.DataType("float16").bits, tilec.DataType is tilec.tvm.DataType)
    """)
    assert out.splitlines() == ["[]", "16 True"]
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        tilec.no_such_name  # noqa: B018


def test_make_swizzled_layout_records_the_swizzle() -> None:
    from tilec.layout import (
        SwizzledLayout,
        make_full_bank_swizzled_layout,
        make_linear_layout,
        make_swizzled_layout,
    )

    assert make_swizzled_layout(T.Tensor((128, 64), T.float16)) == SwizzledLayout(
        (128, 64), "float16", "128B")
    assert make_swizzled_layout(T.Tensor((128, 32), T.float16)).swizzle == "64B"
    assert make_swizzled_layout(T.Tensor((64, 32), T.int8)).swizzle == "32B"
    assert make_swizzled_layout(T.Tensor((64, 8), T.float16)).swizzle == "none"
    assert make_full_bank_swizzled_layout(T.Tensor((64, 8), T.float16)).swizzle == "128B"
    assert make_linear_layout(T.Tensor((64, 64), T.float32)).swizzle == "none"
    assert not make_swizzled_layout(T.Tensor((64, 64), T.float16), k_major=False).k_major
    with pytest.raises(TilecError, match="known at compile time"):
        make_swizzled_layout(T.Tensor((T.dynamic("M"), 64), T.float16))
    with pytest.raises(TilecError, match="takes a buffer"):
        make_swizzled_layout(3)


# ----- pass configs through the autotuner ------------------------------------------------------


def softmax_factory(block_M: int = 4):
    return row_softmax(8, 64, block_M)


def test_per_configuration_pass_configs_in_autotune(rng: torch.Generator) -> None:
    configs = [{"block_M": 4, "pass_configs": FAST_MATH},
               {"block_M": 8, "pass_configs": {PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True}}]

    @tilec.autotune(configs=configs, warmup=1, rep=3)
    @tilec.jit(target="cpu")
    def scale(X, block_M=8):
        M, N = T.const("M, N")
        X: T.Tensor((M, N), T.float32)
        Y = T.empty((M, N), T.float32)
        with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
            tile = T.alloc_fragment((block_M, N), T.float32)
            T.copy(X[bx * block_M, 0], tile)
            for i, j in T.Parallel(block_M, N):
                tile[i, j] = T.exp(tile[i, j]) * 0.5
            T.copy(tile, Y[bx * block_M, 0])
        return Y

    x = torch.randn(16, 32, generator=rng)
    result = scale.tune(x)
    assert result.config in configs
    expected = normalize_pass_configs(result.config["pass_configs"])
    assert result.kernel.pass_configs == expected
    assert (FAST_MATH_FLAGS in result.kernel.asm["loops"]) == (result.config["block_M"] == 4)
    torch.testing.assert_close(result.kernel(x), torch.exp(x) * 0.5)


def test_autotuner_compile_args_carry_pass_configs() -> None:
    from tilec.autotuner import AutoTuner

    result = (AutoTuner.from_kernel(kernel=softmax_factory, configs=[{"block_M": 4}])
              .set_compile_args(out_idx=[-1], target="cpu", pass_configs=FAST_MATH)
              .set_profile_args(ref_prog=lambda x: torch.softmax(x, dim=1))
              .run(warmup=1, rep=3, timeout=60))
    assert result.kernel.pass_configs == {"tl.enable_fast_math": True}
    assert FAST_MATH_FLAGS in result.kernel.asm["loops"]


def test_contrib_nvcc_compute_versions(monkeypatch) -> None:
    from tilec.contrib import nvcc

    assert nvcc.get_target_compute_version("cuda:sm_90a") == "9.0"
    assert nvcc.get_target_compute_version("cuda -arch=sm_80") == "8.0"
    assert nvcc.parse_compute_version("9.0") == (9, 0)
    assert nvcc.parse_compute_version(nvcc.get_target_compute_version("sm_120a")) == (12, 0)
    with pytest.raises(TilecError, match="not a compute version"):
        nvcc.parse_compute_version("sm_90")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(TilecError, match="no GPU is visible"):
        nvcc.get_target_compute_version()


def test_set_log_level_sets_tilecs_logger() -> None:
    import logging

    logger = logging.getLogger("tilec")
    before = logger.level
    try:
        tilec.set_log_level("warning")
        assert logger.level == logging.WARNING
        assert logging.getLogger("tilec.autotuner").getEffectiveLevel() == logging.WARNING
        tilec.set_log_level(logging.DEBUG)
        assert logger.level == logging.DEBUG
    finally:
        logger.setLevel(before)


@T.macro
def _fill_with_twos(buffer):
    for i in T.Parallel(16):
        buffer[i] = 2.0


@T.macro
def _fill_with_threes(buffer):
    for i in T.Parallel(16):
        buffer[i] = 3.0


@T.macro
def _fill(buffer):
    _fill_with_twos(buffer)


@tilec.jit
def _filled(A):
    A: T.Tensor((16,), T.float32)
    with T.Kernel(1, threads=16):
        _fill(A)


def test_the_macros_a_macro_calls_are_part_of_the_cache_key(monkeypatch) -> None:
    """A kernel whose macro calls another macro, edited since, is compiled again: the disk
    cache does not hand back the kernel of the old inner macro."""
    x = torch.zeros(16)
    before = _filled.specialize((x,), {}, "cpu").key
    assert _filled.specialize((x,), {}, "cpu").key == before
    monkeypatch.setitem(globals(), "_fill_with_twos", _fill_with_threes)
    assert _filled.specialize((x,), {}, "cpu").key != before


def _scaled_by(scale: float):
    """An eager kernel made inside a factory: `scale` is a closure cell of it and of its
    macro."""
    @T.macro
    def scaled(source, target):
        for i in T.Parallel(16):
            target[i] = source[i] * scale

    @tilec.jit(target="cpu")
    def kernel(A):
        A: T.Tensor((16,), T.float32)
        out = T.empty((16,), T.float32)
        with T.Kernel(1, threads=16):
            scaled(A, out)
        return out

    return kernel


def test_closure_values_are_part_of_the_cache_key(rng: torch.Generator) -> None:
    """Two kernels of one source made by a factory with different closure values are two
    cache entries: the second never runs the first one's code (it did, a silent wrong
    result, before closures were part of an eager kernel's key)."""
    x = torch.randn(16, generator=rng)
    keys = set()
    for scale in (2.0, 3.0):
        kernel = _scaled_by(scale)
        keys.add(kernel.specialize((x,), {}, "cpu").key)
        torch.testing.assert_close(kernel(x), x * scale, rtol=0, atol=0)  # one rounding each
    assert len(keys) == 2


def test_an_eager_keys_environment_part(monkeypatch) -> None:
    """cache.key_environment: None while neither TILEC_TARGET nor any COMPILE_SETTINGS name is
    set (an eager call's key then reads nothing else); else both, as os.environ has them, so
    setting, changing or unsetting either gives another key."""
    from tilec import cache

    for name in (*cache.COMPILE_SETTINGS, "TILEC_TARGET"):
        monkeypatch.delenv(name, raising=False)
    assert cache.key_environment() is None
    seen = {None}
    for name, value in (("TILEC_TARGET", "cpu"), ("TILEC_TARGET", "cuda"),
                        ("TILEC_SPLIT_WGMMA_N", "1"), ("TILEC_TARGET", None)):
        if value is None:
            monkeypatch.delenv(name)
        else:
            monkeypatch.setenv(name, value)
        key = cache.key_environment()
        assert key == (os.environ.get("TILEC_TARGET"), tuple(cache.compile_settings().items()))
        assert key not in seen
        seen.add(key)
    monkeypatch.setenv("TILEC_SPLIT_WGMMA_N", "")  # set but empty: not a setting
    assert cache.key_environment() == (None, ())
