"""Eager `@tilec.jit` kernels as TileLang writes them: the prologue (the Python before
`with T.Kernel`) runs as Python, `T.const` sizes come from the tensors or `.compile(M=...)`.

Numerics on the CPU target against float64 references, fresh random inputs, outputs the kernel
allocates poisoned (NaN / max int) so an element never written is caught.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import assert_close, poisoned, randn, suite_target

import tilec
import tilec.language as T

TARGET = suite_target()
# what the final source (get_kernel_source) of a kernel holds on each suite target
SOURCE_MARK = {"cpu": "define ", "vulkan": "OpEntryPoint GLCompute", "webgpu": "@compute"}


@pytest.fixture(autouse=True)
def poisoned_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel object allocates its outputs with torch.empty: make them NaN first."""
    monkeypatch.setattr(torch, "empty", lambda shape, dtype, device=None: poisoned(
        tuple(shape), dtype).to(device or "cpu"))


def here(pattern: str) -> str:
    """An error message naming this file and the line holding `pattern`."""
    with open(__file__) as source:
        line = next(n for n, text in enumerate(source, 1) if pattern in text)
    return rf"test_eager\.py:{line}:"


# ---------------------------------------------------------------------------------------------
# TileLang's quickstart, as its examples/quickstart.py spells it


