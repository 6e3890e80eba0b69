"""Blocks of 96 threads and branches on the thread index (tests/gpu/thread_range_kernels.py):
numerics on the CPU target against float64, and on CUDA the code each branch gets: layouts
over the branch's threads, its block barriers a named barrier over them, PTX through ptxas for
sm_90a and sm_80. The GPU suite runs the same kernels (tests/gpu/test_thread_ranges_gpu.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import assert_close, randn

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from thread_range_kernels import MIXES, mix_rows_split, mix_rows_whole, reference  # noqa: E402

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

