"""Integer kernels whose answers Python defines: floor `//` and `%`, C's truncating division
(T.truncdiv / T.truncmod), shifts, each in the widths TileLang has. The CPU target runs them in
tests/test_bad_inputs_integers.py, the GPU in tests/gpu/test_integer_semantics.py (from the
cache tests/gpu/precompile_frontend.py fills), against the same `expected` answers: a divisor
of 0 gives 0, the most negative value by -1 wraps, shifts by a negative amount or past the width
clamp as PTX's do."""

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


def compile_all(target: str) -> None:
    """What the GPU machine loads from the cache."""
    for op in OPS:
        for dtype in DTYPES:
            tilec.compile(elementwise(op, dtype), target=target)
