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


def test_tfloat32_and_sub_byte_names(rng: torch.Generator) -> None:
    """T.tfloat32 operands are float32 tensors; T.int4 / T.float4_e2m1fn compare and map as
    names (their buffers: test_sub_byte_types.py)."""
    assert T.tfloat32.as_torch() is torch.float32 and T.tfloat32.interchangeable(T.float32)
    assert {T.int4: "i4"}["int4"] == "i4" and T.dtype("float4_e2m1fn").bits == 4

    @T.prim_func
    def tf32_gemm(A: T.Tensor((32, 16), T.tfloat32), B: T.Tensor((16, 32), T.float32),
                  C: T.Tensor((32, 32), T.float32)):
        with T.Kernel(1, threads=128) as _:
            a = T.alloc_shared((32, 16), T.tfloat32)
            b = T.alloc_shared((16, 32), T.tfloat32)
            c = T.alloc_fragment((32, 32), T.float32)
            T.copy(A, a)
            T.copy(B, b)
            T.gemm(a, b, c, clear_accum=True)
            T.copy(c, C)

    a, b = randn((32, 16), torch.float32, rng), randn((16, 32), torch.float32, rng)
    c = poisoned((32, 32), torch.float32)
    cpu(tf32_gemm)(a, b, c)
    assert_close(c, a.double() @ b.double(), torch.float32)


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
    with T.Kernel(2, threads=(32, 4)) as _:
        tx = T.get_thread_binding()
        ty = T.thread_binding(0, 4, thread="threadIdx.y")
        s = T.alloc_shared((4, 32), T.float32)
        x = A[ty, tx]
        s[ty, tx] = (T.shfl_xor(x, 3, width=8) + T.shfl_down(x, 1) + T.shfl_up(x, 2)
                     + T.shfl_sync(x, 5))
        T.sync_threads()
        B[ty, tx] = T.warp_reduce_sum(s[ty, 31 - tx]) + T.warp_reduce_max(T.cast(tx, T.int8))
        T.sync_threads(1, 64)
        # the whole warp shuffles (a shuffle under `tx == 0` would read lane 4, which does not
        # run it: name-live-lanes' error), and one lane stores
        down = T.shfl_down(T.cast(B[ty, 0], T.float64), 4)
        if tx == 0:
            C[ty, T.get_block_binding()] = down


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


# ---------------------------------------------------------------------------------------------
# forms of names tilec had


@T.prim_func
def gemm_cleared_at_run_time(A: T.Tensor((64, 96), T.float16), B: T.Tensor((96, 32), T.float16),
                             C: T.Tensor((64, 32), T.float32)):
    with T.Kernel(1, threads=128) as _:
        a = T.alloc_shared((64, 32), T.float16, "shared.dyn")
        b = T.alloc_shared((32, 32), T.float16, scope="shared")
        c = T.alloc_fragment((64, 32), T.float32, "local.fragment")
        for ko in T.Pipelined(3, num_stages=2):
            T.copy(A[0, ko * 32], a)
            T.copy(B[ko * 32, 0], b)
            T.gemm(a, b, c, clear_accum=(ko == 0), k_pack=1)
        T.copy(c, C)


def test_gemm_clear_accum_at_run_time(rng: torch.Generator) -> None:
    """clear_accum=(ko == 0): C is A @ B although the fragment starts uninitialized; the third
    positional scope of alloc_shared / alloc_fragment."""
    a, b = randn((64, 96), torch.float16, rng), randn((96, 32), torch.float16, rng)
    c = poisoned((64, 32), torch.float32)
    cpu(gemm_cleared_at_run_time)(a, b, c)
    assert_close(c, a.double() @ b.double(), torch.float16)


@needs_ptxas
@pytest.mark.parametrize("arch", CUDA_ARCHES)
def test_gemm_clear_accum_at_run_time_assembles(arch: str) -> None:
    kernel = tilec.compile(gemm_cleared_at_run_time, target=f"cuda:{arch}")
    assert kernel.artifact.binary_kind == "cubin"


