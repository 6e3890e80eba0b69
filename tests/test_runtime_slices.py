"""Slices whose bounds are run-time values, as TileLang's varlen, grouped and paged kernels write
them (`A[start : start + block]`, `A[i * b : (i + 1) * b]` with i loaded from a tensor,
`K[bid, s:e, h, :]`), on the CPU target against numpy references.

A slice's length folds where it is the same constant whatever the run-time values; otherwise the
box takes the other operand's extent from the run-time start (TileLang's rule), and the tensor's
bounds guard it: loads past the end read zero, stores there are skipped. Inputs are random,
outputs poisoned.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import poisoned, randn, suite_target

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path

TARGET = suite_target()


def grouped_rows_scale(rows, cols, groups, block_M=8):
    """Per group g, rows Offsets[g] + [0, Sizes[g]) of X scaled by g + 1, one block of block_M
    rows each: the group's start is a tensor element, the slice `m_start : m_start + block_M`."""

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Offsets: T.Tensor((groups,), "int32"),
             Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(groups, threads=32) as bx:
            tile = T.alloc_shared((block_M, cols), "float32")
            m_start = Offsets[bx]
            T.copy(X[m_start : m_start + block_M, :], tile)
            for i, j in T.Parallel(block_M, cols):
                tile[i, j] = tile[i, j] * T.cast(bx + 1, "float32")
            T.copy(tile, Y[m_start : m_start + block_M, :])

    return main


def test_slice_from_tensor_element_folds_and_guards_the_tail(rng: torch.Generator) -> None:
    rows, cols, groups, block = 30, 12, 4, 8
    offsets = np.array([0, 8, 16, 27], dtype=np.int32)  # the last block runs 5 rows past the end
    kernel = tilec.compile(grouped_rows_scale(rows, cols, groups, block), target=TARGET)
    x = randn((rows, cols), torch.float32, rng)
    y = poisoned((rows, cols), torch.float32)
    kernel(x, torch.from_numpy(offsets), y)
    expected = np.full((rows, cols), np.nan, dtype=np.float32)
    for g, start in enumerate(offsets):
        stop = min(start + block, rows)
        expected[start:stop] = x.numpy()[start:stop] * (g + 1)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)


def tiled_by_loaded_index(rows, cols, blocks, block_M=4):
    """Y's block b is X's block Order[b]: `X[i * block_M : (i + 1) * block_M]`, i loaded."""

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Order: T.Tensor((blocks,), "int32"),
             Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(blocks, threads=32) as bx:
            tile = T.alloc_fragment((block_M, cols), "float32")
            i = Order[bx]
            T.copy(X[i * block_M : (i + 1) * block_M, 0:cols], tile)
            T.copy(tile, Y[bx * block_M : (bx + 1) * block_M, :])

    return main


def test_slice_scaled_by_loaded_index(rng: torch.Generator) -> None:
    rows, cols, blocks, block = 16, 6, 4, 4
    order = torch.randperm(blocks, generator=rng).to(torch.int32)
    kernel = tilec.compile(tiled_by_loaded_index(rows, cols, blocks, block), target=TARGET)
    x = randn((rows, cols), torch.float32, rng)
    y = poisoned((rows, cols), torch.float32)
    kernel(x, order, y)
    expected = x.numpy().reshape(blocks, block, cols)[order.numpy()].reshape(rows, cols)
    np.testing.assert_array_equal(y.numpy(), expected)


