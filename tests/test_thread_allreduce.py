"""TVM's thread all-reduce as TileLang's GEMV example writes it: `with T.attr(T.comm_reducer(
...), "reduce_scope", ...)` around `T.evaluate(T.tvm_thread_allreduce(...))`. It needs thread
indices, so it compiles for CUDA (assembled by ptxas here; numerics in the GPU suite's
frontend kernels, tests/gpu/frontend_kernels.py: splitk_gemv_allreduce); the CPU target rejects
thread indices with a clear error."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from frontend_kernels import gemv_by_reducer, splitk_gemv_allreduce  # noqa: E402


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("combine", ["sum", "max"])
def test_allreduce_assembles_with_its_barriers(combine: str) -> None:
    kernel = tilec.compile(splitk_gemv_allreduce(64, 1024, combine=combine),
                           target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    ptx = kernel.asm["ptx"]
    assert len(re.findall(r"\bbar\.sync\b|\bbarrier\.sync\b", ptx)) >= 2
    assert ("max.NaN.f32" in ptx) == (combine == "max")


def test_allreduce_rejects() -> None:
    @T.prim_func
    def no_scope(A: T.Tensor((32,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            tx = T.get_thread_binding()
            result = T.alloc_local((1,), T.float32)
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], True, result[0], tx,
                                              dtype="handle"))

    @T.prim_func
    def other_attribute(A: T.Tensor((32,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0]), "pragma_unroll", 0):
                T.evaluate(0)

    @T.prim_func
    def two_values(A: T.Tensor((32,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            tx = T.get_thread_binding()
            result = T.alloc_local((2,), T.float32)
            with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0]), "reduce_scope", 0):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(2), A[tx], A[tx], True, result[0],
                                                  result[1], tx, dtype="handle"))

    @T.prim_func
    def not_a_thread(A: T.Tensor((32,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            result = T.alloc_local((1,), T.float32)
            with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0]), "reduce_scope", 0):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[0], True, result[0], bx,
                                                  dtype="handle"))

    for kernel, message in ((no_scope, "needs an enclosing"),
                            (other_attribute, "T.attr\\('pragma_unroll'\\) is not supported"),
                            (two_values, "reduces one value"),
                            (not_a_thread, "reduces over thread indices")):
        with pytest.raises(tilec.TilecError, match=message):
            tilec.compile(kernel, target="cuda:sm_90a")


@pytest.mark.parametrize("into", [False, True])
def test_alloc_reducer_sums_every_point_once(into: bool) -> None:
    import torch

    M, N = 96, 256
    generator = torch.Generator().manual_seed(torch.seed() % 2**31)
    a = torch.randn(M, N, generator=generator).half()
    x = torch.randn(N, generator=generator).half()
    o = torch.full((M,), float("nan"))
    tilec.compile(gemv_by_reducer(M, N, into=into), target="cpu")(a, x, o)
    products = (a.float() * x.float()).half().double()  # the kernel multiplies in float16
    torch.testing.assert_close(o.double(), products.sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_alloc_reducer_assembles_with_shared_atomics() -> None:
    kernel = tilec.compile(gemv_by_reducer(256, 512), target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    assert re.search(r"\b(atom|red)\.shared\S*\.add\.f32", kernel.asm["ptx"])


def test_alloc_reducer_rejects() -> None:
    @T.prim_func
    def maximum(o: T.Tensor((4,), T.float32)):
        with T.Kernel(1, threads=4) as _:
            r = T.alloc_reducer(4, T.float32, op="max", replication="all")
            T.finalize_reducer(r)

    @T.prim_func
    def scaled(o: T.Tensor((4,), T.float32)):
        with T.Kernel(1, threads=4) as _:
            r = T.alloc_reducer(4, T.float32, replication="all")
            for i in T.Parallel(4):
                r[i] *= 2.0

    @T.prim_func
    def not_a_reducer(o: T.Tensor((4,), T.float32)):
        with T.Kernel(1, threads=4) as _:
            r = T.alloc_shared((4,), T.float32)
            T.finalize_reducer(r)

    for kernel, message in ((maximum, "sums; op='max'"), (scaled, "updated with \\+=, not \\*="),
                            (not_a_reducer, "takes a T.alloc_reducer buffer")):
        with pytest.raises(tilec.TilecError, match=message):
            tilec.compile(kernel, target="cpu")
