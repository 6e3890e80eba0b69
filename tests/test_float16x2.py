"""T.float16x2 as TileLang writes it: a pair of float16 values in 32 bits, packed by
T.float16x2(a, b), read from and to a 32-bit scalar's bits by T.reinterpret, computed on by
+ - * (both halves at once: HADD2 / HFMA2 on CUDA). On the CPU target against torch's float16
arithmetic, the int4 GEMV's pair decode (gemv.field_pairs) exactly, the sm_90a PTX of the
GEMV that computes on pairs (gemv_uint_half2, int4 and int2: f16x2 instructions, registers
only), and what is rejected.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from conftest import randn, suite_target

import tilec
import tilec.language as T
from tilec.errors import TilecError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "quantized"))
from gemv import field_pairs, gemv_uint_half2, meta_weights, pair_sum  # noqa: E402

TARGET = suite_target()


@tilec.jit(target=TARGET)
def pair_arithmetic(a, b):
    N = T.const("N")
    a: T.Tensor((N,), T.float16)
    b: T.Tensor((N,), T.float16)
    out = T.empty((N // 2,), T.uint32)
    with T.Kernel(T.ceildiv(N // 2, 64), threads=64) as bx:
        for i in T.Parallel(64):
            p = bx * 64 + i
            x = T.float16x2(a[2 * p], a[2 * p + 1])
            y = T.float16x2(b[2 * p], b[2 * p + 1])
            out[p] = T.reinterpret((x * y - 1.5) + T.float16x2(b[2 * p]), T.uint32)
    return out


def test_pair_arithmetic_is_float16_arithmetic_on_both_halves(rng: torch.Generator) -> None:
    """Each half of (x * y - 1.5) + (b0, b0) is what the same float16 expression gives, bit
    for bit: the literal and the one-value pair broadcast to both halves, a in the low half.
    The CPU target computes a chain of float16 ops in float32 and rounds once, as its scalar
    float16 code does (upstream arith-emulate-unsupported-floats marks its extf / truncf
    `contract`, and canonicalize folds each truncf -> extf between two ops); SPIR-V rounds
    each op to float16, as torch's float16 ops do (a third of the halves differ by a
    rounding)."""
    n = 256
    a, b = randn((n,), torch.float16, rng), randn((n,), torch.float16, rng)
    bits = pair_arithmetic(a, b).view(torch.int32).view(torch.float16).reshape(n // 2, 2)
    x, y, first = a.reshape(-1, 2), b.reshape(-1, 2), b[0::2][:, None]
    if TARGET == "cpu":
        expected = ((x.float() * y.float() - 1.5) + first.float()).half()
    else:
        expected = (x * y - 1.5) + first
    torch.testing.assert_close(bits, expected, rtol=0, atol=0)


@tilec.jit(target=TARGET)
def decode_pairs(W, zeros, bits=4, folded=False):
    N, WORDS = T.const("N, WORDS")
    pairs = 16 // bits
    W: T.Tensor((N, WORDS), T.uint32)
    zeros: T.Tensor((N,), T.float16)
    out = T.empty((N, WORDS * pairs), T.uint32)
    sums = T.empty((N, WORDS * pairs), T.float32)
    with T.Kernel(N, threads=32) as bx:
        for i, j in T.Parallel(WORDS, pairs):
            zero = T.float16x2(zeros[bx])
            if folded:  # the zero taken away by the decode's own HFMA2 (integer zeros)
                pair = field_pairs(W[bx, i], j, bits, zero)
            else:
                pair = field_pairs(W[bx, i], j, bits) - zero
            out[bx, i * pairs + j] = T.reinterpret(pair, T.uint32)
            sums[bx, i * pairs + j] = pair_sum(out[bx, i * pairs + j])
    return out, sums


@pytest.mark.parametrize("bits, folded", [(4, False), (2, False), (4, True), (2, True)])
def test_field_pairs_decode_words(bits: int, folded: bool, rng: torch.Generator) -> None:
    """gemv_uint_half2's decode on the CPU: pair j of word i is fields (j, j + 16 / bits)
    minus the row's zero, rounded to float16 once (the decode itself is exact), and pair_sum
    adds its halves in float32. Folded into the decode (integer_zeros), an integer zero (every
    one from 0 to 2 ** bits - 1 among the rows) gives the same bits."""
    n, words, fields = 32, 4, 32 // bits
    packed = torch.randint(0, 2**32, (n, words), generator=rng, dtype=torch.int64)
    zeros = torch.rand(n, generator=rng) * ((1 << bits) - 1)
    if folded:
        zeros = torch.arange(n) % (1 << bits)
    zeros = zeros.half()
    out, sums = decode_pairs(packed.to(torch.int32).view(torch.uint32), zeros, bits=bits,
                             folded=folded)
    codes = (packed[..., None] >> (bits * torch.arange(fields))) & ((1 << bits) - 1)
    pairs = torch.stack([codes[..., :fields // 2], codes[..., fields // 2:]], -1)
    expected = (pairs.reshape(n, -1, 2).half() - zeros[:, None, None]).double()  # one rounding
    halves = out.view(torch.int32).view(torch.float16).reshape(n, -1, 2)
    torch.testing.assert_close(halves.double(), expected, rtol=0, atol=0)
    torch.testing.assert_close(sums.double(), expected.sum(-1), rtol=0, atol=1e-6)


def test_half2_gemv_computes_on_pairs_in_registers() -> None:
    """On sm_90a the GEMV's dot products are HFMA2s and its decode LOP3-able and/or pairs,
    16-byte weight loads, nothing in local memory; with zero_from_sums no HSUB2 (numerics
    against float32 on the GPU: benchmarks/quantized.py)."""
    m, n, k = 1, 256, 4096
    for config in ({}, {"k_unroll": 2}, {"block_m": 2, "rows_per_warp": 2}, {"bits": 2},
                   {"bits": 2, "k_unroll": 2}, {"zero_from_sums": True, "k_unroll": 2},
                   {"words": 1, "rows_per_warp": 1},
                   {"bits": 2, "words": 2, "rows_per_warp": 2, "zero_from_sums": True}):
        bits = config.get("bits", 4)
        ptx = gemv_uint_half2.compile(
            torch.empty(m, k, dtype=torch.float16, device="meta"),
            torch.empty(n, k * bits // 32, dtype=torch.uint32, device="meta"),
            *meta_weights("uint4", n, k)[1:], target="cuda:sm_90a",
            **config).get_kernel_source()
        assert "fma.rn.f16x2" in ptx and "ld.global.v4" in ptx
        # the zero shifts each weight pair (HSUB2) unless it is applied to the step's sums
        assert ("sub.f16x2" in ptx) != config.get("zero_from_sums", False)
        assert "ld.local" not in ptx and "fma.rn.f16 " not in ptx


def _f16x2_ops_per_weight(ptx: str, weights: int) -> float:
    """The decode and product instructions of a GEMV step per weight: f16x2 arithmetic and
    the LOP3s (and.b32 + or.b32 in PTX) that decode pairs."""
    arithmetic = sum(ptx.count(op) for op in ("fma.rn.f16x2", "add.f16x2", "sub.f16x2"))
    return (arithmetic + ptx.count("and.b32")) / weights


def test_integer_zeros_cut_the_int2_decode_to_three_instructions_per_pair() -> None:
    """int2 at 1 x 28672 x 8192 (the K loop not unrolled: one step of 4 rows x 4 words x 16
    weights a lane in the PTX): the default spends a LOP3, a decode HFMA2 / HADD2, an HSUB2 for
    the zero and the product's HFMA2 per two weights (2 a weight); integer_zeros folds the zero
    into the decode (1.5 a weight, and 4 HSUB2 a row and step building the addends)."""
    n, k, bits = 28672, 8192, 2
    inputs = (torch.empty(1, k, dtype=torch.float16, device="meta"),
              torch.empty(n, k * bits // 32, dtype=torch.uint32, device="meta"),
              *meta_weights("uint2", n, k)[1:])
    per_weight = {}
    for folded in (False, True):
        ptx = gemv_uint_half2.compile(*inputs, bits=bits, integer_zeros=folded,
                                      target="cuda:sm_90a").get_kernel_source()
        per_weight[folded] = _f16x2_ops_per_weight(ptx, 4 * 4 * 16)
        assert ptx.count("sub.f16x2") == (4 * 4 if folded else 4 * 4 * 8)
    assert per_weight[False] == 2.0 and per_weight[True] <= 1.5 + 16 / 256


def test_integer_zeros_and_zero_from_sums_exclude_each_other() -> None:
    n, k = 256, 1024
    with pytest.raises(TilecError, match=r"zero_from_sums.*integer_zeros"):
        gemv_uint_half2.compile(torch.empty(1, k, dtype=torch.float16, device="meta"),
                                torch.empty(n, k // 8, dtype=torch.uint32, device="meta"),
                                *meta_weights("uint4", n, k)[1:], target="cuda:sm_90a",
                                integer_zeros=True, zero_from_sums=True)


BAD_KERNELS = {
    "buffer": ("""
