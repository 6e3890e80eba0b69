"""T.gemm and fragments inside T.ws blocks over part of the block, as TileLang's
warp_specialize examples write them: a consumer warpgroup's gemm runs on wgmma over its own 128
threads (its accumulator laid out over them, thread index from 0 in the block), a producer
warpgroup fills the operand tiles by T.tma_copy and mbarriers, or each warpgroup multiplies its
half of the columns.

On a machine without a GPU: the layouts in the CUDA IR, the PTX for sm_90a (wgmma, named
barriers, bulk copies into the swizzled operand tiles) assembled by ptxas, and the errors. The
CPU target runs one thread per block, so T.ws is an error there. Numerics on a GPU:
tests/gpu/test_frontend_kernels.py.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path
from tilec.errors import CompileError

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from frontend_kernels import (  # noqa: E402 - the GPU suite runs them too
    WS_GEMM_SHAPES,
    matmul_producer_consumer,
    matmul_split_warpgroups,
)

pytestmark = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")

# the wgmma accumulator of one warpgroup: 4 warps (2 warp bits), a 256-thread block would have 3
ONE_WARPGROUP = re.compile(r"warp = \[\[\d+, 0\], \[\d+, 0\]\]>")


@pytest.mark.parametrize("shape", WS_GEMM_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_producer_consumer_gemm(shape: tuple[int, int, int]) -> None:
    M, N, K = shape
    kernel = matmul_producer_consumer.compile(M=M, N=N, K=K, target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    assert kernel.artifact.launch["threads"] == [256]
    tile = kernel.asm["tile-cuda"]
    assert "warpgroups = 1 : i64" in tile and "warpgroups = 2 : i64" not in tile
    accumulator = next(line for line in tile.splitlines() if "wgmma-accumulator" in line)
    assert ONE_WARPGROUP.search(accumulator), accumulator
    ptx = kernel.asm["ptx"]
    # 128 x 128 x 64: two m64 atoms, four k16 steps
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 8
    assert "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx
    assert "mbarrier.try_wait.parity" in ptx
    # the consumer's barriers wait for its 128 threads only (named barrier 1 + warpgroup 0)
    assert re.search(r"bar\.sync\s+1, 128;", ptx)


@pytest.mark.parametrize("shape", WS_GEMM_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_warpgroups_split_the_columns(shape: tuple[int, int, int]) -> None:
    M, N, K = shape
    kernel = matmul_split_warpgroups.compile(M=M, N=N, K=K, target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    ptx = kernel.asm["ptx"]
    # each warpgroup: 128 x 64 x 32, two atoms, two k16 steps
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16") == 8
    assert re.search(r"bar\.sync\s+1, 128;", ptx) and re.search(r"bar\.sync\s+2, 128;", ptx)
    accumulators = [line for line in kernel.asm["tile-cuda"].splitlines()
                    if "wgmma-accumulator" in line]
    assert len(accumulators) == 2
    assert all(ONE_WARPGROUP.search(line) for line in accumulators)


@tilec.jit
def fragment_of_two_warpgroups(A, block=128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    B = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=256) as bx:
        rows = T.alloc_fragment((block, N), T.float32)
        with T.ws(0):
            T.copy(A[bx * block, 0], rows)
        with T.ws(1):
            T.copy(rows, B[bx * block, 0])
    return B


def test_a_fragment_shared_by_two_warpgroups_is_an_error() -> None:
    with pytest.raises(CompileError, match=r"a fragment used by T\.ws\(0\) is used here by "
                                           r"T\.ws\(1\)") as caught:
        fragment_of_two_warpgroups.compile(M=256, N=64, target="cuda:sm_90a")
    assert "test_ws_gemm.py" in str(caught.value)
