"""One thread's own asynchronous copies, as TileLang's deepseek MLA producers write them:
T.ptx_cp_async(T.access_ptr(S[i, j], "w", n), T.access_ptr(A[k, l], "r", n), n) completed
through T.cp_async_barrier_noinc on an mbarrier.

On the CPU target (one thread per block) the copy happens at once and the barrier ops drop,
checked against torch on fresh random inputs with ragged sizes; for sm_90a the kernels
assemble with ptxas and hold one cp.async of 16 bytes per copy and the noinc arrival, also
into a ring of wgmma operand tiles. Bad uses are errors at their line. GPU numerics:
tests/gpu/test_thread_copy_gpu.py.
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
from tilec.errors import TilecError

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from thread_copy_kernels import (  # noqa: E402 - the GPU suite's
    cp_async_gemm,
    cp_async_scale,
    grid_sum_broadcast,
    thread_range_scale,
)

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")


@pytest.mark.parametrize(("M", "K"), [(32, 128), (100, 200)])
def test_cp_async_copies_at_once_on_cpu(M: int, K: int, rng: torch.Generator) -> None:  # noqa: N803
    a = randn((M, K), torch.float16, rng)
    b = cp_async_scale(a, scale=3.0)
    assert_close(b, a.double() * 3.0, torch.float16)


@needs_ptxas
def test_cp_async_and_noinc_arrive_assemble_for_sm90a() -> None:
    ptx = cp_async_scale.compile(M=100, K=200, target="cuda:sm_90a").get_kernel_source()
    assert re.search(r"cp\.async\.cg\.shared\.global \[%rd\d+\], \[%rd\d+\], 16, %r\d+;", ptx)
    assert "cp.async.mbarrier.arrive.noinc.shared.b64" in ptx
    assert "mbarrier.try_wait.parity" in ptx


@needs_ptxas
def test_cp_async_into_wgmma_operand_ring_assembles() -> None:
    kernel = cp_async_gemm.compile(M=128, N=128, K=256, target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    ptx = kernel.get_kernel_source()
    assert len(re.findall(r"cp\.async\.cg\.shared\.global", ptx)) == 2
    assert "cp.async.mbarrier.arrive.noinc.shared.b64" in ptx
    assert "wgmma.mma_async" in ptx


BAD_CP_ASYNC = {
    'T.ptx_cp_async(T.access_ptr(S[0, 0], "w", 8), T.access_ptr(A[0, 0], "r", 8), 3)':
        "moves 4, 8 or 16 bytes",
    'T.ptx_cp_async(T.access_ptr(A[0, 0], "w", 8), T.access_ptr(S[0, 0], "r", 8), 8)':
        "copies a global tensor's elements into a shared buffer",
    'T.ptx_cp_async(T.access_ptr(S[0, 60], "w", 8), T.access_ptr(A[0, 0], "r", 8), 8)':
        "leave 'S'",
    "T.ptx_cp_async(S, A[0, 0], 8, predicate=True)": "predicate",
    "T.ptx_cp_async(T.access_ptr(S[0, 0], 'w', 8, offset=8), A[0, 0], 8)": "no offset=",
    "for i in T.Parallel(64):\n            T.ptx_cp_async(S[i, 0], A[i, 0], 8)":
        "cannot stand in T.Parallel",
}


def test_bad_cp_async_is_an_error_at_its_line(tmp_path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    for number, (statement, message) in enumerate(BAD_CP_ASYNC.items()):
        (tmp_path / f"bad_cp_async_{number}.py").write_text(f"""
import tilec.language as T


@T.prim_func
def bad(A: T.Tensor((64, 64), T.float16), B: T.Tensor((64, 64), T.float16)):
    with T.Kernel(1, threads=128):
        S = T.alloc_shared((64, 64), T.float16)
        {statement}
        T.copy(S, B)
""")
        bad = importlib.import_module(f"bad_cp_async_{number}").bad
        with pytest.raises(TilecError, match=rf"bad_cp_async_{number}.py:(9|10): .*"
                                             rf"{re.escape(message)}"):
            tilec.compile(bad, target="cpu")


@needs_ptxas
def test_sync_grid_assembles_and_launches_cooperatively() -> None:
    kernel = grid_sum_broadcast.compile(N=5000, target="cuda:sm_90a")
    assert kernel.artifact.launch["cooperative"] is True
    ptx = kernel.get_kernel_source()
    assert ".global .align 4 .u32 tilec_grid_barrier;" in ptx
    assert len(re.findall(r"atom\.add\.release\.gpu\.global\.u32", ptx)) == 1  # one T.sync_grid
    assert "ld.acquire.gpu.global.u32" in ptx
    assert "cooperative" not in cp_async_scale.compile(
        M=64, K=64, target="cuda:sm_90a").artifact.launch


def test_sync_grid_is_an_error_on_cpu() -> None:
    with pytest.raises(TilecError, match=r"thread_copy_kernels\.py:\d+: T\.sync_grid waits for "
                                         r"every block of the grid, but the CPU target"):
        grid_sum_broadcast.compile(N=5000, target="cpu")


@needs_ptxas
def test_thread_range_branches_run_on_their_warpgroups() -> None:
    kernel = thread_range_scale.compile(M=200, N=100, target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    schedule = kernel.asm["tile-schedule"]
    for groups in ("[0]", "[1]", "[2]"):  # tx < 128, 128 <= tx < 256, the rest
        assert f"tile.warpgroups {groups}" in schedule


@T.prim_func
def lone_thread_branch(A: T.Tensor((256,), T.float32), B: T.Tensor((256,), T.float32)):
    with T.Kernel(1, threads=256):
        tx = T.get_thread_binding()
        if tx < 128:
            B[tx] = A[tx]
        elif tx < 200:
            B[tx] = A[tx] * 2.0


def test_other_thread_branches_stay_branches() -> None:
    """One branch of whole warpgroups and one that is not: a plain `if`, as written."""
    kernel = tilec.compile(lone_thread_branch, target="cuda:sm_90a")
    assert "tile.warpgroups" not in kernel.asm["tile-schedule"]
    assert "scf.if" in kernel.asm["tile-schedule"]
