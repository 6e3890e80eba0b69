"""Kernels written as TileLang users write them, run on the CPU target, checked against torch.

Inputs are fresh random normals; outputs the test passes in are NaN-poisoned first (outputs the
kernel object allocates come from torch.empty). References are computed in float64.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import assert_close, poisoned, randn, suite_target

import tilec
import tilec.language as T

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from quickstart import matmul as quickstart_matmul  # noqa: E402

TARGET = suite_target()
TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


@tilec.jit(target=TARGET)
def matmul(A, B, block_M=32, block_N=32, block_K=16, dtype=T.float16):
    M, N, K = T.const("M, N, K")
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


@pytest.mark.parametrize("shape", [(64, 64, 32), (100, 70, 50), (33, 129, 17)])
def test_quickstart_example(shape: tuple[int, int, int], rng: torch.Generator) -> None:
    """examples/quickstart.py verbatim (its 128x128x32 blocks), ragged shapes included."""
    M, N, K = shape
    a, b = randn((M, K), torch.float16, rng), randn((K, N), torch.float16, rng)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TILEC_TARGET", TARGET)
        c = quickstart_matmul(a, b)
    assert c.shape == (M, N) and c.dtype == torch.float16
    assert_close(c, a.double() @ b.double(), torch.float16)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("shape", [(64, 64, 32), (96, 80, 48), (70, 45, 37), (1, 33, 100)])
def test_matmul_dtypes_and_ragged_shapes(dtype: str, shape: tuple[int, int, int],
                                         rng: torch.Generator) -> None:
    M, N, K = shape
    torch_dtype = TORCH_DTYPES[dtype]
    a, b = randn((M, K), torch_dtype, rng), randn((K, N), torch_dtype, rng)
    c = matmul(a, b, dtype=dtype)
    assert c.dtype == torch_dtype
    assert_close(c, a.double() @ b.double(), torch_dtype)


def test_matmul_kernel_is_cached_per_shape(rng: torch.Generator) -> None:
    a, b = randn((40, 24), torch.float32, rng), randn((24, 8), torch.float32, rng)
    first = matmul.compile(a, b, dtype=T.float32)
    again = matmul.compile(a, b, dtype=T.float32)
    assert first.artifact is again.artifact
    other = matmul.compile(randn((48, 24), torch.float32, rng), b, dtype=T.float32)
    assert other.artifact is not first.artifact


def gemm_bias_relu(M, N, K, block_M=32, block_N=32, block_K=16, dtype="float16"):
    """C = relu(A @ B^T + bias), B stored (N, K): TileLang's classic prim_func style."""

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), bias: T.Tensor((N,), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float")
            bias_local = T.alloc_fragment((block_N,), dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(bias[bx * block_N], bias_local)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j] + bias_local[j], 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("shape", [(64, 64, 64), (50, 70, 40)])
def test_gemm_transpose_b_bias_relu(dtype: str, shape: tuple[int, int, int],
                                    rng: torch.Generator) -> None:
    M, N, K = shape
    torch_dtype = TORCH_DTYPES[dtype]
    kernel = tilec.compile(gemm_bias_relu(M, N, K, dtype=dtype), out_idx=[-1], target=TARGET)
    a, b = randn((M, K), torch_dtype, rng), randn((N, K), torch_dtype, rng)
    bias = randn((N,), torch_dtype, rng)
    c = kernel(a, b, bias)
    reference = torch.relu(a.double() @ b.double().T + bias.double())
    assert_close(c, reference, torch_dtype)


@tilec.jit(out_idx=[-1], target=TARGET)
def add_row_bias(M, N, block_M=16, block_N=32, dtype="float32"):
    """C = A + b[None, :], with element access guarded at the ragged edges."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), b: T.Tensor((N,), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                row, col = by * block_M + i, bx * block_N + j
                if row < M and col < N:
                    C[row, col] = A[row, col] + b[col]

    return main


@pytest.mark.parametrize("shape", [(32, 64), (45, 70)])
def test_elementwise_broadcast(shape: tuple[int, int], rng: torch.Generator) -> None:
    M, N = shape
    a, b = randn((M, N), torch.float32, rng), randn((N,), torch.float32, rng)
    c = add_row_bias(M, N)(a, b)
    assert_close(c, a.double() + b.double()[None, :], torch.float32)


def outer_scale(M, N, block_M=16, block_N=16):
    """C = A * x[:, None] * y[None, :] through fragments (copies guard the edges)."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), x: T.Tensor((M,), "float32"),
             y: T.Tensor((N,), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=64) as (bx, by):
            tile_a = T.alloc_fragment((block_M, block_N), "float32")
            x_local = T.alloc_fragment((block_M,), "float32")
            y_local = T.alloc_fragment((block_N,), "float32")
            T.copy(A[by * block_M, bx * block_N], tile_a)
            T.copy(x[by * block_M:(by + 1) * block_M], x_local)
            T.copy(y[bx * block_N], y_local)
            for i, j in T.Parallel(block_M, block_N):
                tile_a[i, j] = tile_a[i, j] * x_local[i] * y_local[j]
            T.copy(tile_a, C[by * block_M, bx * block_N])

    return main


def test_elementwise_broadcast_two_sides_with_poisoned_output(rng: torch.Generator) -> None:
    M, N = 40, 23
    kernel = tilec.compile(outer_scale(M, N), target=TARGET)
    a, x, y = randn((M, N), torch.float32, rng), randn((M,), torch.float32, rng), randn(
        (N,), torch.float32, rng)
    c = poisoned((M, N), torch.float32)
    assert kernel(a, x, y, c) is None
    assert_close(c, a.double() * x.double()[:, None] * y.double()[None, :], torch.float32)


def softmax(M, N, block_M=8, dtype="float32"):
    """Row softmax: reduce_max, exp, reduce_sum, scale; one block owns block_M full rows."""

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), "float32")
            row_max = T.alloc_fragment((block_M,), "float32")
            row_sum = T.alloc_fragment((block_M,), "float32")
            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp(x[i, j] - row_max[i])
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bx * block_M, 0])

    return main


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape", [(16, 64), (21, 50)])
def test_row_softmax(dtype: str, shape: tuple[int, int], rng: torch.Generator) -> None:
    M, N = shape
    torch_dtype = TORCH_DTYPES[dtype]
    kernel = tilec.compile(softmax(M, N, dtype=dtype), out_idx=[1], target=TARGET)
    x = (randn((M, N), torch.float32, rng) * 3).to(torch_dtype)
    y = kernel(x)
    assert_close(y, torch.softmax(x.double(), dim=1), torch_dtype)