@tilec.jit(target=TARGET)
def matmul_relu(A, B, block_M: int, block_N: int, block_K: int):
    M, N, K = T.const("M, N, K")
    dtype = T.float16
    accum_dtype = T.float32
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_local)
        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            T.copy(A[by * block_M, ko * block_K], A_shared)
            T.copy(B[ko * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        for i, j in T.Parallel(block_M, block_N):
            C_local[i, j] = T.max(C_local[i, j], 0)
        T.copy(C_local, C[by * block_M, bx * block_N])

    return C


def test_quickstart_compiled_from_sizes(rng: torch.Generator) -> None:
    M, N, K = 128, 96, 64
    kernel = matmul_relu.compile(M=M, N=N, K=K, block_M=64, block_N=32, block_K=32)
    assert [p.shape for p in kernel.params] == [[M, K], [K, N], [M, N]]
    a, b = randn((M, K), torch.float16, rng), randn((K, N), torch.float16, rng)
    assert_close(kernel(a, b), torch.relu(a.double() @ b.double()), torch.float16)


def test_get_kernel_source_on_the_function_compiles_those_arguments() -> None:
    """TileLang's examples print `fn.get_kernel_source(M=..., block_N=...)`: the source of the
    kernel those arguments compile (the suite target's final text: LLVM IR for the CPU, SPIR-V
    assembly for vulkan, WGSL for webgpu), not of some other one."""
    source = matmul_relu.get_kernel_source(M=128, N=96, K=64, block_M=64, block_N=32,
                                           block_K=32)
    kernel = matmul_relu.compile(M=128, N=96, K=64, block_M=64, block_N=32, block_K=32)
    assert source == kernel.get_kernel_source()
    assert SOURCE_MARK[TARGET] in source
    other = matmul_relu.get_kernel_source(M=128, N=96, K=64, block_M=32, block_N=32,
                                          block_K=32)
    assert other != source


@pytest.mark.parametrize("shape", [(64, 64, 32), (70, 50, 40)])
def test_quickstart_called_with_tensors(shape: tuple[int, int, int],
                                        rng: torch.Generator) -> None:
    M, N, K = shape
    a, b = randn((M, K), torch.float16, rng), randn((K, N), torch.float16, rng)
    c = matmul_relu(a, b, 32, 32, 16)
    assert c.shape == (M, N) and c.dtype == torch.float16
    assert_close(c, torch.relu(a.double() @ b.double()), torch.float16)
    assert matmul_relu.compile(a, b, 32, 32, 16).artifact is matmul_relu.compile(
        M=M, N=N, K=K, block_M=32, block_N=32, block_K=16).artifact


def test_annotation_checks_the_arguments(rng: torch.Generator) -> None:
    a = randn((64, 32), torch.float16, rng)
    with pytest.raises(tilec.TilecError, match=here("B: T.Tensor((K, N), dtype)") + r" size 'K' "
                       r"is 32 in dimension 1 of 'A' but 48 in dimension 0 of 'B'"):
        matmul_relu(a, randn((48, 16), torch.float16, rng), 32, 32, 16)
    with pytest.raises(tilec.TilecError, match=here("A: T.Tensor((M, K), dtype)") +
                       r" tensor 'A' has dtype float32, but its annotation says float16"):
        matmul_relu(a.float(), randn((32, 16), torch.float16, rng), 32, 32, 16)


# ---------------------------------------------------------------------------------------------
# computed shapes, conditionals and dtypes from parameters (TileLang's dynamic_shape example)


@tilec.jit(target=TARGET)
def matmul_layouts(A, B, block_M, block_N, block_K, trans_A, trans_B, in_dtype, out_dtype,
                   accum_dtype, threads):
    M, N, K = T.const("M, N, K")
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_shared_shape = (block_K, block_M) if trans_A else (block_M, block_K)
    B_shared_shape = (block_N, block_K) if trans_B else (block_K, block_N)
    A: T.Tensor(A_shape, in_dtype)
    B: T.Tensor(B_shape, in_dtype)
    C = T.empty((M, N), out_dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared(A_shared_shape, in_dtype)
        B_shared = T.alloc_shared(B_shared_shape, in_dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
            if trans_A:
                T.copy(A[k * block_K, by * block_M], A_shared)
            else:
                T.copy(A[by * block_M, k * block_K], A_shared)
            if trans_B:
                T.copy(B[bx * block_N, k * block_K], B_shared)
            else:
                T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local, trans_A, trans_B)
        T.copy(C_local, C[by * block_M, bx * block_N])

    return C


@pytest.mark.parametrize("trans_A, trans_B", [(False, False), (True, False), (False, True),
                                              (True, True)])
def test_shapes_chosen_by_python_conditionals(trans_A: bool, trans_B: bool,
                                              rng: torch.Generator) -> None:
    M, N, K = 48, 40, 56
    a = randn((K, M) if trans_A else (M, K), torch.float16, rng)
    b = randn((N, K) if trans_B else (K, N), torch.float16, rng)
    c = matmul_layouts(a, b, 32, 32, 16, trans_A, trans_B, "float16", "float32", "float32", 128)
    expected = (a.double().T if trans_A else a.double()) @ (b.double().T if trans_B
                                                             else b.double())
    assert c.dtype == torch.float32
    assert_close(c, expected, torch.float16)


def test_sizes_only_compile_reads_shapes_through_variables() -> None:
    kernel = matmul_layouts.compile(M=48, N=40, K=56, block_M=32, block_N=32, block_K=16,
                                    trans_A=True, trans_B=False, in_dtype=T.float16,
                                    out_dtype=T.float32, accum_dtype=T.float32, threads=128)
    assert [(p.name, p.shape, p.dtype) for p in kernel.params] == [
        ("A", [56, 48], "float16"), ("B", [56, 40], "float16"), ("C", [48, 40], "float32")]


# ---------------------------------------------------------------------------------------------
# sizes computed from sizes, helpers, a Python `if` on a size (TileLang's convolution example)


def output_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


@tilec.jit(target=TARGET)
def convolution(data, kernel, S, D, P, block_F, dtype=T.float32, accum_dtype=T.float32):
    N, C, H, W, F, K = T.const("N, C, H, W, F, K")
    KH, KW = K, K
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = output_size(W, KW, S, P, D)
    data: T.Tensor((N, H, W, C), dtype)
    kernel: T.Tensor((KH, KW, C, F), dtype)
    out = T.empty((N, OH, OW, F), dtype)
    block_F = min(block_F, F)  # a small F takes a smaller tile: Python on a size

    with T.Kernel(T.ceildiv(F, block_F), N * OH * OW, threads=block_F) as (bf, position):
        n = position // (OH * OW)
        oh = position % (OH * OW) // OW
        ow = position % OW
        acc = T.alloc_fragment((block_F,), accum_dtype)
        T.clear(acc)
        for kh in T.serial(KH):
            for kw in T.serial(KW):
                for c in T.serial(C):
                    for f in T.Parallel(block_F):
                        h = oh * S + kh * D - P
                        w = ow * S + kw * D - P
                        if h >= 0 and h < H and w >= 0 and w < W and bf * block_F + f < F:
                            acc[f] += data[n, h, w, c] * kernel[kh, kw, c, bf * block_F + f]
        for f in T.Parallel(block_F):
            if bf * block_F + f < F:
                out[n, oh, ow, bf * block_F + f] = acc[f]

    return out


@pytest.mark.parametrize("stride, dilation, padding, features", [(1, 1, 1, 8), (2, 1, 0, 3),
                                                                  (1, 2, 2, 5)])
def test_convolution_prologue_computes_output_sizes(stride: int, dilation: int, padding: int,
                                                    features: int, rng: torch.Generator) -> None:
    N, H, W, C, K = 2, 9, 7, 3, 3
    data = randn((N, H, W, C), torch.float32, rng)
    weights = randn((K, K, C, features), torch.float32, rng)
    out = convolution(data, weights, stride, dilation, padding, 4)
    expected = torch.conv2d(data.double().permute(0, 3, 1, 2),
                            weights.double().permute(3, 2, 0, 1), stride=stride,
                            padding=padding, dilation=dilation).permute(0, 2, 3, 1)
    assert out.shape == expected.shape
    assert_close(out, expected, torch.float32)


# ---------------------------------------------------------------------------------------------
# T.dynamic / T.symbolic in the prologue


@tilec.jit(target=TARGET)
def scale_rows(X, w, block=8):
    M, N = T.dynamic("M, N")
    X: T.Tensor((M, N), T.float32)
    w: T.Tensor((M,), T.float32)
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=64) as bx:
        for i in T.Parallel(block):
            for j in T.serial(N):
                if bx * block + i < M:
                    Y[bx * block + i, j] = X[bx * block + i, j] * w[bx * block + i]
    return Y


def test_dynamic_takes_several_names(rng: torch.Generator) -> None:
    assert T.dynamic("M, N") == (T.Symbol("M"), T.Symbol("N"))
    assert T.symbolic("M") == T.Symbol("M")
    kernels = set()
    for rows, columns in ((3, 5), (20, 7), (9, 1)):
        x, w = randn((rows, columns), torch.float32, rng), randn((rows,), torch.float32, rng)
        assert_close(scale_rows(x, w), x.double() * w.double()[:, None], torch.float32)
        kernels.add(id(scale_rows.compile(x, w)))
    assert len(kernels) == 1
    assert [p.shape for p in scale_rows.compile(x, w).params] == [["M", "N"], ["M"], ["M", "N"]]


# ---------------------------------------------------------------------------------------------
# constants: tuples and lists are constants, not tensors; dtypes given by name


@tilec.jit(target=TARGET)
def tiled_add(A, B, tile, in_dtype, out_dtype):
    M, N = T.const("M, N")
    block_M, block_N = tile
    A: T.Tensor((M, N), in_dtype)
    B: T.Tensor((M, N), in_dtype)
    C = T.empty((M, N), out_dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=64) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_N), in_dtype)
        B_shared = T.alloc_shared((block_M, block_N), in_dtype)
        C_local = T.alloc_fragment((block_M, block_N), out_dtype)
        T.copy(A[by * block_M, bx * block_N], A_shared)
        T.copy(B[by * block_M, bx * block_N], B_shared)
        for i, j in T.Parallel(block_M, block_N):
            C_local[i, j] = A_shared[i, j] + B_shared[i, j]
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


