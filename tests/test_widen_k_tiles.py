"""widen-k-tiles keeps a GEMM's result: the frontend's IR of benchmarks/fused_gemm.py's kernels at
the quickstart's block_K = 32 (64-byte K rows), widened as on sm_90a, then compiled for the CPU
target and run against a float32 reference (random inputs, output poisoned), at shapes whose
K-tile count is odd (the widened loop's last tiles lie past K), with K not a multiple of the
tile, and transposed / batched operands; and the PTX of the widened quickstart is that of the
same kernel written with 64-column tiles."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from mlir import ir

import tilec.dialect as tile_dialect
from tilec.compiler.driver import compile_module
from tilec.compiler.passes.widen_k_tiles import WidenKTiles
from tilec.jit import JITKernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import fused_gemm  # noqa: E402
from gemm import matmul_register_a  # noqa: E402

import tilec.language as T  # noqa: E402

QUICKSTART = {**fused_gemm.QUICKSTART_TILE, "block_M": 64, "block_N": 64}
CASES = {case.name: case for case in fused_gemm.CASES}


def widened(tile_ir: str) -> tuple[ir.Module, str]:
    """The frontend's module after widen-k-tiles (for sm_90a), and its text."""
    with tile_dialect.new_context():
        module = ir.Module.parse(tile_ir)
        WidenKTiles(arch="sm_90a").run(module)
        return module, str(module)


@pytest.mark.parametrize("name, shape", [
    ("plain_per_op", (136, 200, 96)),  # 3 K tiles: the second widened one half past K
    ("plain_per_op", (72, 136, 232)),  # K = 7.25 tiles
    ("bias_relu", (136, 72, 160)),
    ("transposed_tn", (72, 200, 96)),  # A as K x M (its tile widens along rows), B as N x K
    ("batched_nt", (3, 72, 136, 96)),  # bf16, 3-d tensors, B as N x K
])
def test_widened_loop_computes_the_users_gemm(name, shape, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    torch.manual_seed(3)
    case = CASES[name]
    inputs = case.inputs(torch, shape, "cpu")
    kernel = case.kernel.compile(*inputs, target="cpu", **QUICKSTART,
                                 **({"per_op": True} if case.per_op else {}))
    module, text = widened(kernel.asm["tile"])
    element = "bf16" if name == "batched_nt" else "f16"
    assert text.count(f'x{element}, "shared">') >= 2
    assert f'memref<64x32x{element}, "shared">' not in text, "the loop was not widened"
    assert "stages 2" in text
    with module.context:
        artifact = compile_module(module, kernel.params, "cpu")
    result = JITKernel(artifact, (__file__, 0)).get_profiler().run_poisoned(*inputs)
    expected = case.reference(*[t.float() for t in inputs])
    assert fused_gemm._relative_error(result, expected) < 1e-2


@pytest.mark.parametrize("element, torch_type, block_k, shape", [
    (T.float16, torch.float16, 32, (136, 200, 96)),  # 3 K tiles: the second widened half past K
    (T.float8_e4m3, torch.float8_e4m3fn, 64, (200, 136, 448)),  # 7 K tiles of 64 bytes
])
def test_widened_register_a_chain_computes_the_users_gemm(element, torch_type, block_k, shape,
                                                          tmp_path, monkeypatch) -> None:
    """T.copy(A_shared, A_fragment) then T.gemm(A_fragment, B_shared): A's tile, its fragment
    and the copy between them widen with B's tile."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    generator = torch.Generator().manual_seed(5)
    m, n, k = shape
    a = torch.randn((m, k), generator=generator).to(torch_type)
    b = torch.randn((n, k), generator=generator).to(torch_type)
    kernel = matmul_register_a.compile(a, b, target="cpu", in_dtype=element,
                                       out_dtype=T.float32, block_M=64, block_N=64,
                                       block_K=block_k)
    module, text = widened(kernel.asm["tile"])
    wide = f"64x{2 * block_k}x{'f16' if element == T.float16 else 'f8E4M3FN'}"
    assert f'memref<{wide}, "fragment">' in text and text.count(f'memref<{wide}, "shared">') >= 2
    with module.context:
        artifact = compile_module(module, kernel.params, "cpu")
    result = JITKernel(artifact, (__file__, 0)).get_profiler().run_poisoned(a, b)
    expected = a.double() @ b.double().T
    torch.testing.assert_close(result.double(), expected, rtol=1e-4, atol=1e-3)


def test_widened_register_a_chain_compiles_without_spills(tmp_path, monkeypatch) -> None:
    """sm_90a, per op: the f16 chain at 128 x 64 x 32 runs over 64-column A tiles and
    fragments (64 + 32 registers a thread), its wgmma reading A from registers."""
    from tilec.compiler.tensorcore.ptx import ptxas_check

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_PER_OP_GEMMS", "1")
    a = torch.empty((1024, 1024), dtype=torch.float16, device="meta")
    b = torch.empty((1024, 1024), dtype=torch.float16, device="meta")
    kernel = matmul_register_a.compile(a, b, target="cuda:sm_90a", in_dtype=T.float16,
                                       out_dtype=T.float16, block_N=64, block_K=32)
    tile_cuda = kernel.asm["tile-cuda"]
    assert 'memref<128x64xf16, "fragment">' in tile_cuda and "a_registers = true" in tile_cuda
    lines = [line for line in kernel.asm["ptx"].splitlines() if "wgmma.mma_async" in line]
    assert lines and all("m64n64k16.f32.f16.f16" in line and "}, {%r" in line
                         for line in lines)
    report = ptxas_check(kernel.asm["ptx"], "sm_90a")
    assert report.ok and report.spill_bytes == 0, report.log


def test_loop_not_covering_k_is_left_alone(tmp_path, monkeypatch) -> None:
    """Half the K tiles (an odd count) of K: widening would add the next tile's real data."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    inputs = CASES["plain_per_op"].inputs(torch, (64, 64, 320), "cpu")
    kernel = CASES["plain_per_op"].kernel.compile(*inputs, target="cpu", **QUICKSTART,
                                                  per_op=True)
    half = kernel.asm["tile"].replace("arith.constant 10 : index", "arith.constant 5 : index")
    assert half != kernel.asm["tile"]
    _, text = widened(half)
    assert 'memref<64x32xf16, "shared">' in text


def test_widened_quickstart_is_the_64_column_kernel(tmp_path, monkeypatch) -> None:
    """sm_90a: the quickstart per op at block_K = 32, widened, has the PTX of block_K = 64 at
    2 stages (both then get the same TMA ring)."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    case = CASES["quickstart_per_op"]
    meta = fused_gemm._meta(case, (1024, 1024, 1024))
    narrow = case.kernel.compile(*meta, target="cuda:sm_90a", **case.options)
    wide = case.kernel.compile(*meta, target="cuda:sm_90a",
                               **{**case.options, "block_K": 64, "num_stages": 2})
    assert "wgmma.mma_async" in narrow.asm["ptx"]
    assert narrow.asm["ptx"] == wide.asm["ptx"]

