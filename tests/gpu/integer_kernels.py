"""Integer kernels whose answers Python defines: floor `//` and `%`, C's truncating division
(T.truncdiv / T.truncmod), shifts, each in the widths TileLang has. The CPU target runs them in
tests/test_bad_inputs_integers.py, the GPU in tests/gpu/test_integer_semantics.py (from the
cache tests/gpu/precompile_frontend.py fills), against the same `expected` answers: a divisor
of 0 gives 0, the most negative value by -1 wraps, shifts by a negative amount or past the width
clamp as PTX's do. A float converted to an integer (`float_to_integer`) rounds toward zero and
saturates at the integer's bounds, NaN giving 0 (PTX's cvt.rzi), on both targets."""

from __future__ import annotations

import torch

import tilec
import tilec.language as T

N = 64
OPS = ["//", "%", "truncdiv", "truncmod", "<<", ">>"]
DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint32"]


def elementwise(op: str, dtype: str):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(N):
                if op == "//":
                    C[i] = A[i] // B[i]
                elif op == "%":
                    C[i] = A[i] % B[i]
                elif op == "truncdiv":
                    C[i] = T.truncdiv(A[i], B[i])
                elif op == "truncmod":
                    C[i] = T.truncmod(A[i], B[i])
                elif op == "<<":
                    C[i] = A[i] << B[i]
                else:
                    C[i] = A[i] >> B[i]

    return main


def wrapped(value: int, dtype: torch.dtype) -> int:
    info = torch.iinfo(dtype)
    return (value - info.min) % (info.max - info.min + 1) + info.min


def expected(op: str, x: int, y: int, dtype: torch.dtype) -> int:
    """Python's answer in the dtype's width; 0 for a zero divisor, clamped shifts."""
    bits = torch.iinfo(dtype).bits
    signed = torch.iinfo(dtype).min < 0
    if op in ("//", "%"):
        return 0 if y == 0 else wrapped(x // y if op == "//" else x % y, dtype)
    if op in ("truncdiv", "truncmod"):  # C's: the quotient rounded toward zero
        if y == 0:
            return 0
        quotient = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        return wrapped(quotient if op == "truncdiv" else x - quotient * y, dtype)
    inside = 0 <= y < bits
    if op == "<<":
        return wrapped(x << y, dtype) if inside else 0
    if not inside:
        return (-1 if x < 0 else 0) if signed else 0
    return x >> y


def operands(op: str, dtype: str, generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    """Random A and B (CPU tensors) with the edge cases first: divisors 0 and -1 beside the
    most negative value, shifts by the width, one less, 0 and -1."""
    torch_dtype = getattr(torch, dtype)
    info = torch.iinfo(torch_dtype)
    signed = info.min < 0
    a = torch.randint(max(info.min, -1000), min(info.max, 1000), (N,), generator=generator)
    if op in ("//", "%", "truncdiv", "truncmod"):
        b = torch.randint(-9 if signed else 0, 10, (N,), generator=generator)
        b[:4] = torch.tensor([0, -1 if signed else 0, 3, 0])
        a[1] = info.min  # the most negative value by -1
    else:
        b = torch.randint(0, info.bits + 8, (N,), generator=generator)
        b[:3] = torch.tensor([info.bits, info.bits - 1, 0])
        if signed:
            b[3] = -1
    return a.to(torch_dtype), b.to(torch_dtype)


def answers(op: str, a: torch.Tensor, b: torch.Tensor) -> list[int]:
    return [expected(op, x, y, a.dtype) for x, y in zip(a.tolist(), b.tolist(), strict=True)]


# (float dtype, integer dtype): each narrow integer, the 32- and 64-bit ones, from half floats
CONVERSIONS = [("float32", "int8"), ("float32", "uint8"), ("float32", "int16"),
               ("float32", "int32"), ("float32", "uint32"), ("float64", "int64"),
               ("float16", "int8"), ("bfloat16", "int32")]


def float_to_integer(source: str, dtype: str):
    @T.prim_func
    def main(A: T.Tensor((N,), source), C: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(N):
                C[i] = T.cast(A[i], dtype)

    return main


def conversion_inputs(source: str, dtype: str, generator: torch.Generator) -> torch.Tensor:
    """Random floats around the integer's range, its bounds, past them, infinities and NaN."""
    info = torch.iinfo(getattr(torch, dtype))
    values = [info.max + 0.5, info.max + 1.0, info.min - 1.0, float(info.max) * 4,
              float(info.min) * 4 - 8, 1e30, -1e30, float("inf"), float("-inf"), float("nan"),
              -0.0, -0.75, 0.75, float(info.min), -1.5]
    span = float(info.max - info.min)
    spread = (torch.rand(N - len(values), generator=generator, dtype=torch.float64) * 1.5 - 0.25
              ) * span + info.min
    return torch.cat([torch.tensor(values, dtype=torch.float64), spread]).to(
        getattr(torch, source))


def conversion_answers(a: torch.Tensor, dtype: str) -> list[int]:
    """Toward zero, saturated at the integer's bounds; NaN gives 0."""
    info = torch.iinfo(getattr(torch, dtype))
    return [0 if x != x else max(info.min, min(info.max, int(x) if abs(x) != float("inf")
                                                 else info.max if x > 0 else info.min))
            for x in a.double().tolist()]


def compile_all(target: str) -> None:
    """What the GPU machine loads from the cache."""
    for op in OPS:
        for dtype in DTYPES:
            tilec.compile(elementwise(op, dtype), target=target)
    for source, dtype in CONVERSIONS:
        tilec.compile(float_to_integer(source, dtype), target=target)