@pytest.mark.parametrize("tile", [(16, 8), [8, 32]])
def test_tuple_and_list_arguments_are_constants(tile: tuple | list,
                                                rng: torch.Generator) -> None:
    a, b = randn((40, 36), torch.float32, rng), randn((40, 36), torch.float32, rng)
    c = tiled_add(a, b, tile, in_dtype=T.float32, out_dtype="float64")
    assert c.dtype == torch.float64
    assert_close(c, a.double() + b.double(), torch.float32)
    kernel = tiled_add.compile(a, b, tile, in_dtype=T.float32, out_dtype="float64")
    assert [p.name for p in kernel.params] == ["A", "B", "C"]


def test_repeated_calls_pass_the_tensors_their_first_call_found(rng: torch.Generator) -> None:
    """A call the function has a kernel for passes that kernel the tensors at the positions
    its first call found (constants between or after them left out), or all its arguments."""
    eager = tilec.jit(tiled_add.fn, target=TARGET)
    for rows in (40, 40, 24, 40):
        a, b = randn((rows, 36), torch.float32, rng), randn((rows, 36), torch.float32, rng)
        c = eager(a, b, (16, 8), T.float32, "float64")
        assert c.dtype == torch.float64
        assert_close(c, a.double() + b.double(), torch.float32)
    assert [positions for _, positions in eager._kernels.values()] == [(0, 1), (0, 1)]
    scale = tilec.jit(scale_rows.fn, target=TARGET)
    for _ in range(2):
        x, w = randn((12, 5), torch.float32, rng), randn((12,), torch.float32, rng)
        assert_close(scale(x, w), x.double() * w.double()[:, None], torch.float32)
    assert [positions for _, positions in scale._kernels.values()] == [None]


