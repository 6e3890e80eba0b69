"""The warp-specialized ring of tests/gpu/branch_chain_kernels.py (an `if tx < 128: ... else:`
chain of whole warpgroups handing a shared tile back and forth through mbarriers, the consumer
first): on CUDA no block barrier stands between the branches (it hung TileLang's MLA kernels,
whose producer is the chain's last branch), the PTX assembles. The CPU target, whose one thread
runs the branches in turn, refuses a chain whose first branch waits for a later one.
tests/gpu/test_branch_chain_gpu.py runs it on the GPU."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from branch_chain_kernels import consumer_first_ring  # noqa: E402

from tilec.errors import TilecError  # noqa: E402


def test_no_block_barrier_between_the_branches() -> None:
    kernel = consumer_first_ring.compile(100, 3, target="cuda:sm_90a")
    tile = kernel.asm["tile-cuda"]
    between = tile[:tile.index("tile.warpgroups [1] attributes {tile.else_branch}")]
    assert not between.rstrip().endswith("gpu.barrier"), between[-200:]
    ptx = kernel.get_kernel_source()
    first_wait = ptx.index("mbarrier.try_wait")
    # the whole block meets only after each mbarrier's init, before anyone waits
    assert not re.search(r"bar\.sync\s+\d+;", ptx[first_wait:])
    assert set(re.findall(r"bar\.sync\s+\d+, (\d+);", ptx)) <= {"128"}
    assert kernel.asm["cubin"]


def test_cpu_target_refuses_a_chain_waiting_on_a_later_branch() -> None:
    with pytest.raises(TilecError) as error:
        consumer_first_ring.compile(100, 3, target="cpu")
    assert "branch_chain_kernels.py:" in str(error.value)
