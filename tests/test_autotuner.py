"""The autotuner on the CPU target: the caller's arguments win, every configuration compiled (in
child processes) and either timed or reported, TileLang's decorator and AutoTuner interfaces."""

import os
import time
from pathlib import Path

import pytest
import torch
from conftest import randn

import tilec
import tilec.language as T
from tilec.autotuner import (
    AutoTuner,
    AutotuneResult,
    AutotuneWarning,
    ProfileArgs,
    set_autotune_inputs,
    tune_configs,
)
from tilec.errors import TilecError
from tilec.jit import Specialization

QUICK = {"warmup": 1, "rep": 3}


def _fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    tilec.cache.clear_memory()
    return tmp_path


def _entries(directory: Path) -> set[str]:
    """The kernel cache's entries (tunings' outcomes, kept beside them, left out)."""
    return {p.name for p in directory.iterdir()
            if not p.name.startswith(".") and p.name != tilec.autotuner.RESULTS_FOLDER}


def _affine_configs() -> list[dict]:
    return [{"block_M": 16, "scale": 1.0}, {"block_M": 32, "scale": 2.0}]


@tilec.autotune(configs=_affine_configs(), **QUICK)
@tilec.jit(target="cpu")
def affine(X, block_M=8, scale=1.0):
    M, N = T.const("M, N")
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, 8), T.ceildiv(M, block_M), threads=32) as (bx, by):
        tile = T.alloc_fragment((block_M, 8), T.float32)
        T.copy(X[by * block_M, bx * 8], tile)
        for i, j in T.Parallel(block_M, 8):
            tile[i, j] = tile[i, j] * scale + 1.0
        T.copy(tile, Y[by * block_M, bx * 8])
    return Y


def _affine_reference(x: torch.Tensor, scale: float) -> torch.Tensor:
    return x.double() * scale + 1.0


def test_every_tuned_argument_given_compiles_exactly_that(tmp_path, monkeypatch, rng):
    """The caller's scale=3.0 must not be replaced by a configuration's (it was: error 2.27)."""
    cache_dir = _fresh_cache(tmp_path, monkeypatch)
    x = randn((40, 24), torch.float32, rng)
    y = affine(x, block_M=16, scale=3.0)
    torch.testing.assert_close(y.double(), _affine_reference(x, 3.0), rtol=1e-6, atol=1e-6)
    assert len(_entries(cache_dir)) == 1  # one kernel compiled, nothing tuned
    result = affine.tune(x, block_M=16, scale=3.0)
    assert result.config == {"block_M": 16, "scale": 3.0} and result.latency is None
    assert all(trial.error is None for trial in result.trials)


def test_positional_tuned_arguments_count_as_given(tmp_path, monkeypatch, rng):
    _fresh_cache(tmp_path, monkeypatch)
    x = randn((24, 16), torch.float32, rng)
    y = affine(x, 8, -0.5)
    torch.testing.assert_close(y.double(), _affine_reference(x, -0.5), rtol=1e-6, atol=1e-6)
    assert affine.tune(x, 8, -0.5).config == {"block_M": 8, "scale": -0.5}


def test_some_tuned_arguments_given_tunes_only_the_others(tmp_path, monkeypatch, rng):
    cache_dir = _fresh_cache(tmp_path, monkeypatch)
    x = randn((64, 24), torch.float32, rng)
    y = affine(x, scale=3.0)
    torch.testing.assert_close(y.double(), _affine_reference(x, 3.0), rtol=1e-6, atol=1e-6)
    result = affine.tune(x, scale=3.0)
    assert result.config["scale"] == 3.0 and result.config["block_M"] in (16, 32)
    assert [trial.config for trial in result.trials] == [{"block_M": 16}, {"block_M": 32}]
    assert len(_entries(cache_dir)) == 2


@tilec.autotune(configs=[{"block_M": 16, "block_N": 16}, {"block_M": 32, "block_N": 16},
                         {"block_M": 16, "block_N": 32, "threads": 64}], **QUICK)
