"""Hostile inputs against the newest features (T.unroll bodies, thread ranges, T.sync_grid,
T.ptx_cp_async, dtype-changing T.view): each is a clear error at the kernel's line or runs
right, never an abort in the user's process.

A fragment allocated inside a T.unroll body (TileLang's MLA decode casts through one) aborted
the process in lower-tile-to-gpu on every GPU target (an MLIR assertion: each unrolled copy used
a clone of the alloc with no registers); it is an error at the alloc until the copies share the
original's registers. The CPU target runs it.
"""

from __future__ import annotations

from pathlib import Path

import error_tags
import pytest
import torch
from conftest import poisoned, randn

import tilec
import tilec.language as T
from tilec.errors import CompileError

THIS_FILE = Path(__file__).resolve()
GPU_TARGETS = ["cuda:sm_90a", "cuda:sm_80", "hip:gfx942", "vulkan", "webgpu"]
N = 64


def fragment_in_unroll():
    @T.prim_func
    def main(X: T.Tensor((N, N), "float32"), Y: T.Tensor((N, N), "float16")):
        with T.Kernel(1, threads=128):
            acc = T.alloc_fragment((N, N), "float32")
            tile = T.alloc_shared((N, N), "float16")
            T.copy(X[0, 0], acc)
            for stage in T.unroll(2):
                half = T.alloc_fragment((N, N), "float16")  # error: fragment-in-unroll
                for i, j in T.Parallel(N, N):
                    half[i, j] = acc[i, j] * (stage + 1)
                T.copy(half, tile)
            T.copy(tile, Y[0, 0])
    return main


@pytest.mark.parametrize("target", GPU_TARGETS)
def test_a_fragment_allocated_in_an_unroll_body_is_an_error(target: str) -> None:
    if target.startswith("hip"):
        from tilec.compiler.targets.hip import toolchain_missing

        if toolchain_missing():
            pytest.skip("no LLVM 22 / ROCm device libraries for the HIP target")
    with pytest.raises(CompileError) as info:
        tilec.compile(fragment_in_unroll(), target=target)
    error_tags.check_error(info.value, THIS_FILE, "fragment-in-unroll",
                           "allocates a fragment inside a T.unroll loop",
                           "allocate fragments before the loop", kind=CompileError)


def test_a_fragment_allocated_in_an_unroll_body_runs_on_the_cpu() -> None:
    kernel = tilec.compile(fragment_in_unroll(), target="cpu")
    x = randn((N, N), torch.float32, torch.Generator().manual_seed(5))
    y = poisoned((N, N), torch.float16)
    kernel(x, y)
    torch.testing.assert_close(y.double(), (x * 2).half().double(), rtol=1e-3, atol=1e-3)