def test_different_tuple_constants_are_different_kernels(rng: torch.Generator) -> None:
    a, b = randn((16, 16), torch.float32, rng), randn((16, 16), torch.float32, rng)
    first = tiled_add.compile(a, b, (16, 8), T.float32, T.float32)
    second = tiled_add.compile(a, b, (8, 16), T.float32, T.float32)
    assert first.artifact is not second.artifact


# ---------------------------------------------------------------------------------------------
# a Python `if` on a T.const size: the prologue runs again with the sizes known


@tilec.jit(target=TARGET)
def row_sums(X, wide_block=32):
    M, N = T.const("M, N", T.int32)  # TileLang's optional dtype
    X: T.Tensor((M, N), T.float32)
    if N >= wide_block:
        block = wide_block
    else:
        block = N
    columns = [block * i for i in range(T.ceildiv(N, block))]  # comprehension on a size
    Y = T.empty((M,), T.float32)
    with T.Kernel(M, threads=block) as row:
        tile = T.alloc_fragment((block,), T.float32)
        total = T.alloc_fragment((1,), T.float32)
        acc = T.alloc_fragment((1,), T.float32)
        T.clear(acc)
        for start in T.unroll(len(columns)):
            for j in T.Parallel(block):
                if start * block + j < N:
                    tile[j] = X[row, start * block + j]
                else:
                    tile[j] = 0.0
            T.reduce_sum(tile, total, dim=0)
            acc[0] += total[0]
        Y[row] = acc[0]
    return Y


@pytest.mark.parametrize("columns", [5, 32, 77])
def test_python_if_on_a_size(columns: int, rng: torch.Generator) -> None:
    x = randn((6, columns), torch.float32, rng)
    assert_close(row_sums(x), x.double().sum(dim=1), torch.float32)
    launch = row_sums.compile(x).artifact.launch
    assert launch["threads"] == [min(columns, 32)]


# ---------------------------------------------------------------------------------------------
# errors name the kernel's file and line


@tilec.jit(target=TARGET)
def failing_prologue(A):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    blocks = N // (N - N)  # raises: ZeroDivisionError
    B = T.empty((N,), T.float32)
    with T.Kernel(blocks, threads=32) as _:
        B[0] = A[0]
    return B


