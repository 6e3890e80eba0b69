"""Tile-wide statements under conditions that differ between a block's threads
(compiler/passes/check_thread_branches.py): an error at the statement's line on every GPU
target, unless the branch is a thread range (NVIDIA: `T.get_thread_binding() < c`, c a multiple
of 32). Before, they were laid out over the whole block and the threads that skip the branch
left their elements uncomputed: a silent wrong result. Conditions every thread agrees on, and
per-thread statements under any condition, still compile, and run right on lavapipe (vulkan).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import error_tags
import pytest
import torch

import tilec
import tilec.language as T
from tilec.errors import CompileError

THIS_FILE = Path(__file__).resolve()
GPU_TARGETS = ["cuda:sm_90a", "cuda:sm_80", "hip:gfx942", "vulkan"]
N = 128
PAIRS = 100  # the threads that copy a pair of A's elements into a local buffer


def check_error(error: CompileError, tag: str, *fragments: str) -> None:
    error_tags.check_error(error, THIS_FILE, tag, *fragments, kind=CompileError)


def compile_error(kernel, target: str) -> CompileError:
    with pytest.raises(CompileError) as info:
        tilec.compile(kernel, target=target)
    return info.value


def below_one():
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N):
            f = T.alloc_fragment((N,), "float32")
            if T.get_thread_binding() < 1:
                T.copy(A[0], f)  # error: below-one
            T.copy(f, B[0])
    return main


def part_of_a_warp():
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N):
            f = T.alloc_fragment((N,), "float32")
            T.copy(A[0], f)
            if T.get_thread_binding() < 48:
                for i in T.Parallel(N):  # error: part-of-a-warp
                    f[i] = f[i] * 2.0
            T.copy(f, B[0])
    return main


def even_threads():
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N):
            f = T.alloc_fragment((N,), "float32")
            T.copy(A[0], f)
            if T.get_thread_binding() % 2 == 0:
                T.clear(f)  # error: even-threads
            T.copy(f, B[0])
    return main


def through_a_variable():
    @T.prim_func
    def main(A: T.Tensor((4, 32), "float32"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=N):
            rows = T.alloc_fragment((4, 32), "float32")
            sums = T.alloc_fragment((4,), "float32")
            lane = T.alloc_var("int32")
            lane = T.get_thread_binding() % 32
            T.copy(A[0, 0], rows)
            if lane < 8:
                T.reduce_sum(rows, sums, dim=1)  # error: through-a-variable
            T.copy(sums, B[0])
    return main


def nested_ranges():
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N):
            f = T.alloc_fragment((N,), "float32")
            tx = T.get_thread_binding()
            if tx < 96:
                if tx >= 32 and tx < 64:
                    B[tx] = A[tx]
                else:  # threads 0-31 and 64-95: two ranges, not one
                    T.copy(A[0], f)  # error: nested-ranges
                    T.copy(f, B[0])
    return main


def loop_over_thread_index():
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N):
            s = T.alloc_shared((N,), "float32")
            for _ in T.serial(T.get_thread_binding() % 4):
                T.copy(A[0], s)  # error: loop-over-thread-index
            T.copy(s, B[0])
    return main


def whole_warps():
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N):
            f = T.alloc_fragment((N,), "float32")
            if T.get_thread_binding() < 64:
                T.copy(A[0], f)  # error: whole-warps
                T.copy(f, B[0])
    return main


CASES = {
    "below-one": (below_one, "T.copy", "an `if` whose condition differs"),
    "part-of-a-warp": (part_of_a_warp, "a T.Parallel loop", "an `if`"),
    "even-threads": (even_threads, "T.fill (T.clear)", "an `if`"),
    "through-a-variable": (through_a_variable, "T.reduce", "an `if`"),
    "nested-ranges": (nested_ranges, "T.copy", "an `if`"),
    "loop-over-thread-index": (loop_over_thread_index, "T.copy", "a loop whose bounds differ"),
}


@pytest.mark.parametrize("target", GPU_TARGETS)
@pytest.mark.parametrize("tag", sorted(CASES))
def test_tile_statement_under_a_thread_condition(tag: str, target: str) -> None:
    factory, what, around = CASES[tag]
    error = compile_error(factory(), target)
    check_error(error, tag, f"{what} stands under {around}", "move it out of the branch")


@pytest.mark.parametrize("target", ["hip:gfx942", "vulkan"])
def test_warp_range_without_thread_ranges(target: str) -> None:
    """`tx < 64` is a thread range on NVIDIA only: AMD and SPIR-V have no named barriers."""
    error = compile_error(whole_warps(), target)
    check_error(error, "whole-warps", "T.copy stands under", "has no thread ranges")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_warp_range_on_nvidia_compiles(arch: str) -> None:
    """The branch's fragment spans its 64 threads (one warp bit), not the block's 128."""
    kernel = tilec.compile(whole_warps(), target=f"cuda:{arch}")
    layouts = re.findall(r"tile\.alloc \{tile\.layout = [^\n]*warp = (\[[^>]*\])>",
                         kernel.asm["tile-cuda"])
    assert layouts == ["[[0]]"], layouts
    assert kernel.asm["cubin"]


# ------------------------------------------------------------------ what still compiles and runs


@functools.cache
def uniform_conditions():
    """Tile statements under conditions every thread agrees on (the block index; a shared
    flag thread 0 set before a barrier), per-thread stores under `tx % 2 == 0` and per-thread
    copies into a T.alloc_local buffer under `tx < 100`."""

    @T.prim_func
    def main(A: T.Tensor((4, N), "float32"), B: T.Tensor((4, N), "float32"),
             C: T.Tensor((4, N), "float32"), D: T.Tensor((4, N), "float32")):
        with T.Kernel(4, threads=N) as bx:
            tx = T.get_thread_binding()
            f = T.alloc_fragment((N,), "float32")
            pair = T.alloc_local((2,), "float32")
            flag = T.alloc_shared((1,), "int32")
            if tx == 0:
                flag[0] = bx % 2
            T.sync_threads()
            T.copy(A[bx, 0], f)
            if bx >= 2:
                for i in T.Parallel(N):
                    f[i] = f[i] * 2.0
            if flag[0] == 1:
                for i in T.Parallel(N):
                    f[i] = f[i] + 1.0
            T.copy(f, B[bx, 0])
            if tx % 2 == 0:
                C[bx, tx] = A[bx, tx] * 3.0
            else:
                C[bx, tx] = -A[bx, tx]
            if tx < PAIRS:  # each thread's own local copy
                T.copy(A[bx, tx], pair)
            else:
                T.clear(pair)
            D[bx, tx] = pair[0] + pair[1]
    return main


def uniform_reference(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    rows = torch.arange(4, dtype=a.dtype).unsqueeze(1)
    b = a * torch.where(rows >= 2, 2.0, 1.0) + torch.where(rows % 2 == 1, 1.0, 0.0)
    even = torch.arange(N) % 2 == 0
    c = torch.where(even, a * 3.0, -a)
    d = torch.zeros_like(a)
    d[:, :PAIRS] = a[:, :PAIRS] + a[:, 1:PAIRS + 1]
    return b, c, d


@pytest.mark.parametrize("target", ["cuda:sm_90a", "cuda:sm_80", "hip:gfx942"])
def test_uniform_conditions_compile(target: str) -> None:
    from tilec.compiler.targets.hip import toolchain_missing

    if target.startswith("hip") and toolchain_missing():
        pytest.skip(toolchain_missing())
    assert tilec.compile(uniform_conditions(), target=target).get_kernel_source()


def test_uniform_conditions_run_on_lavapipe() -> None:
    from test_spirv_targets import require, require_device

    require("spirv-val")
    require_device()
    kernel = tilec.compile(uniform_conditions(), target="vulkan")
    a = torch.randn((4, N), generator=torch.Generator().manual_seed(5))
    outputs = [torch.full((4, N), float("nan")) for _ in range(3)]
    kernel(a, *outputs)
    for produced, expected in zip(outputs, uniform_reference(a.double()), strict=True):
        assert not produced.isnan().any(), "an element was never written"
        torch.testing.assert_close(produced.double(), expected, rtol=1e-6, atol=1e-6)
