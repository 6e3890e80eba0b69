"""Sub-byte dtypes (T.int4, T.uint4, T.int2, T.uint2, T.float4_e2m1fn) as TileLang writes them:
tensors packed into torch int8 / uint8 along their last dimension, shared / local / fragment
buffers, element loads, stores, copies and casts (lower-sub-byte-types), on the CPU target
against torch references with random inputs; the quantized examples; what is rejected.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import randn, suite_target

import tilec
import tilec.language as T
from tilec.errors import TilecError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "quantized"
sys.path.insert(0, str(EXAMPLES))
from gemm_fp4 import gemm_mxfp4  # noqa: E402
from gemm_int4 import gemm_int4, gemm_int4_words  # noqa: E402
from gemv import (  # noqa: E402
    KERNELS,
    compile_options,
    gemv_uint4_words,
    meta_weights,
    nibble_scaled,
    weights,
)

TARGET = suite_target()
# the GEMM examples' tiles: their defaults (57344 bytes of shared memory) on the CPU; on SPIR-V
# (workgroup memory: vulkan's 32 KiB, webgpu's 16 KiB) smaller ones of 14 KiB, passed as a user
# of such a target passes them (the defaults there: the compiler's error saying so)
GEMM_TILES = {} if TARGET == "cpu" else {"block_M": 16, "block_N": 32}
FP4_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
FP4_TABLE = torch.tensor(FP4_VALUES + [-v for v in FP4_VALUES])
# dtype -> (bits, smallest and largest value of its integers); fp4: its codes
DTYPES = {"int4": (4, -8, 7), "uint4": (4, 0, 15), "int2": (2, -2, 1), "uint2": (2, 0, 3),
          "float4_e2m1fn": (4, 0, 15)}


def pack(values: torch.Tensor, bits: int) -> torch.Tensor:
    """Integers (..., K) -> bytes (..., K * bits / 8), element j in bits (j % n) * bits of
    byte j // n, n = 8 / bits."""
    per_byte = 8 // bits
    fields = (values.to(torch.int32) & ((1 << bits) - 1)).reshape(*values.shape[:-1], -1,
                                                                   per_byte)
    shifts = torch.arange(per_byte, dtype=torch.int32) * bits
    return (fields << shifts).sum(-1).to(torch.uint8)


def storage(packed: torch.Tensor, dtype: str) -> torch.Tensor:
    return packed.to(torch.int8) if dtype in ("int4", "int2") else packed


def decoded(codes: torch.Tensor, dtype: str) -> torch.Tensor:
    """The float64 values of integer codes (fp4: its table)."""
    if dtype == "float4_e2m1fn":
        return FP4_TABLE[codes.long()].double()
    return codes.double()


def random_codes(shape: tuple[int, ...], dtype: str, rng: torch.Generator) -> torch.Tensor:
    _, low, high = DTYPES[dtype]
    return torch.randint(low, high + 1, shape, generator=rng)


@tilec.jit(target=TARGET)
def decode(B, dtype=T.int4, out_dtype=T.float32, block=16):
    M, N = T.const("M, N")
    B: T.Tensor((M, N), dtype)
    out = T.empty((M, N), out_dtype)
    with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
        for i, j in T.Parallel(block, N):
            out[bx * block + i, j] = T.Cast(out_dtype, B[bx * block + i, j])
    return out


@tilec.jit(target=TARGET)
def encode(X, dtype=T.int4, block=16):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    out = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
        for i, j in T.Parallel(block, N):
            out[bx * block + i, j] = T.Cast(dtype, X[bx * block + i, j])
    return out


@tilec.jit(target=TARGET)
def staged(B, dtype=T.int4, block_M=16, block_N=32):
    """Global -> shared (bytes) -> fragment (elements) -> local (packed) -> global, plus one:
    every kind of buffer and copy, packed and not."""
    M, N = T.const("M, N")
    B: T.Tensor((M, N), dtype)
    out = T.empty((M, N), dtype)
    total = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        shared = T.alloc_shared((block_M, block_N), dtype)
        fragment = T.alloc_fragment((block_M, block_N), dtype)
        row = T.alloc_local((block_N,), dtype)
        T.clear(shared)
        T.copy(B[by * block_M, bx * block_N], shared)
        T.copy(shared, fragment)
        for i, j in T.Parallel(block_M, block_N):
            total[by * block_M + i, bx * block_N + j] = T.Cast(T.float32, fragment[i, j]) + 1.0
        for i in T.serial(block_M):
            T.copy(fragment[i, 0], row)
            T.copy(row, out[by * block_M + i, bx * block_N])
    return out, total


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape", [(16, 32), (37, 24)])
def test_decode_packed_tensor(dtype: str, shape: tuple[int, int], rng: torch.Generator) -> None:
    bits = DTYPES[dtype][0]
    codes = random_codes(shape, dtype, rng)
    result = decode(storage(pack(codes, bits), dtype), dtype=dtype)
    assert result.shape == shape
    torch.testing.assert_close(result.double(), decoded(codes, dtype), rtol=0, atol=0)


