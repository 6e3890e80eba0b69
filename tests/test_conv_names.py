"""T.Serial, views of tensor parameters (`T.Tensor(shape, dtype, A.data)`, T.reshape, T.view)
and T.im2col, as TileLang's convolution and RMSNorm examples use them: CPU numerics against
float64 torch references, clear errors at the kernel's line, PTX for sm_90a assembled."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from conftest import assert_close, poisoned, randn

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path
from tilec.errors import TilecError


@tilec.jit
def rms_norm_serial(A, blk_m, blk_k):
    """TileLang's split-K RMSNorm: two T.Serial loops, the second walking K backwards."""
    M, N = T.const("M, N")
    dtype = T.float32
    A: T.Tensor((M, N), dtype)
    B = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
        A_shared = T.alloc_shared((blk_m, blk_k), dtype)
        A_local = T.alloc_fragment((blk_m, blk_k), dtype)
        A_powsum = T.alloc_fragment((blk_m,), dtype)
        num_k_step = T.ceildiv(N, blk_k)
        T.clear(A_local)
        for k in T.Serial(num_k_step):
            T.copy(A[bx * blk_m, k * blk_k], A_shared)
            for i, j in T.Parallel(blk_m, blk_k):
                A_local[i, j] += A_shared[i, j] * A_shared[i, j]
        T.reduce_sum(A_local, A_powsum, dim=1)
        for i in T.Parallel(blk_m):
            A_powsum[i] = T.rsqrt(A_powsum[i] / N + 1e-12)
        for k in T.Serial(num_k_step):
            T.copy(A[bx * blk_m, (num_k_step - 1 - k) * blk_k], A_shared)
            for i, j in T.Parallel(blk_m, blk_k):
                A_shared[i, j] *= A_powsum[i]
            T.copy(A_shared, B[bx * blk_m, (num_k_step - 1 - k) * blk_k])
    return B


def test_serial_rms_norm(rng: torch.Generator) -> None:
    a = randn((24, 96), torch.float32, rng)
    b = rms_norm_serial(a, 8, 32)
    expected = a.double() * torch.rsqrt(a.double().pow(2).mean(-1, keepdim=True) + 1e-12)
    assert_close(b, expected, torch.float32)


@tilec.jit
def serial_start_stop_step(A):
    """T.Serial(start, stop, step): every third column from the second, doubled."""
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    B = T.empty((N,), T.float32)
    with T.Kernel(1, threads=1):
        for j in T.Serial(N):
            B[j] = 0.0
        for j in T.Serial(1, N, 3):
            B[j] = A[j] * 2.0
    return B


def test_serial_bounds(rng: torch.Generator) -> None:
    a = randn((17,), torch.float32, rng)
    expected = torch.zeros(17, dtype=torch.float64)
    expected[1::3] = a.double()[1::3] * 2
    assert_close(serial_start_stop_step(a), expected, torch.float32)


@tilec.jit
def flat_transpose(A, block):
    """Reads A (R, C, D) through an (R * C, D) view and writes out (D, R, C) through a
    (D, R * C) view: copies in and out of views, and element reads through one."""
    R, C, D = T.const("R, C, D")
    A: T.Tensor((R, C, D), T.float32)
    out = T.empty((D, R, C), T.float32)
    with T.Kernel(T.ceildiv(R * C, block), threads=32) as bx:
        A_flat = T.Tensor((R * C, D), T.float32, A.data)
        out_flat = T.reshape(out, (D, R * C))
        tile = T.alloc_shared((block, D), T.float32)
        tile_t = T.alloc_shared((D, block), T.float32)
        T.copy(A_flat[bx * block, 0], tile)
        for i, d in T.Parallel(block, D):
            tile_t[d, i] = tile[i, d] + A_flat[bx * block + i, d]
        T.copy(tile_t, out_flat[0, bx * block])
    return out


def test_views_of_parameters(rng: torch.Generator) -> None:
    a = randn((4, 6, 8), torch.float32, rng)
    out = flat_transpose(a, 8)
    assert_close(out, (2 * a.double()).permute(2, 0, 1), torch.float32)


@T.prim_func
def view_into_output(A: T.Tensor((4, 8), "float32"), B: T.Tensor((32,), "float32")):
    with T.Kernel(1, threads=32):
        B2 = T.view(B, (4, 8))
        for i, j in T.Parallel(4, 8):
            B2[i, j] = A[i, j] * 3.0


def test_view_of_a_prim_func_output(rng: torch.Generator) -> None:
    kernel = tilec.compile(view_into_output, target="cpu")
    a = randn((4, 8), torch.float32, rng)
    b = poisoned((32,), torch.float32)
    kernel(a, b)
    assert_close(b, (a.double() * 3).reshape(32), torch.float32)


