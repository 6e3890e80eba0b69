"""Integer semantics as Python and numpy define them, the same on the CPU and CUDA targets:
floor `//` and `%`, a run-time divisor of 0 gives 0 (never SIGFPE), the most negative value by
-1 wraps, run-time shifts past the bit width clamp as PTX's do; constant divisors of 0, constant
shifts outside the width, literals outside their dtype and scalar arguments outside their
dtype are errors naming the line or the argument."""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

import error_tags
import pytest
import torch

import tilec
import tilec.language as T
from tilec.errors import LaunchError, TilecError

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from integer_kernels import (  # noqa: E402
    CONVERSIONS,
    DTYPES,
    OPS,
    N,
    answers,
    conversion_answers,
    conversion_inputs,
    elementwise,
    float_to_integer,
    operands,
    wrapped,
)

THIS_FILE = Path(__file__).resolve()


line_of = functools.partial(error_tags.line_of, THIS_FILE)


def check_error(error: TilecError, kind: type[TilecError], tag: str, *fragments: str) -> None:
    error_tags.check_error(error, THIS_FILE, tag, *fragments, kind=kind)


def compile_error(kernel, target: str = "cpu") -> TilecError:
    with pytest.raises(TilecError) as info:
        tilec.compile(kernel, target=target)
    return info.value


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_integer_ops_match_python(op: str, dtype: str, rng: torch.Generator) -> None:
    a, b = operands(op, dtype, rng)
    c = torch.full((N,), torch.iinfo(a.dtype).max, dtype=a.dtype)
    tilec.compile(elementwise(op, dtype), target="cpu")(a, b, c)
    assert c.tolist() == answers(op, a, b)


def true_division(dtype: str, divisor):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), C: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(N):
                C[i] = A[i] / divisor  # error: true-division

    return main


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_signed_integer_true_division_is_an_error(dtype: str) -> None:
    """TileLang rejects `/` of two signed integers (its integer division is ambiguous), so
    tilec does too rather than pick one of the two meanings."""
    check_error(compile_error(true_division(dtype, 3)), TilecError, "true-division",
                "a / b of two signed integers is an error", "a // b", "T.truncdiv(a, b)")