def test_prologue_exception_names_the_kernel_line() -> None:
    with pytest.raises(tilec.TilecError, match=here("blocks = N // (N - N)") +
                       " ZeroDivisionError: integer division or modulo by zero") as error:
        failing_prologue(torch.randn(8))
    assert isinstance(error.value.__cause__, ZeroDivisionError)


@tilec.jit(target=TARGET)
def size_read_too_early(A):
    N = T.const("N")  # the error points here
    steps = list(range(N))  # N as a number before the annotation binds it
    A: T.Tensor((N,), T.float32)
    B = T.empty((N,), T.float32)
    with T.Kernel(1, threads=32) as _:
        B[0] = A[len(steps) - 1]
    return B


def test_size_read_as_a_number_before_its_annotation() -> None:
    with pytest.raises(tilec.TilecError, match=here("# the error points here") +
                       r" the size 'N' is used as a number before an annotation binds it"):
        size_read_too_early(torch.randn(8))


@tilec.jit(target=TARGET)
def checks_before_annotating(A, block=4):
    N = T.const("N")
    blocks = T.ceildiv(N, block)
    assert N % block == 0, "N must be a multiple of the block"
    if blocks > 2:  # a condition on a size before the annotation that binds it
        scale = 2.0
    else:
        scale = 3.0
    A: T.Tensor((N,), T.float32)
    B = T.empty((N,), T.float32)
    with T.Kernel(blocks, threads=block) as bx:
        for i in T.Parallel(block):
            B[bx * block + i] = A[bx * block + i] * scale
    return B


@pytest.mark.parametrize("length, scale", [(8, 3.0), (16, 2.0)])
def test_conditions_on_sizes_before_their_annotation(length: int, scale: float,
                                                     rng: torch.Generator) -> None:
    a = randn((length,), torch.float32, rng)
    assert_close(checks_before_annotating(a), a.double() * scale, torch.float32)
    with pytest.raises(tilec.TilecError, match=here('assert N % block == 0') +
                       " AssertionError: N must be a multiple of the block"):
        checks_before_annotating(randn((10,), torch.float32, rng))


@tilec.jit(target=TARGET)
def kernel_code_in_prologue(A):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    shared = T.alloc_shared((N,), T.float32)  # kernel code outside the kernel
    with T.Kernel(1, threads=32) as _:
        shared[0] = A[0]
    return A


def test_kernel_code_before_the_kernel() -> None:
    with pytest.raises(tilec.TilecError, match=here("shared = T.alloc_shared((N,)") +
                       r" T.alloc_shared is kernel code: it belongs inside `with T.Kernel"):
        kernel_code_in_prologue(torch.randn(8))


@tilec.jit(target=TARGET)
def annotates_a_local(A):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    scratch: T.Tensor((N,), T.float32)  # noqa: F842 - the error under test
    with T.Kernel(1, threads=32) as _:
        A[0] = 1.0


def test_annotation_of_a_name_that_is_no_parameter() -> None:
    with pytest.raises(tilec.TilecError, match=here("scratch: T.Tensor((N,)") +
                       r" 'scratch' is not a tensor parameter of the kernel"):
        annotates_a_local(torch.randn(8))


# ---------------------------------------------------------------------------------------------
# several `with T.Kernel` blocks: one launch each, in order, with the same arguments


@tilec.jit(target=TARGET)
def normalize_rows(X, block=8):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    norms = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=block) as bx:  # launch 1: row norms
        for i in T.Parallel(block):
            if bx * block + i < M:
                total = T.alloc_var(T.float32, 0.0)
                for j in T.serial(N):
                    total += X[bx * block + i, j] * X[bx * block + i, j]
                norms[bx * block + i] = T.sqrt(total)
    Y = T.empty((M, N), T.float32)
    with T.Kernel(M, threads=32) as row:  # launch 2 reads what launch 1 wrote
        for j in T.serial(N):
            Y[row, j] = X[row, j] / norms[row] + norms[M - 1 - row]
    return norms, Y