def varlen_sum(total, dim, batch, block_M=8):
    """Per sequence b (rows CuSeqlens[b] : CuSeqlens[b + 1] of X), the column sums of its rows;
    a T.alloc_var accumulates each sequence's start, read twice in one slice. Each tile's rows
    past the sequence are zeroed and the tile summed over its rows by T.reduce_sum (`acc[j] +=
    tile[i, j]` in T.Parallel(block_M, dim) is an error: a reduction over i)."""

    @T.prim_func
    def main(X: T.Tensor((total, dim), "float32"), Lengths: T.Tensor((batch,), "int32"),
             Out: T.Tensor((batch, dim), "float32")):
        with T.Kernel(batch, threads=32) as bx:
            start = T.alloc_var("int32")
            start = 0
            for b in T.serial(bx):
                start += Lengths[b]
            length = Lengths[bx]
            tile = T.alloc_fragment((block_M, dim), "float32")
            rows = T.alloc_fragment((dim,), "float32")
            acc = T.alloc_fragment((dim,), "float32")
            T.clear(acc)
            for k in T.serial(T.ceildiv(length, block_M)):
                T.copy(X[start + k * block_M : start + (k + 1) * block_M, :], tile)
                for i, j in T.Parallel(block_M, dim):
                    tile[i, j] = T.if_then_else(k * block_M + i < length, tile[i, j], 0.0)
                T.reduce_sum(tile, rows, dim=0)
                for j in T.Parallel(dim):
                    acc[j] += rows[j]
            T.copy(acc, Out[bx, :])

    return main


def test_var_read_twice_in_one_slice_and_ragged_sequences(rng: torch.Generator) -> None:
    dim, lengths = 5, np.array([3, 8, 13, 6], dtype=np.int32)  # 30 rows: the last block is ragged
    total = int(lengths.sum())
    kernel = tilec.compile(varlen_sum(total, dim, len(lengths)), target=TARGET)
    x = randn((total, dim), torch.float32, rng)
    out = poisoned((len(lengths), dim), torch.float32)
    kernel(x, torch.from_numpy(lengths), out)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    expected = [x.numpy()[bounds[b]:bounds[b + 1]].astype(np.float64).sum(0)
                for b in range(len(lengths))]
    np.testing.assert_allclose(out.numpy(), np.stack(expected), rtol=1e-5, atol=1e-5)


def copy_runtime_length(rows, cols, blocks, block_M=8):
    """`X[s:e]` with e - s a run-time value: as TileLang, the tile's block_M rows from s move
    (rows past X's end read zero), and the store `Y[s:e]` writes block_M rows (skipping rows
    past Y's end)."""

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Starts: T.Tensor((blocks,), "int32"),
             Ends: T.Tensor((blocks,), "int32"), Y: T.Tensor((rows, cols), "float32"),
             Seen: T.Tensor((blocks, block_M, cols), "float32")):
        with T.Kernel(blocks, threads=32) as bx:
            tile = T.alloc_shared((block_M, cols), "float32")
            s, e = Starts[bx], Ends[bx]
            T.copy(X[s:e, :], tile)
            T.copy(tile, Seen[bx, :, :])
            for i, j in T.Parallel(block_M, cols):
                tile[i, j] = tile[i, j] + 1.0
            T.copy(tile, Y[s:e, :])

    return main


def test_runtime_length_takes_the_tiles_extent(rng: torch.Generator) -> None:
    rows, cols, block = 21, 3, 8
    starts = np.array([0, 8, 16], dtype=np.int32)
    ends = np.array([5, 16, 21], dtype=np.int32)  # shorter, equal, and past the end (5 of 8)
    kernel = tilec.compile(copy_runtime_length(rows, cols, len(starts), block), target=TARGET)
    x = randn((rows, cols), torch.float32, rng)
    y = poisoned((rows, cols), torch.float32)
    seen = poisoned((len(starts), block, cols), torch.float32)
    kernel(x, torch.from_numpy(starts), torch.from_numpy(ends), y, seen)
    padded = np.concatenate([x.numpy(), np.zeros((block, cols), np.float32)])
    expected_seen = np.stack([padded[s:s + block] for s in starts])
    np.testing.assert_array_equal(seen.numpy(), expected_seen)
    np.testing.assert_array_equal(y.numpy(), x.numpy() + 1.0)  # the blocks cover every row