@tilec.jit(target="cpu")
def double_plus_one(X, block_M=8, block_N=8, threads=32):
    M, N = T.const("M, N")
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        tile = T.alloc_fragment((block_M, block_N), T.float32)
        T.copy(X[by * block_M, bx * block_N], tile)
        for i, j in T.Parallel(block_M, block_N):
            tile[i, j] = tile[i, j] * 2.0 + 1.0
        T.copy(tile, Y[by * block_M, bx * block_N])
    return Y


def test_tuning_times_every_config_and_keeps_the_fastest(tmp_path, monkeypatch, rng):
    cache_dir = _fresh_cache(tmp_path, monkeypatch)
    x = randn((40, 56), torch.float32, rng)
    y = double_plus_one(x)
    torch.testing.assert_close(y.double(), x.double() * 2 + 1, rtol=1e-6, atol=1e-6)
    (result,) = double_plus_one.results.values()
    assert isinstance(result, AutotuneResult)
    latencies = [trial.latency for trial in result.trials]
    assert all(latency is not None and latency > 0 for latency in latencies)
    assert result.latency == min(latencies) and result.ref_latency is None
    assert result.config == result.trials[latencies.index(result.latency)].config
    kernel = double_plus_one.compile(x)  # TileLang's tuned kernel carries its tuning
    assert kernel.config == result.config and kernel.latency == result.latency
    assert kernel.get_tuner_result() == {"latency": result.latency, "config": result.config,
                                         "ref_latency": None}
    assert len(_entries(cache_dir)) == 3  # each configuration compiled into the cache
    double_plus_one(randn((40, 56), torch.float32, rng))  # same problem: the winner, reused
    assert len(double_plus_one.results) == 1


def test_precompile_then_tune_from_the_cache(tmp_path, monkeypatch, rng):
    cache_dir = _fresh_cache(tmp_path, monkeypatch)
    errors = double_plus_one.precompile(T.Tensor((24, 24), T.float32), target="cpu")
    assert errors == [None, None, None]
    entries = _entries(cache_dir)
    tilec.cache.clear_memory()
    result = double_plus_one.tune(randn((24, 24), torch.float32, rng))
    assert _entries(cache_dir) == entries  # nothing compiled again
    assert result.latency > 0


class _InterruptedProgress:
    """A progress bar whose first update is a ^C: the tuning stops there."""

    def update(self, count: int = 1) -> None:
        raise KeyboardInterrupt

    def close(self) -> None:
        pass


def test_an_interrupted_precompile_keeps_what_it_compiled(tmp_path, monkeypatch):
    """Each configuration's kernel is cached as its compile ends, so a run stopped half way
    (a time limit, ^C) leaves its work to the next; before, nothing was kept."""
    cache_dir = _fresh_cache(tmp_path, monkeypatch)
    monkeypatch.setattr(tilec.autotuner, "_progress",
                        lambda total, description: _InterruptedProgress())
    monkeypatch.setattr(double_plus_one, "max_workers", 1)
    with pytest.raises(KeyboardInterrupt):
        double_plus_one.precompile(T.Tensor((24, 24), T.float32), target="cpu")
    assert len(_entries(cache_dir)) == 1


def test_compile_on_the_tuned_object_returns_the_kernel(tmp_path, monkeypatch, rng):
    _fresh_cache(tmp_path, monkeypatch)
    kernel = double_plus_one.compile(T.Tensor((33, 40), T.float32))
    x = randn((33, 40), torch.float32, rng)
    y = kernel.get_profiler().run_poisoned(x)
    torch.testing.assert_close(y.double(), x.double() * 2 + 1, rtol=1e-6, atol=1e-6)


@tilec.autotune(configs=[{"block_M": 16, "dtype": "no_such_type"}, {"block_M": 16},
                         {"block_M": 32, "dtype": "float32"}], **QUICK)
