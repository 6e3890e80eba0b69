"""Bad input is a TilecError at the right file:line with a clear message, never an MLIR abort.

Each bad kernel marks the line the error must name with a `# error: TAG` comment.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import error_tags
import pytest
import torch
from conftest import suite_target

import tilec
import tilec.language as T
from tilec.errors import LaunchError, TilecError

TARGET = suite_target()
THIS_FILE = Path(__file__).resolve()


@contextlib.contextmanager
def expect_error(tag: str, *fragments: str,
                 kind: type[TilecError] = TilecError) -> Iterator[None]:
    """The block raises `kind` (or a subclass) at the tagged line, mentioning every fragment and
    showing the offending source line."""
    with pytest.raises(kind) as info:
        yield
    error_tags.check_error(info.value, THIS_FILE, tag, *fragments)
    assert "\n    " in str(info.value), "the offending source line is shown"


def build(factory, *args, out_idx=None):
    return tilec.compile(factory(*args), out_idx=out_idx, target=TARGET)


# ------------------------------------------------------------------ shapes and dtypes


def copy_mismatch():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128) as _:
            big = T.alloc_shared((32, 32), "float16")
            small = T.alloc_shared((16, 32), "float16")
            T.copy(A[0:32, 0:32], big)
            T.copy(big, small)  # error: copy-shape

    return main


def test_copy_with_mismatched_shapes() -> None:
    with expect_error("copy-shape", "(32, 32)", "(16, 32)"):
        build(copy_mismatch)


def gemm_k_mismatch():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128) as _:
            a = T.alloc_shared((32, 16), "float16")
            b = T.alloc_shared((32, 32), "float16")
            c = T.alloc_fragment((32, 32), "float32")
            T.gemm(a, b, c)  # error: gemm-k

    return main


def test_gemm_with_mismatched_k() -> None:
    with expect_error("gemm-k", "K of A", "16", "32"):
        build(gemm_k_mismatch)


def gemm_dtype_mismatch():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128) as _:
            a = T.alloc_shared((32, 32), "float16")
            b = T.alloc_shared((32, 32), "float32")
            c = T.alloc_fragment((32, 32), "float32")
            T.gemm(a, b, c)  # error: gemm-dtype

    return main


def test_gemm_with_mismatched_dtypes() -> None:
    with expect_error("gemm-dtype", "T.gemm of float16 x float32: A and B take one dtype",
                      kind=TilecError):
        build(gemm_dtype_mismatch)


def store_float_into_int():
    @T.prim_func
    def main(A: T.Tensor((64,), "int32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(64):
                A[i] = B[i] * 2.0  # error: store-dtype

    return main


def test_dtype_mismatch_on_store() -> None:
    with expect_error("store-dtype", "dtype mismatch", "float32", "int32", "T.cast"):
        build(store_float_into_int)


def reduce_wrong_shape():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=64) as _:
            x = T.alloc_fragment((16, 32), "float32")
            y = T.alloc_fragment((32,), "float32")
            T.reduce_max(x, y, dim=1)  # error: reduce-shape

    return main


def test_reduce_into_wrong_shape_is_reported_by_the_verifier_at_the_line() -> None:
    with expect_error("reduce-shape", "reducing (16, 32) along dim 1"):
        build(reduce_wrong_shape)


def reduce_bad_dim():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=64) as _:
            x = T.alloc_fragment((16, 32), "float32")
            y = T.alloc_fragment((16,), "float32")
            T.reduce_sum(x, y, dim=2)  # error: reduce-dim

    return main


def test_reduce_dim_out_of_range() -> None:
    with expect_error("reduce-dim", "dim 2 is out of range"):
        build(reduce_bad_dim)


def fill_global():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            T.fill(A, 1.0)  # error: fill-global

    return main


def test_fill_of_a_global_tensor() -> None:
    with expect_error("fill-global", "global"):
        build(fill_global)


def literal_out_of_range():
    @T.prim_func
    def main(A: T.Tensor((4,), "int8")):
        with T.Kernel(1, threads=4) as _:
            A[0] = 300  # error: int-range

    return main


def test_integer_literal_out_of_range() -> None:
    with expect_error("int-range", "300 does not fit in int8"):
        build(literal_out_of_range)


HUGE = 2**31  # (HUGE, HUGE) float32: 2**62 elements, 2**64 bytes, past 64-bit byte offsets


def huge_tensor():
    @T.prim_func
    def main(
        A: T.Tensor((HUGE, HUGE), "float32"),  # error: huge-tensor
        B: T.Tensor((64,), "float32"),
    ):
        with T.Kernel(1, threads=128) as _:
            B[0] = A[0, 0]

    return main


def test_tensor_past_64_bit_offsets() -> None:
    with expect_error("huge-tensor", "tensor 'A'", "(2147483648, 2147483648)",
                      "18446744073709551616 bytes", "2**63 - 1"):
        build(huge_tensor)


def negative_tensor_size():
    @T.prim_func
    def main(
        A: T.Tensor((-4, 4), "float32"),  # error: negative-size
    ):
        with T.Kernel(1, threads=128) as _:
            A[0, 0] = 1.0

    return main


def test_tensor_with_a_negative_size() -> None:
    with expect_error("negative-size", "shape of 'A' has a negative size", "(-4, 4)"):
        build(negative_tensor_size)


def huge_buffer(allocate):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128) as _:
            buffer = allocate((HUGE, HUGE), "float32")  # error: huge-buffer
            buffer[0, 0] = A[1]
            A[0] = buffer[0, 0]

    return main


@pytest.mark.parametrize("allocate, scope", [(T.alloc_shared, "shared"),
                                             (T.alloc_fragment, "fragment")])
@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
def test_buffer_past_64_bit_offsets(allocate, scope: str, target: str) -> None:
    with expect_error("huge-buffer", f"a {scope} buffer", "18446744073709551616 bytes"):
        tilec.compile(huge_buffer(allocate), target=target)


# ------------------------------------------------------------------ scopes and structure


def fragment_outside_kernel():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        acc = T.alloc_fragment((64,), "float32")  # error: fragment-outside
        with T.Kernel(1, threads=64) as _:
            T.copy(acc, A)

    return main


def test_fragment_allocated_outside_the_kernel() -> None:
    with expect_error("fragment-outside", "inside `with T.Kernel(...)`"):
        build(fragment_outside_kernel)


def write_outside_kernel():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        A[0] = 1.0  # error: write-outside
        with T.Kernel(1, threads=64) as _:
            T.fill(A, 0.0)

    return main


def test_buffer_written_outside_the_kernel() -> None:
    with expect_error("write-outside", "writing buffer 'A'", "inside `with T.Kernel(...)`"):
        build(write_outside_kernel)


def too_many_threads():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=2048) as _:  # error: threads
            A[0] = 1.0

    return main


def test_too_many_threads() -> None:
    with expect_error("threads", "1 to 1024 threads", "2048"):
        build(too_many_threads)


def nested_kernels():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            with T.Kernel(1, threads=64) as _:  # error: nested
                A[0] = 1.0

    return main


def test_nested_kernels() -> None:
    with expect_error("nested", "cannot be nested"):
        build(nested_kernels)


def no_kernel():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):  # error: no-kernel
        pass

    return main


def test_kernel_without_t_kernel_block() -> None:
    with expect_error("no-kernel", "no `with T.Kernel(...)` block"):
        build(no_kernel)


def immutable_scalar():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=1) as _:
            total = 0.0
            for i in T.serial(64):
                total = total + A[i]  # error: immutable
            A[0] = total

    return main


def test_rebinding_a_scalar_inside_a_loop_suggests_alloc_var() -> None:
    with expect_error("immutable", "'total'", "T.alloc_var"):
        build(immutable_scalar)


def parallel_dynamic_extent():
    M = T.dynamic("M")

    @T.prim_func
    def main(A: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(M):  # error: parallel-extent
                A[i] = 0.0

    return main


def test_parallel_extent_must_be_constant() -> None:
    with expect_error("parallel-extent", "T.Parallel extents", "compile time"):
        build(parallel_dynamic_extent)


def slices_of_runtime_length_both_sides():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(4, threads=64) as bx:
            T.copy(A[bx * 16:bx * 32, 0:64], B[bx * 8:bx * 16, 0:64])  # error: slice-extent

    return main


def test_slice_extent_known_on_one_side() -> None:
    with expect_error("slice-extent", "(?, 64) and (?, 64)", "known only at run time"):
        build(slices_of_runtime_length_both_sides)


def filled_slice_of_runtime_length():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32"), Lengths: T.Tensor((4,), "int32")):
        with T.Kernel(4, threads=64) as bx:
            T.fill(A[bx * 16:bx * 16 + Lengths[bx]], 0.0)  # error: fill-runtime

    return main


def test_filled_region_needs_constant_extent() -> None:
    with expect_error("fill-runtime", "a filled region needs the region's extents", "(?)"):
        build(filled_slice_of_runtime_length)


def wrong_index_count():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(64):
                A[i] = 0.0  # error: index-count

    return main


def test_wrong_number_of_indices() -> None:
    with expect_error("index-count", "2 dimensions but 1 indices"):
        build(wrong_index_count)


def constant_while():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=1) as _:
            while True:  # error: while-const
                A[0] = 1.0

    return main


def test_while_with_a_constant_condition() -> None:
    with expect_error("while-const", "run time"):
        build(constant_while)


def missing_annotation():
    @T.prim_func
    def main(A):  # error: annotation
        with T.Kernel(1, threads=1) as _:
            A[0] = 1.0

    return main


def test_parameter_without_annotation() -> None:
    with expect_error("annotation", "'A' needs an annotation"):
        build(missing_annotation)


def unknown_dtype():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=1) as _:
            x = T.alloc_fragment((64,), "float13")  # error: dtype-name
            T.copy(x, A)

    return main


def test_unknown_dtype_name() -> None:
    with expect_error("dtype-name", "unknown dtype 'float13'"):
        build(unknown_dtype)


def pipeline_order_mismatch():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            for k in T.Pipelined(4, num_stages=2, order=[0, 1, 2]):  # error: order
                A[k] = 1.0

    return main


def test_pipeline_order_with_the_wrong_length() -> None:
    with expect_error("order", "one entry per statement of the body (1), got 3"):
        build(pipeline_order_mismatch)


def pipeline_bad_group():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            for k in T.Pipelined(4, num_stages=2, group=[0, 1]):  # error: group
                A[k] = 1.0

    return main


def test_pipeline_group_must_be_lists() -> None:
    with expect_error("group", "list of lists of ints"):
        build(pipeline_bad_group)


# ------------------------------------------------------------------ Python constructs


def undefined_name():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(64):
                A[i] = undefined_scale * 2.0  # noqa: F821  # error: undefined

    return main


def test_undefined_name() -> None:
    with expect_error("undefined", "name 'undefined_scale' is not defined"):
        build(undefined_name)


def uses_lambda():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            double = lambda x: x * 2  # noqa: E731  # error: lambda
            A[0] = double(A[1])

    return main


def uses_list_comprehension():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            values = [A[i] for i in range(4)]  # error: listcomp
            A[0] = values[0]

    return main


def uses_try():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            try:  # error: try
                A[0] = 1.0
            finally:
                A[1] = 1.0

    return main


def uses_other_with():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            with open("/dev/null"):  # error: with
                A[0] = 1.0

    return main


def breaks_a_parallel_loop():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=1) as _:
            for i in T.Parallel(64):
                if A[i] > 0:
                    break  # error: break

    return main


@pytest.mark.parametrize("factory, tag, what", [
    (uses_lambda, "lambda", "lambda"),
    (uses_list_comprehension, "listcomp", "list comprehension"),
    (uses_try, "try", "try"),
    (uses_other_with, "with", "with"),
])
def test_unsupported_python_constructs(factory, tag: str, what: str) -> None:
    with expect_error(tag, "unsupported Python construct", what):
        build(factory)


def test_break_in_a_parallel_loop() -> None:
    with expect_error("break", "break is not allowed in T.Parallel"):
        build(breaks_a_parallel_loop)


def test_t_function_called_outside_a_kernel() -> None:
    with pytest.raises(TilecError, match="T.copy can only be used inside a tilec kernel"):
        T.copy(None, None)


# ------------------------------------------------------------------ eager kernels


@tilec.jit(target=TARGET)
def unbound_size(A, block=32):
    M, N = T.const("M, N")  # error: unbound-const
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
        for i in T.Parallel(block):
            C[bx * block + i, 0] = A[bx * block + i, 0]
    return C


def test_const_that_no_argument_binds_asks_for_an_annotation() -> None:
    with expect_error("unbound-const", "'N'", "`A: T.Tensor((M, N), T.float32)`"):
        unbound_size(torch.randn(64, 8))


@tilec.jit(target=TARGET)
def never_returned(A, block=32):  # error: not-returned
    M = T.const("M")
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
        for i in T.Parallel(block):
            C[bx * block + i] = A[bx * block + i]


def test_output_never_returned() -> None:
    with expect_error("not-returned", "'C'", "never returned"):
        never_returned(torch.randn(64))


@tilec.jit(target=TARGET)
def scale(A, block=32):  # error: launch
    M = T.const("M")
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
        for i in T.Parallel(block):
            if bx * block + i < M:
                C[bx * block + i] = A[bx * block + i] * 2.0
    return C


def test_eager_kernel_missing_argument() -> None:
    with expect_error("launch", "missing a required argument", kind=LaunchError):
        scale()


def copy_kernel(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):  # error: kernel
        with T.Kernel(1, threads=32) as _:
            T.copy(A[0:M, 0:N], B[0:M, 0:N])

    return main


@pytest.fixture(scope="module")
def copier() -> tilec.JITKernel:
    return tilec.compile(copy_kernel(8, 4), out_idx=[1], target=TARGET)


def test_wrong_argument_count_at_call_time(copier: tilec.JITKernel) -> None:
    with expect_error("kernel", "takes 1 arguments (A), got 2", kind=LaunchError):
        copier(torch.randn(8, 4), torch.randn(8, 4))


def test_wrong_dtype_at_call_time(copier: tilec.JITKernel) -> None:
    with expect_error("kernel", "'A' has dtype torch.float16, expected torch.float32",
                      kind=LaunchError):
        copier(torch.randn(8, 4, dtype=torch.float16))


def test_wrong_shape_at_call_time(copier: tilec.JITKernel) -> None:
    with expect_error("kernel", "shape (8, 5), expected (8, 4)", kind=LaunchError):
        copier(torch.randn(8, 5))


def test_non_contiguous_tensor(copier: tilec.JITKernel) -> None:
    with expect_error("kernel", "not contiguous", kind=LaunchError):
        copier(torch.randn(4, 8).T)


def test_wrong_device_tensor(copier: tilec.JITKernel) -> None:
    with expect_error("kernel", "is on meta", "cpu", kind=LaunchError):
        copier(torch.empty(8, 4, device="meta"))


def test_not_a_tensor(copier: tilec.JITKernel) -> None:
    with expect_error("kernel", "must be a tensor, got list", kind=LaunchError):
        copier([[1.0] * 4] * 8)


def dynamic_pair():
    M = T.dynamic("M")

    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32"),  # error: symbols
             C: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, 32), threads=32) as bx:
            for i in T.Parallel(32):
                if bx * 32 + i < M:
                    C[bx * 32 + i] = A[bx * 32 + i] + B[bx * 32 + i]

    return main


def test_inconsistent_dynamic_sizes_at_call_time() -> None:
    kernel = tilec.compile(dynamic_pair(), out_idx=[2], target=TARGET)
    with expect_error("symbols", "M = 7", "M = 5", kind=LaunchError):
        kernel(torch.randn(5), torch.randn(7))
