"""TileLang's `T.*` names as its examples spell them: one test per name, in TileLang's syntax.

CPU numerics are checked against a float64 (or exact integer) torch reference on fresh random
inputs with NaN/max-poisoned outputs; names that only mean something on a GPU are compiled to
PTX for sm_90a and sm_80 and assembled by ptxas, and rejected on the CPU with a clear error.
"""

from __future__ import annotations

import copy
import pickle

import pytest
import torch
from conftest import assert_close, poisoned, randn

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
CUDA_ARCHES = ["sm_90a", "sm_80"]


def cpu(prim: T.PrimFunc) -> tilec.JITKernel:
    """The kernel for the CPU target, called with every tensor (outputs poisoned by the test)."""
    return tilec.compile(prim, target="cpu")


# ---------------------------------------------------------------------------------------------
# dtypes


def test_dtypes_are_their_names() -> None:
    assert getattr(torch, T.float16) is torch.float16
    assert T.float16 == "float16" and hash(T.bfloat16) == hash("bfloat16")
    assert {"float32": 1}[T.float32] == 1 and {T.int8: 2}["int8"] == 2
    assert T.dtype("uint") == T.uint == "uint32" and T.uint is T.uint32
    assert T.float is T.float32 and T.half is T.float16 and T.int is T.int32
    assert T.dtype(torch.float8_e4m3fn) is T.float8_e4m3fn != T.float8_e4m3
    assert T.float8_e4m3.as_torch() is T.float8_e4m3fn.as_torch() is torch.float8_e4m3fn
    assert T.dtype(T.uint16).as_torch() is torch.uint16 and T.uint64.bits == 64
    assert isinstance(T.float16, T.dtype) and isinstance(T.float16, str)
    assert (T.float16.mlir, T.float16.bits, T.float16.bytes, T.float16.kind) == ("f16", 16, 2,
                                                                               "float")
    assert repr(T.uint32) == "T.uint32" and f"{T.uint32}" == "uint32"
    assert pickle.loads(pickle.dumps(T.bfloat16)) is T.bfloat16
    assert copy.deepcopy(T.int64) is T.int64
    with pytest.raises(AttributeError):
        T.float16.bits = 8
    with pytest.raises(tilec.TilecError, match="unknown dtype 'float7'"):
        T.dtype("float7")


@pytest.mark.parametrize("dtype", [T.uint16, T.uint32, T.uint64])
def test_unsigned_dtypes(dtype: T.DType, rng: torch.Generator) -> None:
    """Unsigned division, shift and comparison on values above the signed range."""
    n = 64

    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), T.int32)):
        with T.Kernel(1, threads=32) as _:
            for i in T.Parallel(n):
                B[i] = A[i] // 3 + (A[i] >> 1)
                C[i] = T.if_then_else(A[i] > 5, 1, 0)

    bits = dtype.bits
    top = 2**bits - 1 if bits < 64 else 2**63 - 1  # torch.randint stays below 2**63
    low = 2 ** (bits - 1) if bits < 64 else 2**62
    values = torch.randint(low, top, (n,), generator=rng, dtype=torch.int64)
    values[:8] = torch.arange(8)
    b, c = poisoned((n,), torch.int64).to(dtype.as_torch()), poisoned((n,), torch.int32)
    cpu(main)(values.to(dtype.as_torch()), b, c)
    expected = [v // 3 + (v >> 1) for v in values.tolist()]
    expected = [e % 2**bits for e in expected]
    assert [int(x) % 2**bits for x in b.to(torch.int64).tolist()] == expected
    assert c.tolist() == [int(v > 5) for v in values.tolist()]


def test_float8_e4m3fn_and_float_alias(rng: torch.Generator) -> None:
    """A float8_e4m3fn tensor (torch's name) read into a T.float accumulator."""
    m, n = 16, 32

    @T.prim_func
    def main(A: T.Tensor((m, n), T.float8_e4m3fn), B: T.Tensor((m,), T.float)):
        with T.Kernel(1, threads=32) as _:
            a = T.alloc_shared((m, n), T.float8_e4m3)
            f = T.alloc_fragment((m, n), T.float)
            s = T.alloc_fragment((m,), T.float)
            T.copy(A, a)
            T.copy(a, f)
            T.reduce_sum(f, s, dim=1)
            T.copy(s, B)

    a = randn((m, n), torch.float32, rng).to(torch.float8_e4m3fn)
    b = poisoned((m,), torch.float32)
    cpu(main)(a, b)
    assert_close(b, a.double().sum(dim=1), torch.float32)
