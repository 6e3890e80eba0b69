"""Plain Python functions called in a kernel on kernel values, as TileLang's examples write them.

TileLang traces its kernels, so a helper such as a dequantizing `f_convert(nbit, val, pos,
dtype)` simply runs on the expressions it is given. tilec builds the helper's body at the call:
its arithmetic, bit operations, T / tvm.tirx calls, `if`s and asserts on compile-time values and
its return value become kernel code, and its errors name its own lines. Numerics on the CPU
target against exact integer / float64 torch references with fresh random inputs.
"""

from __future__ import annotations

import pytest
import torch
from conftest import poisoned, randn

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path
from tilec.tvm import tirx


def cpu(prim: T.PrimFunc) -> tilec.JITKernel:
    return tilec.compile(prim, target="cpu")


def packed_to_unsigned(storage_type: str = "uint", storage_nbit: int = 8):
    """A closure over the storage dtype, returning the converter (dequantize_gemm's style)."""
    storage_dtype = storage_type + str(storage_nbit)

    def f_convert(nbit: int, val: tirx.PrimExpr, pos: tirx.PrimExpr, dtype: str):
        assert val.dtype == storage_dtype, f"{val.dtype} != {storage_dtype}"
        mask = tirx.const((1 << nbit) - 1, storage_dtype)
        return ((val >> (pos * nbit).astype(storage_dtype)) & mask).astype(dtype)

    return f_convert