@pytest.mark.parametrize("out_dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("dtype", ["int4", "uint2", "float4_e2m1fn"])
def test_decode_to_other_floats(dtype: str, out_dtype: str, rng: torch.Generator) -> None:
    """Conversions build the bits of each float type (exact: every value fits)."""
    bits = DTYPES[dtype][0]
    codes = random_codes((16, 64), dtype, rng)
    result = decode(storage(pack(codes, bits), dtype), dtype=dtype, out_dtype=out_dtype)
    assert result.dtype == getattr(torch, out_dtype)
    torch.testing.assert_close(result.double(), decoded(codes, dtype), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["int4", "uint4", "int2", "uint2"])
def test_encode_packed_output(dtype: str, rng: torch.Generator) -> None:
    bits = DTYPES[dtype][0]
    codes = random_codes((37, 48), dtype, rng)
    result = encode(codes.float(), dtype=dtype)
    assert result.dtype == storage(pack(codes, bits), dtype).dtype
    assert result.shape == (37, 48 * bits // 8)
    torch.testing.assert_close(result, storage(pack(codes, bits), dtype), rtol=0, atol=0)


def test_encode_float4_rounds_to_nearest(rng: torch.Generator) -> None:
    x = (torch.rand(32, 64, generator=rng) * 14 - 7).float()  # past +-6 too: saturates
    ties = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.3, -2.5, 6.5]  # ties to the even code
    x[0, :len(ties)] = torch.tensor(ties)
    result = encode(x, dtype=T.float4_e2m1fn)
    codes = torch.stack([(result >> 4 * n) & 15 for n in (0, 1)], -1).reshape(32, 64)
    values = decoded(codes, "float4_e2m1fn")
    distance = (FP4_TABLE.double()[None, None, :] - x.double()[..., None].clamp(-6, 6)).abs()
    torch.testing.assert_close((values - x.double().clamp(-6, 6)).abs(), distance.min(-1).values,
                               rtol=0, atol=1e-6)
    assert values[0, :len(ties)].tolist() == [0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0, -0.5, -2.0, 6.0]


@pytest.mark.parametrize("dtype", ["int4", "uint2", "float4_e2m1fn"])
def test_copies_through_every_buffer_kind(dtype: str, rng: torch.Generator) -> None:
    bits = DTYPES[dtype][0]
    codes = random_codes((40, 96), dtype, rng)
    packed = storage(pack(codes, bits), dtype)
    out, total = staged(packed, dtype=dtype)
    torch.testing.assert_close(out, packed, rtol=0, atol=0)
    torch.testing.assert_close(total.double(), decoded(codes, dtype) + 1, rtol=0, atol=0)


def test_e8m0_scales(rng: torch.Generator) -> None:
    """T.float8_e8m0fnu (MXFP4's block scales): byte e stands for 2 ** (e - 127)."""
    exponents = torch.randint(0, 255, (16, 8), generator=rng, dtype=torch.uint8)
    exponents[0, :3] = torch.tensor([0, 1, 254])  # 2 ** -127 is a subnormal float32
    result = decode(exponents.view(torch.float8_e8m0fnu), dtype=T.float8_e8m0fnu)
    torch.testing.assert_close(result.double(), 2.0 ** (exponents.double() - 127), rtol=0,
                               atol=0)


@pytest.mark.parametrize("dtype", ["int4", "uint2", "float4_e2m1fn"])
def test_kernels_build_for_cuda(dtype: str) -> None:
    """The same kernels through the CUDA target (ptxas checks the PTX): decoding, encoding with
    atomics on the packed output, the copies."""
    bits = DTYPES[dtype][0]
    packed = torch.empty(40, 96 * bits // 8, dtype=storage(pack(torch.zeros(1, 8), bits),
                                                            dtype).dtype, device="meta")
    for kernel, argument in ((decode, packed), (staged, packed),
                             (encode, torch.empty(40, 96, device="meta"))):
        ptx = kernel.compile(argument, dtype=dtype, target="cuda:sm_90a").get_kernel_source()
        assert ".entry" in ptx
        if kernel is encode:
            assert "atom.global.and" in ptx and "atom.global.or" in ptx