def column_sum(M, N, block_M=16, block_N=16):
    """out[j] = sum_i A[i, j]: each block reduces its tile, then atomically adds its partials."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), out: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            tile_a = T.alloc_fragment((block_M, block_N), "float32")
            partial = T.alloc_fragment((block_N,), "float32")
            T.copy(A[by * block_M, bx * block_N], tile_a)
            T.reduce_sum(tile_a, partial, dim=0)
            for j in T.Parallel(block_N):
                if bx * block_N + j < N:
                    T.atomic_add(out[bx * block_N + j], partial[j])

    return main


@pytest.mark.parametrize("shape", [(64, 32), (50, 37)])
def test_column_sum_atomic_add(shape: tuple[int, int], rng: torch.Generator) -> None:
    M, N = shape
    kernel = tilec.compile(column_sum(M, N), target=TARGET)
    a = randn((M, N), torch.float32, rng)
    out = torch.zeros(N, dtype=torch.float32)  # atomics accumulate: the output starts at zero
    kernel(a, out)
    assert_close(out, a.double().sum(dim=0), torch.float32)


def row_sum_atomic_region(M, N, block_M=16, block_N=16):
    """The region form of T.atomic_add: a whole fragment added to a row of the output."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), out: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            tile_a = T.alloc_fragment((block_M, block_N), "float32")
            partial = T.alloc_fragment((block_M,), "float32")
            T.copy(A[by * block_M, bx * block_N], tile_a)
            T.reduce_sum(tile_a, partial, dim=1)
            T.atomic_add(out[by * block_M:(by + 1) * block_M], partial[0:block_M])

    return main


def test_row_sum_atomic_add_region(rng: torch.Generator) -> None:
    M, N = 32, 48
    kernel = tilec.compile(row_sum_atomic_region(M, N), target=TARGET)
    a = randn((M, N), torch.float32, rng)
    out = torch.zeros(M, dtype=torch.float32)
    kernel(a, out)
    assert_close(out, a.double().sum(dim=1), torch.float32)


def dynamic_scale(block=32):
    """A dynamic M: one kernel for every length."""
    M = T.dynamic("M")

    @T.prim_func
    def main(X: T.Tensor((M,), "float32"), Y: T.Tensor((M,), "float32"), alpha: T.float32):
        with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
            for i in T.Parallel(block):
                index = bx * block + i
                if index < M:
                    Y[index] = X[index] * alpha

    return main


