"""mbarriers, TMA copies and warp specialization as TileLang's Hopper kernels write them:
T.alloc_barrier, T.mbarrier_arrive / wait_parity / expect_tx (and T.barrier_arrive / wait),
T.tma_copy, T.ws, T.fence_proxy_async, T.named_barrier_arrive, T.set_max_nreg.

A warp-specialized producer/consumer kernel compiles to PTX for sm_90a that ptxas assembles and
holds the mbarrier, bulk-copy and named-barrier instructions; on the CPU target (one thread per
block) kernels without T.ws run with the barriers dropped and TMA copies done at once, checked
against torch on fresh random inputs with poisoned outputs, and T.ws is a CompileError at its
line. The warp-specialized kernel's numerics on a GPU: tests/gpu/test_frontend_kernels.py.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import assert_close, randn

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from frontend_kernels import warp_specialized_scale  # noqa: E402 - the GPU suite runs it too

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")


@tilec.jit
def staged_scale(A, scale=3.0, block_M=64, block_K=32):
    """The same without warp specialization: every thread waits for the tile it issued."""
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float32)
    B = T.empty((M, K), T.float32)
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        tile = T.alloc_shared((block_M, block_K), T.float32)
        ready = T.alloc_barrier(128)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
            T.tma_copy(A[bx * block_M : (bx + 1) * block_M, k * block_K : (k + 1) * block_K],
                       tile, barrier=ready)
            T.barrier_arrive(ready)
            T.mbarrier_wait_parity(ready, k % 2)
            for i, j in T.Parallel(block_M, block_K):
                tile[i, j] = tile[i, j] * scale
            T.copy(tile, B[bx * block_M, k * block_K])
    return B


def instructions(ptx: str, pattern: str) -> int:
    return len(re.findall(pattern, ptx))


@needs_ptxas
def test_warp_specialized_ring_assembles_for_sm90a() -> None:
    kernel = warp_specialized_scale.compile(M=256, K=256, target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    ptx = kernel.get_kernel_source()
    assert instructions(ptx, r"mbarrier\.init\.shared\.b64") == 4
    assert "fence.mbarrier_init" in ptx
    assert "mbarrier.try_wait.parity.shared.b64" in ptx
    assert instructions(ptx, r"mbarrier\.arrive\.shared\.b64") == 2
    assert "mbarrier.expect_tx" in ptx
    assert "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx
    assert "fence.proxy.async.shared::cta" in ptx
    # the consumer's barrier between its scaling and its store: warpgroup 0's named barrier
    assert re.search(r"bar\.sync \t1, 128;", ptx)
    assert re.search(r"setmaxnreg.dec.sync.aligned.u32 \t40;", ptx)
    assert re.search(r"setmaxnreg.inc.sync.aligned.u32 \t232;", ptx)
    # the pipelined loop is the kernel's own schedule: no cp.async ring was added
    assert "cp.async.cg" not in ptx and "cp.async.ca" not in ptx


@needs_ptxas
def test_tma_copy_without_warp_specialization_assembles() -> None:
    kernel = staged_scale.compile(M=200, K=100, target="cuda:sm_90a")
    ptx = kernel.get_kernel_source()
    assert "cp.async.bulk.shared::cluster.global" in ptx
    assert "mbarrier.try_wait.parity" in ptx


@needs_ptxas
def test_named_barrier_arrive_assembles() -> None:
    @T.prim_func
    def handoff(A: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.float32)):
        with T.Kernel(1, threads=256) as _:
            s = T.alloc_shared((128,), T.float32)
            tx = T.get_thread_binding()
            with T.ws(0):
                s[tx] = A[tx] + 1.0
                T.named_barrier_arrive(3, 256)
            with T.ws(1):
                T.sync_threads(3, 256)
                B[tx - 128] = s[tx - 128]

    kernel = tilec.compile(handoff, target="cuda:sm_90a")
    ptx = kernel.get_kernel_source()
    assert "bar.arrive" in ptx and re.search(r"bar\.sync \t3, 256;", ptx)


@needs_ptxas
def test_barrier_arrays_beside_a_full_arena_take_their_own_bytes() -> None:
    """TileLang's warp-specialized FlashMLA holds two dozen mbarriers in 13 arrays beside
    230400 bytes of tiles: each array follows the last on 8 bytes, not on the next 128 (six
    arrays beside 232320 bytes fit sm_90a's 232448 so, not on 128-byte boundaries)."""
    @T.prim_func
    def crowded(A: T.Tensor((58080,), T.float32), B: T.Tensor((58080,), T.float32)):
        with T.Kernel(1, threads=128) as _:
            tile = T.alloc_shared((58080,), T.float32)
            first = T.alloc_barrier(128)
            pair = T.alloc_barrier([128, 128])
            third = T.alloc_barrier(128)
            fourth = T.alloc_barrier(128)
            fifth = T.alloc_barrier(128)
            sixth = T.alloc_barrier(128)
            T.copy(A, tile)
            T.barrier_arrive(first)
            T.barrier_arrive(pair[1])
            T.barrier_arrive(third)
            T.barrier_arrive(fourth)
            T.barrier_arrive(fifth)
            T.barrier_arrive(sixth)
            T.barrier_wait(sixth, 0)
            T.copy(tile, B)

    kernel = tilec.compile(crowded, target="cuda:sm_90a")
    assert kernel.artifact.launch["shared_bytes"] == 58080 * 4 + 7 * 8


@pytest.mark.parametrize(("M", "K"), [(256, 128), (200, 100)])
def test_tma_copy_and_barriers_on_cpu(M: int, K: int, rng: torch.Generator) -> None:  # noqa: N803
    """Ragged sizes too: the copy's box past the tensor reads zeros, the store skips it."""
    a = randn((M, K), torch.float32, rng)
    b = staged_scale(a)
    assert_close(b, a.double() * 3.0, torch.float32)
    assert "tile.for" in staged_scale.compile(M=M, K=K, target="cpu").asm["tile"]


@pytest.mark.parametrize("kernel", [warp_specialized_scale, staged_scale], ids=["ws", "plain"])
def test_mbarrier_waits_and_tma_need_sm90(kernel) -> None:
    with pytest.raises(tilec.CompileError, match=r"(test_barriers|frontend_kernels).py:\d+: "
                       r"T.(mbarrier_wait_parity|tma_copy) needs sm_90 .* compiled for sm_80"):
        kernel.compile(M=256, K=256, target="cuda:sm_80")


def test_warp_specialization_needs_a_gpu_target() -> None:
    with pytest.raises(tilec.CompileError, match=r"frontend_kernels.py:\d+: a warp-specialized "
                                                 r"block \(T.ws, or an if-chain on the thread "
                                                 r"index over whole warpgroups\) needs a GPU "
                                                 r"target"):
        warp_specialized_scale.compile(M=256, K=256, target="cpu")


def test_a_gemm_in_part_of_the_block_runs_on_its_warpgroup() -> None:
    """Its accumulator is laid out over warpgroup 1's threads, its wgmma issued by them (more
    in tests/test_ws_gemm.py)."""
    @T.prim_func
    def gemm_in_ws(A: T.Tensor((128, 64), T.float16), B: T.Tensor((64, 128), T.float16),
                   C: T.Tensor((128, 128), T.float32)):
        with T.Kernel(1, threads=256) as _:
            a = T.alloc_shared((128, 64), T.float16)
            b = T.alloc_shared((64, 128), T.float16)
            c = T.alloc_fragment((128, 128), T.float32)
            T.copy(A, a)
            T.copy(B, b)
            with T.ws(1):
                T.clear(c)
                T.gemm(a, b, c)
                T.copy(c, C)

    ptx = tilec.compile(gemm_in_ws, target="cuda:sm_90a").get_kernel_source()
    # one warpgroup's 128 rows: two m64 atoms, four k16 steps
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 8
    assert re.search(r"bar\.sync\s+2, 128;", ptx)


def test_tma_copy_under_a_thread_condition_is_rejected() -> None:
    @T.prim_func
    def divergent(A: T.Tensor((64, 32), T.float32), B: T.Tensor((64, 32), T.float32)):
        with T.Kernel(1, threads=256) as _:
            s = T.alloc_shared((64, 32), T.float32)
            bar = T.alloc_barrier(128)
            tx = T.get_thread_binding()
            if tx >= 128:
                T.tma_copy(A, s, barrier=bar)
                T.mbarrier_arrive(bar)
            T.mbarrier_wait_parity(bar, 0)
            T.copy(s, B)

    with pytest.raises(tilec.CompileError, match=r"test_barriers.py:\d+: T.tma_copy is shared out "
                                                 r"over the threads running it"):
        tilec.compile(divergent, target="cuda:sm_90a")


def test_bad_barrier_use_is_an_error_at_its_line(tmp_path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))

    def kernel_with(number: int, statement: str) -> T.PrimFunc:
        (tmp_path / f"bad_barriers_{number}.py").write_text(f"""
import tilec.language as T


@T.prim_func
def bad(A: T.Tensor((64, 32), T.float32), B: T.Tensor((64, 32), T.float32)):
    with T.Kernel(1, threads=128) as _:
        s = T.alloc_shared((64, 32), T.float32)
        bars = T.alloc_barrier([128, 128])
        {statement}
""")
        return importlib.import_module(f"bad_barriers_{number}").bad

    cases = {
        "T.mbarrier_arrive(bars[2])": "barrier index 2 is outside the 2 barriers",
        "T.mbarrier_arrive(s)": "must be a barrier of T.alloc_barrier",
        "T.mbarrier_arrive(bars[0], cta_id=1)": "cluster barrier",
        "T.tma_copy(A, s)": "needs barrier=",
        "T.tma_copy(s, B, barrier=bars[0])": "a TMA store",
        "for k in T.serial(2):\n            T.alloc_barrier(32)": "stands directly in the "
                                                                    "T.Kernel block",
        "T.alloc_barrier([0])": "an arrive count is 1 to 1048575",
        "for i in T.Parallel(4):\n            T.mbarrier_arrive(bars[0])": "cannot stand in "
                                                                        "T.Parallel",
        "T.set_max_nreg(30, 1)": "a multiple of 8 from 24 to 256",
        "with T.ws(1):\n            T.fence_proxy_async()": "warpgroup 1 is not in a block of "
                                                          "128 threads",
    }
    for number, (statement, message) in enumerate(cases.items()):
        bad = kernel_with(number, statement)
        with pytest.raises(tilec.TilecError, match=rf"bad_barriers_{number}.py:1[01]: .*"
                                                   rf"{re.escape(message)}"):
            tilec.compile(bad, target="cpu")
