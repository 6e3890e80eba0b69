"""The memory-bound kernels of examples/norm/ (RMSNorm, fused residual + RMSNorm, LayerNorm,
row and causal softmax, transpose, elementwise with broadcasting) on the CPU target against a
float32 torch reference, with random inputs at ragged sizes (rows and columns that fill no
power-of-two layout), outputs poisoned first. benchmarks/bandwidth.py checks the same kernels
on the GPU at the timed shapes.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

import tilec.language as T

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "norm"


def example(name: str) -> ModuleType:
    module_name = f"norm_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


def run_poisoned(kernel, *inputs, **config):
    return kernel.compile(*inputs, target="cpu", **config).get_profiler().run_poisoned(*inputs)


def assert_close(result: torch.Tensor, expected: torch.Tensor, tolerance: float) -> None:
    assert not result.float().isnan().any(), "an element was never written"
    torch.testing.assert_close(result.float(), expected.float(), atol=tolerance,
                               rtol=tolerance)


DTYPES = [(torch.float16, T.float16, 1e-2), (torch.bfloat16, T.bfloat16, 2e-2)]


def rows(m: int, n: int, dtype: torch.dtype) -> torch.Tensor:
    return (torch.randn(m, n) * 2 + 0.5).to(dtype)


@pytest.mark.parametrize("dtype, tl_dtype, tolerance", DTYPES)
@pytest.mark.parametrize("m, n, block_M, threads", [(37, 320, 1, 64), (10, 96, 4, 128)])
def test_rms_norm(dtype, tl_dtype, tolerance, m, n, block_M, threads) -> None:
    module = example("rms_norm")
    x, weight = rows(m, n, dtype), torch.randn(n).to(dtype)
    y = run_poisoned(module.rms_norm, x, weight, dtype=tl_dtype, block_M=block_M,
                     threads=threads)
    assert_close(y, module.rms_norm_reference(x, weight), tolerance)


@pytest.mark.parametrize("dtype, tl_dtype, tolerance", DTYPES)
def test_add_rms_norm(dtype, tl_dtype, tolerance) -> None:
    module = example("rms_norm")
    x, residual, weight = rows(21, 200, dtype), rows(21, 200, dtype), torch.randn(200).to(dtype)
    y, h = run_poisoned(module.add_rms_norm, x, residual, weight, dtype=tl_dtype, threads=64)
    y_ref, h_ref = module.add_rms_norm_reference(x, residual, weight)
    assert_close(h, h_ref, 0)
    assert_close(y, y_ref, tolerance)


@pytest.mark.parametrize("dtype, tl_dtype, tolerance", DTYPES)
@pytest.mark.parametrize("block_M", [1, 2])
def test_layer_norm(dtype, tl_dtype, tolerance, block_M) -> None:
    module = example("layer_norm")
    x = (torch.randn(25, 300) * 3 + 5).to(dtype)  # a large mean: centred variance needed
    weight, bias = torch.randn(300).to(dtype), torch.randn(300).to(dtype)
    y = run_poisoned(module.layer_norm, x, weight, bias, dtype=tl_dtype, block_M=block_M,
                     threads=128)
    assert_close(y, module.layer_norm_reference(x, weight, bias), tolerance)


@pytest.mark.parametrize("dtype, tl_dtype, tolerance", DTYPES)
def test_softmax(dtype, tl_dtype, tolerance) -> None:
    module = example("softmax")
    x = (torch.randn(19, 333) * 4).to(dtype)
    y = run_poisoned(module.softmax, x, dtype=tl_dtype, block_M=2, threads=64)
    assert_close(y, module.softmax_reference(x), tolerance / 4)


def test_causal_softmax() -> None:
    module = example("softmax")
    x = (torch.randn(3, 70, 70) * 4).half()
    y = run_poisoned(module.causal_softmax, x, block_M=4, threads=64)
    expected = module.causal_softmax_reference(x)
    assert (y.float().triu(1) == 0).all(), "a masked (future) column is not 0"
    assert_close(y, expected, 3e-3)


@pytest.mark.parametrize("parts, block_M, size", [(4, 1, 72), (3, 4, 72), (8, 2, 128)])
def test_causal_softmax_reads_the_column_blocks_it_needs(parts, block_M, size) -> None:
    """The rows read in column blocks, only those a block's last row reaches (copies into a
    box of the row's fragment): the same softmax, the masked columns 0, ragged last block."""
    module = example("softmax")
    x = (torch.randn(2, size, size) * 4).half()
    y = run_poisoned(module.causal_softmax, x, block_M=block_M, threads=32, parts=parts)
    assert (y.float().triu(1) == 0).all(), "a masked (future) column is not 0"
    assert_close(y, module.causal_softmax_reference(x), 3e-3)