def test_gemm_options_checked() -> None:
    @T.prim_func
    def with_barrier(A: T.Tensor((16, 16), T.float16), C: T.Tensor((16, 16), T.float32)):
        with T.Kernel(1, threads=32) as _:
            a = T.alloc_shared((16, 16), T.float16)
            c = T.alloc_fragment((16, 16), T.float32)
            T.gemm(a, a, c, mbar=a)
            T.copy(c, C)

    with pytest.raises(tilec.TilecError, match=r"test_language_names.py:\d+: T.gemm\(mbar=...\) "
                                               "is for sm_100"):
        tilec.compile(with_barrier, target="cpu")


def test_scalar_copy_alloc_var_forms_and_scopes(rng: torch.Generator) -> None:
    """T.copy(A[i], B[j]) copies one element (converting it); alloc_var's TileLang forms."""
    n = 8

    @T.prim_func
    def main(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float16),
             C: T.Tensor((3,), T.int32)):
        with T.Kernel(1, threads=32) as _:
            local = T.alloc_local((2,), T.float32, "local")
            first = T.alloc_var(T.int32, 5)
            second = T.alloc_var(T.int32, "local.var")
            third = T.alloc_var(T.int32, 7, "local.var")
            second = 6
            for i in T.serial(n):
                T.copy(A[i], local[i % 2])
                T.copy(local[i % 2], B[n - 1 - i])
            C[0] = first
            C[1] = second
            C[2] = third

    a = randn((n,), torch.float32, rng)
    b, c = poisoned((n,), torch.float16), poisoned((3,), torch.int32)
    cpu(main)(a, b, c)
    assert torch.equal(b, a.flip(0).half()) and c.tolist() == [5, 6, 7]


