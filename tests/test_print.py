"""T.print as TileLang has it: lines printed by the device on each run, in TileLang's format.

On the CPU target (the lines captured from the process's stdout) each block prints once, as
thread (0, 0, 0); on CUDA the PTX calls vprintf, a shared or fragment buffer from one thread.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path
from tilec.errors import TilecError


def header(msg: str, block: int) -> str:
    return f"msg='{msg}' BlockIdx=({block}, 0, 0), ThreadIdx=(0, 0, 0)"


def printing_kernel(M: int = 2, N: int = 3, blocks: int = 2):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), Index: T.Tensor((M,), T.int32),
             B: T.Tensor((M, N), T.float32)):
        with T.Kernel(blocks, threads=64) as bx:
            tile = T.alloc_shared((M, N), T.float32)
            acc = T.alloc_fragment((M, N), T.float32)
            T.copy(A, tile)
            T.copy(tile, acc)
            for i, j in T.Parallel(M, N):
                acc[i, j] = acc[i, j] * 2.0 + bx
            T.print(bx * 10 + 1)
            T.print(msg="rows 100%")
            T.print(tile, msg="tile")
            T.print(acc)
            T.print(Index)
            T.print(T.cast(A[1, 2], T.float16), msg="half")
            T.copy(acc, B)

    return main


def test_lines_of_each_kind_from_each_block(capfd: pytest.CaptureFixture) -> None:
    M, N, blocks = 2, 3, 2
    kernel = tilec.compile(printing_kernel(M, N, blocks), out_idx=[2], target="cpu")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, N)).astype(np.float32)
    index = rng.integers(-50, 50, M).astype(np.int32)
    capfd.readouterr()
    b = kernel(a, index)
    lines = capfd.readouterr().out.splitlines()
    np.testing.assert_allclose(b, a * 2 + (blocks - 1), rtol=1e-6)
    expected = []
    for block in range(blocks):
        expected.append(f"{header('expr<bx * 10 + 1>', block)}: dtype=int value={block * 10 + 1}")
        expected.append(header("rows 100%", block))
        expected += [f"{header('tile', block)}: buffer=tile, index={n}, dtype=float value="
                     f"{a.flat[n]:f}" for n in range(M * N)]
        expected += [f"{header('buffer<acc, float32>', block)}: buffer=acc, index={n}, "
                     f"dtype=float value={a.flat[n] * 2 + block:f}" for n in range(M * N)]
        expected += [f"{header('', block)}: buffer=Index, index={n}, dtype=int value={v}"
                     for n, v in enumerate(index)]
        expected.append(f"{header('half', block)}: dtype=half_t value="
                        f"{float(np.float16(a[1, 2])):f}")
    assert lines == expected


def test_each_run_prints_again(capfd: pytest.CaptureFixture) -> None:
    @T.prim_func
    def main(A: T.Tensor((4,), T.int32), B: T.Tensor((4,), T.int32)):
        with T.Kernel(1, threads=32) as _:
            T.print(A[3], msg="last")
            for i in T.Parallel(4):
                B[i] = A[i] + 1

    kernel = tilec.compile(main, out_idx=[1], target="cpu")
    capfd.readouterr()
    for value in (7, -9):
        kernel(np.array([0, 0, 0, value], dtype=np.int32))
    assert capfd.readouterr().out.splitlines() == [
        f"{header('last', 0)}: dtype=int value={value}" for value in (7, -9)]


def _error(factory) -> TilecError:
    with pytest.raises(TilecError) as caught:
        tilec.compile(factory(), target="cpu")
    return caught.value


def test_nothing_to_print_is_an_error_at_its_line() -> None:
    def factory():
        @T.prim_func
        def main(A: T.Tensor((4,), T.float32)):
            with T.Kernel(1, threads=32) as _:
                T.print()  # error here
                A[0] = 1.0

        return main

    error = _error(factory)
    assert "T.print() needs a value, a buffer or a msg" in str(error)
    assert "test_print.py" in str(error) and "T.print()  # error here" in str(error)


def test_printing_thread_outside_the_block_is_an_error() -> None:
    def factory():
        @T.prim_func
        def main(A: T.Tensor((4,), T.float32)):
            with T.Kernel(1, threads=64) as _:
                s = T.alloc_shared((4,), T.float32)
                T.copy(A, s)
                T.print(s, warp_id=2)
                T.copy(s, A)

        return main

    assert "T.print from thread 64 (warp_group_id=0, warp_id=2), but the block has 64" in str(
        _error(factory))


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_cuda_prints_through_vprintf_from_the_chosen_thread() -> None:
    kernel = tilec.compile(printing_kernel(), out_idx=[2], target="cuda:sm_90a")
    ptx = kernel.get_kernel_source()
    # one call per T.print line: scalar, msg, shared, fragment (via shared), global, half
    assert ptx.count("call.uni (retval0), vprintf,") >= 6
    gpu = kernel.asm["gpu"]
    assert gpu.count("gpu.printf") == 6
    assert "msg='tile' BlockIdx=(%d, %d, %d), ThreadIdx=(%d, %d, %d): buffer=tile" in gpu
    # the shared and the fragment buffer print from thread (0, 0, 0) alone; the fragment is
    # gathered into shared memory behind a barrier first
    assert gpu.count("arith.cmpi eq, %thread_id_x, %c0 : index") >= 2
    assert "gpu.barrier" in gpu