def kernel(a):
    N = T.const("N")
    a: T.Tensor((N,), T.float16)
    with T.Kernel(1, threads=32) as bx:
        pairs = T.alloc_local((4,), T.float16x2)
        pairs[0] = T.float16x2(a[0], a[1])
""", r"cannot hold T.float16x2 values"),
    "cast": ("""
def kernel(a):
    N = T.const("N")
    a: T.Tensor((N,), T.float16)
    with T.Kernel(1, threads=32) as bx:
        a[0] = T.Cast(T.float16, T.float16x2(a[0], a[1]))
""", r"a float16x2 value cannot become float16"),
    "compare": ("""
def kernel(a):
    N = T.const("N")
    a: T.Tensor((N,), T.float16)
    with T.Kernel(1, threads=32) as bx:
        if T.float16x2(a[0], a[1]) > 0.0:
            a[0] = 1.0
""", r"not compared"),
    "arguments": ("""
def kernel(a):
    N = T.const("N")
    a: T.Tensor((N,), T.float16)
    with T.Kernel(1, threads=32) as bx:
        a[0] = T.reinterpret(T.float16x2(a[0], a[1], a[2]), T.float16)
""", r"takes one value \(both halves\) or two"),
}


@pytest.mark.parametrize("case", list(BAD_KERNELS))
def test_float16x2_misuse_is_an_error_at_the_line(case: str, tmp_path: Path) -> None:
    source, message = BAD_KERNELS[case]
    path = tmp_path / f"bad_{case}.py"
    path.write_text("import tilec\nimport tilec.language as T\n\n\n@tilec.jit(target='cpu')"
                    + source)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(TilecError, match=message) as error:
        namespace["kernel"](torch.zeros(8, dtype=torch.float16))
    assert f"{path}:" in str(error.value)
