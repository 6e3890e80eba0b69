"""Scalar statements (outside T.Parallel) that every thread of a block runs into one element of
shared memory or a tensor (compiler/passes/check_scalar_stores.py). `Out[bx] += x` and
`T.atomic_add(total[0], s[0])` in a kernel's body ran once per thread on the GPU targets (a race,
or threads times the sum: TileLang's semantics too) and once per block on the CPU target; they
are now errors at their line on every target. The portable forms (a store every thread makes
alike, an atomic inside `for _ in T.Parallel(1)`, a T.Parallel store whose value is the same
along the variable its index leaves out) run right on the CPU target and on lavapipe against
float64, outputs poisoned.

T.Parallel plain stores of a value computed from a variable their index leaves out
(`row[j] = x[i, j]`: which point's value lands depends on the schedule) are check-parallel-
updates' errors, tested here beside their allowed forms.
"""

from __future__ import annotations

import functools
from pathlib import Path

import error_tags
import pytest
import torch
from conftest import poisoned, randn

import tilec
import tilec.language as T
from tilec.errors import CompileError

THIS_FILE = Path(__file__).resolve()
TARGETS = ["cpu", "cuda:sm_90a", "cuda:sm_80", "hip:gfx942", "vulkan", "webgpu", "ascend"]
GPU_TARGETS = ["cuda:sm_90a", "cuda:sm_80", "hip:gfx942", "vulkan", "webgpu"]
M, N, BLOCKS, THREADS = 8, 16, 4, 64


def compile_error(kernel, target: str) -> CompileError:
    with pytest.raises(CompileError) as info:
        tilec.compile(kernel, target=target)
    return info.value


def add_in_body():
    @T.prim_func
    def main(X: T.Tensor((BLOCKS,), "float32"), Out: T.Tensor((BLOCKS,), "float32")):
        with T.Kernel(BLOCKS, threads=THREADS) as bx:
            Out[bx] += X[bx]  # error: add-in-body
    return main


def atomic_in_body():
    @T.prim_func
    def main(X: T.Tensor((BLOCKS * N,), "float32"), Total: T.Tensor((1,), "float32")):
        with T.Kernel(BLOCKS, threads=THREADS) as bx:
            x = T.alloc_fragment((N,), "float32")
            s = T.alloc_fragment((1,), "float32")
            T.copy(X[bx * N], x)
            T.reduce_sum(x, s, dim=0)
            T.atomic_add(Total[0], s[0])  # error: atomic-in-body
    return main


def shared_counter():
    @T.prim_func
    def main(Out: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=THREADS):
            count = T.alloc_shared((1,), "int32")
            count[0] = 0
            for _ in T.serial(M):
                count[0] = count[0] + 1  # error: shared-counter
            Out[0] = count[0]
    return main


def thread_index_store():
    @T.prim_func
    def main(Out: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=THREADS):
            tx = T.get_thread_binding()
            Out[0] = T.Cast("float32", tx)  # error: thread-index-store
    return main


def atomic_in_thread_range():
    @T.prim_func
    def main(Total: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=128):
            if T.get_thread_binding() < 32:
                T.atomic_add(Total[0], 1.0)  # error: atomic-in-thread-range
    return main


def warp_leaders_add():
    @T.prim_func
    def main(X: T.Tensor((128,), "float32"), Total: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=128):
            if T.get_thread_binding() % 32 == 0:
                Total[0] += X[0]  # error: warp-leaders-add
    return main


def loaded_condition_add():
    @T.prim_func
    def main(X: T.Tensor((128,), "float32"), Total: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=128):
            tx = T.get_thread_binding()
            if X[tx] > 0.0:
                Total[0] += X[0]
    return main


def last_row():
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            row = T.alloc_fragment((N,), "float32")
            for i, j in T.Parallel(M, N):
                row[j] = X[i, j] * 2.0  # error: last-row
            T.copy(row, Out[0])
    return main


def shared_last_row():
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            row = T.alloc_shared((N,), "float32")
            for i, j in T.Parallel(M, N):
                if X[i, j] > 0.0:
                    row[j] = X[i, j]  # error: shared-last-row
            T.copy(row, Out[0])
    return main


