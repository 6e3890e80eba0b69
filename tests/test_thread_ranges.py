"""Blocks of 96 threads and branches on the thread index (tests/gpu/thread_range_kernels.py,
two-sided ranges and `elif` chains of them in tests/gpu/range_chain_kernels.py): numerics on
the CPU target against float64 (its one thread runs the ranges in turn), and on CUDA the code
each branch gets: layouts over the branch's threads, its block barriers a named barrier over
them, PTX through ptxas for sm_90a and sm_80. The GPU suite runs the same kernels
(tests/gpu/test_thread_ranges_gpu.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import assert_close, randn

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from range_chain_kernels import (  # noqa: E402
    PARTS,
    RANGES,
    SPELLINGS,
    WIDTH,
    middle_range,
    range_chain,
)
from range_chain_kernels import reference as chain_reference  # noqa: E402
from thread_range_kernels import MIXES, mix_rows_split, mix_rows_whole, reference  # noqa: E402

import tilec  # noqa: E402
import tilec.language as T  # noqa: E402
from tilec.errors import CompileError  # noqa: E402

ROWS, HIDDEN = 5, 256


@pytest.mark.parametrize("threads", [96])
def test_whole_block_on_cpu(threads: int, rng: torch.Generator) -> None:
    x = randn((ROWS, MIXES, HIDDEN), torch.float32, rng)
    s = randn((ROWS, MIXES), torch.float32, rng)
    kernel = mix_rows_whole.compile(hidden=HIDDEN, threads=threads, target="cpu")
    p, o = kernel(x, s)
    expected_p, expected_o = reference(x.double(), s.double())
    assert_close(p, expected_p, torch.float32)
    assert_close(o, expected_o, torch.float32)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_branches_get_their_threads(arch: str) -> None:
    kernel = mix_rows_split.compile(hidden=HIDDEN, target=f"cuda:{arch}")
    tile = kernel.asm["tile-cuda"]
    # warp 0's fragments span its 32 threads, the else branch's the 64 of warps 1 and 2
    branch = tile.index("scf.if")
    then_part, else_part = tile[branch:].split("} else {", 1)
    then_warps = re.findall(r"warp = (\[[^>]*\])>", then_part)
    else_warps = re.findall(r"warp = (\[[^>]*\])>", else_part)
    assert then_warps and all(warps == "[]" for warps in then_warps)
    assert else_warps and all(re.fullmatch(r"\[\[[\d, ]+\]\]", warps) for warps in else_warps)
    ptx = kernel.get_kernel_source()
    # the pipelined loop's barriers in the else branch: a named barrier over its 64 threads
    assert re.search(r"bar\.sync\s+\d+, 64;", ptx)
    assert not re.search(r"bar\.sync\s+\d+, 32;", ptx)
    assert kernel.asm["cubin"]


def test_whole_block_of_96_on_cuda() -> None:
    kernel = mix_rows_whole.compile(hidden=HIDDEN, target="cuda:sm_90a")
    assert "64 threads" not in kernel.asm["tile-cuda"]
    assert kernel.asm["cubin"]



# ----- two-sided ranges and `elif` chains (tests/gpu/range_chain_kernels.py) -----------------
CHAIN_ROWS = 3


def _run_poisoned(kernel, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    out = torch.full((x.shape[0], PARTS, WIDTH), float("nan"))
    sums = torch.full((x.shape[0], PARTS), float("nan"))
    kernel(x, out, sums)
    return out, sums


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_range_chain_on_cpu(spelling: str, rng: torch.Generator) -> None:
    """Each range of the chain runs once on the CPU target's one thread: every part written
    once, with its own factor (a range read one off is a compile error or a lost part)."""
    x = randn((CHAIN_ROWS, PARTS, WIDTH), torch.float32, rng)
    kernel = range_chain.compile(rows=CHAIN_ROWS, spelling=spelling, target="cpu")
    out, sums = _run_poisoned(kernel, x)
    expected_out, expected_sums = chain_reference(x.double())
    assert_close(out, expected_out, torch.float32)
    assert_close(sums, expected_sums, torch.float32)


@pytest.mark.parametrize(("first", "end"), [(0, 256), (64, 192), (224, 256)])
def test_middle_range_on_cpu(first: int, end: int, rng: torch.Generator) -> None:
    x = randn((CHAIN_ROWS, PARTS, WIDTH), torch.float32, rng)
    kernel = middle_range.compile(rows=CHAIN_ROWS, first=first, end=end, target="cpu")
    out, sums = _run_poisoned(kernel, x)
    expected_out, expected_sums = chain_reference(x.double())
    assert_close(out, expected_out, torch.float32)
    assert_close(sums, expected_sums, torch.float32)


@pytest.mark.parametrize(("first", "end"), [(63, 192), (64, 193), (65, 192), (64, 191)])
@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
def test_range_off_the_warp_grid_is_an_error(first: int, end: int, target: str) -> None:
    """A range one thread off a warp boundary is no range: an error at the kernel's line on
    CUDA (check-thread-branches), the thread index's error on the CPU target."""
    with pytest.raises(CompileError) as info:
        middle_range.compile(rows=CHAIN_ROWS, first=first, end=end, target=target)
    message = str(info.value)
    assert "range_chain_kernels.py:" in message
    if target == "cpu":
        assert "has no meaning on the CPU target" in message
    else:
        assert "stands under an `if` whose condition differs" in message


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("spelling", ["and", "mirrored"])
def test_range_chain_barriers_count_their_threads(arch: str, spelling: str) -> None:
    """Each range's shared round trip waits on a named barrier over exactly its threads (64,
    96, 32, 64), never on the whole block's; the PTX assembles (ptxas)."""
    kernel = range_chain.compile(rows=CHAIN_ROWS, spelling=spelling, target=f"cuda:{arch}")
    ptx = kernel.get_kernel_source()
    counts = [int(n) for n in re.findall(r"bar\.sync\s+\d+, (\d+);", ptx)]
    assert counts == [end - first for first, end in RANGES]
    assert not re.search(r"bar\.sync\s+\d+;", ptx)
    assert kernel.asm["cubin"]


def test_range_chain_layouts_span_their_ranges() -> None:
    """The fragments of each range are laid out over its threads: 64 (one warp bit), the 64
    that its 96 hold, 32 (no warp bit), 64."""
    tile = range_chain.compile(rows=CHAIN_ROWS, target="cuda:sm_90a").asm["tile-cuda"]
    allocs = re.findall(r"tile\.alloc \{tile\.layout = #tile\.linear<\[128\],[^>]*warp = "
                        r"(\[[^>]*\])>\} : memref<128xf32", tile)
    assert allocs == ["[[0]]", "[[0]]", "[]", "[[0]]"]


@tilec.jit
def add_in_a_range(A, Total):
    """Every one of the range's 64 threads adds A[0]: 64 adds on a GPU, one on the CPU."""
    A: T.Tensor[[128], T.float32]
    Total: T.Tensor[[1], T.float32]
    with T.Kernel(1, threads=128):
        tx = T.get_thread_binding()
        if tx >= 32 and tx < 96:
            T.atomic_add(Total[0], A[0])


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
def test_per_thread_statement_in_a_range_is_checked(target: str) -> None:
    """The CPU target runs a range's statements once: a statement each of the range's
    threads runs with a different effect is check-scalar-stores' error on both targets."""
    with pytest.raises(CompileError, match=r"test_thread_ranges.py:\d+: T.atomic_add into one "
                                           r"tensor element .* each of the 64 threads"):
        add_in_a_range.compile(target=target)