def paged_gather(pages, page_size, dim, slots, block_N=4):
    """A paged cache as TileLang's decode kernels read it: slot t's block is page Table[t],
    rows `(t % r) * block_N : (t % r + 1) * block_N` of it, with r pages' worth of blocks."""
    ratio = page_size // block_N

    @T.prim_func
    def main(Cache: T.Tensor((pages, page_size, 2, dim), "float16"),
             Table: T.Tensor((slots,), "int32"), Out: T.Tensor((slots, block_N, dim), "float16")):
        with T.Kernel(slots, threads=32) as bx:
            tile = T.alloc_shared((block_N, dim), "float16")
            page = Table[bx]
            within = T.floormod(bx, ratio)
            T.copy(Cache[page, within * block_N : (within + 1) * block_N, 1, :], tile)
            T.copy(tile, Out[bx, :, :])

    return main


def test_paged_block_with_head_index(rng: torch.Generator) -> None:
    pages, page_size, dim, slots, block = 5, 8, 16, 6, 4
    table = torch.randint(0, pages, (slots,), generator=rng, dtype=torch.int32)
    kernel = tilec.compile(paged_gather(pages, page_size, dim, slots, block), target=TARGET)
    cache = randn((pages, page_size, 2, dim), torch.float16, rng)
    out = poisoned((slots, block, dim), torch.float16)
    kernel(cache, table, out)
    ratio = page_size // block
    expected = torch.stack([cache[table[t], (t % ratio) * block:(t % ratio + 1) * block, 1]
                            for t in range(slots)])
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def var_changed_between_bounds(rows, cols, block_M=8):
    """A var read, then changed, then read again: its two readings are different values, so
    `X[lo : s + 5]` (9 rows at run time) does not fold to 6."""

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Start: T.Tensor((1,), "int32"),
             Y: T.Tensor((block_M, cols), "float32")):
        with T.Kernel(1, threads=32) as _:
            s = T.alloc_var("int32")
            s = Start[0]
            lo = s - 1
            s = s + 4
            tile = T.alloc_shared((block_M, cols), "float32")
            T.copy(X[lo : s + 5, :], tile)
            T.copy(tile, Y)

    return main


def test_var_changed_between_bounds_does_not_fold(rng: torch.Generator) -> None:
    rows, cols, block = 20, 4, 8
    kernel = tilec.compile(var_changed_between_bounds(rows, cols, block), target=TARGET)
    x = randn((rows, cols), torch.float32, rng)
    y = poisoned((block, cols), torch.float32)
    kernel(x, torch.tensor([3], dtype=torch.int32), y)
    np.testing.assert_array_equal(y.numpy(), x.numpy()[2:2 + block])


@pytest.mark.parametrize("start", [0, 5])
def test_dynamic_tensor_whole_copy_takes_tiles_extent(start: int, rng: torch.Generator) -> None:
    """A tensor of dynamic length as a whole operand, `T.copy(X[s:, :], tile)`: the tile's
    rows from s."""
    M = T.dynamic("M")

    @T.prim_func
    def main(X: T.Tensor((M, 4), "float32"), Y: T.Tensor((8, 4), "float32"), s: T.int32):
        with T.Kernel(1, threads=32) as _:
            tile = T.alloc_shared((8, 4), "float32")
            T.copy(X[s:, :], tile)
            T.copy(tile, Y)

    kernel = tilec.compile(main, target=TARGET)
    x = randn((10, 4), torch.float32, rng)
    y = poisoned((8, 4), torch.float32)
    kernel(x, y, start)
    expected = np.concatenate([x.numpy(), np.zeros((8, 4), np.float32)])[start:start + 8]
    np.testing.assert_array_equal(y.numpy(), expected)