EVERY_THREAD = {
    "add-in-body": (add_in_body, "a store to one tensor element", "64 threads",
                    "reads the element and stores it back"),
    "atomic-in-body": (atomic_in_body, "T.atomic_add into one tensor element", "64 threads",
                       "adds the same value once per thread"),
    "shared-counter": (shared_counter, "a store to one shared buffer element", "64 threads",
                       "reads the element and stores it back"),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("tag", sorted(EVERY_THREAD))
def test_every_thread_updating_one_element_is_an_error(tag: str, target: str) -> None:
    factory, what, threads, why = EVERY_THREAD[tag]
    error = compile_error(factory(), target)
    error_tags.check_error(error, THIS_FILE, tag, f"{what} outside T.Parallel runs on each of "
                           f"the block's {threads}", why, "for _ in T.Parallel(1):",
                           "if T.get_thread_binding() == 0:", kind=CompileError)


@pytest.mark.parametrize("target", GPU_TARGETS)
def test_a_thread_value_stored_into_one_element_is_an_error(target: str) -> None:
    error = compile_error(thread_index_store(), target)
    error_tags.check_error(error, THIS_FILE, "thread-index-store",
                           "stores a value that differs between the threads at an index that "
                           "does not", kind=CompileError)


@pytest.mark.parametrize("target", ["cuda:sm_90a", "cuda:sm_80"])
def test_a_thread_range_runs_its_scalar_code_on_each_of_its_threads(target: str) -> None:
    error = compile_error(atomic_in_thread_range(), target)
    error_tags.check_error(error, THIS_FILE, "atomic-in-thread-range",
                           "runs on each of the 32 threads of its thread range",
                           kind=CompileError)


@pytest.mark.parametrize("target", GPU_TARGETS)
def test_a_condition_on_the_thread_index_is_counted(target: str) -> None:
    """`if tx % 32 == 0:` runs on 4 of 128 threads: its read-modify-write races among them."""
    error = compile_error(warp_leaders_add(), target)
    error_tags.check_error(error, THIS_FILE, "warp-leaders-add",
                           "runs on each of the 4 threads its conditions select",
                           "reads the element and stores it back", kind=CompileError)


def test_a_condition_on_loaded_values_stays_unchecked() -> None:
    """Which threads pass `X[tx] > 0` is known at run time only (README: unchecked)."""
    kernel = tilec.compile(loaded_condition_add(), target="cuda:sm_90a")
    assert kernel.get_kernel_source()


PARALLEL_STORES = {
    "last-row": (last_row, "a fragment element"),
    "shared-last-row": (shared_last_row, "a shared buffer element"),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("tag", sorted(PARALLEL_STORES))
def test_parallel_store_of_a_left_out_variable_is_an_error(tag: str, target: str) -> None:
    factory, what = PARALLEL_STORES[tag]
    error = compile_error(factory(), target)
    error_tags.check_error(error, THIS_FILE, tag, f"T.Parallel stores into {what}",
                           "leaves out its first variable (extent 8), a value computed from it",
                           "which value lands depends on the schedule", kind=CompileError)


# ------------------------------------------------------------------ what still compiles and runs


@functools.cache
def portable_forms():
    """A store every thread makes alike (`Scaled[bx] = X[bx, 0] * 2`), a block's partial sum
    added once through `for _ in T.Parallel(1)`, and a T.Parallel store whose value does not
    depend on the variable its index leaves out (`Bias[j]` over T.Parallel(M, N))."""

    @T.prim_func
    def main(X: T.Tensor((BLOCKS, N), "float32"), B: T.Tensor((N,), "float32"),
             Scaled: T.Tensor((BLOCKS,), "float32"), Total: T.Tensor((1,), "float32"),
             Bias: T.Tensor((BLOCKS, N), "float32")):
        with T.Kernel(BLOCKS, threads=THREADS) as bx:
            x = T.alloc_fragment((N,), "float32")
            s = T.alloc_fragment((1,), "float32")
            row = T.alloc_shared((N,), "float32")
            Scaled[bx] = X[bx, 0] * 2.0
            T.copy(X[bx, 0], x)
            T.reduce_sum(x, s, dim=0)
            for _ in T.Parallel(1):
                T.atomic_add(Total[0], s[0])
            for _i, j in T.Parallel(M, N):
                row[j] = B[j] + 1.0
            T.copy(row, Bias[bx, 0])
    return main


def run_portable_forms(target: str, device: str = "cpu") -> None:
    """portable_forms() compiled for `target`, run on `device` against float64, outputs
    poisoned (Total starts at zero: it is added to)."""
    kernel = tilec.compile(portable_forms(), target=target)
    generator = torch.Generator().manual_seed(17)
    x, b = randn((BLOCKS, N), torch.float32, generator), randn((N,), torch.float32, generator)
    scaled, bias = poisoned((BLOCKS,), torch.float32), poisoned((BLOCKS, N), torch.float32)
    total = torch.zeros(1, dtype=torch.float32)
    outputs = [scaled.to(device), total.to(device), bias.to(device)]
    kernel(x.to(device), b.to(device), *outputs)
    scaled, total, bias = (output.cpu().double() for output in outputs)
    x64, b64 = x.double(), b.double()
    torch.testing.assert_close(scaled, x64[:, 0] * 2, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(total, x64.sum().reshape(1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(bias, (b64 + 1).expand(BLOCKS, N), rtol=1e-6, atol=1e-6)


def test_portable_forms_on_the_cpu() -> None:
    run_portable_forms("cpu")


@pytest.mark.parametrize("target", ["vulkan", "webgpu"])
def test_portable_forms_on_lavapipe(target: str) -> None:
    from test_spirv_targets import require, require_device, require_naga

    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    run_portable_forms(target)


@pytest.mark.parametrize("target", ["cuda:sm_90a", "cuda:sm_80", "hip:gfx942"])
def test_portable_forms_compile(target: str) -> None:
    from tilec.compiler.targets.hip import toolchain_missing

    if target.startswith("hip") and toolchain_missing():
        pytest.skip("no LLVM 22 / ROCm device libraries for the HIP target")
    tilec.compile(portable_forms(), target=target)