def test_integer_by_float_and_unsigned_division_still_divide(rng: torch.Generator) -> None:
    a = torch.randint(-1000, 1000, (N,), generator=rng, dtype=torch.int32)
    c = torch.full((N,), float("nan"))
    tilec.compile(true_division("int32", 4.0), target="cpu")(a, c)
    assert torch.equal(c, a.float() / 4.0)
    u = torch.randint(0, 1000, (N,), generator=rng, dtype=torch.int32).to(torch.uint32)
    tilec.compile(true_division("uint32", 7), target="cpu")(u, c)
    assert torch.equal(c, (u.long() // 7).float())  # unsigned: truncation, as TileLang's


@pytest.mark.parametrize("op", ["//", "%"])
def test_run_time_division_is_guarded_on_cuda(op: str) -> None:
    """The CUDA target divides by the guarded divisor too (PTX's div by 0 is garbage)."""
    ptx = tilec.compile(elementwise(op, "int32"), target="cuda:sm_90a").get_kernel_source()
    safe = re.search(r"selp\.b32\s+(%r\d+), 1, %r\d+", ptx)  # divisor 1 where it was 0 or -1
    assert safe, ptx
    assert re.search(rf"(div|rem)\.s32\s+%r\d+, %r\d+, {safe.group(1)};", ptx), ptx


def floor_semantics():
    @T.prim_func
    def main(A: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=1) as _:
            x = A[0]
            A[0] = x // 3
            A[1] = x % 3
            A[2] = x // -3
            A[3] = x % -3

    return main


def test_floor_division_and_modulo_of_negative_values() -> None:
    a = torch.tensor([-7, 0, 0, 0], dtype=torch.int32)
    tilec.compile(floor_semantics(), target="cpu")(a)
    assert a.tolist() == [-7 // 3, -7 % 3, -7 // -3, -7 % -3] == [-3, 2, 2, -1]


def divide_by_constant(op):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(N):
                if op == "//":
                    A[i] = A[i] // 0  # error: by-zero-floordiv
                else:
                    A[i] = A[i] % 0  # error: by-zero-mod

    return main


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
@pytest.mark.parametrize("op, tag", [("//", "by-zero-floordiv"), ("%", "by-zero-mod")])
def test_constant_division_by_zero(op: str, tag: str, target: str) -> None:
    check_error(compile_error(divide_by_constant(op), target), TilecError, tag,
                f"integer division by zero ({op} 0)")


def shift_by_constant(dtype, amount):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(N):
                A[i] = A[i] << amount  # error: shift

    return main


@pytest.mark.parametrize("dtype, amount, bits", [("int32", 32, 32), ("int32", 40, 32),
                                                 ("int8", 8, 8), ("uint16", 16, 16),
                                                 ("int64", 64, 64), ("int32", -1, 32)])
def test_constant_shift_outside_the_width(dtype: str, amount: int, bits: int) -> None:
    check_error(compile_error(shift_by_constant(dtype, amount)), TilecError, "shift",
                f"a shift by {amount} is outside the {bits} bits of {dtype}")


def store_literal(dtype, value):
    @T.prim_func
    def main(A: T.Tensor((4,), dtype)):
        with T.Kernel(1, threads=1) as _:
            A[0] = value  # error: literal

    return main


@pytest.mark.parametrize("dtype, value, bounds", [
    ("int8", 200, "-128 to 127"), ("int8", -129, "-128 to 127"), ("uint8", 256, "0 to 255"),
    ("uint8", -1, "0 to 255"), ("int16", 40000, "-32768 to 32767"),
    ("int32", 2**31, "-2147483648 to 2147483647"), ("uint32", 2**32, "0 to 4294967295"),
    ("int64", 2**63, "to 9223372036854775807")])
def test_literal_outside_its_dtype(dtype: str, value: int, bounds: str) -> None:
    check_error(compile_error(store_literal(dtype, value)), TilecError, "literal",
                f"the integer {value} does not fit in {dtype}", bounds)


@pytest.mark.parametrize("dtype, value", [("int8", 127), ("int8", -128), ("uint8", 255),
                                          ("int32", -(2**31))])
def test_literal_at_the_edge_of_its_dtype(dtype: str, value: int) -> None:
    a = torch.zeros(4, dtype=getattr(torch, dtype))
    tilec.compile(store_literal(dtype, value), target="cpu")(a)
    assert a[0].item() == value


def mask_bits():
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32"),
             C: T.Tensor((N,), "uint32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(N):
                B[i] = (A[i] & 0xFFFF0000) ^ 0x80000001
                C[i] = T.reinterpret("uint32", A[i]) & -2

    return main


def test_bit_patterns_in_bitwise_ops(rng: torch.Generator) -> None:
    """A literal of & | ^ spells bits: 0xFFFF0000 with an int32 is that int32's bits."""
    a = torch.randint(-(2**31), 2**31 - 1, (N,), generator=rng, dtype=torch.int64)
    b = torch.zeros(N, dtype=torch.int32)
    c = torch.zeros(N, dtype=torch.uint32)
    tilec.compile(mask_bits(), target="cpu")(a.to(torch.int32), b, c)
    assert b.tolist() == [wrapped((x & 0xFFFF0000) ^ 0x80000001, torch.int32) for x in a.tolist()]
    assert [v % 2**32 for v in c.tolist()] == [(x % 2**32) & (2**32 - 2) for x in a.tolist()]


def add_scalar(dtype):
    @T.prim_func
    def main(A: T.Tensor((N,), "int64"), s: dtype):  # error: scalar-kernel
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(N):
                A[i] = A[i] + T.cast(s, "int64")

    return main


@pytest.mark.parametrize("dtype, value", [("int32", 2**33 + 5), ("int32", -(2**31) - 1),
                                          ("uint8", 256), ("uint32", -1), ("int8", 128),
                                          ("int64", 2**63)])
def test_scalar_argument_outside_its_dtype(dtype: str, value: int) -> None:
    kernel = tilec.compile(add_scalar(dtype), target="cpu")
    with pytest.raises(LaunchError) as info:
        kernel(torch.zeros(N, dtype=torch.int64), value)
    check_error(info.value, LaunchError, "scalar-kernel", f"argument 's' = {value} does not fit "
                f"in {dtype}")


@pytest.mark.parametrize("value", [7, -3])
def test_numpy_integer_scalar_arguments(value: int) -> None:
    import numpy as np

    kernel = tilec.compile(add_scalar("int32"), target="cpu")
    a = torch.arange(N, dtype=torch.int64)
    kernel(a, np.int32(value))
    assert a.tolist() == [i + value for i in range(N)]


@pytest.mark.parametrize("value", [1.5, "3", None])
def test_scalar_argument_of_the_wrong_kind(value) -> None:
    kernel = tilec.compile(add_scalar("int32"), target="cpu")
    with pytest.raises(LaunchError) as info:
        kernel(torch.zeros(N, dtype=torch.int64), value)
    check_error(info.value, LaunchError, "scalar-kernel", "argument 's' must be a int32 scalar",
                type(value).__name__)


def gemm_into(operand, accumulator, b_operand=None):
    @T.prim_func
    def main(A: T.Tensor((32, 32), operand), C: T.Tensor((32, 32), accumulator)):
        with T.Kernel(1, threads=128) as _:
            a = T.alloc_shared((32, 32), operand)
            b = T.alloc_shared((32, 32), b_operand or operand)
            c = T.alloc_fragment((32, 32), accumulator)
            T.copy(A, a)
            T.copy(A, b)
            T.clear(c)
            T.gemm(a, b, c)  # error: gemm-accumulator
            T.copy(c, C)

    return main


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
@pytest.mark.parametrize("operand, accumulator, what", [
    ("float16", "int32", "cannot hold them"), ("bfloat16", "int16", "cannot hold them"),
    ("float32", "int64", "cannot hold them"), ("int8", "int8", "overflows"),
    ("int8", "int16", "overflows")])
def test_gemm_accumulator_that_cannot_hold_the_products(operand: str, accumulator: str,
                                                        what: str, target: str) -> None:
    check_error(compile_error(gemm_into(operand, accumulator), target), TilecError,
                "gemm-accumulator", f"{operand} x {operand} products", f"of {accumulator}", what)


def bool_arithmetic(statement: str):
    @T.prim_func
    def main(A: T.Tensor((N,), "bool"), B: T.Tensor((N,), "bool"), C: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(N):
                if statement == "a + b":
                    C[i] = A[i] + B[i]  # error: bool-operator
                elif statement == "a + 1":
                    C[i] = A[i] + 1  # error: bool-literal
                elif statement == "a - b":
                    C[i] = A[i] - B[i]  # error: bool-minus
                elif statement == "a // b":
                    C[i] = A[i] // B[i]  # error: bool-division
                elif statement == "logic":
                    C[i] = (A[i] * B[i]) | (A[i] ^ B[i])
                else:
                    C[i] = T.cast(A[i], "int32") + B[i]

    return main


@pytest.mark.parametrize("statement, tag", [("a + b", "bool-operator"), ("a + 1", "bool-literal"),
                                            ("a - b", "bool-minus"),
                                            ("a // b", "bool-division")])
def test_arithmetic_of_bools_is_an_error(statement: str, tag: str) -> None:
    """True + True stored 0 (an i1 addition wraps: torch, numpy and Python count to 2; the
    `+ 1` literal took the bool dtype too)."""
    op = statement.split()[1]
    check_error(compile_error(bool_arithmetic(statement)), TilecError, tag,
                f"operator {op} on bool values computes in one bit", "T.cast")


@pytest.mark.parametrize("statement", ["logic", "counted"])
def test_logic_of_bools_and_counts_of_cast_bools(statement: str, rng: torch.Generator) -> None:
    a, b = (torch.randint(0, 2, (N,), generator=rng).bool() for _ in range(2))
    c = torch.full((N,), 77, dtype=torch.int32)
    tilec.compile(bool_arithmetic(statement), target="cpu")(a, b, c)
    expected = (a & b) | (a ^ b) if statement == "logic" else a.int() + b.int()
    assert c.tolist() == expected.int().tolist()


def bool_scan(kind: str, dtype: str):
    @T.prim_func
    def main(A: T.Tensor((4, N), "bool"), C: T.Tensor((4,), dtype)):
        with T.Kernel(1, threads=64) as _:
            tile = T.alloc_fragment((4, N), "bool")
            rows = T.alloc_fragment((4,), dtype)
            T.copy(A, tile)
            if kind == "cumsum":
                T.cumsum(tile, dim=1)  # error: bool-cumsum
            else:
                getattr(T, f"reduce_{kind}")(tile, rows, dim=1)  # error: bool-reduce
            T.copy(rows, C)

    return main


def bool_atomic_add():
    @T.prim_func
    def main(A: T.Tensor((N,), "bool"), C: T.Tensor((4,), "bool")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(N):
                T.atomic_add(C[i % 4], A[i])  # error: bool-atomic

    return main


def test_an_atomic_add_into_bools_is_an_error() -> None:
    """The op's verifier said "adds a 'i1' to a buffer of 'i8'"."""
    check_error(compile_error(bool_atomic_add()), TilecError, "bool-atomic",
                "T.atomic_add into the bool buffer 'C' computes in one bit")


@pytest.mark.parametrize("kind", ["sum", "abssum", "cumsum"])
def test_sums_into_bools_are_an_error(kind: str) -> None:
    """A reduce_sum of two True values gave True and a T.cumsum of True values alternated
    True / False (one-bit sums)."""
    error = compile_error(bool_scan(kind, "bool"))
    if kind == "cumsum":
        check_error(error, TilecError, "bool-cumsum", "T.cumsum of the bool buffer 'tile'")
    else:
        check_error(error, TilecError, "bool-reduce", f"T.reduce_{kind} into a bool buffer",
                    "int32")


@pytest.mark.parametrize("kind, dtype", [("sum", "int32"), ("max", "bool"), ("min", "bool")])
def test_bools_count_into_integers_and_reduce_as_any_and_all(kind: str, dtype: str,
                                                             rng: torch.Generator) -> None:
    a = torch.rand(4, N, generator=rng) < 0.1
    a[1] = False
    a[2] = True
    c = torch.full((4,), 77 if dtype == "int32" else 0, dtype=getattr(torch, dtype))
    tilec.compile(bool_scan(kind, dtype), target="cpu")(a, c)
    expected = {"sum": a.sum(1).int(), "max": a.any(1), "min": a.all(1)}[kind]
    assert c.tolist() == expected.tolist()


@pytest.mark.parametrize("source, dtype", CONVERSIONS)
def test_float_to_integer_saturates(source: str, dtype: str, rng: torch.Generator) -> None:
    """x86's conversion gave 1e10 -> int32 and NaN as -2**31 and wrapped 300.0 -> int8 to 44;
    now toward zero, saturated, NaN 0, as PTX's cvt.rzi and tests/gpu's run of these kernels."""
    a = conversion_inputs(source, dtype, rng)
    c = torch.full((N,), 77, dtype=getattr(torch, dtype))
    tilec.compile(float_to_integer(source, dtype), target="cpu")(a, c)
    assert c.tolist() == conversion_answers(a, dtype)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_float_to_int8_saturates_in_ptx(arch: str) -> None:
    """NVPTX converts to 8 bits through cvt.rzi.s16 and truncates: the bounds are compared
    before (setp + selp), so 300.0 is 127 there too."""
    ptx = tilec.compile(float_to_integer("float32", "int8"), target=f"cuda:{arch}"
                        ).get_kernel_source()
    assert "cvt.rzi.s16.f32" in ptx and ptx.count("selp") >= 3


@pytest.mark.parametrize("a_dtype, b_dtype", [("float16", "float32"), ("int8", "float16"),
                                              ("float8_e4m3", "bfloat16")])
def test_gemm_of_two_dtypes_names_them(a_dtype: str, b_dtype: str) -> None:
    """The op's verifier said "A and B element types differ: 'f16' vs 'f32'"."""
    check_error(compile_error(gemm_into(a_dtype, "float32", b_dtype)), TilecError,
                "gemm-accumulator", f"T.gemm of {a_dtype} x {b_dtype}: A and B take one dtype")