def test_kernel_blocks_launch_in_order(rng: torch.Generator) -> None:
    x = randn((21, 6), torch.float32, rng)
    norms, y = normalize_rows(x)
    expected = x.double().norm(dim=1)
    assert_close(norms, expected, torch.float32)
    assert_close(y, x.double() / expected[:, None] + expected.flip(0)[:, None], torch.float32)
    artifact = normalize_rows.compile(x).artifact
    assert [k.launch["grid"] for k in artifact.kernels] == [[3], [21]]
    assert [k.launch["threads"] for k in artifact.kernels] == [[8], [32]]
    assert artifact.asm["tile"].count("tile.kernel") == 2


def test_kernel_blocks_round_trip_through_the_disk_cache(rng: torch.Generator,
                                                         tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    x = randn((9, 4), torch.float32, rng)
    compiled = normalize_rows.compile(x, block=4)
    tilec.cache.clear_memory()
    from tilec.runtime.artifact import Artifact

    (entry,) = tmp_path.iterdir()
    loaded = Artifact.load(entry)
    assert [k.name for k in loaded.kernels] == ["normalize_rows_0", "normalize_rows_1"]
    assert [k.binary for k in loaded.kernels] == [k.binary for k in compiled.artifact.kernels]
    norms, _ = tilec.JITKernel(loaded, compiled.location)(x)
    assert_close(norms, x.double().norm(dim=1), torch.float32)


def test_kernel_blocks_compile_for_cuda() -> None:
    kernel = normalize_rows.compile(T.Tensor((64, 16), T.float32), target="cuda:sm_90a")
    assert [k.launch["entry"] for k in kernel.artifact.kernels] == [
        "normalize_rows_0", "normalize_rows_1"]
    source = kernel.get_kernel_source()
    assert ".entry normalize_rows_0" in source and ".entry normalize_rows_1" in source


def prim_two_kernels(N, block=16):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32),
             C: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    B[bx * block + i] = A[bx * block + i] + 1.0
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    C[bx * block + i] = B[N - 1 - bx * block - i] * A[bx * block + i]

    return main


@pytest.mark.parametrize("out_idx", [[1, 2], (-2, -1), [2, 1]])
def test_prim_func_with_kernel_blocks_and_out_idx_forms(out_idx, rng: torch.Generator) -> None:
    kernel = tilec.compile(prim_two_kernels(37), out_idx=out_idx, target=TARGET)
    a = randn((37,), torch.float32, rng)
    b, c = kernel(a)
    assert_close(b, a.double() + 1.0, torch.float32)
    assert_close(c, (a.double() + 1.0).flip(0) * a.double(), torch.float32)


def test_out_idx_forms() -> None:
    assert tilec.compile(prim_two_kernels(8), out_idx=-1, target=TARGET).out_idx == [2]
    assert tilec.compile(prim_two_kernels(8), out_idx=None, target=TARGET).out_idx == []
    with pytest.raises(tilec.TilecError, match=r"out_idx \[3\]: 3 is not the position of one of "
                       r"the kernel's 3 parameters"):
        tilec.compile(prim_two_kernels(8), out_idx=[3], target=TARGET)
    with pytest.raises(tilec.TilecError, match=r"names a parameter twice"):
        tilec.compile(prim_two_kernels(8), out_idx=[2, -1], target=TARGET)


def test_out_idx_on_an_eager_kernel_is_an_error() -> None:
    eager = tilec.jit(out_idx=[-1], target=TARGET)(normalize_rows.fn)
    with pytest.raises(tilec.TilecError, match=r"out_idx is for a jit function that returns a "
                       r"@T.prim_func; an eager kernel returns the tensors it makes with T.empty"):
        eager(torch.randn(4, 4))


