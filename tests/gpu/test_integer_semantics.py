"""Integer semantics on the GPU as on the CPU target: every kernel of tests/gpu/integer_kernels.py
(floor and truncating division and modulo, shifts; 8- to 64-bit, signed and unsigned) computes
Python's answers, divisors of 0 and -1 and shifts outside the width included."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

sys.path.insert(0, str(Path(__file__).resolve().parent))

import integer_kernels as conversions  # noqa: E402
from integer_kernels import DTYPES, OPS, N, answers, elementwise, operands  # noqa: E402

import tilec  # noqa: E402


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_integer_op_matches_python(op: str, dtype: str) -> None:
    a, b = operands(op, dtype, torch.Generator().manual_seed(len(op) * 100 + len(dtype)))
    c = torch.full((N,), torch.iinfo(a.dtype).max, dtype=a.dtype)  # poisoned, on the CPU:
    a_gpu, b_gpu, c_gpu = a.cuda(), b.cuda(), c.cuda()  # torch fills few unsigned types on CUDA
    tilec.compile(elementwise(op, dtype), target="cuda")(a_gpu, b_gpu, c_gpu)
    torch.cuda.synchronize()
    assert c_gpu.cpu().tolist() == answers(op, a, b)


@pytest.mark.parametrize("source, dtype", conversions.CONVERSIONS)
def test_float_to_integer_saturates(source: str, dtype: str) -> None:
    """300.0 to int8 is 127 and NaN 0, as on the CPU target (NVPTX wrapped 8-bit results)."""
    generator = torch.Generator().manual_seed(len(source + dtype))
    a = conversions.conversion_inputs(source, dtype, generator)
    c = torch.full((N,), 77, dtype=getattr(torch, dtype)).cuda()
    tilec.compile(conversions.float_to_integer(source, dtype), target="cuda")(a.cuda(), c)
    torch.cuda.synchronize()
    assert c.cpu().tolist() == conversions.conversion_answers(a, dtype)