@tilec.jit
def convolution(data, kernel, S, D, P, block_M, block_N, block_K, num_stages, threads):
    """TileLang's example_convolution as it is written: NHWC data, (KH, KW, C, F) weights,
    im2col tiles times the flattened weights into a flattened T.empty output."""
    N, C, H, W, F, K = T.const("N, C, H, W, F, K")
    KH, KW = K, K
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    dtype, accum_dtype = T.float16, T.float32
    data: T.Tensor((N, H, W, C), dtype)
    kernel: T.Tensor((KH, KW, C, F), dtype)
    out = T.empty((N, OH, OW, F), dtype)
    with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M),
                  threads=threads) as (bx, by):
        data_shared = T.alloc_shared((block_M, block_K), dtype)
        kernel_shared = T.alloc_shared((block_K, block_N), dtype)
        out_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        out_shared = T.alloc_shared((block_M, block_N), dtype)
        kernel_flat = T.Tensor((KH * KW * C, F), dtype, kernel.data)
        out_flat = T.Tensor((N * OH * OW, F), dtype, out.data)
        T.clear(out_local)
        for k_iter in T.Pipelined(T.ceildiv(KH * KW * C, block_K), num_stages=num_stages):
            T.im2col(data, data_shared, by, k_iter, KH, S, D, P)
            T.copy(kernel_flat[k_iter * block_K, bx * block_N], kernel_shared)
            T.gemm(data_shared, kernel_shared, out_local)
        T.copy(out_local, out_shared)
        T.copy(out_shared, out_flat[by * block_M, bx * block_N])
    return out


def conv_reference(data: torch.Tensor, weights: torch.Tensor, S: int, D: int,
                   P: int) -> torch.Tensor:
    return F.conv2d(data.double().permute(0, 3, 1, 2), weights.double().permute(3, 2, 0, 1),
                    stride=S, padding=P, dilation=D).permute(0, 2, 3, 1)


def _conv_kernel(N, C, H, W, F_, K, S, D, P, block_M, block_N, block_K):
    """TileLang's example_convolution in its own syntax: NHWC data, (KH, KW, C, F) weights,
    im2col tiles times flattened weights."""
    KH, KW = K, K
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    dtype, accum_dtype = "float16", "float32"

    @T.prim_func
    def conv(data: T.Tensor((N, H, W, C), dtype), kernel: T.Tensor((KH, KW, C, F_), dtype),
             out: T.Tensor((N, OH, OW, F_), dtype)):
        with T.Kernel(T.ceildiv(F_, block_N), T.ceildiv(N * OH * OW, block_M),
                      threads=128) as (bx, by):
            data_shared = T.alloc_shared((block_M, block_K), dtype)
            kernel_shared = T.alloc_shared((block_K, block_N), dtype)
            out_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            out_shared = T.alloc_shared((block_M, block_N), dtype)
            kernel_flat = T.Tensor((KH * KW * C, F_), dtype, kernel.data)
            out_flat = T.Tensor((N * OH * OW, F_), dtype, out.data)
            T.clear(out_local)
            for k_iter in T.Pipelined(T.ceildiv(KH * KW * C, block_K), num_stages=2):
                T.im2col(data, data_shared, by, k_iter, KH, S, D, P)
                T.copy(kernel_flat[k_iter * block_K, bx * block_N], kernel_shared)
                T.gemm(data_shared, kernel_shared, out_local)
            T.copy(out_local, out_shared)
            T.copy(out_shared, out_flat[by * block_M, bx * block_N])

    return conv, (N, OH, OW, F_)


CONV_CASES = [  # N, C, H, W, F, K, S, D, P: ragged tiles in every direction
    (2, 16, 9, 7, 24, 3, 1, 1, 1),
    (1, 8, 11, 10, 16, 3, 2, 2, 2),
    (3, 4, 6, 6, 8, 1, 1, 1, 0),
    (2, 32, 7, 6, 16, 3, 1, 1, 1),  # two 16-channel tile rows per tap
]


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: "x".join(map(str, c)))
def test_tilelang_convolution_example(case: tuple[int, ...], rng: torch.Generator) -> None:
    N, C, H, W, F_, K, S, D, P = case
    data = randn((N, H, W, C), torch.float16, rng)
    weights = randn((K, K, C, F_), torch.float16, rng)
    out = convolution(data, weights, S, D, P, 32, 16, 16, 2, 128)
    assert_close(out, conv_reference(data, weights, S, D, P), torch.float16)


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: "x".join(map(str, c)))
def test_im2col_convolution_prim_func(case: tuple[int, ...], rng: torch.Generator) -> None:
    N, C, H, W, F_, K, S, D, P = case
    conv, out_shape = _conv_kernel(N, C, H, W, F_, K, S, D, P, 32, 16, 16)
    kernel = tilec.compile(conv, target="cpu")
    data = randn((N, H, W, C), torch.float16, rng)
    weights = randn((K, K, C, F_), torch.float16, rng)
    out = poisoned(out_shape, torch.float16)
    kernel(data, weights, out)
    assert_close(out, conv_reference(data, weights, S, D, P), torch.float16)


