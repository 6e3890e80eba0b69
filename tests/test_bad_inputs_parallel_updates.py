"""T.Parallel read-modify-writes of an element several of its points share
(compiler/passes/check_parallel_updates.py): `acc[j] += tile[i, j]` over T.Parallel(M, N) is a
reduction over i. The CPU target ran it in order and got the sum; the GPU targets kept `acc`
replicated over the threads of the i points and stored one replica's partial sum (a silent
wrong result on vulkan and webgpu, max error 6-9; cuda's gpu stage the same). It is now an error
at the update's line on every target, pointing to T.reduce_sum or a serial loop. What stays
allowed (a per-point temporary, a shared update under `if i == 0`) runs right on the CPU target
and on lavapipe against torch.
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
M, N = 8, 16


def compile_error(kernel, target: str) -> CompileError:
    with pytest.raises(CompileError) as info:
        tilec.compile(kernel, target=target)
    return info.value


def column_sums():
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            tile = T.alloc_fragment((M, N), "float32")
            acc = T.alloc_fragment((N,), "float32")
            T.copy(X[0, 0], tile)
            T.clear(acc)
            for i, j in T.Parallel(M, N):
                acc[j] += tile[i, j]  # error: column-sums
            T.copy(acc, Out[0])
    return main


def running_max():
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            m = T.alloc_shared((N,), "float32")
            T.fill(m, -T.infinity("float32"))
            for i, j in T.Parallel(M, N):
                m[j] = T.max(m[j], X[i, j])  # error: running-max
            T.copy(m, Out[0])
    return main


def scaled_recurrence():
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Out: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=32):
            for i, j in T.Parallel(M, N):
                Out[i] = Out[i] * 0.5 + X[i, j]  # error: scaled-recurrence
    return main


def var_total():
    @T.prim_func
    def main(X: T.Tensor((M,), "float32"), Out: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=32):
            total = T.alloc_var("float32")
            total = 0.0
            for i in T.Parallel(M):
                total -= X[i]  # error: var-total
            Out[0] = total
    return main


def nested_parallel():
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            acc = T.alloc_fragment((N,), "float32")
            T.clear(acc)
            for i in T.Parallel(M):  # error: nested-parallel-outer
                scale = X[i, 0] * 0.0 + 1.0
                for j in T.Parallel(N):
                    acc[j] += X[i, j] * scale  # error: nested-parallel
            T.copy(acc, Out[0])
    return main


def pinned_fragment():
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            acc = T.alloc_fragment((N,), "float32")
            T.clear(acc)
            for i, j in T.Parallel(M, N):
                if i == 0:
                    acc[j] += X[i, j]  # error: pinned-fragment
            T.copy(acc, Out[0])
    return main


def pair_sums():
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Out: T.Tensor((N // 2,), "float32")):
        with T.Kernel(1, threads=32):
            acc = T.alloc_fragment((N // 2,), "float32")
            T.clear(acc)
            for i in T.Parallel(N):
                acc[i // 2] += X[i]  # error: pair-sums
            T.copy(acc, Out[0])
    return main


def plain_pairs():
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Out: T.Tensor((N // 2,), "float32")):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(N):
                Out[i // 2] = X[i]  # error: plain-pairs
    return main


def plain_same_pairs():
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Out: T.Tensor((N // 2,), "float32")):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(N):
                Out[i // 2] = X[i // 2] * 2.0 + X[N // 2 + i // 2]
    return main


CASES = {
    "column-sums": (column_sums, "a fragment element", "its first variable (extent 8)"),
    "running-max": (running_max, "a shared buffer element", "its first variable (extent 8)"),
    "scaled-recurrence": (scaled_recurrence, "a tensor element",
                          "its second variable (extent 16)"),
    "var-total": (var_total, "a T.alloc_var element", "its first variable (extent 8)"),
    "nested-parallel": (nested_parallel, "a fragment element",
                        "the first variable of the T.Parallel at line {outer} (extent 8)"),
    "pinned-fragment": (pinned_fragment, "a fragment element", "its first variable (extent 8)"),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("tag", sorted(CASES))
def test_shared_update_is_an_error_at_its_line(tag: str, target: str) -> None:
    factory, what, variable = CASES[tag]
    variable = variable.format(outer=error_tags.line_of(THIS_FILE, "nested-parallel-outer"))
    error = compile_error(factory(), target)
    error_tags.check_error(error, THIS_FILE, tag, f"T.Parallel updates {what}",
                           f"leaves out {variable}", "use T.reduce_sum / T.reduce_max",
                           "T.serial loop", kind=CompileError)


@pytest.mark.parametrize("target", TARGETS)
def test_index_two_points_share_is_an_error_at_its_line(target: str) -> None:
    """`acc[i // 2]` depends on i, yet points 0 and 1 update one element."""
    error = compile_error(pair_sums(), target)
    error_tags.check_error(error, THIS_FILE, "pair-sums", "T.Parallel updates a fragment element",
                           "at an index two of its points share: points (0,) and (1,) both "
                           "update element (0,)",
                           "use T.reduce_sum / T.reduce_max", kind=CompileError)


@pytest.mark.parametrize("target", TARGETS)
def test_plain_store_two_points_share_is_an_error_at_its_line(target: str) -> None:
    """`Out[i // 2] = X[i]`: points 0 and 1 store X[0] and X[1] into one element."""
    error = compile_error(plain_pairs(), target)
    error_tags.check_error(error, THIS_FILE, "plain-pairs", "T.Parallel stores into a tensor "
                           "element at an index two of its points share, of values that differ "
                           "between them: points (0,) and (1,) both store element (0,)",
                           "which value lands depends on the schedule", kind=CompileError)


def test_plain_store_of_one_value_two_points_share_runs() -> None:
    """`Out[i // 2] = f(X[i // 2], ...)`: both points store the same value."""
    kernel = tilec.compile(plain_same_pairs(), target="cpu")
    x = randn((N,), torch.float32, torch.Generator().manual_seed(7))
    out = poisoned((N // 2,), torch.float32)
    kernel(x, out)
    x64 = x.double()
    torch.testing.assert_close(out.double(), x64[:N // 2] * 2 + x64[N // 2:], rtol=1e-6,
                               atol=1e-6)


# ------------------------------------------------------------------ what still compiles and runs


@functools.cache
def allowed_updates():
    """A per-point temporary (a T.alloc_var written, then read, in each point), shared
    updates under `if i == 0` (one point along i adds to each element) and under
    `if i % 2 == 0` at i // 2 (one point per element), and a serial loop's sum inside
    T.Parallel (each point owns its element)."""

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Twice: T.Tensor((M, N), "float32"),
             First: T.Tensor((N,), "float32"), RowSums: T.Tensor((M,), "float32"),
             Evens: T.Tensor((M // 2,), "float32")):
        with T.Kernel(1, threads=32):
            t = T.alloc_var("float32")
            s = T.alloc_shared((N,), "float32")
            sums = T.alloc_fragment((M,), "float32")
            halves = T.alloc_shared((M // 2,), "float32")
            T.fill(s, 1.0)
            T.fill(halves, 0.5)
            for i, j in T.Parallel(M, N):
                t = X[i, j] * 2.0
                Twice[i, j] = t + 1.0
                if i == 0:
                    s[j] += X[i, j]
            for i in T.Parallel(M):
                if i % 2 == 0:
                    halves[i // 2] += X[i, 1]
            T.copy(s, First[0])
            T.copy(halves, Evens[0])
            T.clear(sums)
            for i in T.Parallel(M):
                for j in T.serial(N):
                    sums[i] += X[i, j]
            T.copy(sums, RowSums[0])
    return main


def run_allowed_updates(target: str, device: str = "cpu") -> None:
    """allowed_updates() compiled for `target`, run on `device` against float64, outputs
    poisoned (tests/gpu/test_parallel_updates_gpu.py runs it on CUDA)."""
    kernel = tilec.compile(allowed_updates(), target=target)
    x = randn((M, N), torch.float32, torch.Generator().manual_seed(13))
    outputs = [poisoned(shape, torch.float32).to(device)
               for shape in ((M, N), (N,), (M,), (M // 2,))]
    kernel(x.to(device), *outputs)
    twice, first, row_sums, evens = (output.cpu() for output in outputs)
    x64 = x.double()
    torch.testing.assert_close(twice.double(), x64 * 2 + 1, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(first.double(), x64[0] + 1, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(row_sums.double(), x64.sum(1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(evens.double(), x64[0::2, 1] + 0.5, rtol=1e-6, atol=1e-6)


def test_allowed_updates_on_the_cpu() -> None:
    run_allowed_updates("cpu")


@pytest.mark.parametrize("target", ["vulkan", "webgpu"])
def test_allowed_updates_on_lavapipe(target: str) -> None:
    from test_spirv_targets import require, require_device, require_naga

    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    run_allowed_updates(target)


@pytest.mark.parametrize("target", ["cuda:sm_90a", "cuda:sm_80", "hip:gfx942"])
def test_allowed_updates_compile(target: str) -> None:
    from tilec.compiler.targets.hip import toolchain_missing

    if target.startswith("hip") and toolchain_missing():
        pytest.skip("no LLVM 22 / ROCm device libraries for the HIP target")
    tilec.compile(allowed_updates(), target=target)
