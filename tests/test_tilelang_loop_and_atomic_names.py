"""TileLang names its examples use beside the common ones: TIR's lowercase `T.parallel`,
`T.SharedBuffer`-style macro annotations, `T.disable_warp_group_reg_alloc`, and T.atomic_add's
`memory_order` / `use_tma` / `annotations`. CPU numerics against torch on random inputs with
poisoned outputs; the CUDA forms assemble with ptxas."""

from __future__ import annotations

import pytest
import torch
from conftest import poisoned, randn

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")


def test_lowercase_parallel_nests_fuse_and_take_a_start(rng: torch.Generator) -> None:
    rows, cols, valid = 16, 32, 11

    @T.prim_func
    def main(A: T.Tensor((rows, cols), T.float32), B: T.Tensor((rows, cols), T.float32),
             C: T.Tensor((rows - 4,), T.float32)):
        with T.Kernel(1, threads=128) as _:
            tile = T.alloc_fragment((rows, cols), T.float32)
            T.copy(A, tile)
            for n_i in T.parallel(rows):
                for d_i in T.parallel(cols):
                    if n_i >= valid:
                        tile[n_i, d_i] = T.cast(0, T.float32)
            T.copy(tile, B)
            for i in T.parallel(4, rows):
                C[i - 4] = A[i, 0] * 2.0

    kernel = tilec.compile(main, target="cpu")
    assert kernel.asm["tile"].count("tile.parallel [16, 32]") == 1  # one fused loop
    a = randn((rows, cols), torch.float32, rng)
    b, c = poisoned((rows, cols), torch.float32), poisoned((rows - 4,), torch.float32)
    kernel(a, b, c)
    expected = a.clone()
    expected[valid:] = 0
    assert torch.equal(b, expected)
    assert torch.equal(c, a[4:, 0] * 2)


