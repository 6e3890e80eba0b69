"""T.gemm_sp (2:4 structured-sparse A, TileLang's ordered metadata) and T.device_assert, as
TileLang writes them (examples/gemm_sp): numerics on the CPU target against a float64 dense
product with random sparse inputs, compressed here by an independent torch compressor; the
CUDA kernel's PTX; what is rejected.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import torch
from conftest import poisoned

import tilec
import tilec.language as T
from tilec.cuda.intrinsics.sparse_layout import GROUP_CONFIG, get_e_factor
from tilec.errors import TilecError


def semi_sparse(M: int, K: int, dtype: torch.dtype, rng: torch.Generator) -> torch.Tensor:
    """Random values, `kept` of each group of K's elements nonzero (2 of 4; 1 of 2 for
    float32), the kept positions random."""
    kept, group = GROUP_CONFIG[T.dtype(dtype)]
    values = torch.randn(M, K // group, group, generator=rng) + 3.0  # never zero
    order = torch.rand(M, K // group, group, generator=rng).argsort(-1)
    values[order >= kept] = 0.0
    return values.reshape(M, K).to(dtype)


def compressed(dense: torch.Tensor, meta_dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """(A_sparse, E) in TileLang's ordered format: each group's kept elements in order, and a
    4-bit field per group (kept positions in bits 1:0 and 3:2; float32's 0b0100 / 0b1110),
    the fields of one metadata element from its low bits."""
    M, K = dense.shape
    kept, group = GROUP_CONFIG[T.dtype(dense.dtype)]
    groups = dense.reshape(M, K // group, group)
    nonzero_first = torch.sort((groups != 0).int(), dim=-1, descending=True, stable=True)
    positions = nonzero_first.indices[..., :kept]
    positions = positions.sort(-1).values
    sparse = groups.gather(-1, positions).reshape(M, K * kept // group)
    if kept == 1:
        fields = torch.where(positions[..., 0] == 0, 0b0100, 0b1110)
    else:
        fields = positions[..., 0] | (positions[..., 1] << 2)
    per_element = T.dtype(meta_dtype).bits // 4
    fields = fields.reshape(M, -1, per_element).long()
    meta = sum(fields[..., j] << (4 * j) for j in range(per_element))
    bits = T.dtype(meta_dtype).bits
    meta = torch.where(meta >= 1 << (bits - 1), meta - (1 << bits), meta)  # two's complement
    return sparse.contiguous(), meta.to(meta_dtype)


def gemm_sp(M, N, K, dtype, e_dtype, block_M=64, block_N=64, block_K=64, transpose_B=False):
    kept, group = GROUP_CONFIG[T.dtype(dtype)]
    e_factor = get_e_factor(dtype, e_dtype)
    B_shape = (N, K) if transpose_B else (K, N)
    B_tile = (block_N, block_K) if transpose_B else (block_K, block_N)

    @T.prim_func
    def main(A_sparse: T.Tensor((M, K * kept // group), dtype),
             E: T.Tensor((M, K // e_factor), e_dtype), B: T.Tensor(B_shape, dtype),
             C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K * kept // group), dtype)
            E_shared = T.alloc_shared((block_M, block_K // e_factor), e_dtype)
            B_shared = T.alloc_shared(B_tile, dtype)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A_sparse[by * block_M, k * block_K * kept // group], A_shared)
                T.copy(E[by * block_M, k * block_K // e_factor], E_shared)
                if transpose_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm_sp(A_shared, E_shared, B_shared, C_local, transpose_B=transpose_B)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@pytest.mark.parametrize(("dtype", "e_dtype", "transpose_B", "shape"), [
    (torch.float16, torch.int16, False, (128, 64, 256)),
    (torch.float16, torch.int8, False, (128, 64, 256)),
    (torch.float16, torch.int32, False, (128, 64, 256)),
    (torch.bfloat16, torch.int16, False, (128, 64, 256)),
    (torch.float32, torch.int16, False, (128, 64, 256)),
    (torch.float16, torch.int16, True, (64, 128, 128)),
])
def test_gemm_sp_matches_the_dense_product(dtype: torch.dtype, e_dtype: torch.dtype,
                                           transpose_B: bool, shape: tuple[int, int, int],
                                           rng: torch.Generator) -> None:
    M, N, K = shape
    dense = semi_sparse(M, K, dtype, rng)
    b = torch.randn(*((N, K) if transpose_B else (K, N)), generator=rng).to(dtype)
    sparse, meta = compressed(dense, e_dtype)
    c = poisoned((M, N), torch.float32)
    kernel = tilec.compile(gemm_sp(M, N, K, T.dtype(dtype), T.dtype(e_dtype),
                                   transpose_B=transpose_B), target="cpu")
    kernel(sparse, meta, b, c)
    reference = dense.double() @ (b.double().T if transpose_B else b.double())
    tolerance = {torch.float16: 1e-3, torch.bfloat16: 1e-2, torch.float32: 1e-5}[dtype]
    torch.testing.assert_close(c.double(), reference, rtol=tolerance, atol=tolerance * 10)


def test_gemm_sp_runs_the_dense_gemm_on_tensor_cores() -> None:
    kernel = tilec.compile(gemm_sp(256, 256, 256, T.float16, T.int16, 128, 128, 64),
                           target="cuda:sm_90a")
    ptx = kernel.get_kernel_source()
    assert "wgmma.mma_async" in ptx
    assert "ld.local" not in ptx


def rejected_gemm_sp(A_shape: tuple[int, int], E_columns: int, transpose_A: bool):
    """A 64 x 64 x 64 gemm_sp tilec refuses: its A transposed, or its metadata too narrow."""
    @T.prim_func
    def main(A: T.Tensor(A_shape, T.float16), E: T.Tensor((64, E_columns), T.int16),
             B: T.Tensor((64, 64), T.float16), C: T.Tensor((64, 64), T.float32)):
        with T.Kernel(1, threads=128) as _:
            A_s = T.alloc_shared(A_shape, T.float16)
            E_s = T.alloc_shared((64, E_columns), T.int16)
            B_s = T.alloc_shared((64, 64), T.float16)
            C_f = T.alloc_fragment((64, 64), T.float32)
            T.copy(A, A_s)
            T.copy(E, E_s)
            T.copy(B, B_s)
            T.gemm_sp(A_s, E_s, B_s, C_f, transpose_A=transpose_A)
            T.copy(C_f, C)

    return main


@pytest.mark.parametrize(("A_shape", "E_columns", "transpose_A", "message"), [
    ((32, 64), 4, True, r"T.gemm_sp\(transpose_A=True\) is not supported by tilec"),
    ((64, 32), 2, False, r"E \('E_s'\) is \[64, 2\]; 64 rows of 64 elements take \[64, 4\]"),
])
def test_gemm_sp_rejected_at_the_line(A_shape: tuple[int, int], E_columns: int,
                                      transpose_A: bool, message: str) -> None:
    with pytest.raises(TilecError, match=message) as error:
        tilec.compile(rejected_gemm_sp(A_shape, E_columns, transpose_A), target="cpu")
    assert error.value.filename == __file__
    source = open(__file__).read().splitlines()
    assert "T.gemm_sp(" in source[error.value.lineno - 1]


@tilec.jit
def bounded(A, limit=100.0):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    B = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
        for i in T.Parallel(64):
            T.device_assert(A[bx * 64 + i] < limit, "A past the limit")  # the-assert
            B[bx * 64 + i] = A[bx * 64 + i] * 2.0
    return B


def test_device_assert_that_holds_changes_nothing(rng: torch.Generator) -> None:
    a = torch.randn(256, generator=rng)
    torch.testing.assert_close(bounded(a), a * 2.0)


def test_device_assert_that_fails_stops_the_program_with_its_message(tmp_path) -> None:
    """On the CPU target a failed T.device_assert prints its file:line and message and aborts
    (run in a child process)."""
    script = (f"import sys, torch; sys.path.insert(0, {str(tmp_path.parent)!r})\n"
              f"sys.path.insert(0, {__file__.rsplit('/', 1)[0]!r})\n"
              "import test_gemm_sp as t\n"
              "a = torch.zeros(128); a[70] = 1000.0\n"
              "t.bounded(a)\n"
              "print('no abort')\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode != 0 and "no abort" not in result.stdout
    line = next(n for n, text in enumerate(open(__file__), 1) if "# the-assert" in text)
    assert f"test_gemm_sp.py:{line}: A past the limit" in result.stderr + result.stdout


def test_device_assert_calls_assertfail_on_cuda() -> None:
    ptx = bounded.compile(torch.empty(128), target="cuda:sm_90a").get_kernel_source()
    assert "__assertfail" in ptx


def gather_in_thread(rows: int, width: int):
    """TileLang's gemm_sp compressor pattern: each thread copies a row of fp16 into its own
    T.alloc_local array (16-byte vectors) and reads it back at run-time indices, which keeps
    the array in local memory."""
    @T.prim_func
    def main(X: T.Tensor((rows, width), T.float16), picks: T.Tensor((rows, width), T.int32),
             Y: T.Tensor((rows, width), T.float16)):
        with T.Kernel(1, threads=rows):
            tx = T.get_thread_binding(0)
            row = T.alloc_local([width], T.float16)
            T.copy(X[tx, 0:width], row)
            for j in T.serial(width):
                Y[tx, j] = row[picks[tx, j]]

    return main


def test_a_per_thread_array_in_local_memory_is_aligned_for_its_vector_copies() -> None:
    """Its vector stores (st.local.v4) fault on a misaligned address unless the array's local
    memory is 16-byte aligned (the compressor of TileLang's gemm_sp example did, on the H200)."""
    ptx = tilec.compile(gather_in_thread(32, 32), target="cuda:sm_90a").get_kernel_source()
    assert "st.local.v4" in ptx
    depots = re.findall(r"\.local \.align (\d+) \.b8\s+__local_depot", ptx)
    assert depots and all(int(align) >= 16 for align in depots)
