"""The warp-specialized MLA decode of tests/gpu/mla_ws_kernels.py (TileLang's
example_mla_decode_ws.py, reduced) compiled for sm_90a: the PTX assembles; past the mbarrier
inits the block never meets as a whole (its warpgroups run side by side); each warpgroup's
barriers are named over its own 128 threads; and no mbarrier arrival, the signal that hands a
tile to another warpgroup or frees a ring slot, goes out while a wgmma that may read that tile
is in flight. tests/gpu/test_mla_ws_gpu.py runs it against float64."""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from mla_ws_kernels import ws_mla_decode  # noqa: E402


@functools.cache
def _ptx(dim: int) -> str:
    kernel = ws_mla_decode.compile(2, 256, dim, target="cuda:sm_90a")
    assert kernel.asm["cubin"]
    return kernel.get_kernel_source()


@pytest.mark.parametrize("dim", [128, 256])
def test_warpgroups_meet_only_through_mbarriers_and_their_own_named_barriers(dim: int) -> None:
    ptx = _ptx(dim)
    first_wait = ptx.index("mbarrier.try_wait")
    assert not re.search(r"bar\.sync\s+\d+;", ptx[first_wait:])
    named = set(re.findall(r"bar\.sync\s+(\d+), (\d+);", ptx))
    assert named == {("1", "128"), ("2", "128"), ("3", "128")}, named


@pytest.mark.parametrize("dim", [128, 256])
def test_no_arrival_while_a_wgmma_is_in_flight(dim: int) -> None:
    in_flight = False
    for number, line in enumerate(_ptx(dim).splitlines(), 1):
        if "wgmma.mma_async" in line:
            in_flight = True
        elif re.search(r"wgmma\.wait_group\.sync\.aligned\s+0;", line):
            in_flight = False
        elif "mbarrier.arrive" in line:
            assert not in_flight, f"PTX line {number}: {line.strip()} before wgmma.wait_group 0"