@tilec.jit(target="cpu")
def copy_rows(X, block_M=8, dtype=T.float32):
    M, N = T.const("M, N")
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, 8), T.ceildiv(M, block_M), threads=32) as (bx, by):
        tile = T.alloc_fragment((block_M, 8), dtype)
        T.copy(X[by * block_M, bx * 8], tile)
        T.copy(tile, Y[by * block_M, bx * 8])
    return Y


def test_a_config_that_fails_to_compile_is_reported(tmp_path, monkeypatch, rng):
    _fresh_cache(tmp_path, monkeypatch)
    x = randn((32, 16), torch.float32, rng)
    with pytest.warns(AutotuneWarning, match=r"(?s)1 of 3 configurations failed.*no_such_type"):
        y = copy_rows(x)
    torch.testing.assert_close(y, x)
    (result,) = copy_rows.results.values()
    failed = [trial for trial in result.trials if trial.error is not None]
    assert [trial.config for trial in failed] == [{"block_M": 16, "dtype": "no_such_type"}]
    assert "no_such_type" in failed[0].error and failed[0].latency is None
    assert result.config != failed[0].config


@tilec.autotune(configs=[{"dtype": "no_such_type"}, {"dtype": "nor_this_one"}], **QUICK)
@tilec.jit(target="cpu")
def never_compiles(X, dtype=T.float32):
    M, N = T.const("M, N")
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, 8), T.ceildiv(M, 8), threads=32) as (bx, by):
        tile = T.alloc_fragment((8, 8), dtype)
        T.copy(X[by * 8, bx * 8], tile)
        T.copy(tile, Y[by * 8, bx * 8])
    return Y


def test_no_config_compiling_is_an_error_listing_each(tmp_path, monkeypatch, rng):
    _fresh_cache(tmp_path, monkeypatch)
    first = r"none of the 2 configurations compiled and ran; the first failed with: .*no_such"
    with pytest.raises(TilecError, match=first) as raised:
        never_compiles(randn((16, 16), torch.float32, rng))
    assert "no_such_type" in str(raised.value) and "nor_this_one" in str(raised.value)
    assert "test_autotuner.py" in str(raised.value)


def test_a_compiler_crash_costs_only_its_config(tmp_path, monkeypatch):
    """The MLIR wheel is an assertions build: an abort must not take the tuner's process."""
    _fresh_cache(tmp_path, monkeypatch)
    good = double_plus_one.fn.specialize((T.Tensor((16, 16), T.float32),), {}, "cpu")
    crashing = Specialization({"kind": "crash-test", "pid": os.getpid()}, os.abort,
                              good.location, "cpu")
    specs = {"good": good, "crash": crashing}
    with pytest.warns(AutotuneWarning, match=r"crashed \(signal SIGABRT\)"):
        result = tune_configs("crash_probe", good.location, [{"which": "crash"},
                                                             {"which": "good"}],
                              lambda config: specs[config["which"]], ProfileArgs(**QUICK))
    assert result.config == {"which": "good"}
    assert "SIGABRT" in result.trials[0].error


def test_fresh_compilers_compile_what_forked_children_do(tmp_path, monkeypatch, rng):
    """TILEC_AUTOTUNE_FRESH_COMPILERS (forced here: it acts only where CUDA is initialized):
    each configuration's tile IR, built here, compiles in a new interpreter, no child forked;
    the kernels are byte for byte the forked children's, and a configuration whose frontend
    fails is reported as before."""
    x = randn((40, 56), torch.float32, rng)
    binaries = {}
    for fresh in (False, True):
        cache_dir = _fresh_cache(tmp_path / str(fresh), monkeypatch)
        if fresh:
            monkeypatch.setattr(tilec.autotuner, "fresh_compilers_wanted", lambda: True)
            monkeypatch.setattr(tilec.autotuner, "_forked_child", None)  # calling it fails
        double_plus_one.results.clear()
        y = double_plus_one(x)
        torch.testing.assert_close(y.double(), x.double() * 2 + 1, rtol=1e-6, atol=1e-6)
        binaries[fresh] = {name: (cache_dir / name / "kernel.bin").read_bytes()
                           for name in _entries(cache_dir)}
    assert len(binaries[True]) == 3 and binaries[True] == binaries[False]
    with pytest.warns(AutotuneWarning, match=r"(?s)1 of 3 configurations failed.*no_such_type"):
        torch.testing.assert_close(copy_rows(x), x)