def test_causal_softmax_ptx_skips_masked_column_blocks(monkeypatch, tmp_path) -> None:
    """On sm_90a each column block's 16-byte loads are behind the block's test (8 blocks of
    512 columns, 2 vectors of each row per thread: one guarded load per thread and block in
    the aligned path), registers only."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    module = example("softmax")
    _, ptx = ptx_of(module.causal_softmax, meta(4, 4096, 4096), threads=256, parts=8)
    assert len(re.findall(r"ld\.global(\.\w+)*\.v4\.b32", ptx)) == 8
    assert "ld.local" not in ptx


@pytest.mark.parametrize("m, n", [(100, 72), (64, 128)])
def test_transpose(m: int, n: int) -> None:
    module = example("transpose")
    x = torch.randn(m, n).half()
    y = run_poisoned(module.transpose, x, block_M=32, block_N=64, threads=128)
    assert torch.equal(y, x.t())


def test_add_and_scale_shift() -> None:
    module = example("elementwise")
    a, b = torch.randn(37, 1500).half(), torch.randn(37, 1500).half()
    out = run_poisoned(module.add, a, b, block_M=4, block_N=256, threads=64)
    assert_close(out, a.float() + b.float(), 1e-3)
    a = a.bfloat16()
    scale, shift = torch.randn(37).bfloat16(), torch.randn(1500).bfloat16()
    out = run_poisoned(module.scale_shift, a, scale, shift, dtype=T.bfloat16, block_M=4,
                       block_N=256, threads=64)
    assert_close(out, module.scale_shift_reference(a, scale, shift), 2e-2)


# ----- the CUDA code: what the PTX moves memory with ----------------------------------------

def ptx_of(kernel, *inputs, **config):
    compiled = kernel.compile(*inputs, target="cuda:sm_90a", **config)
    return compiled, compiled.get_kernel_source()


def meta(*shape, dtype=torch.float16):
    return torch.empty(*shape, dtype=dtype, device="meta")


def fragment_layouts(compiled) -> list:
    """The #tile.linear layouts infer-fragment-layout gave the kernel's fragments."""
    from tilec.compiler.layouts.linear import LinearLayout

    return [LinearLayout.parse(text) for text in re.findall(
        r"tile\.alloc \{tile\.layout = (#tile\.linear<[^>]*>)\}", compiled.asm["tile-cuda"])]


@pytest.mark.parametrize("n", [4096, 3000])  # 3000: a ragged row, padded to 4096 and masked
def test_rms_norm_ptx_vectors_and_shuffles(n: int, monkeypatch, tmp_path) -> None:
    """Each thread reads and writes its part of the row as 16-byte vectors and the row sum
    stays in registers: xor shuffles in the warp, shared memory only between warps. A ragged
    row keeps every thread on its own part (a layout spread over the padded extent) instead
    of every thread holding the whole row."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    module = example("rms_norm")
    compiled, ptx = ptx_of(module.rms_norm, meta(64, n), meta(n), threads=256)
    assert re.search(r"ld\.global(\.\w+)*\.v4\.b32", ptx)
    assert re.search(r"st\.global(\.\w+)*\.v4\.b32", ptx)
    assert len(re.findall(r"shfl\.sync\.bfly", ptx)) == 5  # lanes 1, 2, 4, 8, 16
    for layout in fragment_layouts(compiled):
        if layout.rank == 2:  # the row: 8 f16 per thread per vector, no thread replicated
            assert layout.contiguous_registers() == 8
            assert not layout.replicated


def test_layer_norm_ptx_parameter_vectors(monkeypatch, tmp_path) -> None:
    """The weight and the bias are read as 16-byte vectors like the row: two each per thread
    (4096 halves over 256 threads). LLVM used to split them into element loads, merged with
    the misaligned path's (the vectors' only users extracted elements), so 2 of the 6 stayed."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    module = example("layer_norm")
    _, ptx = ptx_of(module.layer_norm, meta(64, 4096), meta(4096), meta(4096), threads=256)
    assert len(re.findall(r"ld\.global(\.\w+)*\.v4\.b32", ptx)) == 6


def test_transpose_ptx_loads_in_flight(monkeypatch, tmp_path) -> None:
    """The global -> shared copy of the transpose's tile (two 16-byte vectors per thread)
    is unrolled with both loads issued before the first shared store (a loop waited for each
    load before storing it and issuing the next). The tile is swizzled for its reads down the
    columns (select-shared-swizzle's "transpose"), its stores still 16-byte vectors."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    module = example("transpose")
    compiled, ptx = ptx_of(module.transpose, meta(1024, 2048), threads=256)
    assert 'tile.swizzle = "transpose"' in compiled.asm["tile-schedule"]
    assert re.search(r"xor\.b(32|64)", ptx)  # the chunk of (row, column): column xor row
    lines = ptx.splitlines()
    loads = [n for n, line in enumerate(lines) if re.search(r"ld\.global(\.\w+)*\.v4", line)]
    stores = [n for n, line in enumerate(lines) if re.search(r"st\.shared(\.\w+)*\.v4", line)]
    assert len(loads) == 2 and len(stores) == 2
    assert max(loads) < min(stores)
