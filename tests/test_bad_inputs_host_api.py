"""Bad input to the host API: keywords a call does not take, a target that is not a name.

TileLang's own options that tilec does not use (execution_backend, target_host, ...) are taken
so ported code runs; any other keyword (`compile(bits=4)`, a misspelt size) is an error at the
caller's line (marked `# error: TAG`) naming it, never a keyword dropped without a word.
"""

from __future__ import annotations

import functools
from pathlib import Path

import error_tags
import pytest
import torch

import tilec
import tilec.language as T
from tilec.errors import LaunchError, TilecError

THIS_FILE = Path(__file__).resolve()


line_of = functools.partial(error_tags.line_of, THIS_FILE)


def check_error(error: TilecError, tag: str, *fragments: str) -> None:
    """`error` is a TilecError at the tagged line of this file that says every fragment."""
    error_tags.check_error(error, THIS_FILE, tag, *fragments)


@T.prim_func
def copy64(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as _:
        for i in T.Parallel(64):
            B[i] = A[i] * 2.0


@tilec.jit
def add(A, B, block=64):
    N = T.const("N")
    C = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, block), threads=64) as bx:
        for i in T.Parallel(block):
            C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return C


def factory(block=64):
    @T.prim_func
    def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(128 // block, threads=64) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] + 1.0

    return main


def test_compile_rejects_a_keyword_it_does_not_take() -> None:
    with pytest.raises(TilecError) as info:
        tilec.compile(copy64, target="cpu", bits=4)  # error: compile-bits
    check_error(info.value, "compile-bits", "tilec.compile got an unexpected keyword argument "
                "'bits'", "execution_backend")


def test_jit_rejects_a_keyword_it_does_not_take() -> None:
    with pytest.raises(TilecError) as info:
        tilec.jit(out_idx=[1], target="cpu", bits=4)(factory)  # error: jit-bits
    check_error(info.value, "jit-bits", "tilec.jit got an unexpected keyword argument 'bits'",
                "debug_root_path")


def test_tilelang_options_tilec_does_not_use_are_taken(rng: torch.Generator) -> None:
    kernel = tilec.compile(copy64, out_idx=[1], target="cpu", execution_backend="cython",
                           target_host="llvm", verbose=False, compile_flags=["-O3"])
    a = torch.randn(64, generator=rng)
    torch.testing.assert_close(kernel(a), a * 2.0)
    jitted = tilec.jit(out_idx=[1], target="cpu", execution_backend="tvm_ffi",
                       debug_root_path="/nonexistent", compile_flags="-O3")(factory)
    a = torch.randn(128, generator=rng)
    torch.testing.assert_close(jitted()(a), a + 1.0)


def test_a_size_the_kernel_does_not_have() -> None:
    a = torch.randn(128)
    with pytest.raises(TilecError) as info:
        add.compile(a, a, bits=4, target="cpu")  # error: eager-bits
    check_error(info.value, "eager-bits", "kernel 'add' has no parameter or T.const size "
                "'bits'", "its parameters: A, B, block", "its T.const sizes: N")


def test_a_misspelt_size_is_not_dropped() -> None:
    a = torch.randn(128)
    with pytest.raises(TilecError) as info:
        add.compile(a, a, target="cpu", n=128)  # error: eager-size
    check_error(info.value, "eager-size", "no parameter or T.const size 'n'")


def test_sizes_and_parameters_by_keyword_still_compile(rng: torch.Generator) -> None:
    a, b = torch.randn(256, generator=rng), torch.randn(256, generator=rng)
    kernel = add.compile(a, b, block=128, target="cpu", N=256)
    torch.testing.assert_close(kernel(a, b), a + b)


def test_a_factory_argument_it_does_not_take() -> None:
    jitted = tilec.jit(out_idx=[1], target="cpu")(factory)
    with pytest.raises(TilecError, match="got an unexpected keyword argument 'blok'"):
        jitted(blok=32)


@pytest.mark.parametrize("target", [3, ["cpu"], torch.device("cpu")])
def test_a_target_that_is_not_a_name(target) -> None:
    with pytest.raises(TilecError) as info:
        tilec.compile(copy64, target=target)  # error: target-kind
    check_error(info.value, "target-kind", "target is a name such as \"cuda\"",
                type(target).__name__)


def test_autotuner_calls_reject_a_keyword_they_do_not_take() -> None:
    tuner = tilec.autotuner.AutoTuner.from_kernel(factory, configs=[{"block": 64}])
    with pytest.raises(TilecError) as info:
        tilec.autotune(configs=[{"block": 64}], bits=4)  # error: autotune-bits
    check_error(info.value, "autotune-bits", "tilec.autotune got an unexpected keyword "
                "argument 'bits'", "do_not_specialize")
    with pytest.raises(TilecError) as info:
        tuner.set_compile_args(target="cpu", bits=4)  # error: compile-args-bits
    check_error(info.value, "compile-args-bits", "AutoTuner.set_compile_args got an "
                "unexpected keyword argument 'bits'")
    with pytest.raises(TilecError) as info:
        tuner.set_profile_args(warmup=1, bits=4)  # error: profile-args-bits
    check_error(info.value, "profile-args-bits", "AutoTuner.set_profile_args got an "
                "unexpected keyword argument 'bits'")
    with pytest.raises(TilecError) as info:
        tuner.run(warmup=1, bits=4)  # error: run-bits
    check_error(info.value, "run-bits", "AutoTuner.run got an unexpected keyword argument "
                "'bits'", "use_pipeline")


def test_autotuner_takes_tilelang_options_it_does_not_use() -> None:
    tuner = tilec.autotuner.AutoTuner.from_kernel(factory, configs=[{"block": 64}])
    tuner.set_compile_args(target="cpu", execution_backend="cython", target_host="llvm")
    tilec.autotune(configs=[{"block": 64}], do_not_specialize=["block"])


def test_a_reversed_numpy_view_is_named() -> None:
    """torch.from_numpy refuses negative strides: its ValueError came out of tilec's call as a
    traceback; now the error names the argument, for a compiled kernel and an eager call."""
    import numpy as np

    reversed_view = np.arange(128, dtype=np.float32)[::-1]
    compiled = tilec.compile(copy64, target="cpu")
    with pytest.raises(LaunchError, match=r"argument 'A' is a numpy view with a negative stride "
                                          r"\(strides \(-4,\)"):
        compiled(reversed_view[:64], np.zeros(64, dtype=np.float32))
    with pytest.raises(LaunchError, match="argument 'B' is a numpy view with a negative stride"):
        add(np.ones(128, dtype=np.float32), reversed_view)
    assert (add(np.ones(128, dtype=np.float32), reversed_view.copy()) == 128 - np.arange(128)
            ).all()


@tilec.jit
def fill(A, value: T.int8):
    N = T.const("N")
    A: T.Tensor((N,), T.int8)
    with T.Kernel(1, threads=64) as _:
        for i in T.Parallel(N):
            A[i] = value


@pytest.mark.parametrize("value, message", [
    (torch.tensor(3, dtype=torch.int8), "argument 'value' must be a int8 scalar, got Tensor of "
                                        "shape ()"),
    (None, "argument 'value' must be a int8 scalar, got NoneType"),
    (3.0, "argument 'value' must be a int8 scalar, got float"),
    (300, "argument 'value' = 300 does not fit in int8 (-128 to 127)")])
def test_an_eager_scalar_argument_is_checked_as_a_compiled_kernels(value, message: str) -> None:
    """A tensor or None for `value: T.int8` failed at the line using it ('a buffer element is
    assigned a scalar', no word of the argument) and 3.0 was taken as 3."""
    with pytest.raises(TilecError) as info:
        fill(torch.zeros(64, dtype=torch.int8), value)
    assert info.value.message == f"fill: {message}"
    assert info.value.lineno == fill.location[1]


def test_an_eager_scalar_argument_of_its_kind_runs() -> None:
    import numpy as np

    a = torch.zeros(64, dtype=torch.int8)
    fill(a, np.int16(-7))
    assert a.tolist() == [-7] * 64


def test_jit_of_something_not_a_function_is_an_error() -> None:
    """tilec.jit(int) made a JITFunction that failed later, reading the source of a class."""
    with pytest.raises(TilecError) as info:
        tilec.jit(int)  # error: jit-of-a-class
    check_error(info.value, "jit-of-a-class",
                "tilec.jit decorates a function defined with def, got type 'int'")