# ---------------------------------------------------------------------------------------------
# T.alloc_global: a workspace between kernel blocks, allocated by each call, never returned


def split_row_sums(M, N, splits=4, block=8):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), out: T.Tensor((M,), T.float32)):
        partial = T.alloc_global((splits, M), T.float32)
        part = T.ceildiv(N, splits)
        with T.Kernel(T.ceildiv(M, block), splits, threads=block) as (bx, s):
            for i in T.Parallel(block):
                if bx * block + i < M:
                    acc = T.alloc_var(T.float32, 0.0)
                    for j in T.serial(part):
                        if s * part + j < N:
                            acc += A[bx * block + i, s * part + j]
                    partial[s, bx * block + i] = acc
        with T.Kernel(T.ceildiv(M, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < M:
                    total = T.alloc_var(T.float32, 0.0)
                    for s in T.serial(splits):
                        total += partial[s, bx * block + i]
                    out[bx * block + i] = total

    return main


def test_workspace_between_kernel_blocks(rng: torch.Generator) -> None:
    kernel = tilec.compile(split_row_sums(13, 30), out_idx=[1], target=TARGET)
    assert [(p.name, p.is_output, p.is_workspace) for p in kernel.params] == [
        ("A", False, False), ("out", True, False), ("partial", True, True)]
    assert kernel.out_idx == [1]
    a = randn((13, 30), torch.float32, rng)
    assert_close(kernel(a), a.double().sum(dim=1), torch.float32)  # one output, not two


@tilec.jit(target=TARGET)
def centered(X, block=8):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    means = T.alloc_global((M,), T.float32)
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=block) as bx:
        for i in T.Parallel(block):
            if bx * block + i < M:
                total = T.alloc_var(T.float32, 0.0)
                for j in T.serial(N):
                    total += X[bx * block + i, j]
                means[bx * block + i] = total / N
    with T.Kernel(M, threads=32) as row:
        for j in T.serial(N):
            Y[row, j] = X[row, j] - means[row]
    return Y


def test_workspace_in_an_eager_prologue(rng: torch.Generator) -> None:
    x = randn((11, 7), torch.float32, rng)
    y = centered(x)
    assert isinstance(y, torch.Tensor)
    assert_close(y, x.double() - x.double().mean(dim=1, keepdim=True), torch.float32)
    assert [p.is_workspace for p in centered.compile(x).params] == [False, True, False]


# ---------------------------------------------------------------------------------------------
# cache keys come from the prologue, before any IR; a repeated call does not run it again

PROLOGUE_RUNS: list[int] = []


def counted(value: int) -> int:
    PROLOGUE_RUNS.append(value)
    return value


@tilec.jit(target=TARGET)
def counted_copy(A, block=16):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    width = counted(block)
    B = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, width), threads=width) as bx:
        for i in T.Parallel(width):
            if bx * width + i < N:
                B[bx * width + i] = A[bx * width + i] + 1.0
    return B


def test_a_repeated_call_does_not_run_the_prologue(rng: torch.Generator) -> None:
    a = randn((40,), torch.float32, rng)
    PROLOGUE_RUNS.clear()
    for _ in range(3):
        assert_close(counted_copy(a), a.double() + 1.0, torch.float32)
    assert len(PROLOGUE_RUNS) == 2  # the first call: a run to bind N, a run with N = 40
    counted_copy(randn((41,), torch.float32, rng))
    assert len(PROLOGUE_RUNS) == 4  # a new shape is a new key


