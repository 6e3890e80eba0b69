"""TileLang-style Python kernels on the GPU: the quickstart at several shapes and dtypes, the
transpose_B + bias + ReLU GEMM, broadcasting, row softmax, column sums with atomics, reductions.

They come from the cache directory TILEC_CACHE_DIR that tests/gpu/precompile_frontend.py
filled on a compiler machine, so this runs with tilec's runtime only. Each result goes to the
JSON file TILEC_GPU_FRONTEND_RESULTS names, if set.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from frontend_kernels import (  # noqa: E402
    MATMUL_RELU_SIZES,
    NORMALIZE_ROWS_SHAPE,
    QUICKSTART_DTYPES,
    QUICKSTART_SHAPES,
    STREAM_K_PROBLEMS,
    VARLEN_ROWS_PROBLEM,
    WARP_SPECIALIZED_SHAPES,
    WS_GEMM_SHAPES,
    Case,
    cases,
    matmul,
    matmul_producer_consumer,
    matmul_register_a,
    matmul_relu,
    matmul_split_warpgroups,
    matmul_stream_k,
    normalize_rows,
    scaled_copy,
    varlen_rows,
    warp_specialized_scale,
)

import tilec  # noqa: E402
import tilec.language as T  # noqa: E402

RESULTS: list[dict] = []
# ||out - ref|| / ||ref||; a float32 gemm on the tensor cores multiplies as tf32 (10 mantissa
# bits, as TileLang's and cuBLAS's TF32 mode do), so its bound is tf32's
TOLERANCE = {"float16": 2e-3, "bfloat16": 1.5e-2, "float32": 2e-5, "tfloat32": 2e-3}


@pytest.fixture(scope="module", autouse=True)
def write_results():
    yield
    path = os.environ.get("TILEC_GPU_FRONTEND_RESULTS")
    if path:
        Path(path).write_text(json.dumps(RESULTS, indent=1))


def _check(name: str, produced: torch.Tensor, expected: torch.Tensor, dtype: str) -> None:
    produced = produced.double().cpu()
    error = ((produced - expected).norm() / expected.norm().clamp_min(1e-30)).item()
    unwritten = int(produced.isnan().sum().item())
    passed = unwritten == 0 and error <= TOLERANCE[dtype]
    RESULTS.append({"kernel": name, "dtype": dtype, "relative_error": error,
                    "unwritten": unwritten, "passed": passed})
    assert unwritten == 0, f"{unwritten} output elements are NaN"
    assert error <= TOLERANCE[dtype], f"relative error {error:.3g} > {TOLERANCE[dtype]}"


@pytest.mark.parametrize("case", cases(), ids=lambda case: case.name)
def test_frontend_kernel(case: Case) -> None:
    kernel = tilec.compile(case.factory(), out_idx=case.out_idx, target="cuda")
    generator = torch.Generator().manual_seed(7)
    dtype = getattr(torch, case.dtype)
    inputs = [torch.randn(shape, generator=generator).to("cuda", dtype)
              for shape in case.input_shapes]
    if case.zero_outputs:
        outputs = [torch.zeros(shape, device="cuda") for shape in case.zero_outputs]
        kernel(*inputs, *outputs)
        produced = outputs[0]
    else:
        produced = kernel.get_profiler().run_poisoned(*inputs)
    torch.cuda.synchronize()
    expected = case.reference(*[x.double().cpu() for x in inputs])
    output_dtype = "float32" if case.zero_outputs else case.dtype
    if output_dtype == "float32" and ".tf32" in kernel.get_kernel_source():
        output_dtype = "tfloat32"
    _check(case.name, produced, expected, output_dtype)


@pytest.mark.parametrize("dtype", QUICKSTART_DTYPES)
@pytest.mark.parametrize("shape", QUICKSTART_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_quickstart(shape: tuple[int, int, int], dtype: str) -> None:
    M, N, K = shape
    generator = torch.Generator().manual_seed(M + N + K)
    a = torch.randn(M, K, generator=generator).to("cuda", getattr(torch, dtype))
    b = torch.randn(K, N, generator=generator).to("cuda", getattr(torch, dtype))
    c = matmul.compile(a, b).get_profiler().run_poisoned(a, b)
    torch.cuda.synchronize()
    # the quickstart stages tiles in float16 shared memory and returns float16
    expected = a.half().double().cpu() @ b.half().double().cpu()
    _check(f"quickstart_{dtype}_{M}x{N}x{K}", c, expected, "float16")


# A in registers (T.copy(A_shared, A_frag); T.gemm(A_frag, B_shared, C)): on sm_90a the
# quickstart's tiles and the two-consumer 128 x 256 ones become the RS wgmma kernel
# (a_registers); block_N = 32 is a tile wgmma cannot cover, so that one checks the SIMT path.
REGISTER_A_SHAPES = [(1024, 1024, 1024), (1000, 1016, 1000)]
REGISTER_A_DTYPES = ["float16", "bfloat16"]
REGISTER_A_TILES = {
    "quickstart": {},
    "wide": {"block_N": 256, "threads": 256, "block_K": 64, "num_stages": 4},
    "simt": {"block_N": 32},
}


def register_a_kernel(shape: tuple[int, int, int], dtype: str, tile: str, device: str,
                      target: str = "cuda"):
    """The register-A kernel for a problem: (kernel, a, b) with random inputs on `device` (the
    compiler machine calls it with CPU tensors and its target to fill the cache)."""
    M, N, K = shape
    generator = torch.Generator().manual_seed(M + N + K)
    torch_dtype = getattr(torch, dtype)
    a = torch.randn(M, K, generator=generator).to(device, torch_dtype)
    b = torch.randn(K, N, generator=generator).to(device, torch_dtype)
    element = T.float16 if dtype == "float16" else T.bfloat16
    kernel = matmul_register_a.compile(a, b, target=target, dtype=element,
                                       **REGISTER_A_TILES[tile])
    return kernel, a, b


@pytest.mark.parametrize("tile", list(REGISTER_A_TILES))
@pytest.mark.parametrize("dtype", REGISTER_A_DTYPES)
@pytest.mark.parametrize("shape", REGISTER_A_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_register_a_gemm(shape: tuple[int, int, int], dtype: str, tile: str) -> None:
    kernel, a, b = register_a_kernel(shape, dtype, tile, "cuda")
    c = kernel.get_profiler().run_poisoned(a, b)
    torch.cuda.synchronize()
    expected = a.double().cpu() @ b.double().cpu()
    name = f"register_a_{tile}_{dtype}_{'x'.join(map(str, shape))}"
    _check(name, c, expected, dtype)


def test_tilelang_quickstart_compiled_from_sizes() -> None:
    M, N, K = MATMUL_RELU_SIZES
    kernel = matmul_relu.compile(M=M, N=N, K=K, block_M=128, block_N=128, block_K=32)
    generator = torch.Generator().manual_seed(11)
    a = torch.randn(M, K, generator=generator).to("cuda", torch.float16)
    b = torch.randn(K, N, generator=generator).to("cuda", torch.float16)
    c = kernel.get_profiler().run_poisoned(a, b)
    torch.cuda.synchronize()
    _check("tilelang_quickstart", c, torch.relu(a.double().cpu() @ b.double().cpu()), "float16")


def test_kernel_blocks_launch_in_order() -> None:
    x = torch.randn(*NORMALIZE_ROWS_SHAPE, generator=torch.Generator().manual_seed(5)).cuda()
    norms, y = normalize_rows.compile(x).get_profiler().run_poisoned(x)
    torch.cuda.synchronize()
    expected = x.double().cpu().norm(dim=1)
    _check("kernel_blocks_norms", norms, expected, "float32")
    _check("kernel_blocks_rows", y, x.double().cpu() / expected[:, None]
           + expected.flip(0)[:, None], "float32")


@pytest.mark.parametrize("shape", WARP_SPECIALIZED_SHAPES)
def test_warp_specialized_tma_ring(shape: tuple[int, int]) -> None:
    """T.ws producer (TMA into a ring of shared tiles, mbarriers) and consumer warpgroups."""
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("TMA and mbarrier transactions need sm_90")
    M, K = shape
    a = torch.randn(M, K, generator=torch.Generator().manual_seed(13)).cuda()
    b = warp_specialized_scale.compile(M=M, K=K).get_profiler().run_poisoned(a)
    torch.cuda.synchronize()
    _check(f"warp_specialized_{M}x{K}", b, a.double().cpu() * 2.0, "float32")


@pytest.mark.parametrize("problem", STREAM_K_PROBLEMS, ids=lambda p: "x".join(map(str, p)))
def test_stream_k_gemm(problem: tuple[int, int, int, int]) -> None:
    """A while loop of pipelined runs, whole tiles stored and parts added atomically."""
    M, N, K, programs = problem
    generator = torch.Generator().manual_seed(M + N + K + programs)
    a = torch.randn(M, K, generator=generator).to("cuda", torch.float16)
    b = torch.randn(N, K, generator=generator).to("cuda", torch.float16)
    c = torch.zeros(M, N, device="cuda")  # partial tiles are added into it
    matmul_stream_k.compile(M=M, N=N, K=K, programs=programs)(a, b, c)
    torch.cuda.synchronize()
    expected = a.double().cpu() @ b.double().cpu().T
    _check(f"stream_k_{'x'.join(map(str, problem))}", c, expected, "float32")


@pytest.mark.parametrize("kernel", ["producer_consumer", "split_warpgroups"])
@pytest.mark.parametrize("shape", WS_GEMM_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gemm_in_warpgroup_blocks(shape: tuple[int, int, int], kernel: str) -> None:
    """T.gemm inside T.ws blocks: a consumer warpgroup's wgmma fed by a producer's
    T.tma_copy, or each warpgroup multiplying its half of the columns."""
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("wgmma, TMA and mbarrier transactions need sm_90")
    M, N, K = shape
    generator = torch.Generator().manual_seed(M + N + K)
    a = torch.randn(M, K, generator=generator).to("cuda", torch.float16)
    b = torch.randn(K, N, generator=generator).to("cuda", torch.float16)
    jit = matmul_producer_consumer if kernel == "producer_consumer" else matmul_split_warpgroups
    c = jit.compile(M=M, N=N, K=K).get_profiler().run_poisoned(a, b)
    torch.cuda.synchronize()
    _check(f"ws_{kernel}_{'x'.join(map(str, shape))}", c, a.double().cpu() @ b.double().cpu(),
           "float16")


@pytest.mark.parametrize("length", [1, 1000, 1 << 20])
def test_scalar_parameters_and_a_dynamic_size(length: int) -> None:
    kernel = tilec.compile(scaled_copy(), out_idx=[1], target="cuda")
    x = torch.randn(length, device="cuda")
    y = kernel(x, 1.5, -3)
    torch.cuda.synchronize()
    _check(f"scaled_copy_{length}", y, x.double().cpu() * 1.5 - 3, "float32")


def test_profiler_times_and_checks_a_kernel() -> None:
    case = next(c for c in cases() if c.name.startswith("row_softmax_float32"))
    kernel = tilec.compile(case.factory(), out_idx=case.out_idx, target="cuda")
    profiler = kernel.get_profiler()
    profiler.assert_allclose(lambda x: torch.softmax(x.double(), dim=1), atol=1e-5, rtol=1e-4)
    milliseconds = profiler.do_bench(warmup=5, rep=20)
    RESULTS.append({"kernel": case.name, "do_bench_ms": milliseconds, "passed": milliseconds > 0})
    assert 0 < milliseconds < 100


def test_varlen_rows_grid_from_a_scalar_argument() -> None:
    """The launch sizes grid x from max_seqlen (a kernel argument); run-time slices start each
    tile at its sequence's row."""
    lengths, dim = VARLEN_ROWS_PROBLEM
    total = sum(lengths)
    kernel = tilec.compile(varlen_rows(total, dim, len(lengths)), target="cuda")
    x = torch.randn(total, dim, generator=torch.Generator().manual_seed(17)).to("cuda",
                                                                                torch.float16)
    bounds = torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()], dtype=torch.int32)
    out = torch.full((total, dim), float("nan"), dtype=torch.float16, device="cuda")
    kernel(x, bounds.cuda(), max(lengths), out)
    torch.cuda.synchronize()
    _check("varlen_rows", out, x.double().cpu() * 2.0 + 1.0, "float16")