def test_ref_prog_rejects_a_config_with_wrong_results(tmp_path, monkeypatch, rng):
    """A configuration whose output differs from ref_prog is reported, never chosen."""
    _fresh_cache(tmp_path, monkeypatch)
    tuned = tilec.autotune(configs=[{"scale": 2.0}, {"scale": 5.0}], ref_prog=lambda x: x * 5 + 1,
                           **QUICK)(affine.fn)
    x = randn((16, 16), torch.float32, rng)
    wrong = r"\{'scale': 2.0\}: AssertionError: wrong result against ref_prog: output 0"
    with pytest.warns(AutotuneWarning, match=wrong):
        y = tuned(x)
    torch.testing.assert_close(y.double(), _affine_reference(x, 5.0), rtol=1e-6, atol=1e-6)
    (result,) = tuned.results.values()
    assert result.config == {"scale": 5.0} and result.ref_latency > 0
    # a result checked by a function is not kept: another ref_prog would be served it
    assert not (tmp_path / tilec.autotuner.RESULTS_FOLDER).exists()


def test_configs_from_a_function_of_the_arguments(tmp_path, monkeypatch, rng):
    _fresh_cache(tmp_path, monkeypatch)

    def configs(X, **_):
        return [{"block_M": size} for size in (8, 16) if size <= X.shape[0]]

    tuned = tilec.autotune(configs=configs, **QUICK)(affine.fn)
    x = randn((8, 16), torch.float32, rng)
    torch.testing.assert_close(tuned(x).double(), _affine_reference(x, 1.0), rtol=1e-6,
                               atol=1e-6)
    (result,) = tuned.results.values()
    assert [trial.config for trial in result.trials] == [{"block_M": 8}]


def test_config_keys_must_be_parameters(rng):
    tuned = tilec.autotune(configs=[{"block_m": 16}], **QUICK)(affine.fn)
    with pytest.raises(TilecError, match=r"\['block_m'\] are not parameters of affine"):
        tuned(randn((16, 16), torch.float32, rng))


def test_autotune_goes_above_jit():
    with pytest.raises(TilecError, match="above @tilec.jit"):
        tilec.autotune(configs=[{}])(lambda x: x)


@tilec.autotune(configs=[{"block_M": 16, "block_N": 16}, {"block_M": 32, "block_N": 16}],
                **QUICK)
@tilec.jit(out_idx=[-1], target="cpu")
def matmul(M, N, K, block_M=16, block_N=16, block_K=16):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float32), B: T.Tensor((K, N), T.float32),
             C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=32) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float32)
            B_shared = T.alloc_shared((block_K, block_N), T.float32)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def _check_matmul(kernel, m: int, n: int, k: int, rng: torch.Generator) -> None:
    a, b = randn((m, k), torch.float32, rng), randn((k, n), torch.float32, rng)
    c = kernel.get_profiler().run_poisoned(a, b)
    torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=1e-4, atol=1e-4)


def test_a_tuned_factory_returns_the_kernel(tmp_path, monkeypatch, rng):
    cache_dir = _fresh_cache(tmp_path, monkeypatch)
    kernel = matmul(48, 40, 32)
    _check_matmul(kernel, 48, 40, 32, rng)
    assert len(_entries(cache_dir)) == 2
    explicit = matmul(48, 40, 32, block_M=32, block_N=16, block_K=32)  # all given: no tuning
    _check_matmul(explicit, 48, 40, 32, rng)
    assert len(_entries(cache_dir)) == 3


