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


# ---------------------------------------------------------------------------------------------
# threads of a block


@T.prim_func
def lane_exchange(A: T.Tensor((4, 32), T.float16), B: T.Tensor((4, 32), T.float32),
                  C: T.Tensor((4, 2), T.float64)):
    with T.Kernel(2, threads=(32, 4)) as bx:
        tx = T.get_thread_binding()
        ty = T.thread_binding(0, 4, thread="threadIdx.y")
        s = T.alloc_shared((4, 32), T.float32)
        x = A[ty, tx]
        s[ty, tx] = (T.shfl_xor(x, 3, width=8) + T.shfl_down(x, 1) + T.shfl_up(x, 2)
                     + T.shfl_sync(x, 5))
        T.sync_threads()
        B[ty, tx] = T.warp_reduce_sum(s[ty, 31 - tx]) + T.warp_reduce_max(T.cast(tx, T.int8))
        T.sync_threads(1, 64)
        if tx == 0:
            C[ty, T.get_block_binding()] = T.shfl_down(T.cast(B[ty, 0], T.float64), 4)


@needs_ptxas
@pytest.mark.parametrize("arch", CUDA_ARCHES)
def test_thread_intrinsics_assemble(arch: str) -> None:
    """T.get_thread_binding, T.thread_binding, T.get_block_binding, T.sync_threads (plain and
    named), T.shfl_xor/down/up/sync and T.warp_reduce_*: PTX that ptxas assembles."""
    kernel = tilec.compile(lane_exchange, target=f"cuda:{arch}")
    assert kernel.artifact.binary_kind == "cubin"
    ptx = kernel.get_kernel_source()
    # width 8: lane groups of 8 in the c operand ((32 - 8) << 8 | 31), the whole warp's mask
    assert "shfl.sync.bfly.b32" in ptx and ", 3, 6175, -1;" in ptx
    for kind in ("down", "up", "idx"):
        assert f"shfl.sync.{kind}.b32" in ptx
    assert "bar.sync \t0;" in ptx and "bar.sync \t1, 64;" in ptx
    assert "%tid.y" in ptx and "%ctaid.x" in ptx
    assert ptx.count("shfl.sync.bfly.b32") >= 1 + 5 + 5  # xor + two 5-step butterflies


def test_thread_intrinsics_rejected_on_cpu() -> None:
    with pytest.raises(tilec.CompileError, match=r"test_language_names.py:\d+: a thread index "
                       r"\(T.get_thread_binding, T.thread_binding\) has no meaning on the CPU"):
        tilec.compile(lane_exchange, target="cpu")