def test_tensor_argument_checks_the_packed_shape() -> None:
    kernel = decode.compile(torch.zeros(16, 16, dtype=torch.int8), dtype=T.int4)
    with pytest.raises(TilecError, match=r"packed 2 to a byte of a torch.int8 tensor"):
        kernel(torch.zeros(16, 32, dtype=torch.int8))


@pytest.mark.parametrize("shape", [(1, 128, 256), (3, 200, 384)])
def test_gemm_int4_example(shape: tuple[int, int, int], rng: torch.Generator) -> None:
    m, n, k = shape
    a = randn((m, k), torch.float16, rng)
    args, weight = weights("uint4", n, k)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TILEC_TARGET", TARGET)
        c = gemm_int4(a, *args, **GEMM_TILES)
    reference = a.double() @ weight.double().t()
    assert ((c.double() - reference).norm() / reference.norm()).item() < 2e-3


@pytest.mark.parametrize("shape", [(1, 128, 256), (5, 200, 384), (70, 130, 160)])
def test_gemm_mxfp4_example(shape: tuple[int, int, int], rng: torch.Generator) -> None:
    """MXFP4 weights (e2m1, an e8m0 scale per 32) times fp16 on the CPU target against float64:
    ragged batch (past block_M = 64 too), N and K (a step past K reads zeros)."""
    m, n, k = shape
    a = randn((m, k), torch.float16, rng)
    args, weight = weights("mxfp4", n, k)
    c = gemm_mxfp4.compile(a, *args, target=TARGET, **GEMM_TILES).get_profiler().run_poisoned(
        a, *args)
    reference = a.double() @ weight.double().t()
    assert ((c.double() - reference).norm() / reference.norm()).item() < 2e-3


def test_gemm_mxfp4_uses_wgmma() -> None:
    """The decoded MXFP4 tile is wgmma's A on sm_90a, nothing in local memory."""
    m, n, k = 16, 512, 1024
    ptx = gemm_mxfp4.compile(torch.empty(m, k, dtype=torch.float16, device="meta"),
                             *meta_weights("mxfp4", n, k),
                             target="cuda:sm_90a").get_kernel_source()
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16" in ptx
    assert "ld.local" not in ptx