def test_from_kernel_chain(tmp_path, monkeypatch, rng):
    _fresh_cache(tmp_path, monkeypatch)
    M, N, K = 40, 48, 32

    def kernel(block_M=None, block_N=None, block_K=None):
        @T.prim_func
        def main(A: T.Tensor((M, K), T.float32), B: T.Tensor((N, K), T.float32),
                 C: T.Tensor((M, N), T.float32)):
            with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=32) as (bx, by):
                A_shared = T.alloc_shared((block_M, block_K), T.float32)
                B_shared = T.alloc_shared((block_N, block_K), T.float32)
                C_local = T.alloc_fragment((block_M, block_N), T.float32)
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                    T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                    T.gemm(A_shared, B_shared, C_local, transpose_B=True)
                T.copy(C_local, C[by * block_M, bx * block_N])

        return main

    configs = [{"block_M": 16, "block_N": 16, "block_K": 16},
               {"block_M": 32, "block_N": 16, "block_K": 32}]
    result = (
        AutoTuner.from_kernel(kernel=kernel, configs=configs)
        .set_compile_args(out_idx=[-1], target="cpu")
        .set_profile_args(ref_prog=lambda a, b: a @ b.T, skip_check=False)
        .run(warmup=1, rep=3, timeout=60)
    )
    assert result.config in configs and result.latency > 0 and result.ref_latency > 0
    a, b = randn((M, K), torch.float32, rng), randn((N, K), torch.float32, rng)
    c = result.kernel.get_profiler().run_poisoned(a, b)
    torch.testing.assert_close(c.double(), a.double() @ b.double().T, rtol=1e-4, atol=1e-4)


def test_star_import_gives_tilelangs_names():
    names: dict = {}
    exec("from tilec.autotuner import *", names)  # as TileLang's examples import it
    assert {"autotune", "AutoTuner", "AutotuneResult"} <= set(names)
    assert "T" not in names and "cache" not in names


def test_supply_prog_and_cached_inputs(tmp_path, monkeypatch, rng):
    """supply_prog makes the inputs (from the kernel's input parameters); with
    cache_input_tensors every configuration is checked and timed on the same ones."""
    _fresh_cache(tmp_path, monkeypatch)
    supplied = []

    def supply(params):
        supplied.append([p.name for p in params])
        return [randn(tuple(params[0].shape), torch.float32, rng)]

    tuned = tilec.autotune(configs=[{"block_M": 8}, {"block_M": 16}], supply_prog=supply,
                           cache_input_tensors=True, ref_prog=lambda x: x * 1.5 + 1,
                           **QUICK)(affine.fn)
    x = randn((16, 8), torch.float32, rng)
    torch.testing.assert_close(tuned(x, scale=1.5).double(), _affine_reference(x, 1.5),
                               rtol=1e-6, atol=1e-6)
    assert supplied == [["X"]]


@tilec.jit(target="cpu")
def shift(X, block_M=None, offset=1.0):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, 8), T.ceildiv(M, block_M), threads=32) as (bx, by):
        tile = T.alloc_fragment((block_M, 8), T.float32)
        T.copy(X[by * block_M, bx * 8], tile)
        for i, j in T.Parallel(block_M, 8):
            tile[i, j] = tile[i, j] + offset
        T.copy(tile, Y[by * block_M, bx * 8])
    return Y


def _tuned_shift(**options):
    return tilec.autotune(configs=[{"block_M": 8}, {"block_M": 16}], **QUICK, **options)(shift)


def test_compile_from_sizes_alone(tmp_path, monkeypatch, rng):
    """convolution.compile(N=..., C=...) in TileLang's example: sizes as keywords."""
    _fresh_cache(tmp_path, monkeypatch)
    x = randn((40, 24), torch.float32, rng)
    tuned_shift = _tuned_shift()
    tuned = tuned_shift.compile(M=40, N=24, offset=2.5)
    explicit = tuned_shift.compile(M=40, N=24, offset=2.5, block_M=8)
    for kernel in (tuned, explicit):
        torch.testing.assert_close(kernel.get_profiler().run_poisoned(x), x + 2.5)
    assert len(tuned_shift.results) == 2


