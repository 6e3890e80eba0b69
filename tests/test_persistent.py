"""T.Persistent as TileLang's persistent GEMM writes it: `for bx, by in T.Persistent([tiles_m,
tiles_n], wave_size, block_id)` gives each persistent block one tile per wave, tile
`w * wave_size + block_id` of the domain walked in groups of `group_size` along its last
dimension, tiles past the end skipped. CPU target, checked against a model of that order and
against torch on random inputs, outputs poisoned first."""

from __future__ import annotations

import pytest
import torch
from conftest import assert_close, randn

import tilec
import tilec.language as T
from tilec.errors import TilecError


def owners(sizes: tuple[int, int], wave: int, group: int) -> dict[tuple[int, int], int]:
    """Which block takes each tile, by TileLang's rule (its loop over waves, written out)."""
    tiles_m, tiles_n = sizes
    group = max(1, min(group, tiles_n))
    groups = -(-tiles_n // group)
    waves = -(-(groups * tiles_m * group) // wave)
    found: dict[tuple[int, int], int] = {}
    for block in range(wave):
        for w in range(waves):
            tile = w * wave + block
            inner, rest = tile % group, tile // group
            row, column_group = rest % tiles_m, rest // tiles_m
            column = column_group * group + inner
            if column < tiles_n:
                assert (row, column) not in found
                found[(row, column)] = block
    return found


@tilec.jit
def tile_owner(A, wave=5, group=3):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    B = T.empty((M, N), T.float32)
    with T.Kernel(wave, threads=32) as block:
        for bx, by in T.Persistent([M, N], wave, block, group):
            B[bx, by] = A[bx, by] * 0 + block
    return B


@pytest.mark.parametrize(("sizes", "wave", "group"), [((7, 10), 5, 3), ((4, 4), 3, 8),
                                                      ((1, 9), 2, 1)])
def test_persistent_visits_every_tile_once(sizes: tuple[int, int], wave: int,
                                           group: int) -> None:
    a = torch.zeros(sizes)
    kernel = tile_owner.compile(a, wave=wave, group=group, target="cpu")
    produced = kernel.get_profiler().run_poisoned(a)
    expected = owners(sizes, wave, group)
    assert {(i, j): int(produced[i, j]) for i in range(sizes[0])
            for j in range(sizes[1])} == expected


@tilec.jit
def matmul_persistent(A, B, sm_num=5, block_M=64, block_N=64, block_K=32):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(sm_num, threads=128) as block_id:
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_K, block_N), T.float16)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        for bx, by in T.Persistent([T.ceildiv(M, block_M), T.ceildiv(N, block_N)], sm_num,
                                   block_id):
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[bx * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, by * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[bx * block_M, by * block_N])
    return C


def test_persistent_gemm_on_cpu(rng: torch.Generator) -> None:
    a, b = randn((192, 96), torch.float16, rng), randn((96, 320), torch.float16, rng)
    c = matmul_persistent.compile(a, b, target="cpu").get_profiler().run_poisoned(a, b)
    assert_close(c, a.double() @ b.double(), torch.float16)


@tilec.jit
def persistent_over_runtime_sizes(A, wave=4):
    M = T.const("M")
    A: T.Tensor((M,), T.float32)
    with T.Kernel(wave, threads=32) as block:
        for (i,) in T.Persistent([A[0]], wave, block):
            A[i] = 0.0


def test_persistent_needs_compile_time_sizes() -> None:
    with pytest.raises(TilecError, match=r"test_persistent.py:\d+: T.Persistent takes a domain "
                                         r"of positive compile-time sizes"):
        persistent_over_runtime_sizes.compile(M=8, target="cpu")
