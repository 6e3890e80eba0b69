"""T.ptr and T.make_tensor, as TileLang writes them (examples/grouped_gemm's pointer tables):
tensors reached through a table of data_ptr()s, read, multiplied and written on the CPU target
against float64 references with random inputs; the CUDA kernel's PTX; what is rejected.
"""

from __future__ import annotations

import math

import pytest
import torch
from conftest import poisoned, randn

import tilec
import tilec.language as T
from tilec.errors import TilecError


def table(tensors: list[torch.Tensor]) -> torch.Tensor:
    return torch.tensor([t.data_ptr() for t in tensors], dtype=torch.int64)


def grouped_gemm(rows: list[int], K: int, N: int, block_M: int = 32, block_N: int = 32,
                 block_K: int = 32):
    """C_g = A_g @ B_g for each group g, every tensor reached through a pointer table; the
    blocks of all groups in one grid, each finding its group from the tile offsets."""
    groups, max_M = len(rows), max(rows)
    offsets = [sum(math.ceil(r / block_M) for r in rows[:g]) for g in range(groups)]
    blocks = sum(math.ceil(r / block_M) for r in rows)

    @T.prim_func
    def main(A_ptrs: T.Tensor([groups], T.ptr), B_ptrs: T.Tensor([groups], T.ptr),
             C_ptrs: T.Tensor([groups], T.ptr), tile_offsets: T.Tensor([groups], T.int32)):
        with T.Kernel(blocks, T.ceildiv(N, block_N), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            group = T.alloc_var(T.int32)
            first = T.alloc_var(T.int32)
            group = 0
            first = 0
            for g in range(groups):
                group = T.if_then_else(bx >= tile_offsets[g], g, group)
                first = T.if_then_else(bx >= tile_offsets[g], tile_offsets[g], first)
            A = T.make_tensor(A_ptrs[group], (max_M, K), T.float16)
            B = T.make_tensor(B_ptrs[group], (K, N), T.float16)
            C = T.make_tensor(C_ptrs[group], (max_M, N), T.float32)
            row = (bx - first) * block_M
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[row, k * block_K], A_shared)
                T.copy(B[k * block_K, by * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[row, by * block_N])

    return main, offsets


def test_grouped_gemm_through_pointer_tables(rng: torch.Generator) -> None:
    rows, K, N = [32, 96, 64], 64, 64
    max_M = max(rows)
    program, offsets = grouped_gemm(rows, K, N)
    a = [randn((max_M, K), torch.float16, rng) for _ in rows]
    b = [randn((K, N), torch.float16, rng) for _ in rows]
    c = [poisoned((max_M, N), torch.float32) for _ in rows]
    tilec.compile(program, target="cpu")(table(a), table(b), table(c),
                                         torch.tensor(offsets, dtype=torch.int32))
    for g, m in enumerate(rows):
        reference = a[g][:m].double() @ b[g].double()
        torch.testing.assert_close(c[g][:m].double(), reference, rtol=1e-3, atol=1e-3)
        assert c[g][m:].isnan().all(), f"group {g}: rows past its own were written"


def scaled_copies(groups: int, n: int):
    """out_g = 2 * in_g + g, element by element, both through pointer tables."""

    @T.prim_func
    def main(In: T.Tensor([groups], T.ptr), Out: T.Tensor([groups], T.ptr)):
        with T.Kernel(groups, threads=64) as g:
            source = T.make_tensor(In[g], (n,), T.float32)
            target = T.make_tensor(Out[g], (n,), "float32")
            for i in T.Parallel(n):
                target[i] = source[i] * 2.0 + g

    return main


def test_elementwise_through_pointer_tables(rng: torch.Generator) -> None:
    groups, n = 3, 256
    inputs = [randn((n,), torch.float32, rng) for _ in range(groups)]
    outputs = [poisoned((n,), torch.float32) for _ in range(groups)]
    tilec.compile(scaled_copies(groups, n), target="cpu")(table(inputs), table(outputs))
    for g in range(groups):
        torch.testing.assert_close(outputs[g], inputs[g] * 2.0 + g)


def test_pointer_tensors_on_cuda_read_through_global_addresses() -> None:
    program, _ = grouped_gemm([64, 128], 128, 128, 64, 64, 32)
    ptx = tilec.compile(program, target="cuda:sm_90a").get_kernel_source()
    assert "wgmma.mma_async" in ptx
    assert "cp.async.cg.shared.global" in ptx and "cvta.to.global" in ptx
    assert "ld.local" not in ptx


def strided_tensor():
    @T.prim_func
    def main(P: T.Tensor([1], T.ptr), Out: T.Tensor((4,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            X = T.make_tensor(P[0], (4,), T.float32, strides=(2,))
            Out[0] = X[0]

    return main


def sized_at_run_time():
    @T.prim_func
    def main(P: T.Tensor([1], T.ptr), Out: T.Tensor((4,), T.float32), n: T.int32):
        with T.Kernel(1, threads=32) as _:
            X = T.make_tensor(P[0], (n,), T.float32)
            Out[0] = X[0]

    return main


@pytest.mark.parametrize(("factory", "message"), [
    (strided_tensor, r"T.make_tensor\(strides=...\) is not supported by tilec"),
    (sized_at_run_time, "T.make_tensor's shape is a tuple of positive ints known at compile "
                        "time"),
])
def test_make_tensor_rejected_at_the_line(factory, message: str) -> None:
    with pytest.raises(TilecError, match=message) as error:
        tilec.compile(factory(), target="cpu")
    assert error.value.filename == __file__
    source = open(__file__).read().splitlines()
    assert "T.make_tensor(" in source[error.value.lineno - 1]