@pytest.mark.parametrize("kernel", [gemm_int4, gemm_int4_words])
def test_gemm_int4_examples_use_wgmma(kernel) -> None:
    """Both small-batch int4 GEMMs put the decoded weight tile on the tensor cores as wgmma's
    A (the batch is its N), on sm_90a; the words kernel's decode stays in registers and
    stores its row in 16-byte vectors (numerics on the GPU in benchmarks/quantized.py)."""
    m, n, k = 16, 512, 1024
    args = meta_weights("uint4", n, k)
    if kernel is gemm_int4_words:
        args[0] = torch.empty(n, k // 8, dtype=torch.uint32, device="meta")
    compiled = kernel.compile(torch.empty(m, k, dtype=torch.float16, device="meta"), *args,
                              target="cuda:sm_90a")
    ptx = compiled.get_kernel_source()
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16" in ptx
    assert "ld.local" not in ptx
    if kernel is gemm_int4_words:
        assert "st.shared.v4" in ptx and "st.shared.b16" not in ptx


@pytest.mark.parametrize("runs", ["0", "1"])
def test_gemm_int4_decode_streams_packed_weights(runs: str) -> None:
    """The tile decode's packed weights ride the loop's cp.async pipeline (their byte column
    (k * 128) >> 1 is 16-byte aligned; they were loaded synchronously), and with the shared
    store runs (the default; TILEC_SHARED_STORE_RUNS=0 turns them off) a thread decodes 16-byte
    runs of a row: one 4-byte shared load
    and one 16-byte store per 8 weights, where each weight was a byte load and a 2-byte store."""
    m, n, k = 16, 512, 1024
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TILEC_SHARED_STORE_RUNS", runs)
        ptx = gemm_int4.compile(torch.empty(m, k, dtype=torch.float16, device="meta"),
                                *meta_weights("uint4", n, k),
                                target="cuda:sm_90a").get_kernel_source()
    assert "ld.global.v4" not in ptx  # neither tile is copied synchronously
    assert ptx.count("cp.async.cg.shared.global") >= 8
    if runs == "1":
        assert "st.shared.b16" not in ptx and "ld.shared.b8" not in ptx
        assert "ld.shared.b32" in ptx
    else:
        assert "st.shared.b16" in ptx


@pytest.mark.parametrize("fmt", list(KERNELS))
def test_gemv_examples_build_for_cuda(fmt: str) -> None:
    """The warp-per-rows GEMVs (thread bindings: CUDA only; numerics in
    benchmarks/quantized.py's run on the GPU) move their weights in 16-byte loads, and their
    local buffers stay in registers (the copies into them are unrolled, the fallback for a
    misaligned tensor too: int2's activations are 64 elements)."""
    m, n, k = 1, 256, 2048
    kernel = KERNELS[fmt].compile(torch.empty(m, k, dtype=torch.float16, device="meta"),
                                  *meta_weights(fmt, n, k), target="cuda:sm_90a",
                                  **compile_options(fmt))
    ptx = kernel.get_kernel_source()
    assert "ld.global.v4" in ptx and "shfl.sync.bfly" in ptx and "cvt.rn.f32.u" not in ptx
    assert "ld.local" not in ptx


@tilec.jit(target=TARGET)
def word_nibbles(W, rows=4):
    N, WORDS = T.const("N, WORDS")
    W: T.Tensor((N, WORDS), T.uint32)
    out = T.empty((N, WORDS * 8), T.float32)
    with T.Kernel(T.ceildiv(N, rows), threads=128) as bx:
        for n, i, j in T.Parallel(rows, WORDS, 8):
            out[bx * rows + n, i * 8 + j] = nibble_scaled(W[bx * rows + n, i], j)
    return out


def test_word_decode_of_the_words_gemv(rng: torch.Generator) -> None:
    """gemv_uint4_words' bit trick, run on the CPU: nibble j of every word, times
    16 ** (j % 5), exactly; and the kernel builds for sm_90a in registers."""
    words = torch.randint(0, 2**32, (8, 4), generator=rng, dtype=torch.int64)
    result = word_nibbles(words.to(torch.int32).view(torch.uint32))
    nibbles = (words[..., None] >> (4 * torch.arange(8))) & 15
    expected = (nibbles * 16 ** (torch.arange(8) % 5)).reshape(8, 32).double()
    torch.testing.assert_close(result.double(), expected, rtol=0, atol=0)
    m, n, k = 1, 256, 2048
    kernel = gemv_uint4_words.compile(
        torch.empty(m, k, dtype=torch.float16, device="meta"),
        torch.empty(n, k // 8, dtype=torch.uint32, device="meta"),
        *meta_weights("uint4", n, k)[1:], target="cuda:sm_90a")
    ptx = kernel.get_kernel_source()
    assert "ld.global.v4" in ptx and "ld.local" not in ptx and "prmt" not in ptx


def test_format_weights_decode_as_packed(rng: torch.Generator) -> None:
    """The examples' packing (gemv.pack) is the one the kernels decode: each format's weights
    through the CPU decode kernel give its float32 weight."""
    n, k = 8, 256
    for fmt in ("uint4", "uint2"):
        args, weight = weights(fmt, n, k)
        codes = decode(args[0], dtype=T.uint4 if fmt == "uint4" else T.uint2)
        scales, zeros = (x.double().repeat_interleave(128, 1) for x in args[1:])
        torch.testing.assert_close((codes.double() - zeros) * scales, weight.double())
    args, weight = weights("mxfp4", n, k)
    values = decode(args[0], dtype=T.float4_e2m1fn).double()
    scales = decode(args[1], dtype=T.float8_e8m0fnu).double().repeat_interleave(32, 1)
    torch.testing.assert_close(values * scales, weight.double(), rtol=0, atol=0)


def odd_packed_row():
    @T.prim_func
    def main(B: T.Tensor((4, 3), T.int4), C: T.Tensor((4, 4), T.float32)):
        with T.Kernel(1, threads=32) as _:
            C[0, 0] = T.Cast(T.float32, B[0, 1])

    return main


def sub_byte_gemm(a_dtype: str = "int4", b_dtype: str = "int4", M: int = 64, N: int = 32,
                  K: int = 256, block_K: int = 64):
    """TileLang's int4 GEMM (examples/gemm_int4): packed A (M x K) and B (N x K) tiles, C = A B^T
    accumulated in int32 over a pipelined K loop."""

    @T.prim_func
    def main(A: T.Tensor((M, K), a_dtype), B: T.Tensor((N, K), b_dtype),
             C: T.Tensor((M, N), T.int32)):
        with T.Kernel(1, threads=128) as _:
            A_s = T.alloc_shared((M, block_K), a_dtype)
            B_s = T.alloc_shared((N, block_K), b_dtype)
            C_f = T.alloc_fragment((M, N), T.int32)
            T.clear(C_f)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[0, ko * block_K], A_s)
                T.copy(B[0, ko * block_K], B_s)
                T.gemm(A_s, B_s, C_f, transpose_B=True)
            T.copy(C_f, C[0, 0])

    return main


def random_operand(dtype: str, shape: tuple[int, int], rng: torch.Generator
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """(the kernel's argument, its integer values) for a tensor of `dtype`."""
    if dtype == "int8":
        values = torch.randint(-128, 128, shape, generator=rng, dtype=torch.int32)
        return values.to(torch.int8), values
    bits, low, high = DTYPES[dtype]
    values = torch.randint(low, high + 1, shape, generator=rng, dtype=torch.int32)
    return storage(pack(values, bits), dtype), values


@pytest.mark.parametrize(("a_dtype", "b_dtype"), [("int4", "int4"), ("uint4", "int8"),
                                                  ("int2", "uint2"), ("int8", "int4")])
def test_gemm_of_sub_byte_integers(a_dtype: str, b_dtype: str, rng: torch.Generator) -> None:
    M, N, K = 64, 32, 256
    a, a_values = random_operand(a_dtype, (M, K), rng)
    b, b_values = random_operand(b_dtype, (N, K), rng)
    c = torch.full((M, N), torch.iinfo(torch.int32).max, dtype=torch.int32)
    tilec.compile(sub_byte_gemm(a_dtype, b_dtype, M, N, K), target=TARGET)(a, b, c)
    assert torch.equal(c, (a_values.long() @ b_values.long().T).int())


@pytest.mark.parametrize(("arch", "instruction"), [("sm_90a", r"wgmma\.mma_async\S*\.s8\.s8"),
                                                   ("sm_80", r"mma\.sync\S*\.s8\.s8")])
def test_int4_gemm_runs_on_the_int8_tensor_cores(arch: str, instruction: str) -> None:
    ptx = tilec.compile(sub_byte_gemm(M=128, N=128), target=f"cuda:{arch}").get_kernel_source()
    assert re.search(instruction, ptx), f"no {instruction} in the {arch} PTX"
    assert "ld.local" not in ptx


def int4_by_float16_gemm():
    @T.prim_func
    def main(A: T.Tensor((16, 64), T.int4), B: T.Tensor((16, 64), T.float16),
             C: T.Tensor((16, 16), T.float32)):
        with T.Kernel(1, threads=128) as _:
            A_s = T.alloc_shared((16, 64), T.int4)
            B_s = T.alloc_shared((16, 64), T.float16)
            C_f = T.alloc_fragment((16, 16), T.float32)
            T.copy(A[0, 0], A_s)
            T.copy(B[0, 0], B_s)
            T.gemm(A_s, B_s, C_f, transpose_B=True)
            T.copy(C_f, C[0, 0])

    return main


@pytest.mark.parametrize(("factory", "message", "line"), [
    (odd_packed_row, "packs 2 elements to a byte along its last dimension", 0),
    (int4_by_float16_gemm, "tilec multiplies 4- and 2-bit integers by integers only", 10),
])
def test_rejected_at_the_line(factory, message: str, line: int) -> None:
    with pytest.raises(TilecError, match=message) as error:
        tilec.compile(factory(), target=TARGET)
    assert error.value.filename == __file__
    first = factory.__code__.co_firstlineno
    assert error.value.lineno >= first and (not line or error.value.lineno == first + line)
