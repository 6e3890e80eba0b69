"""fp8 (e4m3, e5m2), int8 and tf32 gemms on the per-op wgmma path (plan-wgmma-gemms, _wgmma.py).

TILEC_PER_OP_GEMMS=1 makes lower-gemm-to-tensorcore decline the canonical GEMM, so the kernel
benchmarks/gemm.py times on the whole-kernel generator compiles here per op: each operand type
runs its own wgmma (k32 for one-byte types into f32 or s32, k8 for tf32) fed by the TMA ring,
and ptxas assembles it for sm_90a without spills or serialized wgmmas. An MN-major 8-bit or
32-bit operand, which these instructions cannot read, stays on the CUDA cores; an A copied into a
fragment is packed into wgmma's four A registers. The same kernels are checked against torch
on the CPU target (the reference semantics); on the H200 benchmarks/gemm_per_op.py checks them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from conftest import TOLERANCES, randn

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from gemm import matmul_register_a  # noqa: E402  (benchmarks/gemm_per_op.py checks it on the GPU)

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")

# tilec type, torch type, output, accumulator, the wgmma of a 128 x 128 tile's 64-row atom
TYPES = {
    "e4m3": (T.float8_e4m3, torch.float8_e4m3fn, T.bfloat16, T.float32,
             "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"),
    "e5m2": (T.float8_e5m2, torch.float8_e5m2, T.bfloat16, T.float32,
             "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2"),
    "s8": (T.int8, torch.int8, T.int32, T.int32,
           "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8"),
    "tf32": (T.float32, torch.float32, T.float32, T.float32,
             "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"),
}


@tilec.jit
def matmul_nt(A, B, block_M=128, block_N=128, block_K=64, threads=128, num_stages=3,
              in_dtype=T.float16, out_dtype=T.float16, accum_dtype=T.float32, b_k_major=True):
    """C = A @ B^T with B given N x K (K-major, as 8-bit and tf32 wgmma read it), or with
    `b_k_major` False B given K x N."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), in_dtype)
    B: T.Tensor((N, K) if b_k_major else (K, N), in_dtype)
    C = T.empty((M, N), out_dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), in_dtype)
        B_s = T.alloc_shared((block_N, block_K) if b_k_major else (block_K, block_N), in_dtype)
        C_f = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_s)
            if b_k_major:
                T.copy(B[bx * block_N, k * block_K], B_s)
            else:
                T.copy(B[k * block_K, bx * block_N], B_s)
            T.gemm(A_s, B_s, C_f, transpose_B=b_k_major)
        T.copy(C_f, C[by * block_M, bx * block_N])
    return C


def knobs(name: str) -> dict:
    """The types, and K tiles of 128 bytes (32 tf32 elements, 64 of the others)."""
    element, _, out, accum, _ = TYPES[name]
    return {"in_dtype": element, "out_dtype": out, "accum_dtype": accum,
            "block_K": 32 if name == "tf32" else 64}


def compile_for(name: str, shape: tuple[int, int, int], target: str, b_k_major: bool = True):
    m, n, k = shape
    torch_type = TYPES[name][1]
    a = torch.empty(m, k, dtype=torch_type, device="meta")
    b = torch.empty(*((n, k) if b_k_major else (k, n)), dtype=torch_type, device="meta")
    return matmul_nt.compile(a, b, target=target, b_k_major=b_k_major, **knobs(name))


@needs_ptxas
@pytest.mark.parametrize("name", list(TYPES))
def test_per_op_path_runs_each_type_on_its_wgmma(name: str, monkeypatch) -> None:
    from tilec.compiler.tensorcore.ptx import ptxas_check

    instruction = TYPES[name][4]
    monkeypatch.setenv("TILEC_PER_OP_GEMMS", "1")
    kernel = compile_for(name, (1000, 1016, 1024), "cuda:sm_90a")
    tile_cuda, ptx = kernel.asm["tile-cuda"], kernel.asm["ptx"]
    assert "tile.tensorcore" not in tile_cuda and "tile.wgmma = " in tile_cuda
    assert f'dtype = "{name}"' in tile_cuda and "tile.tma_ring" in tile_cuda
    lines = [line for line in ptx.splitlines() if "wgmma.mma_async" in line]
    # one instruction per 32-byte K step of the 128-byte K tile and 64-row atom (twice where
    # LLVM peels the ring loop's first iteration); fp8 / int8 / tf32 take no transpose bits
    assert lines and all(instruction in line for line in lines)
    assert len(lines) in (4 * 2, 2 * 4 * 2)
    ending = "p; }" if name == "s8" else "p, 1, 1; }"
    assert all(line.endswith(ending) for line in lines), lines[0]
    assert "cp.async.bulk.tensor" in ptx and "cp.async.cg.shared.global" not in ptx
    report = ptxas_check(ptx, "sm_90a")
    assert report.ok and report.spill_bytes == 0, report.log
    for warning in ("C7519", "C7517", "C7520"):
        assert warning not in report.log, report.log


@needs_ptxas
def test_switched_off_the_whole_kernel_generator_takes_it(monkeypatch) -> None:
    """TILEC_PER_OP_GEMMS=0, as by default: the generator's kernel."""
    monkeypatch.setenv("TILEC_PER_OP_GEMMS", "0")
    kernel = compile_for("e4m3", (1000, 1016, 1024), "cuda:sm_90a")
    assert "tile.tensorcore" in kernel.asm["tile-cuda"]
    assert "tile.wgmma" not in kernel.asm["tile-cuda"]


