"""The native kernel call (tilec.runtime.fastcall, launcher/torch_call.cpp) on the CPU target:
it takes the calls that match the compiled plan, computes what the Python call computes, and
hands every other call to the Python call, which raises the error naming the argument."""

from __future__ import annotations

import dataclasses
import gc
import sys
import time
import weakref

import pytest
import torch

import tilec
import tilec.language as T
from tilec.errors import LaunchError
from tilec.jit import JITKernel
from tilec.runtime import fastcall

native = pytest.importorskip("tilec.runtime._launcher_torch",
                             reason="the native call is built against this torch")


def add_kernel(block: int = 64, target: str = "cpu"):
    N = T.dynamic("N")

    @T.prim_func
    def add(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
            C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return fresh(tilec.compile(add, out_idx=[-1], target=target))


def scale_rows_kernel(M: int = 32, N: int = 48):
    @T.prim_func
    def scale(X: T.Tensor((M, N), "float16"), S: T.Tensor((M,), "float32"),
              Y: T.Tensor((M, N), "float32"), Z: T.Tensor((M,), "float32")):
        with T.Kernel(M, threads=32) as row:
            for j in T.Parallel(N):
                Y[row, j] = T.cast(X[row, j], "float32") * S[row]
            Z[row] = S[row] * 2.0

    return fresh(tilec.compile(scale, out_idx=[2, 3], target="cpu"))


def fresh(kernel: JITKernel) -> JITKernel:
    """A kernel object of its own (tilec.compile gives the one it keeps for its key)."""
    return JITKernel(kernel.artifact, kernel.location)


def test_matching_calls_take_the_native_call(rng: torch.Generator) -> None:
    kernel = add_kernel()
    a, b = (torch.randn(256, generator=rng) for _ in range(2))
    assert kernel.call_path == "not called yet"
    first = kernel(a, b)  # the Python call, which then installs the native one
    assert isinstance(kernel._call, native.Call)
    assert kernel.call_path == "native call"
    torch.testing.assert_close(first, a + b, rtol=0, atol=0)
    for n in (256, 64, 1000):  # N is a symbol: each size is the same plan
        a, b = (torch.randn(n, generator=rng) for _ in range(2))
        c = kernel(a, b)
        assert c.shape == (n,) and c.dtype == torch.float32
        torch.testing.assert_close(c, a + b, rtol=0, atol=0)
        assert kernel(a, b).data_ptr() != c.data_ptr()  # each call allocates its output


def test_two_outputs_and_a_static_shape(rng: torch.Generator) -> None:
    kernel = scale_rows_kernel()
    x = torch.randn(32, 48, generator=rng).half()
    s = torch.randn(32, generator=rng)
    kernel(x, s)
    assert isinstance(kernel._call, native.Call)
    y, z = kernel(x, s)
    torch.testing.assert_close(y, x.float() * s[:, None], rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(z, s * 2, rtol=0, atol=0)


@pytest.mark.parametrize("case, message", [
    ("dtype", "has dtype torch.float64, expected torch.float32"),
    ("symbol", "has N = 100 in dimension 0, but an earlier argument has N = 256"),
    ("dims", "has 2 dimensions, expected 1"),
    ("strided", "is not contiguous"),
    ("count", "takes 2 arguments"),
    ("not a tensor", "must be a tensor, got list"),
])
def test_mismatches_raise_the_python_calls_error(case: str, message: str,
                                                 rng: torch.Generator) -> None:
    kernel = add_kernel()
    a, b = (torch.randn(256, generator=rng) for _ in range(2))
    kernel(a, b)
    bad = {"dtype": (a, b.double()), "symbol": (a, b[:100]), "dims": (a, b.reshape(16, 16)),
           "strided": (a, torch.randn(512, generator=rng)[::2]), "count": (a,),
           "not a tensor": (a, [1.0] * 256)}[case]
    with pytest.raises(LaunchError, match=message) as raised:
        kernel(*bad)
    assert raised.value.filename == __file__
    torch.testing.assert_close(kernel(a, b), a + b, rtol=0, atol=0)  # still native, still right


def test_an_unused_kernel_is_freed(rng: torch.Generator) -> None:
    """The kernel holds its native call, whose fallback holds the kernel: the collector
    frees the pair (with the loaded kernel) once nothing else does."""
    kernel = add_kernel()
    a, b = (torch.randn(64, generator=rng) for _ in range(2))
    kernel(a, b)
    assert isinstance(kernel._call, native.Call)
    alive = weakref.ref(kernel)
    del kernel
    gc.collect()
    assert alive() is None


def test_what_the_plan_declines_still_runs(rng: torch.Generator) -> None:
    """numpy arrays are no torch tensors: the Python call takes them (and returns numpy)."""
    kernel = add_kernel()
    a, b = (torch.randn(128, generator=rng) for _ in range(2))
    kernel(a, b)
    out = kernel(a.numpy(), b.numpy())
    assert type(out).__module__ == "numpy"
    torch.testing.assert_close(torch.from_numpy(out), a + b, rtol=0, atol=0)


def test_switched_off_by_the_environment(monkeypatch, rng: torch.Generator) -> None:
    monkeypatch.setenv("TILEC_NATIVE_CALL", "0")
    kernel = add_kernel()
    a, b = (torch.randn(64, generator=rng) for _ in range(2))
    torch.testing.assert_close(kernel(a, b), a + b, rtol=0, atol=0)
    assert not isinstance(kernel._call, native.Call)


@pytest.mark.parametrize("expression, values", [
    ("((N + 63) // 64)", {"N": 1000}), ("(N % 7)", {"N": 20}), ("(-N // 3)", {"N": 10}),
    ("((M * N) - 5)", {"M": 3, "N": 4}), ("7", {}),
])
def test_grid_programs_follow_python(expression: str, values: dict[str, int]) -> None:
    symbols = {name: n for n, name in enumerate(values)}
    program = fastcall.grid_program(expression, symbols)
    stack: list[int] = []
    operations = {fastcall.ADD: int.__add__, fastcall.SUB: int.__sub__,
                  fastcall.MUL: int.__mul__, fastcall.FLOOR_DIV: int.__floordiv__,
                  fastcall.MOD: int.__mod__}
    for op, value in zip(program[::2], program[1::2], strict=True):
        if op == fastcall.CONST:
            stack.append(value)
        elif op == fastcall.SYMBOL:
            stack.append(list(values.values())[value])
        elif op == fastcall.NEG:
            stack.append(-stack.pop())
        else:
            right, left = stack.pop(), stack.pop()
            stack.append(operations[op](left, right))
    assert stack == [eval(expression, {}, dict(values))]  # noqa: S307 - a test's own text


def test_a_grid_naming_a_scalar_has_no_program() -> None:
    assert fastcall.grid_program("(n_blocks + 1)", {"N": 0}) is None


def test_bad_plans_are_rejected_when_built() -> None:
    common = dict(params=1, outputs=[], symbols=(), slots=[], device_type="cpu",
                  device_index=-1, fallback=print, error=LaunchError, name="k", launch=print)
    with pytest.raises(ValueError, match="malformed"):
        native.Call(**common, inputs=[(0, torch.float32, [4])],
                    grid=[[fastcall.ADD, 0], [0, 1], [0, 1]])
    with pytest.raises(ValueError, match="one input or one output"):
        native.Call(**{**common, "params": 2}, inputs=[(0, torch.float32, [4])],
                    grid=[[0, 1], [0, 1], [0, 1]])
    with pytest.raises(ValueError, match="unknown symbol"):
        native.Call(**common, inputs=[(0, torch.float32, [-1])], grid=[[0, 1], [0, 1], [0, 1]])


def test_the_native_call_costs_less_than_the_python_call(monkeypatch,
                                                         rng: torch.Generator) -> None:
    """Host time of the check-and-allocate path (the CPU kernel's own run excluded: its
    launcher is replaced by one that does nothing)."""
    timings = {}
    for setting in ("1", "0"):
        monkeypatch.setenv("TILEC_NATIVE_CALL", setting)
        kernel = add_kernel()
        kernel._launcher = lambda args, symbols: None
        a, b = (torch.randn(64, generator=rng) for _ in range(2))
        kernel(a, b)
        best = float("inf")
        for _ in range(5):
            began = time.perf_counter()
            for _ in range(2000):
                kernel(a, b)
            best = min(best, (time.perf_counter() - began) / 2000)
        timings[setting] = best
    assert timings["1"] < timings["0"], timings


def test_on_by_default_for_cpu_and_cuda(monkeypatch) -> None:
    monkeypatch.delenv("TILEC_NATIVE_CALL", raising=False)
    assert fastcall.enabled("cpu") and fastcall.enabled("cuda")
    assert not fastcall.enabled("mps")
    monkeypatch.setenv("TILEC_NATIVE_CALL", "0")
    assert not fastcall.enabled("cpu") and not fastcall.enabled("cuda")


def test_a_rocm_device_named_cuda_takes_the_python_call(monkeypatch) -> None:
    """torch calls a ROCm GPU "cuda": an HSACO kernel there must not reach cuLaunchKernel,
    even though its HIP launcher has a kernel_for whose kernels hold a function handle."""
    monkeypatch.delenv("TILEC_NATIVE_CALL", raising=False)
    from tilec.jit import stored_shape, torch_dtype

    artifact = add_kernel(target="cuda:sm_90a").artifact
    hsaco = dataclasses.replace(artifact, binary_kind="hsaco")

    class HipLauncher:
        @staticmethod
        def kernel_for(device: int) -> object:
            raise AssertionError("the native call asked a HIP launcher for its kernel")

    plans = [(n, stored_shape(p), torch_dtype(p.dtype), True)
             for n, p in enumerate(artifact.params)]
    assert fastcall.native_call(hsaco, HipLauncher(), plans[:2], plans[2:],
                                torch.device("cuda", 0), print, LaunchError) \
        == "a hsaco binary (cuLaunchKernel runs cubin and PTX)"


def test_a_kernel_without_tensor_inputs_takes_the_python_call(monkeypatch) -> None:
    """A CUDA kernel whose only tensors are outputs (T.rng_init's draws) has no input to fix
    its device: torch.device("cuda") has no index, and the outputs belong on whichever device
    is current at each call, which only the Python call allocates on."""
    monkeypatch.delenv("TILEC_NATIVE_CALL", raising=False)
    from tilec.jit import stored_shape, torch_dtype

    @T.prim_func
    def fill(U: T.Tensor((256,), "float32")):
        with T.Kernel(4, threads=64) as bx:
            for i in T.Parallel(64):
                U[bx * 64 + i] = T.cast(bx * 64 + i, "float32")

    artifact = tilec.compile(fill, out_idx=[-1], target="cuda:sm_90a").artifact

    class CudaLauncher:
        @staticmethod
        def kernel_for(device: int) -> object:
            raise AssertionError(f"the native call loaded the kernel on device {device}")

    plans = [(n, stored_shape(p), torch_dtype(p.dtype), True)
             for n, p in enumerate(artifact.params)]
    assert fastcall.native_call(artifact, CudaLauncher(), [], plans, torch.device("cuda"),
                                print, LaunchError) \
        == "no tensor input fixes the device (the outputs go to the current one)"


def test_a_kernel_says_why_it_takes_the_python_call(monkeypatch,
                                                    rng: torch.Generator) -> None:
    """call_path names the reason: the setting, and a native module that does not import
    (as where the launcher was built for another tilec than the one imported)."""
    a, b = (torch.randn(64, generator=rng) for _ in range(2))
    monkeypatch.setenv("TILEC_NATIVE_CALL", "0")
    kernel = add_kernel()
    torch.testing.assert_close(kernel(a, b), a + b, rtol=0, atol=0)
    assert kernel.call_path.startswith("Python call: TILEC_NATIVE_CALL=0")
    monkeypatch.delenv("TILEC_NATIVE_CALL")
    monkeypatch.setitem(sys.modules, "tilec.runtime._launcher_torch", None)
    monkeypatch.delattr(tilec.runtime, "_launcher_torch")
    kernel = add_kernel()
    torch.testing.assert_close(kernel(a, b), a + b, rtol=0, atol=0)
    assert kernel.call_path.startswith(
        "Python call: tilec.runtime._launcher_torch does not import"), kernel.call_path
    assert kernel._call == kernel._python_call