def test_a_config_past_its_timeout_is_reported(tmp_path, monkeypatch, rng):
    _fresh_cache(tmp_path, monkeypatch)
    calls = []

    def slow_first_reference(x):
        calls.append(1)
        if len(calls) == 1:
            time.sleep(5)
        return x + 1.0

    tuned = _tuned_shift(timeout=0.5, ref_prog=slow_first_reference)
    with pytest.warns(AutotuneWarning, match=r"\{'block_M': 8\}: checking and timing took longer"):
        kernel = tuned.compile(M=16, N=8)
    x = randn((16, 8), torch.float32, rng)
    torch.testing.assert_close(kernel.get_profiler().run_poisoned(x), x + 1.0)
    assert next(iter(tuned.results.values())).config == {"block_M": 16}


def test_a_fault_on_the_gpu_names_its_config(tmp_path, monkeypatch):
    """A kernel that faults on the GPU (torch's AcceleratorError: the process's CUDA context
    is lost, every later launch fails alike) stops the tuning, naming its configuration, which
    the H100 run's 'each failed with: unspecified launch failure' did not."""
    _fresh_cache(tmp_path, monkeypatch)
    timed = []

    def faulting(self, kernel, best):
        timed.append(kernel)
        if len(timed) == 2:
            raise RuntimeError("CUDA error: unspecified launch failure\nCUDA kernel errors "
                               "might be asynchronously reported")
        return 1.0

    monkeypatch.setattr(tilec.autotuner._Bench, "check_and_time", faulting)
    tuned = tilec.autotune(configs=[{"block_M": 8}, {"block_M": 16}, {"block_M": 32}],
                           **QUICK)(shift)
    with pytest.raises(TilecError, match=r"configuration \{'block_M': 16\} failed on the GPU "
                                         r"\(RuntimeError: CUDA error: unspecified launch "
                                         r"failure\); the process's CUDA context is lost"):
        tuned.compile(M=16, N=8)
    assert len(timed) == 2  # the third configuration was not tried


def test_set_autotune_inputs_are_what_configs_run_on(tmp_path, monkeypatch, rng):
    _fresh_cache(tmp_path, monkeypatch)
    x = randn((16, 8), torch.float32, rng)
    seen = []

    def reference(X):
        seen.append(X)
        return X + 1.0

    tuned = _tuned_shift(ref_prog=reference)
    with set_autotune_inputs(x):
        tuned.compile(M=16, N=8)
    assert len(seen) >= 2 and all(tensor is x for tensor in seen)


def test_tuning_results_keyed_by_argument_types(tmp_path, monkeypatch, rng):
    """1, 1.0 and True are one dict key in Python; as kernel arguments they differ."""
    _fresh_cache(tmp_path, monkeypatch)
    tuned = _tuned_shift()
    for offset in (1, 1.0, True):
        tuned.compile(M=8, N=8, offset=offset)
    assert len(tuned.results) == 3


def test_early_stop_times_later_configs_against_the_best(tmp_path, monkeypatch, rng):
    """With early_stop, each configuration after the first is timed with a baseline of
    early_stop_factor x the best so far (the profiler stops at a first estimate past it)."""
    _fresh_cache(tmp_path, monkeypatch)
    from tilec.profiler import Profiler

    baselines = []
    original = Profiler.do_bench

    def recording(self, *args, **kwargs):
        latency = original(self, *args, **kwargs)
        baselines.append((kwargs.get("early_stop_baseline"), latency))
        return latency

    monkeypatch.setattr(Profiler, "do_bench", recording)
    tuned = _tuned_shift(early_stop=True, early_stop_factor=1.5)
    kernel = tuned.compile(M=16, N=8)
    x = randn((16, 8), torch.float32, rng)
    torch.testing.assert_close(kernel.get_profiler().run_poisoned(x), x + 1.0)
    (first_baseline, first_latency), (second_baseline, _) = baselines
    assert first_baseline is None and second_baseline == pytest.approx(1.5 * first_latency)
    with pytest.raises(TilecError, match="early_stop_factor must be at least 1"):
        _tuned_shift(early_stop=True, early_stop_factor=0.5)