def test_dynamic_size_one_kernel_many_lengths(rng: torch.Generator) -> None:
    kernel = tilec.compile(dynamic_scale(), out_idx=[1], target=TARGET)
    assert kernel.params[0].shape == ["M"]
    for length in (5, 64, 100):
        x = randn((length,), torch.float32, rng)
        y = kernel(x, 2.5)
        assert y.shape == (length,)
        assert_close(y, x.double() * 2.5, torch.float32)


def test_numpy_arrays_in_and_out(rng: torch.Generator) -> None:
    kernel = tilec.compile(dynamic_scale(), out_idx=[1], target=TARGET)
    x = randn((37,), torch.float32, rng).numpy()
    y = kernel(x, -1.5)
    assert isinstance(y, np.ndarray)
    np.testing.assert_allclose(y, x.astype(np.float64) * -1.5, rtol=1e-6)


def unary_math(N, op):
    """One T math function applied elementwise (op is a compile-time constant)."""

    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as _:
            for i in T.Parallel(N):
                x = X[i]
                if op == "exp":
                    Y[i] = T.exp(x)
                elif op == "exp2":
                    Y[i] = T.exp2(x)
                elif op == "log":
                    Y[i] = T.log(T.abs(x) + 0.5)
                elif op == "log2":
                    Y[i] = T.log2(T.abs(x) + 0.5)
                elif op == "sqrt":
                    Y[i] = T.sqrt(T.abs(x))
                elif op == "rsqrt":
                    Y[i] = T.rsqrt(T.abs(x) + 0.25)
                elif op == "tanh":
                    Y[i] = T.tanh(x)
                elif op == "sigmoid":
                    Y[i] = T.sigmoid(x)
                elif op == "minmax":
                    Y[i] = T.min(T.max(x, -0.5), 0.5)
                elif op == "clamp":
                    Y[i] = T.clamp(x, -0.25, 0.75)
                elif op == "floor_ceil":
                    Y[i] = T.floor(x * 4) + T.ceil(x * 3)
                elif op == "trig":
                    Y[i] = T.sin(x) * T.cos(x) + T.erf(x)
                elif op == "pow":
                    Y[i] = T.pow(T.abs(x) + 0.5, 1.5)
                elif op == "extremes":
                    Y[i] = T.max(x, T.min_value("float32")) + T.min(x, T.max_value(T.float16))
                else:
                    Y[i] = T.if_then_else(x > 0, x, x * 0.1)

    return main


MATH_REFERENCES = {
    "exp": torch.exp, "exp2": torch.exp2, "log": lambda x: torch.log(x.abs() + 0.5),
    "log2": lambda x: torch.log2(x.abs() + 0.5), "sqrt": lambda x: x.abs().sqrt(),
    "rsqrt": lambda x: torch.rsqrt(x.abs() + 0.25), "tanh": torch.tanh,
    "sigmoid": torch.sigmoid, "minmax": lambda x: x.clamp(-0.5, 0.5),
    "leaky": lambda x: torch.where(x > 0, x, x * 0.1), "clamp": lambda x: x.clamp(-0.25, 0.75),
    "floor_ceil": lambda x: torch.floor(x * 4) + torch.ceil(x * 3),
    "trig": lambda x: torch.sin(x) * torch.cos(x) + torch.erf(x),
    "pow": lambda x: (x.abs() + 0.5) ** 1.5, "extremes": lambda x: 2 * x,
}


@pytest.mark.parametrize("op", sorted(MATH_REFERENCES))
def test_math_functions(op: str, rng: torch.Generator) -> None:
    kernel = tilec.compile(unary_math(64, op), target=TARGET)
    x = randn((64,), torch.float32, rng)
    y = poisoned((64,), torch.float32)
    kernel(x, y)
    assert_close(y, MATH_REFERENCES[op](x.double()), torch.float32)