def gemm_on_column_parts(M, N, D, D_tail, block_N=16):
    """S = Q K^T with Q's columns in two parts, as TileLang's sparse MLA kernels split the
    head dimension: T.gemm(Q_shared[:, :D], K_shared, ...) then T.gemm(Q_shared[:, D:], ...)."""

    @T.prim_func
    def main(Q: T.Tensor((M, D + D_tail), "float16"), K: T.Tensor((N, D + D_tail), "float16"),
             S: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            Q_shared = T.alloc_shared((M, D + D_tail), "float16")
            K_shared = T.alloc_shared((block_N, D), "float16")
            K_tail_shared = T.alloc_shared((block_N, D_tail), "float16")
            acc = T.alloc_fragment((M, block_N), "float32")
            T.copy(Q[0:M, :D], Q_shared[:, :D])
            T.copy(Q[0:M, D:], Q_shared[:, D:])
            T.copy(K[bx * block_N:(bx + 1) * block_N, :D], K_shared)
            T.copy(K[bx * block_N:(bx + 1) * block_N, D:], K_tail_shared)
            T.clear(acc)
            T.gemm(Q_shared[:, :D], K_shared, acc, transpose_B=True)
            T.gemm(Q_shared[:, D:], K_tail_shared, acc, transpose_B=True)
            T.copy(acc, S[0:M, bx * block_N:(bx + 1) * block_N])

    return main


def test_gemm_on_column_parts_of_a_shared_tile(rng: torch.Generator) -> None:
    M, N, D, D_tail = 16, 40, 32, 16
    kernel = tilec.compile(gemm_on_column_parts(M, N, D, D_tail), target=TARGET)
    q, k = randn((M, D + D_tail), torch.float16, rng), randn((N, D + D_tail), torch.float16, rng)
    s = poisoned((M, N), torch.float32)
    kernel(q, k, s)
    torch.testing.assert_close(s.double(), q.double() @ k.double().T, rtol=1e-4, atol=1e-4)


def gemm_on_stage_slots(M, N, K, stages=2, block_K=16):
    """C = A B with both operands staged in a ring of shared tiles, the gemm reading slot
    `k % stages` (`A_shared[k % stages, :, :]`), as TileLang's hand-pipelined kernels do."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as _:
            A_shared = T.alloc_shared((stages, M, block_K), "float32")
            B_shared = T.alloc_shared((stages, block_K, N), "float32")
            acc = T.alloc_fragment((M, N), "float32")
            T.clear(acc)
            for k in T.serial(T.ceildiv(K, block_K)):
                T.copy(A[0, k * block_K], A_shared[k % stages, :, :])
                T.copy(B[k * block_K, 0], B_shared[k % stages, :, :])
                T.gemm(A_shared[k % stages, :, :], B_shared[k % stages, :, :], acc)
            T.copy(acc, C)

    return main


def test_gemm_on_a_stage_slot_of_a_ring(rng: torch.Generator) -> None:
    M, N, K = 16, 24, 40  # K ragged: the last slot is zero-filled past K
    kernel = tilec.compile(gemm_on_stage_slots(M, N, K), target=TARGET)
    a, b = randn((M, K), torch.float32, rng), randn((K, N), torch.float32, rng)
    c = poisoned((M, N), torch.float32)
    kernel(a, b, c)
    torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=1e-4, atol=1e-4)


def test_gemm_on_a_fragment_part_is_an_error() -> None:
    @T.prim_func
    def main(A: T.Tensor((16, 32), "float32"), C: T.Tensor((16, 16), "float32")):
        with T.Kernel(1, threads=128) as _:
            a_frag = T.alloc_fragment((16, 32), "float32")
            b_shared = T.alloc_shared((16, 16), "float32")
            acc = T.alloc_fragment((16, 16), "float32")
            T.copy(A, a_frag)
            T.copy(A[:, 0:16], b_shared)
            T.gemm(a_frag[:, 0:16], b_shared, acc)
            T.copy(acc, C)

    with pytest.raises(tilec.errors.TilecError, match="operand A is a part of 'a_frag'"):
        tilec.compile(main, target=TARGET)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_runtime_slices_assemble_for_cuda(arch: str, tmp_path, monkeypatch) -> None:
    """The copies with run-time starts and lengths lower to guarded CUDA loads and stores; the
    gemms on parts of shared tiles to the tensor cores' (or SIMT) code."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    for factory in (lambda: grouped_rows_scale(30, 12, 4), lambda: copy_runtime_length(21, 3, 3),
                    lambda: paged_gather(5, 8, 16, 6), lambda: gemm_on_column_parts(64, 64, 64, 32),
                    lambda: gemm_on_stage_slots(64, 64, 64)):
        kernel = tilec.compile(factory(), target=f"cuda:{arch}")
        assert kernel.artifact.binary_kind == "cubin"
        assert f".target {arch}" in kernel.get_kernel_source()