def test_a_configs_pass_configs_apply_to_it_alone(tmp_path, monkeypatch, rng):
    """TileLang's reserved "pass_configs" key: merged over the compile args' pass configs;
    an invalid one is that configuration's error."""
    _fresh_cache(tmp_path, monkeypatch)
    fast = {tilec.PassConfigKey.TL_ENABLE_FAST_MATH: True}
    configs = [{"block_M": 8, "pass_configs": fast}, {"block_M": 8, "pass_configs": {"no.such": 1}}]
    tuned = (AutoTuner.from_kernel(kernel=lambda block_M: matmul.fn.fn(32, 16, 16, block_M, 16),
                                   configs=configs)
             .set_compile_args(out_idx=[-1], target="cpu",
                               pass_configs={tilec.PassConfigKey.TL_DISABLE_TMA_LOWER: True}))
    with pytest.warns(AutotuneWarning, match=r"no\.such"):
        result = tuned.run(**QUICK)
    assert result.config == configs[0]
    assert result.kernel.pass_configs == {"tl.disable_tma_lower": True,
                                          "tl.enable_fast_math": True}
    _check_matmul(result.kernel, 32, 16, 16, rng)
    decorated = tilec.autotune(configs=[{"block_M": 16, "pass_configs": fast}], **QUICK)(matmul.fn)
    assert decorated(32, 16, 16).pass_configs == {"tl.enable_fast_math": True}


def test_a_tuning_is_kept_for_the_next_process(tmp_path, monkeypatch, rng):
    """As TileLang does, a problem tuned again (another process: nothing in memory) takes the
    winner from disk and times nothing; other profile settings or inputs tune afresh."""
    cache_dir = _fresh_cache(tmp_path, monkeypatch)
    monkeypatch.setattr(double_plus_one, "results", {})
    x = randn((40, 56), torch.float32, rng)
    first = double_plus_one.tune(x)
    (kept,) = (cache_dir / tilec.autotuner.RESULTS_FOLDER).glob("*.json")

    def timed(self, kernel, best):
        raise AssertionError("timed again")

    monkeypatch.setattr(tilec.autotuner._Bench, "check_and_time", timed)
    monkeypatch.setattr(double_plus_one, "results", {})
    tilec.cache.clear_memory()
    again = double_plus_one.tune(x)
    assert again.config == first.config and again.latency == first.latency
    assert [t.latency for t in again.trials] == [t.latency for t in first.trials]
    assert again.kernel.get_tuner_result()["config"] == first.config
    fresh = randn((40, 56), torch.float32, rng)
    y = again.kernel.get_profiler().run_poisoned(fresh)
    torch.testing.assert_close(y.double(), fresh.double() * 2 + 1, rtol=1e-6, atol=1e-6)

    other_rep = tilec.autotune(configs=double_plus_one.configs, warmup=1, rep=2)(
        double_plus_one.fn)
    with pytest.raises(TilecError, match="timed again"):
        other_rep.tune(x)
    with pytest.raises(TilecError, match="timed again"):
        double_plus_one.tune(randn((24, 56), torch.float32, rng))  # another problem
    with monkeypatch.context() as patched:  # another compiler may make other kernels
        patched.setattr(tilec.cache, "compiler_fingerprint", lambda: "another compiler")
        monkeypatch.setattr(double_plus_one, "results", {})
        with pytest.raises(TilecError, match="timed again"):
            double_plus_one.tune(x)
    kept.write_text("{ damaged")
    monkeypatch.setattr(double_plus_one, "results", {})
    with pytest.raises(TilecError, match="timed again"):
        double_plus_one.tune(x)  # an unreadable record is tuned again