def test_bad_scopes() -> None:
    @T.prim_func
    def main(A: T.Tensor((8,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            x = T.alloc_fragment((8,), T.float32, "local.tmem")
            T.copy(A, x)

    with pytest.raises(tilec.TilecError, match="unknown buffer scope 'local.tmem'"):
        tilec.compile(main, target="cpu")

    @T.prim_func
    def workspace(A: T.Tensor((8,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            w = T.alloc_global((8,), T.float32)
            T.copy(A, w)

    with pytest.raises(tilec.TilecError, match="T.alloc_global makes a workspace of the whole "
                                               "kernel function: call it before or between"):
        tilec.compile(workspace, target="cpu")


def test_break_and_continue(rng: torch.Generator) -> None:
    """break ends a T.serial / while loop, continue its iteration, as Python's do."""
    n = 32

    @T.prim_func
    def main(A: T.Tensor((4, n), T.int32), B: T.Tensor((4, 3), T.int32)):
        with T.Kernel(4, threads=32) as bx:
            total = T.alloc_var(T.int32, 0)
            count = T.alloc_var(T.int32, 0)
            j = T.alloc_var(T.int32, 0)
            for i in T.serial(n):
                if A[bx, i] < 0:
                    break
                if A[bx, i] % 2 == 1:
                    continue
                total += A[bx, i]
            while j < n:
                j += 1
                if A[bx, j - 1] > 50:
                    count += 1
                    if count >= 2:
                        break
            B[bx, 0] = total
            B[bx, 1] = count
            B[bx, 2] = j

    a = torch.randint(0, 100, (4, n), generator=rng, dtype=torch.int32)
    a[1, 5], a[2, 0] = -1, -3
    b = poisoned((4, 3), torch.int32)
    cpu(main)(a, b)
    for row, values in enumerate(a.tolist()):
        total = 0
        for v in values:
            if v < 0:
                break
            if v % 2 == 1:
                continue
            total += v
        count = j = 0
        while j < n:
            j += 1
            if values[j - 1] > 50:
                count += 1
                if count >= 2:
                    break
        assert b[row].tolist() == [total, count, j]


def test_break_where_it_cannot_be() -> None:
    @T.prim_func
    def in_parallel(A: T.Tensor((8,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            for i in T.Parallel(8):
                if A[i] < 0:
                    break
                A[i] = 0.0

    with pytest.raises(tilec.TilecError, match="break is not allowed in T.Parallel"):
        tilec.compile(in_parallel, target="cpu")

    @T.prim_func
    def in_pipelined(A: T.Tensor((8,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            for k in T.Pipelined(8, num_stages=2):
                if A[k] < 0:
                    continue
                A[k] = 0.0

    with pytest.raises(tilec.TilecError, match="continue is only allowed in T.serial, T.unroll, "
                                               "range and while loops"):
        tilec.compile(in_pipelined, target="cpu")


# ---------------------------------------------------------------------------------------------
# scans


@T.prim_func
def prefix_sums(A: T.Tensor((8, 32), T.float16), B: T.Tensor((8, 32), T.float32),
                C: T.Tensor((8, 32), T.float16), D: T.Tensor((32,), T.float32)):
    with T.Kernel(1, threads=128) as _:
        s = T.alloc_shared((8, 32), T.float16)
        f = T.alloc_fragment((8, 32), T.float32)
        d = T.alloc_shared((32,), T.float32)
        T.copy(A, s)
        T.copy(A, f)
        T.cumsum(f, dim=1)
        T.copy(f, B)
        T.cumsum(src=s, dim=0, reverse=True)
        T.copy(s, C)
        T.copy(A[0, :], d)
        T.cumsum(d, d, dim=-1)
        T.copy(d, D)


def test_cumsum(rng: torch.Generator) -> None:
    """A fragment along its rows, a shared buffer reversed down its columns, a 1-d one."""
    a = randn((8, 32), torch.float16, rng)
    b, c, d = poisoned((8, 32), torch.float32), poisoned((8, 32), torch.float16), poisoned(
        (32,), torch.float32)
    cpu(prefix_sums)(a, b, c, d)
    assert_close(b, a.double().cumsum(1), torch.float32)
    assert_close(c, a.double().flip(0).cumsum(0).flip(0), torch.float16)
    assert_close(d, a[0].double().cumsum(0), torch.float32)


@needs_ptxas
@pytest.mark.parametrize("arch", CUDA_ARCHES)
def test_cumsum_assembles(arch: str) -> None:
    assert tilec.compile(prefix_sums, target=f"cuda:{arch}").artifact.binary_kind == "cubin"


# ---------------------------------------------------------------------------------------------
# bool buffers, references, votes, shifts, evaluate


@T.prim_func
def masks(X: T.Tensor((64,), T.float32), Mask: T.Tensor((64,), T.bool),
          Y: T.Tensor((64,), T.float32), Out: T.Tensor((64,), "bool"),
          Seen: T.Tensor((1,), T.int32)):
    with T.Kernel(1, threads=32) as _:
        staged = T.alloc_shared((64,), T.bool)
        keep = T.alloc_fragment((64,), T.bool)
        seen = T.alloc_var(T.bool, False)
        T.copy(Mask, staged)
        for i in T.Parallel(64):
            keep[i] = staged[i] and X[i] > 0
        for i in T.Parallel(64):
            Y[i] = T.if_then_else(keep[i], X[i], 0.0)
            Out[i] = not keep[i]
        for i in T.serial(64):
            if Mask[i]:
                seen = True
        Seen[0] = T.if_then_else(seen, 1, 0)


def test_bool_tensors_vars_and_buffers(rng: torch.Generator) -> None:
    """T.bool buffers hold a byte each, as torch's bool tensors: a mask tensor in, through
    shared memory into a bool fragment, a bool var, a bool tensor out."""
    x = randn((64,), torch.float32, rng)
    mask = torch.rand((64,), generator=rng) < 0.5
    y, out = poisoned((64,), torch.float32), torch.zeros((64,), dtype=torch.bool)
    seen = poisoned((1,), torch.int32)
    cpu(masks)(x, mask, y, out, seen)
    keep = mask & (x > 0)
    assert torch.equal(y, torch.where(keep, x, 0.0)) and torch.equal(out, ~keep)
    assert seen.item() == int(mask.any())


@needs_ptxas
@pytest.mark.parametrize("arch", CUDA_ARCHES)
def test_bool_buffers_assemble(arch: str) -> None:
    assert tilec.compile(masks, target=f"cuda:{arch}").artifact.binary_kind == "cubin"


@T.macro
def collatz_steps(x, steps: T.Ref):
    if x % 2 == 0:
        steps = steps + x // 2
    else:
        steps += 3 * x + 1


def test_ref_parameters(rng: torch.Generator) -> None:
    """A T.Ref parameter writes the caller's buffer element or T.alloc_var variable."""
    n = 16

    @T.prim_func
    def main(A: T.Tensor((n,), T.int32), B: T.Tensor((n,), T.int32)):
        with T.Kernel(1, threads=1) as _:
            total = T.alloc_var(T.int32, 0)
            for i in T.serial(n):
                B[i] = 0
                collatz_steps(A[i], B[i])
                collatz_steps(A[i], total)
            B[0] = B[0] + total * 0 + T.shift_left(total, 1) - T.shift_right(total << 1, 1) \
                - total
            T.evaluate(0)

    a = torch.randint(1, 100, (n,), generator=rng, dtype=torch.int32)
    b = poisoned((n,), torch.int32)
    cpu(main)(a, b)
    steps = [v // 2 if v % 2 == 0 else 3 * v + 1 for v in a.tolist()]
    total = sum(steps)
    assert b.tolist() == [steps[0] + 2 * total - total - total] + steps[1:]


def test_ref_needs_a_place() -> None:
    @T.prim_func
    def main(A: T.Tensor((4,), T.int32)):
        with T.Kernel(1, threads=1) as _:
            collatz_steps(A[0], A[1] + 1)

    with pytest.raises(tilec.TilecError, match="a T.Ref parameter takes a T.alloc_var variable "
                                               "or a buffer element"):
        tilec.compile(main, target="cpu")


@T.prim_func
def votes(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.int32)):
    with T.Kernel(1, threads=64) as _:
        tx = T.get_thread_binding()
        B[tx] = T.any_sync(A[tx] < 0.0) + 2 * T.all_sync(A[tx] > -10.0)


@needs_ptxas
@pytest.mark.parametrize("arch", CUDA_ARCHES)
def test_warp_votes_assemble(arch: str) -> None:
    ptx = tilec.compile(votes, target=f"cuda:{arch}").get_kernel_source()
    assert "vote.sync.any.pred" in ptx and "vote.sync.all.pred" in ptx


def test_unknown_names() -> None:
    """A name tilec lacks: an AttributeError saying why outside kernels (hasattr works), a
    TilecError at its line inside one; sm_100-only names name the arch."""
    assert not hasattr(T, "alloc_tmem") and hasattr(T, "get_thread_binding")
    with pytest.raises(AttributeError, match="T.tcgen05_gemm needs sm_100"):
        T.tcgen05_gemm  # noqa: B018
    with pytest.raises(AttributeError, match="T.no_such_thing is not implemented by tilec"):
        T.no_such_thing  # noqa: B018

    @T.prim_func
    def blackwell(A: T.Tensor((128, 128), T.float32)):
        with T.Kernel(1, threads=128) as _:
            acc = T.alloc_tmem((128, 128), T.float32)
            T.copy(acc, A)

    with pytest.raises(tilec.TilecError, match=r"test_language_names.py:\d+: T.alloc_tmem needs "
                                               "sm_100"):
        tilec.compile(blackwell, target="cuda:sm_90a")

    @T.prim_func
    def tvm_allreduce(A: T.Tensor((32,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            with T.attr(0, "reduce_scope", 0):
                T.evaluate(0)

    with pytest.raises(tilec.TilecError, match="reduce_scope', ...\\) takes a T.comm_reducer"):
        tilec.compile(tvm_allreduce, target="cpu")


def test_fill_regions_and_copy_hints(rng: torch.Generator) -> None:
    """T.fill / T.clear of an element or a sliced region; T.copy's TileLang hints accepted."""

    @T.prim_func
    def main(A: T.Tensor((4, 8), T.float32), B: T.Tensor((4, 8), T.float32),
             C: T.Tensor((2,), T.int32)):
        with T.Kernel(1, threads=32) as _:
            s = T.alloc_shared((4, 8), T.float32)
            count = T.alloc_shared((2,), T.int32)
            T.copy(A, s, coalesced_width=4, disable_tma=True, eviction_policy="evict_first")
            T.fill(s[1, 2:6], -1.0)
            T.clear(s[3, :])
            T.fill(count[0], 7)
            T.clear(count[1])
            T.copy(s, B)
            T.copy(count, C)

    a = randn((4, 8), torch.float32, rng)
    b, c = poisoned((4, 8), torch.float32), poisoned((2,), torch.int32)
    cpu(main)(a, b, c)
    expected = a.clone()
    expected[1, 2:6], expected[3, :] = -1.0, 0.0
    assert torch.equal(b, expected) and c.tolist() == [7, 0]


def test_is_and_is_not(rng: torch.Generator) -> None:
    """`x is None` / `x is not None` on the kernel's Python values, as TileLang's examples test
    optional arguments."""

    def make(window: int | None) -> T.PrimFunc:
        @T.prim_func
        def main(A: T.Tensor((8,), T.float32), B: T.Tensor((8,), T.float32)):
            with T.Kernel(1, threads=32) as _:
                for i in T.Parallel(8):
                    if window is not None and i >= window:
                        B[i] = 0.0
                    else:
                        B[i] = A[i] if window is None else A[i] * 2.0

        return main

    a = randn((8,), torch.float32, rng)
    for window, expected in ((None, a), (3, torch.cat([a[:3] * 2, torch.zeros(5)]))):
        b = poisoned((8,), torch.float32)
        cpu(make(window))(a, b)
        assert torch.equal(b, expected)


def test_dp4a_sums_four_int8_products(rng: torch.Generator) -> None:
    """T.dp4a(A[i], B[j], C[k]) (TileLang's BitNet decode): C[k] += four int8 products, in
    int32, at offsets the kernel computes."""

    @T.prim_func
    def main(A: T.Tensor((8, 16), T.int8), B: T.Tensor((16,), T.int8),
             C: T.Tensor((8,), T.int32)):
        with T.Kernel(1, threads=32) as _:
            acc = T.alloc_local((1,), T.int32)
            for row in T.serial(8):
                acc[0] = C[row]
                for ki in T.serial(4):
                    T.dp4a(A[row, ki * 4], B[ki * 4], acc[0])
                C[row] = acc[0]

    kernel = tilec.compile(main, target="cpu")
    a = torch.randint(-128, 128, (8, 16), generator=rng, dtype=torch.int8)
    b = torch.randint(-128, 128, (16,), generator=rng, dtype=torch.int8)
    c = torch.randint(-1000, 1000, (8,), generator=rng, dtype=torch.int32)
    expected = c.long() + (a.long() * b.long()).sum(1)
    kernel(a, b, c)
    assert torch.equal(c.long(), expected)


@needs_ptxas
def test_tvm_warp_shuffle_is_shfl_sync() -> None:
    """TVM's T.tvm_warp_shuffle(mask, value, lane, width, warp_size) (TileLang's Hadamard
    example): shfl.sync.idx with the group of `width` lanes in its c operand."""

    @T.prim_func
    def main(A: T.Tensor((32,), T.float32), B: T.Tensor((32,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            tx = T.get_thread_binding()
            B[tx] = T.tvm_warp_shuffle(0xFFFFFFFF, A[tx], (tx ^ 1) % 32, 16, 32)

    ptx = tilec.compile(main, target="cuda:sm_90a").get_kernel_source()
    assert "shfl.sync.idx.b32" in ptx and ", 4127, -1;" in ptx  # (32 - 16) << 8 | 31
