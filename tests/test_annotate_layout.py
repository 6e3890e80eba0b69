"""T.annotate_layout: TileLang's T.Fragment / make_swizzled_layout as layout attributes, kept
by infer-fragment-layout and honoured by the CUDA lowering; what it rejects."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

import tilec
import tilec.language as T
from tilec.errors import TilecError
from tilec.layout import make_swizzled_layout

ROWS, WIDTH, VECTOR, THREADS = 16, 32, 4, 128
THIS_FILE = str(Path(__file__).resolve())


def row_normalize(x_layout, sum_replicas=THREADS):
    """out = x / x.sum(1): x in the user's fragment layout, its row sums held by every thread."""

    @T.prim_func
    def kernel(x: T.Tensor((ROWS, WIDTH), "float32"), out: T.Tensor((ROWS, WIDTH), "float32")):
        with T.Kernel(1, threads=THREADS):
            x_frag = T.alloc_fragment((ROWS, WIDTH), "float32")
            sums = T.alloc_fragment((ROWS,), "float32")
            staged = T.alloc_shared((ROWS, WIDTH), "float32")
            T.annotate_layout({
                x_frag: T.Fragment(x_frag.shape, forward_fn=x_layout),
                sums: T.Fragment(sums.shape, forward_fn=lambda i, rep: (rep, i),
                                 replicate=sum_replicas),
                staged: make_swizzled_layout(staged),
            })
            T.copy(x, staged)
            for i, j in T.Parallel(ROWS, WIDTH):
                x_frag[i, j] = staged[i, j]
            T.reduce_sum(x_frag, sums, dim=1)
            for i, j in T.Parallel(ROWS, WIDTH):
                out[i, j] = x_frag[i, j] / sums[i]

    return kernel


def vector_rows(i, j):
    """Thread (i % 16) * 8 + j / 4 holds runs of 4 columns; rows 16 apart in registers."""
    return j // VECTOR + (i % 16) * 8, (i // 16) * VECTOR + j % VECTOR


def test_annotated_layouts_become_attributes_and_compile() -> None:
    kernel = tilec.compile(row_normalize(vector_rows), out_idx=[1], target="cuda:sm_80")
    tile_ir = kernel.asm["tile"]
    assert ("tile.layout = #tile.linear<[16, 32], register = [[0, 1], [0, 2]], lane = [[0, 4], "
            "[0, 8], [0, 16], [1, 0], [2, 0]], warp = [[4, 0], [8, 0]]>") in tile_ir
    # every thread holds every row sum: registers walk the rows, the threads are copies
    assert ("#tile.linear<[16], register = [[1], [2], [4], [8]], lane = [[0], [0], [0], [0], "
            "[0]], warp = [[0], [0]]>") in tile_ir
    assert 'tile.swizzle_request = #tile.swizzle<128B>} : memref<16x32xf32, "shared">' in tile_ir
    assert kernel.artifact.binary_kind == "cubin"


def test_annotated_kernel_numerics_on_the_cpu() -> None:
    kernel = tilec.compile(row_normalize(vector_rows), out_idx=[1], target="cpu")
    x = torch.rand(ROWS, WIDTH, dtype=torch.float32) + 0.5
    reference = x.double() / x.double().sum(1, keepdim=True)
    torch.testing.assert_close(kernel(x).double(), reference, rtol=1e-6, atol=1e-7)


def test_infer_fragment_layout_converts_around_annotations() -> None:
    """The row sums are annotated as copies in every thread; the reduce writes the slice of
    x's layout, so a conversion stands between them."""
    from mlir import ir

    import tilec.dialect as tile
    from tilec.compiler.passes import get_pass

    kernel = tilec.compile(row_normalize(vector_rows), out_idx=[1], target="cpu")
    with tile.new_context():
        module = ir.Module.parse(kernel.asm["tile"])
        get_pass("infer-fragment-layout")().run(module)
        text = str(module)
    assert text.count("tile.convert_layout") >= 1


def not_linear(i, j):
    """Element e of each 128-element run on thread e + 1 (mod 128): a rotation, no XOR map."""
    flat = i * WIDTH + j
    return (flat + 1) % THREADS, flat // THREADS


def test_a_fragment_that_is_not_linear_is_an_error_at_its_line() -> None:
    with pytest.raises(TilecError, match="is not a layout tilec can express") as raised:
        tilec.compile(row_normalize(not_linear), out_idx=[1], target="cpu")
    assert raised.value.filename == THIS_FILE
    line = Path(THIS_FILE).read_text().splitlines()[raised.value.lineno - 1]
    assert re.search(r"x_frag: T.Fragment", line)


def test_a_fragment_over_too_few_threads_is_an_error() -> None:
    with pytest.raises(TilecError, match="spans 64 threads, the kernel has 128"):
        tilec.compile(row_normalize(vector_rows, sum_replicas=64), out_idx=[1], target="cpu")


def test_a_shared_index_layout_is_rejected() -> None:
    @T.prim_func
    def kernel(x: T.Tensor((8, 8), "float32"), out: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=32):
            staged = T.alloc_shared((8, 8), "float32")
            T.annotate_layout({staged: T.Layout(staged.shape, lambda i, j: (j, i))})
            T.copy(x, staged)
            T.copy(staged, out)

    with pytest.raises(TilecError, match="other index layouts are not supported"):
        tilec.compile(kernel, out_idx=[1], target="cpu")
