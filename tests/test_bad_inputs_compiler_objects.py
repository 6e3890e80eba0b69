"""Messages never show the compiler's objects: a kernel value put where a compile-time one
belongs is named as the user knows it (`<an index value computed in the kernel>`, a buffer by
its name and shape), not as `Scalar(value=<mlir...BlockArgument object at 0x...>)`."""

from __future__ import annotations

from pathlib import Path

import error_tags
import pytest

import tilec
import tilec.language as T
from tilec.errors import TilecError

THIS_FILE = Path(__file__).resolve()
COMPILER_OBJECTS = ("object at 0x", "mlir", "Scalar(", "Buffer(", "Region(", "Affine(")


def compile_error(kernel, target: str) -> TilecError:
    with pytest.raises(TilecError) as info:
        tilec.compile(kernel, target=target)
    return info.value


def warpgroup_from_block_index():
    @T.prim_func
    def main(A: T.Tensor((128,), "float32")):
        with T.Kernel(2, threads=256) as bx:
            with T.ws(bx):  # error: ws-block-index
                A[0] = 1.0
    return main


def shape_from_tensor_element():
    @T.prim_func
    def main(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((A[0],), "float32")  # error: shape-element
            s[0] = 1.0
    return main


def parallel_over_buffer():
    @T.prim_func
    def main(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((128,), "float32")
            for i in T.Parallel(s):  # error: parallel-buffer
                s[i] = A[i]
    return main


CASES = {
    "ws-block-index": (warpgroup_from_block_index, "<an index value computed in the kernel>"),
    "shape-element": (shape_from_tensor_element, "<a float32 value computed in the kernel>"),
    "parallel-buffer": (parallel_over_buffer, "got <shared buffer s[128] of float32>"),
}


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
@pytest.mark.parametrize("tag", sorted(CASES))
def test_message_names_kernel_values_as_the_user_knows_them(tag: str, target: str) -> None:
    factory, shown = CASES[tag]
    error = compile_error(factory(), target)
    error_tags.check_error(error, THIS_FILE, tag, shown)
    for text in COMPILER_OBJECTS:
        assert text not in error.message, error.message