def control_flow(N):
    """while over a T.alloc_var, serial and unrolled loops, if/elif/else, casts, int math."""

    @T.prim_func
    def main(X: T.Tensor((N,), "int32"), Y: T.Tensor((N,), "int32"),
             Z: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=1) as _:
            for i in T.serial(N):
                steps = T.alloc_var("int32", init=0)
                value = T.alloc_var("int32", init=X[i])
                while value > 1:
                    value = T.if_then_else(value % 2 == 0, value // 2, 3 * value + 1)
                    steps += 1
                Y[i] = steps
            for i in T.vectorized(N):
                x = X[i]
                if x < 5:
                    Z[i] = T.cast(x, "float32") * 0.5
                elif x < 10:
                    Z[i] = x.astype(T.float32) + 100
                else:
                    Z[i] = -1.0

    return main


def test_control_flow_and_vars() -> None:
    N = 12
    kernel = tilec.compile(control_flow(N), target=TARGET)
    x = torch.arange(1, N + 1, dtype=torch.int32)
    y, z = poisoned((N,), torch.int32), poisoned((N,), torch.float32)
    kernel(x, y, z)

    def collatz(n: int) -> int:
        steps = 0
        while n > 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps

    assert y.tolist() == [collatz(n) for n in range(1, N + 1)]
    expected = [n * 0.5 if n < 5 else (n + 100.0 if n < 10 else -1.0) for n in range(1, N + 1)]
    assert z.tolist() == expected


def flash_attention(batch, heads, seq_len, dim, is_causal, block_M=16, block_N=16):
    """TileLang's flash-attention forward (online softmax), ported by its import line only."""
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # log2(e)
    shape = [batch, seq_len, heads, dim]
    dtype, accum_dtype = "float16", "float"

    @T.macro
    def rescale(acc_o, scores_scale):
        for i, j in T.Parallel(block_M, dim):
            acc_o[i, j] *= scores_scale[i]

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
             Output: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=128) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_M], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_M], accum_dtype)
            scores_scale = T.alloc_fragment([block_M], accum_dtype)
            scores_sum = T.alloc_fragment([block_M], accum_dtype)
            logsum = T.alloc_fragment([block_M], accum_dtype)

            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))
            loop_range = (
                T.ceildiv((bx + 1) * block_M, block_N) if is_causal
                else T.ceildiv(seq_len, block_N))
            for k in T.Pipelined(loop_range, num_stages=1):
                T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0,
                                                     -T.infinity(acc_s.dtype))
                else:
                    T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True,
                       policy=T.GemmWarpPolicy.FullRow)
                T.copy(scores_max, scores_max_prev)
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                rescale(acc_o, scores_scale)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)
                T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])

    return main


@pytest.mark.parametrize("is_causal", [False, True])
def test_flash_attention(is_causal: bool, rng: torch.Generator) -> None:
    batch, heads, seq_len, dim = 1, 2, 48, 16
    kernel = tilec.compile(flash_attention(batch, heads, seq_len, dim, is_causal), out_idx=[3],
                           target=TARGET)
    q, k, v = (randn((batch, seq_len, heads, dim), torch.float16, rng) for _ in range(3))
    out = kernel(q, k, v)
    reference = torch.nn.functional.scaled_dot_product_attention(
        *(t.double().transpose(1, 2) for t in (q, k, v)), is_causal=is_causal).transpose(1, 2)
    assert_close(out, reference, torch.float16)


@tilec.jit(target=TARGET)
def row_scale(X, w, block=8):
    """Eager style with a dynamic row count: one kernel for every M."""
    M = T.dynamic("M")
    N = T.const("N")
    X: T.Tensor((M, N), T.float32)
    w: T.Tensor((N,), T.float32)
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=64) as bx:
        for i, j in T.Parallel(block, N):
            if bx * block + i < M:
                Y[bx * block + i, j] = X[bx * block + i, j] * w[j]
    return Y


def test_eager_dynamic_size_compiles_once(rng: torch.Generator) -> None:
    w = randn((16,), torch.float32, rng)
    kernels = set()
    for rows in (3, 20, 33):
        x = randn((rows, 16), torch.float32, rng)
        assert_close(row_scale(x, w), x.double() * w.double(), torch.float32)
        kernels.add(id(row_scale.compile(x, w)))
    assert len(kernels) == 1
    kernel = row_scale.compile(randn((5, 16), torch.float32, rng), w)
    assert kernel.params[0].shape == ["M", 16] and kernel.params[2].shape == ["M", 16]


@tilec.jit(target=TARGET)
def ragged_scale(N: int, block: int = 16):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block)) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] * 2.0 + 1.0

    return main


def test_ragged_last_block_stays_inside_its_tensors(rng):
    """The last block's elements past N are skipped (stores) and read as 0 (loads) on the CPU
    as on CUDA: the memory right after B keeps its contents."""
    a = randn((100,), torch.float32, rng)
    storage = torch.full((112,), 7.0)
    b = storage[:100]
    b.fill_(float("nan"))
    ragged_scale(100)(a, b)
    assert_close(b, a.double() * 2 + 1, torch.float32)
    assert torch.equal(storage[100:], torch.full((12,), 7.0))