@T.prim_func
def im2col_tile(data: T.Tensor((1, 5, 5, 2), "float32"), col: T.Tensor((32, 18), "float32")):
    with T.Kernel(1, threads=32):
        tile = T.alloc_shared((32, 18), "float32")
        T.im2col(data, tile, 0, 0, 3, 1, 1, 1)
        T.copy(tile, col)


def test_im2col_zero_padding_and_rows_past_the_end(rng: torch.Generator) -> None:
    """25 output pixels in a 32-row tile: padding and the 7 rows past the end are zero."""
    data = randn((1, 5, 5, 2), torch.float32, rng)
    col = poisoned((32, 18), torch.float32)
    tilec.compile(im2col_tile, target="cpu")(data, col)
    patches = F.unfold(data.double().permute(0, 3, 1, 2), 3, padding=1)  # (1, C*9, 25), c major
    expected = torch.zeros(32, 18, dtype=torch.float64)
    expected[:25] = patches.reshape(2, 3, 3, 25).permute(3, 1, 2, 0).reshape(25, 18)
    assert_close(col, expected, torch.float32)


def _error_kernel(body: str, tmp_path: Path, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text(
        "import tilec.language as T\n\n"
        "@T.prim_func\n"
        "def main(A: T.Tensor((4, 8), 'float32'), B: T.Tensor((4, 8), 'float32')):\n"
        "    with T.Kernel(1, threads=32):\n"
        f"        {body}\n"
        "        T.copy(A, B)\n")
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["main"], str(path)


@pytest.mark.parametrize(("body", "message"), [
    ("V = T.Tensor((5, 8), 'float32', A.data)", "has 40 elements, but buffer 'A'"),
    ("V = T.reshape(A, (8, 8))", "has 64 elements"),
    ("V = T.view(A, (64,), 'float16')", "not of a global one"),
    ("V = T.Tensor((32,), 'float32', 3)", "tensor's memory, as `A.data`"),
    ("S = T.alloc_shared((4, 8), 'float32'); V = T.reshape(S, (32,)); T.gemm(V, S, S)",
     "T.gemm does not take"),
    ("S = T.alloc_shared((4, 8), 'float32'); T.im2col(A, S, 0, 0, 3, 1, 1, 1)", "NHWC tensor"),
])
def test_bad_views_and_im2col_name_the_line(body: str, message: str, tmp_path: Path) -> None:
    kernel, path = _error_kernel(body, tmp_path, "bad")
    with pytest.raises(TilecError, match=message) as caught:
        tilec.compile(kernel, target="cpu")
    assert caught.value.filename == path and caught.value.lineno == 6


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_convolution_ptx_assembles_for_sm90a(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    conv, _ = _conv_kernel(2, 32, 16, 16, 64, 3, 1, 1, 1, 64, 64, 32)
    kernel = tilec.compile(conv, target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    assert kernel.artifact.binary.startswith(b"\x7fELF")
    assert ".target sm_90a" in kernel.artifact.asm["ptx"]
    example = convolution.compile(N=2, C=32, H=16, W=16, F=128, K=3, S=1, D=1, P=1, block_M=64,
                                  block_N=128, block_K=32, num_stages=3, threads=256,
                                  target="cuda:sm_90a")
    assert example.artifact.binary.startswith(b"\x7fELF")
    norm = rms_norm_serial.compile(M=64, N=256, blk_m=1, blk_k=128, target="cuda:sm_90a")
    assert norm.artifact.binary.startswith(b"\x7fELF")


@pytest.mark.parametrize("async_gathers", [False, True])
def test_im2col_rows_are_vectors_and_join_the_pipeline(
        async_gathers: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """TileLang's example at 128 x 128 x 64 tiles (256 threads) on sm_90a: where the tile's
    columns divide the channels a T.im2col row is one tap's run of channels, read as 16-byte
    vectors; by default (TILEC_ASYNC_GATHERS=0: synchronous) they are cp.async beside the
    filter tile's (3 issues of 4 patch and 4 filter chunks a thread), each src-size a register
    (zero-filled padding)."""
    monkeypatch.setenv("TILEC_ASYNC_GATHERS", "1" if async_gathers else "0")
    example = convolution.compile(N=64, C=128, H=28, W=28, F=128, K=3, S=1, D=1, P=1,
                                  block_M=128, block_N=128, block_K=64, num_stages=3,
                                  threads=256, target="cuda:sm_90a")
    ptx = example.artifact.asm["ptx"]
    assert "wgmma.mma_async" in ptx
    copies = re.findall(r"cp\.async\.cg\.shared\.global \[[^]]+\], \[[^]]+\], 16, (\S+);", ptx)
    if async_gathers:
        # the patch chunks' src-size a register (zero-filled padding); the filter's a register
        # or 16 where the launch grid (known_grid_size) proves its rows in bounds
        patch = [fill for fill in copies if fill.startswith("%r")]
        assert len(copies) == 3 * (4 + 4) and len(patch) >= 3 * 4
        assert all(fill.startswith("%r") or fill == "16" for fill in copies)
    else:  # the filter's chunks alone; each patch row a vector read
        assert len(copies) == 3 * 4 and "ld.global.v4" in ptx