def test_pipelined_takes_start_and_stop_keywords(rng: torch.Generator) -> None:
    """TileLang's `T.Pipelined(start=..., stop=..., num_stages=0)` (its NSA backward walks
    the blocks from the query's own): the sum of A's rows from `first` on, per column."""
    rows, cols, block = 24, 16, 4

    @tilec.jit
    def tail_sums(A, first: int):
        A: T.Tensor((rows, cols), T.float32)
        B = T.empty((cols,), T.float32)
        with T.Kernel(1, threads=32) as _:
            total = T.alloc_fragment((cols,), T.float32)
            tile = T.alloc_fragment((block, cols), T.float32)
            part = T.alloc_fragment((cols,), T.float32)
            T.clear(total)
            for k in T.Pipelined(start=first // block, stop=rows // block, num_stages=0):
                T.copy(A[k * block, 0], tile)
                T.reduce_sum(tile, part, dim=0)
                for j in T.Parallel(cols):
                    total[j] += part[j]
            for k in T.Pipelined(first // block, num_stages=1):  # range(stop), positional
                T.copy(A[k * block, 0], tile)
                T.reduce_sum(tile, part, dim=0)
                for j in T.Parallel(cols):
                    total[j] -= part[j] * 0.5
            T.copy(total, B)
        return B

    a = randn((rows, cols), torch.float32, rng)
    expected = a[8:].double().sum(0) - 0.5 * a[:8].double().sum(0)
    torch.testing.assert_close(tail_sums(a, 8).double(), expected, rtol=1e-5, atol=1e-5)


@T.macro
def reverse_into(src: T.SharedBuffer([16], dtype=T.float32),
                 dst: T.FragmentBuffer([16], T.float32)):
    for i in T.Parallel(16):
        dst[i] = src[15 - i]


def test_buffer_annotations_of_macro_parameters(rng: torch.Generator) -> None:
    @T.prim_func
    def main(A: T.Tensor((16,), T.float32), B: T.Tensor((16,), T.float32)):
        with T.Kernel(1, threads=16) as _:
            T.disable_warp_group_reg_alloc()
            staged = T.alloc_shared((16,), T.float32)
            flipped = T.alloc_fragment((16,), T.float32)
            T.copy(A, staged)
            reverse_into(staged, flipped)
            T.copy(flipped, B)

    a = randn((16,), torch.float32, rng)
    b = poisoned((16,), torch.float32)
    tilec.compile(main, target="cpu")(a, b)
    assert torch.equal(b, a.flip(0))


def atomics(memory_order: str | None, use_tma: bool) -> T.PrimFunc:
    rows, cols, blocks = 8, 16, 4

    @T.prim_func
    def main(A: T.Tensor((blocks * rows, cols), T.float32), S: T.Tensor((rows, cols), T.float32)):
        with T.Kernel(blocks, threads=128) as bx:
            part = T.alloc_shared((rows, cols), T.float32)
            T.copy(A[bx * rows:(bx + 1) * rows, :], part)
            T.atomic_add(S[0:rows, :], part, memory_order=memory_order, use_tma=use_tma)
            for i in T.Parallel(cols):
                T.atomic_add(S[0, i], 1.0, memory_order=memory_order)

    return main


@pytest.mark.parametrize(("memory_order", "use_tma"), [("relaxed", True), ("release", False),
                                                       (None, False)])
def test_atomic_add_memory_order_and_use_tma(rng: torch.Generator, memory_order: str | None,
                                            use_tma: bool) -> None:
    kernel = tilec.compile(atomics(memory_order, use_tma), target="cpu")
    a = randn((32, 16), torch.float32, rng)
    s = torch.zeros((8, 16))  # atomics accumulate into it
    kernel(a, s)
    expected = a.reshape(4, 8, 16).double().sum(0)
    expected[0] += 4  # one add per block
    torch.testing.assert_close(s.double(), expected, rtol=1e-5, atol=1e-5)
    notes = [n for n in kernel.notes if "use_tma" in n]
    assert bool(notes) == use_tma
    assert all("test_tilelang_loop_and_atomic_names.py:" in n and "per-element atomics" in n
               for n in notes)


@needs_ptxas
def test_atomic_add_use_tma_assembles_with_its_note() -> None:
    kernel = tilec.compile(atomics("relaxed", True), target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    assert "atom.global" in kernel.asm["ptx"] or "red.global" in kernel.asm["ptx"]
    assert any("use_tma" in note for note in kernel.notes)


def test_atomic_add_rejects() -> None:
    @T.prim_func
    def sequentially_consistent(S: T.Tensor((4,), T.int32)):
        with T.Kernel(1, threads=4) as _:
            T.atomic_add(S[0], 1, memory_order="seq_cst")

    @T.prim_func
    def unknown_order(S: T.Tensor((4,), T.int32)):
        with T.Kernel(1, threads=4) as _:
            T.atomic_add(S[0], 1, memory_order="strong")

    @T.prim_func
    def previous_value_in_parallel(S: T.Tensor((4,), T.int32)):
        with T.Kernel(1, threads=4) as _:
            for i in T.Parallel(4):
                S[i] = T.atomic_add(S[0], 1, return_prev=True)

    for kernel, message in ((sequentially_consistent, "acq_rel read-modify-writes"),
                            (unknown_order, "memory_order is one of relaxed"),
                            (previous_value_in_parallel, r"return_prev=True\) inside T.Parallel")):
        with pytest.raises(tilec.TilecError, match=message):
            tilec.compile(kernel, target="cpu")


@pytest.mark.parametrize("kind", ["max", "sum", "absmax"])
def test_reduce_into_another_dtype_accumulates_in_it(rng: torch.Generator, kind: str) -> None:
    """TileLang casts each element to the destination's dtype and combines there: a float16
    row summed into float32 keeps float32's precision."""
    rows, cols = 16, 64

    @T.prim_func
    def main(A: T.Tensor((rows, cols), T.float16), B: T.Tensor((rows,), T.float32)):
        with T.Kernel(1, threads=128) as _:
            tile = T.alloc_fragment((rows, cols), T.float16)
            result = T.alloc_fragment((rows,), T.float32)
            T.copy(A, tile)
            if kind == "max":
                T.reduce_max(tile, result, dim=1)
            elif kind == "sum":
                T.reduce_sum(tile, result, dim=1)
            else:
                T.reduce_absmax(tile, result, dim=1)
            T.copy(result, B)

    a = (randn((rows, cols), torch.float32, rng) * 30).to(torch.float16)
    b = poisoned((rows,), torch.float32)
    tilec.compile(main, target="cpu")(a, b)
    wide = a.double()
    expected = {"max": wide.amax(1), "sum": wide.sum(1), "absmax": wide.abs().amax(1)}[kind]
    torch.testing.assert_close(b.double(), expected, rtol=1e-6, atol=1e-4)


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
def test_reduce_of_a_vector_into_one_element(rng: torch.Generator, target: str) -> None:
    """T.reduce_absmax(acc, max_abs, dim=0) of a 1-d fragment into a [1] fragment, as
    TileLang's block-mean-pooling example writes it."""
    if target.startswith("cuda") and ptxas_path() is None:
        pytest.skip("ptxas (CUDA toolkit) not found")
    n = 128

    @T.prim_func
    def main(A: T.Tensor((n,), T.float16), B: T.Tensor((2,), T.float32)):
        with T.Kernel(1, threads=128) as _:
            acc = T.alloc_fragment((n,), T.float16)
            largest = T.alloc_fragment((1,), T.float32)
            total = T.alloc_fragment((1,), T.float32)
            T.copy(A, acc)
            T.reduce_absmax(acc, largest, dim=0, clear=True)
            T.reduce_sum(acc, total, dim=-1)
            B[0] = largest[0]
            B[1] = total[0]

    kernel = tilec.compile(main, target=target)
    if target != "cpu":
        assert kernel.artifact.binary_kind == "cubin"
        return
    a = randn((n,), torch.float32, rng).to(torch.float16)
    b = poisoned((2,), torch.float32)
    kernel(a, b)
    torch.testing.assert_close(b.double(), torch.stack([a.double().abs().max(), a.double().sum()]),
                               rtol=1e-6, atol=1e-5)


def compaction(n: int, threads: int) -> T.PrimFunc:
    """topk_selector's pattern: a thread with a hit takes the next slot of a shared counter
    (T.atomic_add(..., return_prev=True)) and writes its index there."""

    @T.prim_func
    def main(A: T.Tensor((n,), T.int32), P: T.Tensor((n,), T.int32),
             C: T.Tensor((1,), T.int32)):
        with T.Kernel(1, threads=threads) as _:
            counter = T.alloc_shared((1,), T.int32)
            T.clear(counter)
            T.sync_threads()
            for i in T.serial(n // threads):
                tx = T.get_thread_binding() if threads > 1 else 0
                index = i * threads + tx
                if A[index] > 0:
                    slot = T.atomic_add(counter[0], 1, return_prev=True)
                    P[slot] = index
            T.sync_threads()
            C[0] = counter[0]

    return main


def test_atomic_add_return_prev_hands_out_slots(rng: torch.Generator) -> None:
    n = 64
    a = torch.randint(-5, 5, (n,), generator=rng, dtype=torch.int32)
    slots, count = poisoned((n,), torch.int32), poisoned((1,), torch.int32)
    tilec.compile(compaction(n, 1), target="cpu")(a, slots, count)
    hits = torch.nonzero(a > 0).flatten().to(torch.int32)
    assert count.item() == len(hits)
    assert torch.equal(slots[:len(hits)], hits)  # one thread: the slots in order


@needs_ptxas
def test_atomic_add_return_prev_assembles() -> None:
    kernel = tilec.compile(compaction(256, 64), target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    assert "atom.shared" in kernel.asm["ptx"]


def test_vector_atomic_adds_add_each_element(rng: torch.Generator) -> None:
    """T.atomic_addx4 / T.atomic_addx2 (TileLang's DeepSeek-V3.2 sparse MLA backward adds a
    shared tile into dKV four floats at a time): every block adds its tile, so dst gets
    the sum over blocks, on top of what it held."""
    blocks, rows, cols = 3, 8, 16

    @T.prim_func
    def main(A: T.Tensor((blocks, rows, cols), T.float32), B: T.Tensor((rows, cols), T.float32),
             C: T.Tensor((rows, 2), T.float32)):
        with T.Kernel(blocks, threads=64) as bx:
            tile = T.alloc_shared((rows, cols), T.float32)
            T.copy(A[bx, 0, 0], tile)
            for i, j in T.Parallel(rows, cols // 4):
                T.atomic_addx4(B[i, j * 4], tile[i, j * 4])
            for i in T.Parallel(rows):
                T.atomic_addx2(C[i, 0], tile[i, 2])

    kernel = tilec.compile(main, target="cpu")
    a = randn((blocks, rows, cols), torch.float32, rng)
    b, c = randn((rows, cols), torch.float32, rng), randn((rows, 2), torch.float32, rng)
    expected_b = b.double() + a.double().sum(0)
    expected_c = c.double() + a[:, :, 2:4].double().sum(0)
    kernel(a, b, c)
    torch.testing.assert_close(b.double(), expected_b, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(c.double(), expected_c, rtol=1e-5, atol=1e-5)


@needs_ptxas
def test_vector_atomic_adds_assemble_for_sm90a() -> None:
    @T.prim_func
    def main(A: T.Tensor((64, 64), T.float32), B: T.Tensor((64, 64), T.float32)):
        with T.Kernel(1, threads=128) as _:
            tile = T.alloc_shared((64, 64), T.float32)
            T.copy(A, tile)
            for i, j in T.Parallel(64, 16):
                T.atomic_addx4(B[i, j * 4], tile[i, j * 4])

    kernel = tilec.compile(main, target="cuda:sm_90a")
    assert kernel.artifact.binary.startswith(b"\x7fELF")
    assert "atom.global.add.f32" in kernel.asm["ptx"] or "red.global.add.f32" in kernel.asm["ptx"]
