"""Fragment accesses TileLang accepts beyond a T.Parallel's own variables: elements read and
written outside T.Parallel (every thread holds the fragment whole), indices that are T.serial
variables, offsets from them or transposed (the loop reads a shared copy), reduces from and
into shared buffers (staged through fragments), a fragment indexed by exactly a loop's
variables holding the loop's points (past its declared shape, as TileLang's loop layout does),
and what stays an error (another loop variable running past the fragment). Numerics on the CPU
target against float64; on CUDA the layouts chosen and the cubin. The GPU suite runs the same
kernels (tests/gpu/frontend_kernels.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import poisoned

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from frontend_kernels import cases  # noqa: E402

NAMES = ("block_masked_row_sum", "mix_rows", "strided_partial_sums", "reduce_into_shared")
CASES = [case for case in cases() if case.name.startswith(NAMES)]
THIS_FILE = str(Path(__file__).resolve())


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_cpu_numerics(case) -> None:
    torch.manual_seed(7)
    kernel = tilec.compile(case.factory(), out_idx=case.out_idx, target="cpu")
    inputs = [torch.randn(shape) for shape in case.input_shapes]
    result = kernel(*inputs)
    expected = case.reference(*[x.double() for x in inputs])
    torch.testing.assert_close(result.double(), expected, rtol=1e-5, atol=1e-4)


def tile_cuda(case, arch: str = "sm_90a") -> str:
    kernel = tilec.compile(case.factory(), out_idx=case.out_idx, target=f"cuda:{arch}")
    assert kernel.artifact.binary_kind == "cubin"
    return kernel.asm["tile-cuda"]


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_floating_fragments_are_held_whole(arch: str) -> None:
    text = tile_cuda(next(c for c in CASES if c.name == "block_masked_row_sum_100x300"), arch)
    # the mask row (5 flags) and the count: every thread holds all of it, row-major
    assert ('tile.alloc {tile.layout = #tile.linear<[5], register = [[1], [2], [4]], '
            'lane = [[0], [0], [0], [0], [0]], warp = [[0], [0]]>}') in text
    assert ('tile.alloc {tile.layout = #tile.linear<[1], register = [], '
            'lane = [[0], [0], [0], [0], [0]], warp = [[0], [0]]>}') in text


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_free_indices_read_a_shared_copy(arch: str) -> None:
    text = tile_cuda(next(c for c in CASES if c.name == "mix_rows_3x256"), arch)
    # a (read transposed) and b (by the T.serial variable) get shared copies; c, d and the
    # result stay fragments the loop indexes by its variables
    copies = re.findall(r'to memref<(\w+), "shared">', text)
    assert sorted(copies) == ["4x256xf32", "4x4xf32"]
    assert '[1, 4, 256] : memref<4x256xf32, "fragment"> to memref<3x4x256xf32>' in text


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_shared_reduce_operands_go_through_fragments(arch: str) -> None:
    text = tile_cuda(next(c for c in CASES if c.name == "reduce_into_shared_100x64"), arch)
    reduces = re.findall(r'tile\.reduce "(\w+)" .* : memref<16x64xf32, "(\w+)"> to '
                         r'memref<16xf32, "(\w+)">', text)
    assert reduces == [("sum", "fragment", "fragment"), ("max", "fragment", "fragment")]


def loop_holds_more_points():
    """TileLang's attention-sink backward: a fragment of `heads` elements written and read at
    the variable of a T.Parallel over block_M rows holds one value per row (TileLang gives it
    the loop's layout)."""
    @T.prim_func
    def kernel(S: T.Tensor((4,), "float32"), X: T.Tensor((64,), "float32"),
               out: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128):
            sinks = T.alloc_fragment((4,), "float32")
            for i in T.Parallel(64):
                sinks[i] = S[1] + X[i]
            for i in T.Parallel(64):
                out[i] = sinks[i] * 2.0

    return kernel


def test_a_fragment_indexed_by_the_loop_holds_the_loops_points() -> None:
    torch.manual_seed(3)
    s, x = torch.randn(4), torch.randn(64)
    out = poisoned((64,), torch.float32)
    tilec.compile(loop_holds_more_points(), target="cpu")(s, x, out)
    torch.testing.assert_close(out.double(), (s[1].double() + x.double()) * 2.0)
    text = tilec.compile(loop_holds_more_points(), target="cuda:sm_90a").asm["tile-cuda"]
    assert 'memref<64xf32, "fragment">' in text


def past_the_fragment():
    @T.prim_func
    def kernel(S: T.Tensor((4,), "float32"), out: T.Tensor((64, 2), "float32")):
        with T.Kernel(1, threads=128):
            sinks = T.alloc_fragment((4,), "float32")
            for i, j in T.Parallel(64, 2):
                sinks[i] = S[0]
                out[i, j] = sinks[i]

    return kernel