def test_thread_binding_checks_the_block() -> None:
    @T.prim_func
    def wrong_extent(A: T.Tensor((64,), T.float32)):
        with T.Kernel(1, threads=64) as _:
            tx = T.thread_binding(0, 128, thread="threadIdx.x")
            A[tx] = 1.0

    with pytest.raises(tilec.TilecError, match="over 128 threads along threadIdx.x, but the "
                                               "block has 64"):
        tilec.compile(wrong_extent, target="cpu")

    @T.prim_func
    def wrong_mask(A: T.Tensor((32,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            A[0] = T.shfl_xor(A[0], 1, mask=0xFFFF)

    with pytest.raises(tilec.TilecError, match="mask must be 0xFFFFFFFF"):
        tilec.compile(wrong_mask, target="cpu")


def test_sync_threads_and_bindings_on_cpu(rng: torch.Generator) -> None:
    """A barrier between a shared write and a transposed read; T.get_block_binding; a thread
    index along an axis of extent 1 is 0, which the CPU runs too."""
    n = 16

    @T.prim_func
    def main(A: T.Tensor((3, n, n), T.float32), B: T.Tensor((3, n, n), T.float32)):
        with T.Kernel(3, threads=(64, 1)) as bx:
            s = T.alloc_shared((n, n), T.float32)
            for i, j in T.Parallel(n, n):
                s[i, j] = A[T.get_block_binding(0), i, j] * 2.0
            T.sync_threads()
            ty = T.get_thread_binding(1)
            for i, j in T.Parallel(n, n):
                B[bx + ty, i, j] = s[j, i]

    a = randn((3, n, n), torch.float32, rng)
    b = poisoned((3, n, n), torch.float32)
    cpu(main)(a, b)
    assert_close(b, a.double().transpose(1, 2) * 2, torch.float32)


# ---------------------------------------------------------------------------------------------
# integer and bit arithmetic


def test_floordiv_floormod(rng: torch.Generator) -> None:
    """Floor semantics as Python's and TileLang's: negative operands on either side, `%` too."""
    n = 128

    @T.prim_func
    def main(A: T.Tensor((n,), T.int32), B: T.Tensor((n,), T.int32), X: T.Tensor((n,), T.float32),
             Q: T.Tensor((n,), T.int32), R: T.Tensor((n,), T.int32), M: T.Tensor((n,), T.int32),
             G: T.Tensor((n,), T.float32), H: T.Tensor((n,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            for i in T.Parallel(n):
                Q[i] = T.floordiv(A[i], B[i])
                R[i] = T.floormod(A[i], B[i])
                M[i] = A[i] % B[i] + T.floormod(-7, 3) * 100
                G[i] = T.floormod(X[i], -1.5)
                H[i] = T.floordiv(X[i], 0.75)

    a = torch.randint(-100, 100, (n,), generator=rng, dtype=torch.int32)
    signs = torch.randint(0, 2, (n,), generator=rng, dtype=torch.int32) * 2 - 1
    b = torch.randint(1, 10, (n,), generator=rng, dtype=torch.int32) * signs
    x = randn((n,), torch.float32, rng) * 5
    q, r, m = (poisoned((n,), torch.int32) for _ in range(3))
    g, h = poisoned((n,), torch.float32), poisoned((n,), torch.float32)
    cpu(main)(a, b, x, q, r, m, g, h)
    floor_q = torch.div(a, b, rounding_mode="floor")
    assert torch.equal(q, floor_q) and torch.equal(r, a - floor_q * b)
    assert torch.equal(m, r + 200)  # Python: -7 % 3 == 2
    assert_close(g, torch.remainder(x.double(), -1.5), torch.float32)
    assert torch.equal(h, torch.floor(x.double() / 0.75).float())


def test_cast_and_reinterpret(rng: torch.Generator) -> None:
    """T.Cast(dtype, x) converts; T.reinterpret(x, dtype) (and the older (dtype, x)) keeps the
    bits: float32 <-> uint32 / int32, float16 <-> uint16."""
    n = 64

    @T.prim_func
    def main(X: T.Tensor((n,), T.float32), H: T.Tensor((n,), T.float16),
             U: T.Tensor((n,), T.uint32), C: T.Tensor((n,), T.int32),
             Y: T.Tensor((n,), T.float32), V: T.Tensor((n,), T.uint16)):
        with T.Kernel(1, threads=32) as _:
            for i in T.Parallel(n):
                U[i] = T.reinterpret(X[i], T.uint32)
                C[i] = T.Cast("int32", X[i] * 10.0)
                bits = T.reinterpret("uint32", X[i]) & T.uint32(0x7FFFFFFF)
                Y[i] = T.reinterpret(bits, "float32")
                V[i] = T.reinterpret(H[i], T.uint16)

    x = randn((n,), torch.float32, rng) * 3
    h = randn((n,), torch.float16, rng)
    u, c = poisoned((n,), torch.int32).to(torch.uint32), poisoned((n,), torch.int32)
    y, v = poisoned((n,), torch.float32), poisoned((n,), torch.int16).to(torch.uint16)
    cpu(main)(x, h, u, c, y, v)
    assert torch.equal(u.view(torch.int32), x.view(torch.int32))
    assert torch.equal(c, (x * 10.0).to(torch.int32))  # toward zero, as C casts
    assert torch.equal(y, x.abs())
    assert torch.equal(v.view(torch.int16), h.view(torch.int16))