@needs_ptxas
@pytest.mark.parametrize("name", ["e4m3", "s8", "tf32"])
def test_mn_major_b_stays_on_cuda_cores(name: str, monkeypatch) -> None:
    """B given K x N: no wgmma of these types reads it (TileLang takes mma.sync there)."""
    monkeypatch.setenv("TILEC_PER_OP_GEMMS", "1")
    kernel = compile_for(name, (256, 256, 512), "cuda:sm_90a", b_k_major=False)
    assert kernel.artifact.binary_kind == "cubin"
    assert "tile.wgmma" not in kernel.asm["tile-cuda"] and "wgmma" not in kernel.asm["ptx"]


def compile_register_a(name: str, shape: tuple[int, int, int], target: str, block_N: int = 128):
    m, n, k = shape
    torch_type = TYPES[name][1]
    a = torch.empty(m, k, dtype=torch_type, device="meta")
    b = torch.empty(n, k, dtype=torch_type, device="meta")
    return matmul_register_a.compile(a, b, target=target, block_N=block_N, **knobs(name))


@needs_ptxas
@pytest.mark.parametrize("name", ["e4m3", "s8", "tf32"])
def test_register_a_packs_each_type_into_wgmma_a_registers(name: str, monkeypatch) -> None:
    """A copied from shared memory into a fragment: wgmma reads it as four 32-bit registers
    (four one-byte elements or one tf32 each). tf32 at 64 columns of N: one warpgroup's
    128 x 128 f32 accumulator beside 128 x 32 f32 of A takes all 255 registers and spills."""
    from tilec.compiler.tensorcore.ptx import ptxas_check

    monkeypatch.setenv("TILEC_PER_OP_GEMMS", "1")
    block_n = 64 if name == "tf32" else 128
    kernel = compile_register_a(name, (1000, 1016, 1024), "cuda:sm_90a", block_N=block_n)
    assert "a_registers = true" in kernel.asm["tile-cuda"]
    instruction = TYPES[name][4].replace("n128", f"n{block_n}")
    lines = [line for line in kernel.asm["ptx"].splitlines() if "wgmma.mma_async" in line]
    assert lines and all(instruction in line and "}, {%r" in line for line in lines)
    report = ptxas_check(kernel.asm["ptx"], "sm_90a")
    assert report.ok and report.spill_bytes == 0, report.log


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A @ B^T in float64 from the operands' exact values (int8: exact integers)."""
    return a.double() @ b.double().T


@pytest.mark.parametrize("name", list(TYPES))
@pytest.mark.parametrize("b_k_major", [True, False, None])
def test_cpu_numerics_of_each_type(name: str, b_k_major: bool | None,
                                   rng: torch.Generator) -> None:
    """B given N x K, K x N, or (None) N x K with A read through a fragment."""
    m, n, k = 200, 136, 192
    torch_type = TYPES[name][1]
    if name == "s8":
        a = torch.randint(-128, 128, (m, k), generator=rng, dtype=torch.int8)
        b = torch.randint(-128, 128, (n, k), generator=rng, dtype=torch.int8)
    else:
        a, b = randn((m, k), torch_type, rng), randn((n, k), torch_type, rng)
    if b_k_major is None:  # A through a fragment
        kernel = compile_register_a(name, (m, n, k), "cpu")
    else:
        kernel = compile_for(name, (m, n, k), "cpu", b_k_major=b_k_major)
    out = kernel.get_profiler().run_poisoned(a, b if b_k_major is not False else b.T.contiguous())
    expected = reference(a, b)
    if name == "s8":
        assert out.dtype == torch.int32 and torch.equal(out.long(), expected.long())
    else:  # f32 accumulation of exact products, then bf16 (fp8) or f32 (tf32 on the CPU)
        tolerance = TOLERANCES[torch.bfloat16 if name != "tf32" else torch.float32]
        torch.testing.assert_close(out.double(), expected, **tolerance)


def test_e5m2_rows_time_a_product_the_library_has(monkeypatch) -> None:
    """cuBLASLt refuses e5m2 x e5m2 ("Multiplication of two Float8_e5m2 matrices is not
    supported"; the CPU's _scaled_mm does not): gemm_per_op's e5m2 peer multiplies A as e4m3,
    the same bytes, and still computes the row's product."""
    import gemm_per_op

    scaled_mm = torch._scaled_mm

    def as_cublaslt(a, b, *args, **kwargs):
        if a.dtype == b.dtype == torch.float8_e5m2:
            raise ValueError("Multiplication of two Float8_e5m2 matrices is not supported")
        return scaled_mm(a, b, *args, **kwargs)

    monkeypatch.setattr(torch, "_scaled_mm", as_cublaslt)
    generator = torch.Generator().manual_seed(5)
    for layout in ("nt", "nn"):
        row = gemm_per_op.Row("e5m2", "tuned", (64, 96, 128), layout)
        m, n, k = row.shape
        a = randn((m, k), torch.float8_e5m2, generator)
        b = randn((n, k) if layout == "nt" else (k, n), torch.float8_e5m2, generator)
        name, library = gemm_per_op.peer(torch, row, a, b)
        assert "A as e4m3" in name
        error = gemm_per_op.relative_error(library(), gemm_per_op.reference(torch, row, a, b))
        assert error < 1e-2, error
