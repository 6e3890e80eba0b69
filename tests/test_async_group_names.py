"""TileLang's names around its async copies, in TileLang's syntax (minference's vertical-slash
kernel uses them): T.Parallel's hints (prefer_async, annotations, coalesced_width),
T.ptx_commit_group / T.ptx_wait_group (cp.async groups) and T.annotate_producer_reg_dealloc /
T.annotate_consumer_reg_alloc (setmaxnreg). CPU numerics against torch; the CUDA code in PTX."""

from __future__ import annotations

import re

import pytest
import torch
from conftest import randn

import tilec
import tilec.language as T
from tilec.errors import TilecError


def staged_scale(n: int, block: int = 64, threads: int = 128):
    """Rows gathered into shared memory by a T.Parallel TileLang would issue as cp.async, the
    group closed and waited for, then scaled into the output."""

    @T.prim_func
    def main(A: T.Tensor((n, 32), T.float32), index: T.Tensor((n,), T.int32),
             B: T.Tensor((n, 32), T.float32)):
        with T.Kernel(T.ceildiv(n, block), threads=threads) as bx:
            staged = T.alloc_shared((block, 32), T.float32)
            for i, j in T.Parallel(block, 32, prefer_async=True, coalesced_width=4,
                                   annotations={"parallel_async_without_async_commit_wait": True}):
                staged[i, j] = A[index[bx * block + i], j]
            T.ptx_commit_group()
            T.ptx_wait_group(0)
            for i, j in T.Parallel(block, 32):
                B[bx * block + i, j] = staged[i, j] * 3.0

    return main


def test_hinted_parallel_and_cp_async_groups_on_the_cpu(rng) -> None:
    n = 128
    kernel = tilec.compile(staged_scale(n), target="cpu")
    a = randn((n, 32), torch.float32, rng)
    index = torch.randperm(n, generator=rng).to(torch.int32)
    out = torch.full((n, 32), float("nan"))
    kernel(a, index, out)
    torch.testing.assert_close(out.double(), a.double()[index.long()] * 3.0, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_cp_async_groups_in_ptx(arch: str) -> None:
    ptx = tilec.compile(staged_scale(128), target=f"cuda:{arch}").asm["ptx"]
    commit = ptx.index("cp.async.commit_group")
    assert re.search(r"cp\.async\.wait_group\s+0;", ptx[commit:])


def producer_consumer(n: int):
    @T.prim_func
    def main(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
        with T.Kernel(1, threads=256):
            tid = T.get_thread_binding()
            if tid >= 128:
                T.annotate_producer_reg_dealloc()
            else:
                T.annotate_consumer_reg_alloc(232)
                for i in T.Parallel(n):
                    B[i] = A[i] + 1.0

    return main


def test_register_annotations_are_setmaxnreg() -> None:
    ptx = tilec.compile(producer_consumer(128), target="cuda:sm_90a").asm["ptx"]
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+24;", ptx)
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+232;", ptx)


def bad_parallel(which: str):
    @T.prim_func
    def main(B: T.Tensor((64,), T.float32)):
        with T.Kernel(1, threads=64):
            if which == "layout":
                for i in T.Parallel(64, loop_layout=T.Fragment((64,), lambda i: i)):  # bad
                    B[i] = 1.0
            elif which == "width":
                for i in T.Parallel(64, coalesced_width=0):  # bad
                    B[i] = 1.0
            else:
                T.ptx_wait_group(9)  # bad

    return main


@pytest.mark.parametrize("which, message", [
    ("layout", "T.Parallel(loop_layout=...) is not supported by tilec"),
    ("width", "T.Parallel(coalesced_width=...) is a positive int, got 0"),
    ("wait", "T.ptx_wait_group takes the number of groups left in flight, 0 to 7"),
])
def test_bad_hints_are_errors_at_their_line(which: str, message: str) -> None:
    with pytest.raises(TilecError, match=re.escape(message)) as caught:
        tilec.compile(bad_parallel(which), target="cpu")
    with open(__file__) as source:
        assert source.read().splitlines()[caught.value.lineno - 1].endswith("# bad")
