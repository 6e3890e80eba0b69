"""T.wgmma_gemm and T.wait_wgmma, TileLang's explicit Hopper gemm: a T.gemm that runs on wgmma
or is a CompileError at its line (it never falls back to CUDA cores or mma.sync). tilec's wgmma
gemm waits for its own result, so T.wait_wgmma has nothing left to wait for. The CPU target
runs it as T.gemm (numerics against float64); the PTX for sm_90a has its wgmma."""

from __future__ import annotations

import pytest
import torch
from conftest import assert_close, randn

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path
from tilec.errors import CompileError, TilecError

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")


@tilec.jit
def doubled_matmul(A, B, block_M=128, block_N=128, block_K=64):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        a = T.alloc_shared((block_M, block_K), T.float16)
        b = T.alloc_shared((block_K, block_N), T.float16)
        c = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(c)
        for k in T.serial(T.ceildiv(K, block_K)):
            T.copy(A[by * block_M, k * block_K], a)
            T.copy(B[k * block_K, bx * block_N], b)
            T.wgmma_gemm(a, b, c)
            T.wait_wgmma(0)
        for i, j in T.Parallel(block_M, block_N):
            c[i, j] = c[i, j] * 2
        T.copy(c, C[by * block_M, bx * block_N])
    return C


def test_wgmma_gemm_on_cpu(rng: torch.Generator) -> None:
    a, b = randn((256, 192), torch.float16, rng), randn((192, 384), torch.float16, rng)
    c = doubled_matmul.compile(a, b, target="cpu").get_profiler().run_poisoned(a, b)
    assert_close(c, 2 * (a.double() @ b.double()), torch.float32)


@needs_ptxas
def test_wgmma_gemm_on_sm90a() -> None:
    kernel = doubled_matmul.compile(M=256, N=256, K=128, target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    # 128 x 128 x 64 on one warpgroup: two m64 atoms, four k16 steps
    assert kernel.get_kernel_source().count("wgmma.mma_async.sync.aligned.m64n128k16") == 8


def test_wgmma_gemm_needs_sm90a() -> None:
    with pytest.raises(CompileError, match=r"test_wgmma_gemm.py:\d+: T.wgmma_gemm needs wgmma "
                                           r"\(sm_90a\); this kernel is compiled for sm_80"):
        doubled_matmul.compile(M=256, N=256, K=128, target="cuda:sm_80")


def test_wgmma_gemm_never_falls_back() -> None:
    # a 32-column tile is narrower than any wgmma instruction tilec issues
    with pytest.raises(CompileError, match=r"test_wgmma_gemm.py:\d+: T.wgmma_gemm runs on "
                                           r"wgmma, which tilec cannot use for this gemm"):
        doubled_matmul.compile(M=256, N=256, K=128, block_N=32, target="cuda:sm_90a")


@tilec.jit
def bad_wait(A):
    M = T.const("M")
    A: T.Tensor((M,), T.float32)
    with T.Kernel(1, threads=32) as _:
        T.wait_wgmma(-1)


def test_wait_wgmma_takes_a_count() -> None:
    with pytest.raises(TilecError, match=r"test_wgmma_gemm.py:\d+: T.wait_wgmma takes how "
                                         r"many wgmma groups may stay in flight"):
        bad_wait.compile(M=4, target="cpu")
