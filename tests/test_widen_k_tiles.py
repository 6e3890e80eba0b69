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