def test_closure_helper_unpacks_int4(rng: torch.Generator) -> None:
    n, per_byte = 64, 2

    @T.prim_func
    def main(B: T.Tensor((n // per_byte,), T.int8), C: T.Tensor((n,), T.float16)):
        with T.Kernel(1, threads=32) as _:
            for v in T.serial(n):
                C[v] = packed_to_unsigned("int", 8)(4, B[v // per_byte], v % per_byte,
                                                    dtype=T.float16)

    packed = torch.randint(-128, 128, (n // per_byte,), generator=rng, dtype=torch.int8)
    out = poisoned((n,), torch.float16)
    cpu(main)(packed, out)
    low, high = packed & 0x0F, (packed >> 4) & 0x0F  # int8's >> is arithmetic, as TileLang's
    expected = torch.stack((low, high), dim=-1).reshape(n).to(torch.float16)
    assert torch.equal(out, expected)


def u8_to_f4_to_f16(nbit: int, val: tirx.PrimExpr, pos: tirx.PrimExpr, dtype: str):
    """e2m1 in a nibble to float16 by moving its sign, exponent and mantissa bits."""
    assert nbit == 4
    assert dtype == T.float16
    assert val.dtype == T.uint8
    mask = tirx.const((1 << nbit) - 1, T.uint16)
    f4 = (val >> (pos.astype(T.uint16) * tirx.const(nbit, T.uint16))) & mask
    s = f4 >> tirx.const(3, T.uint16)
    e_f16 = ((f4 & tirx.const(6, T.uint16)) >> tirx.const(1, T.uint16)) + tirx.const(14,
                                                                                      T.uint16)
    m_f16 = f4 & tirx.const(1, T.uint16)
    bits = (e_f16 | (s << tirx.const(5, T.uint16))) << tirx.const(10, T.uint16) | \
        m_f16 << tirx.const(9, T.uint16)
    return tirx.reinterpret(T.float16, bits.astype(T.uint16))


def test_bit_twiddling_helper_matches_torch(rng: torch.Generator) -> None:
    rows, cols = 8, 32

    @T.prim_func
    def main(B: T.Tensor((rows, cols // 2), T.uint8), C: T.Tensor((rows, cols), T.float16)):
        with T.Kernel(1, threads=64) as _:
            B_local = T.alloc_fragment((rows, cols // 2), T.uint8)
            C_local = T.alloc_fragment((rows, cols), T.float16)
            T.copy(B, B_local)
            for i, j in T.Parallel(rows, cols):
                C_local[i, j] = u8_to_f4_to_f16(4, B_local[i, j // 2], j % 2, dtype=T.float16)
            T.copy(C_local, C)

    packed = torch.randint(0, 256, (rows, cols // 2), generator=rng, dtype=torch.uint8)
    out = poisoned((rows, cols), torch.float16)
    cpu(main)(packed, out)
    f4 = torch.stack((packed & 0x0F, packed >> 4), dim=-1).reshape(rows, cols).to(torch.int32)
    bits = ((((f4 & 6) >> 1) + 14) | ((f4 >> 3) << 5)) << 10 | (f4 & 1) << 9
    expected = bits.to(torch.int16).view(torch.float16)
    assert torch.equal(out.view(torch.int16), expected.view(torch.int16))


def order_preserving_bits(x):
    """topk_selector's key: the top byte of float16 bits ordered like the values."""
    hval = T.cast(x, T.float16)
    bits_uint = T.reinterpret(hval, T.uint16)
    bits_uint = T.if_then_else(x < 0, ~bits_uint & (0xFFFF), bits_uint | (0x8000))
    return bits_uint >> 8


def test_helper_with_if_then_else_and_reinterpret(rng: torch.Generator) -> None:
    n = 128

    @T.prim_func
    def main(X: T.Tensor((n,), T.float32), Y: T.Tensor((n,), T.int32)):
        with T.Kernel(1, threads=128) as _:
            for i in T.Parallel(n):
                Y[i] = T.cast(order_preserving_bits(X[i]), T.int32)

    x = randn((n,), torch.float32, rng) * 100
    out = poisoned((n,), torch.int32)
    cpu(main)(x, out)
    bits = x.to(torch.float16).view(torch.int16).to(torch.int32) & 0xFFFF
    expected = torch.where(x < 0, ~bits & 0xFFFF, bits | 0x8000) >> 8
    assert torch.equal(out, expected)
    keys = out[torch.argsort(x)]
    assert torch.all(keys[1:] >= keys[:-1])  # the point of the key: it sorts like x


def scaled(x, dtype, factor=2, *, shift=None):
    """Branches and returns on compile-time values; calls another helper."""
    if dtype == T.float32:
        return x * factor
    if shift is not None:
        return clipped(x << shift)
    return x + factor


def clipped(value):
    return T.min(value, 1000)


def test_compile_time_branches_returns_defaults_and_nested_helpers(
        rng: torch.Generator) -> None:
    n = 32

    @T.prim_func
    def main(A: T.Tensor((n,), T.float32), I: T.Tensor((n,), T.int32),  # noqa: E741
             F: T.Tensor((n,), T.float32), G: T.Tensor((n,), T.int32),
             H: T.Tensor((n,), T.int32)):
        with T.Kernel(1, threads=32) as _:
            for i in T.Parallel(n):
                F[i] = scaled(A[i], T.float32, factor=3)
                G[i] = scaled(I[i], T.int32, shift=4)
                H[i] = scaled(I[i], T.int32)

    a = randn((n,), torch.float32, rng)
    ints = torch.randint(-100, 100, (n,), generator=rng, dtype=torch.int32)
    f, g, h = poisoned((n,), torch.float32), poisoned((n,), torch.int32), poisoned((n,),
                                                                                   torch.int32)
    cpu(main)(a, ints, f, g, h)
    torch.testing.assert_close(f.double(), a.double() * 3, rtol=1e-6, atol=1e-6)
    assert torch.equal(g, torch.clamp_max(ints << 4, 1000))
    assert torch.equal(h, ints + 2)


def store_scaled(buffer, index, value, factor):
    """A helper with effects: it writes the caller's buffer; rebinding its parameter does not
    touch the caller's variable (arguments pass by value, as Python's)."""
    value = value * factor
    buffer[index] = value


def folded_bias():
    """T functions on constants only: still kernel code (TileLang traces it)."""
    return T.cast(0.5, T.float32) + T.max(1.0, 2.0)


def test_helpers_with_effects_and_on_constants(rng: torch.Generator) -> None:
    n = 16

    @T.prim_func
    def main(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32),
             C: T.Tensor((1,), T.float32)):
        with T.Kernel(1, threads=1) as _:
            total = T.alloc_var(T.float32, 0.0)
            for i in T.serial(n):
                store_scaled(B, i, A[i], 2.0)
                store_scaled(B, i, B[i] + folded_bias(), 1.0)
                total += A[i]
            store_scaled(C, 0, total, 1.0)
            C[0] = C[0] + total * 0.0 + T.if_then_else(total == C[0], 0.0, 1000.0)

    a = randn((n,), torch.float32, rng)
    b, c = poisoned((n,), torch.float32), poisoned((1,), torch.float32)
    cpu(main)(a, b, c)
    torch.testing.assert_close(b.double(), a.double() * 2 + 2.5, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(c.double(), a.double().sum().reshape(1), rtol=1e-5, atol=1e-5)


def fragment_layout_of(buffer):
    """A layout function (flash_attention's make_dq_layout style): a T.Fragment from a lambda
    over the buffer's shape."""
    rows, cols = buffer.shape
    return T.Fragment(buffer.shape, forward_thread_fn=lambda i, j: (i % 4) * 8 + j % 8,
                      forward_index_fn=lambda i, j: (i // 4) * (cols // 8) + j // 8) \
        if rows == 16 else None


def test_layout_function_feeds_annotate_layout(rng: torch.Generator) -> None:
    rows, cols = 16, 16

    @T.prim_func
    def main(A: T.Tensor((rows, cols), T.float32), B: T.Tensor((rows, cols), T.float32)):
        with T.Kernel(1, threads=32) as _:
            frag = T.alloc_fragment((rows, cols), T.float32)
            T.annotate_layout({frag: fragment_layout_of(frag)})
            T.copy(A, frag)
            for i, j in T.Parallel(rows, cols):
                frag[i, j] = frag[i, j] * 3.0
            T.copy(frag, B)

    compiled = tilec.compile(main, target="cpu")
    assert "#tile.linear" in compiled.asm["tile"]
    a = randn((rows, cols), torch.float32, rng)
    out = poisoned((rows, cols), torch.float32)
    compiled(a, out)
    torch.testing.assert_close(out.double(), a.double() * 3, rtol=1e-6, atol=1e-6)


def needs_uint8(val):
    assert val.dtype == T.uint8, f"expected uint8, got {val.dtype}"
    return val


doubled = lambda x: x * 2  # noqa: E731


def returns_in_a_kernel_branch(x):
    if x > 0:
        return x
    return -x


def test_errors_inside_helpers_name_their_lines() -> None:
    @T.prim_func
    def wrong_dtype(A: T.Tensor((4,), T.int32)):
        with T.Kernel(1, threads=4) as _:
            for i in T.Parallel(4):
                A[i] = needs_uint8(A[i])

    with pytest.raises(tilec.TilecError, match=r"expected uint8, got int32 \(in needs_uint8\(\), "
                       r"called at .*test_python_helpers_in_kernels.py:\d+\)") as raised:
        tilec.compile(wrong_dtype, target="cpu")
    assert raised.value.filename.endswith("test_python_helpers_in_kernels.py")
    assert raised.value.lineno == needs_uint8.__code__.co_firstlineno + 1

    @T.prim_func
    def data_dependent_return(A: T.Tensor((4,), T.int32)):
        with T.Kernel(1, threads=4) as _:
            for i in T.Parallel(4):
                A[i] = returns_in_a_kernel_branch(A[i])

    with pytest.raises(tilec.TilecError, match="returns outside the kernel loops and "
                                               "data-dependent branches"):
        tilec.compile(data_dependent_return, target="cpu")

    @T.prim_func
    def lambda_on_values(A: T.Tensor((4,), T.int32)):
        with T.Kernel(1, threads=4) as _:
            for i in T.Parallel(4):
                A[i] = doubled(A[i])

    with pytest.raises(tilec.TilecError, match="define the helper with def"):
        tilec.compile(lambda_on_values, target="cpu")

    @T.prim_func
    def wrong_arguments(A: T.Tensor((4,), T.int32)):
        with T.Kernel(1, threads=4) as _:
            for i in T.Parallel(4):
                A[i] = clipped(A[i], 3)

    with pytest.raises(tilec.TilecError, match=r"clipped\(\): too many positional"):
        tilec.compile(wrong_arguments, target="cpu")


def make_dq_layout(dQ):
    """flash_attention's backward: dQ's elements reordered to follow the 8x8 gemm fragment."""
    return T.Layout(dQ.shape, lambda b, s, h, d: [b, s // 8, h, d // 8, (d % 2),
                                                  4 * (s % 8) + (d % 8) // 2])


def test_tensor_layout_places_elements_as_tilelang(rng: torch.Generator) -> None:
    """A T.Layout on a tensor parameter: element (b, l, h, d) lives at the layout's image of
    it in the tensor's memory, row-major over the layout's output shape (TileLang's placement);
    element writes, atomic adds and T.copy boxes all go through it."""
    batch, seq, heads, dim, block = 2, 16, 3, 16, 8
    shape = (batch, seq, heads, dim)

    @T.prim_func
    def scatter(A: T.Tensor(shape, T.float32), dQ: T.Tensor(shape, T.float32)):
        with T.Kernel(seq // block, heads, batch, threads=64) as (bx, by, bz):
            T.annotate_layout({dQ: make_dq_layout(dQ)})
            for i, j in T.Parallel(block, dim):
                dQ[bz, bx * block + i, by, j] = A[bz, bx * block + i, by, j]
            for i, j in T.Parallel(block, dim):
                T.atomic_add(dQ[bz, bx * block + i, by, j], 1.0)

    @T.prim_func
    def gather(dQ: T.Tensor(shape, T.float32), out: T.Tensor(shape, T.float16)):
        with T.Kernel(seq // block, heads, batch, threads=64) as (bx, by, bz):
            T.annotate_layout({dQ: make_dq_layout(dQ)})
            T.copy(dQ[bz, bx * block:(bx + 1) * block, by, :],
                   out[bz, bx * block:(bx + 1) * block, by, :])

    a = randn(shape, torch.float32, rng)
    placed, out = poisoned(shape, torch.float32), poisoned(shape, torch.float16)
    cpu(scatter)(a, placed)
    cpu(gather)(placed, out)
    torch.testing.assert_close(out.double(), (a + 1).to(torch.float16).double(), rtol=0, atol=0)
    expected = torch.empty((batch, seq // 8, heads, dim // 8, 2, 32))
    b, s, h, d = torch.meshgrid(*(torch.arange(n) for n in shape), indexing="ij")
    expected[b, s // 8, h, d // 8, d % 2, 4 * (s % 8) + (d % 8) // 2] = a + 1
    assert torch.equal(placed.reshape(expected.shape), expected)  # TileLang's memory, exactly
    if ptxas_path() is not None:  # the same kernels assemble for the GPU
        for kernel in (scatter, gather):
            assert tilec.compile(kernel, target="cuda:sm_90a").artifact.binary_kind == "cubin"


@pytest.mark.parametrize(("layout", "message"), [
    (T.Layout((8, 8), lambda i, j: [i, 2 * j]),
     r"places its 64 elements in a \[8, 15\] box of 120"),
    (T.Layout((4, 8), lambda i, j: [i, j]), r"a T.Layout over \[4, 8\] for tensor 'A'"),
    (T.Layout((8, 8), lambda i, j: [i, j if i else 0]), "cannot be bounded"),
])
def test_tensor_layout_rejects(layout: T.Layout, message: str) -> None:
    @T.prim_func
    def main(A: T.Tensor((8, 8), T.float32)):
        with T.Kernel(1, threads=8) as _:
            T.annotate_layout({A: layout})
            A[0, 0] = 1.0

    with pytest.raises(tilec.TilecError, match=message):
        tilec.compile(main, target="cpu")