def test_a_disk_cache_hit_needs_no_compiler(rng: torch.Generator, tmp_path) -> None:
    """The TileLang-style quickstart from a cache another process filled: the prologue runs,
    the key is found, and neither MLIR nor the compiler nor the IR builder is imported."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "TILEC_CACHE_DIR": str(tmp_path)}
    fill = ("import sys, torch; sys.path.insert(0, 'tests'); from test_eager import matmul_relu\n"
            "matmul_relu(torch.randn(64, 32, dtype=torch.float16),"
            " torch.randn(32, 48, dtype=torch.float16), 32, 16, 16)\n")
    block = ("import importlib.abc, sys\n"
             "class NoCompiler(importlib.abc.MetaPathFinder):\n"
             "    def find_spec(self, name, path, target=None):\n"
             "        if name == 'mlir' or name.startswith(('mlir.', 'tilec.compiler',\n"
             "                                              'tilec.frontend.builder',\n"
             "                                              'tilec.dialect')):\n"
             "            raise ImportError(name + ' must not be imported on a cache hit')\n"
             "sys.meta_path.insert(0, NoCompiler())\n")
    check = ("a = torch.randn(64, 32, dtype=torch.float16)\n"
             "b = torch.randn(32, 48, dtype=torch.float16)\n"
             "c = matmul_relu(a, b, 32, 16, 16)\n"
             "error = (c.double() - torch.relu(a.double() @ b.double())).abs().max().item()\n"
             "assert error < 0.1, error\n"
             "print('cache hit without the compiler')\n")
    root = str(Path(__file__).resolve().parents[1])
    for script in (fill, block + fill.splitlines()[0] + "\n" + check):
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             env=env, cwd=root)
        assert run.returncode == 0, run.stderr
    assert "cache hit without the compiler" in run.stdout


class TileConfig:
    """A plain config object (no __repr__ of its own): its fields are part of the key."""

    def __init__(self, block: int, scale: float):
        self.block = block
        self.scale = scale


@tilec.jit(target=TARGET)
def configured(A, config):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    block = config.block
    B = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
        for i in T.Parallel(block):
            if bx * block + i < N:
                B[bx * block + i] = A[bx * block + i] * config.scale
    return B


def test_objects_given_as_constants_key_by_their_fields(rng: torch.Generator) -> None:
    a = randn((20,), torch.float32, rng)
    assert_close(configured(a, TileConfig(8, 2.0)), a.double() * 2.0, torch.float32)
    assert_close(configured(a, TileConfig(8, -3.0)), a.double() * -3.0, torch.float32)
    assert configured.compile(a, TileConfig(8, 2.0)).artifact is configured.compile(
        a, TileConfig(8, 2.0)).artifact


@tilec.jit
def rows_by_heads(X, W, heads=4, block=4):
    """TileLang's DeepSeek indexer shapes its queries [seq_len * heads, dim] with seq_len a
    T.dynamic size: a derived size, bound from X and checked against W's seq_len."""
    seq = T.dynamic("seq")
    X: T.Tensor((seq * heads, 8), T.float32)
    W: T.Tensor((seq,), T.float32)
    Y = T.empty((heads * seq + 0, 8), T.float32)
    with T.Kernel(T.ceildiv(seq, block), threads=32) as bx:
        for i, j in T.Parallel(block * heads, 8):
            r = bx * block * heads + i
            Y[r, j] = X[r, j] * W[r // heads]
    return Y


def test_derived_dynamic_sizes_bind_and_are_checked(rng: torch.Generator) -> None:
    for seq in (10, 3):  # one kernel for every seq, ragged against the block of 4
        x, w = randn((seq * 4, 8), torch.float32, rng), randn((seq,), torch.float32, rng)
        y = rows_by_heads(x, w)
        assert_close(y, x.double() * w.double().repeat_interleave(4)[:, None], torch.float32)
    kernel = rows_by_heads.compile(x, w)
    assert [list(p.shape) for p in kernel.params] == [["(seq * 4)", 8], ["seq"],
                                                       ["((4 * seq) + 0)", 8]]
    with pytest.raises(tilec.errors.LaunchError, match=r"\(seq \* 4\) is 36, but"):
        rows_by_heads(randn((36, 8), torch.float32, rng), randn((10,), torch.float32, rng))
    assert repr(T.dynamic("n") * 2 + 1) == "T.dynamic('((n * 2) + 1)')"
