"""fp8 and int8 GEMMs with B stored K x N on the GPU (sm_90a) through transpose-mn-major-operands
(TILEC_TRANSPOSE_MN_MAJOR_OPERANDS=1): the consumers transpose each cp.async-filled K x N tile
into a K-major one that wgmma reads. Checked against float64 on fresh random inputs with the
output poisoned (NaN; int32's minimum) first, at an aligned shape against the library too
(torch._scaled_mm with B column-major, torch._int_mm; it has no e5m2 x e5m2 product), and at
a ragged one whose B rows are not 16-byte aligned (the copies' element-wise path). On sm_80
int8 and tf32 through ldmatrix + mma.sync, which read them K-major only too (on a newer GPU the
runtime loads their sm_80 PTX). Compiled in process (the whole compiler on the GPU machine), or
taken from TILEC_CACHE_DIR (precompile_frontend.py calls precompile)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from unittest import mock

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from gemm import matmul_typed  # noqa: E402

import tilec.language as T  # noqa: E402

# tilec type, torch type, output
TYPES = {
    "e4m3": (T.float8_e4m3, torch.float8_e4m3fn, T.bfloat16),
    "e5m2": (T.float8_e5m2, torch.float8_e5m2, T.bfloat16),
    "s8": (T.int8, torch.int8, T.int32),
}


def operands(name: str, shape: tuple[int, int, int], seed: int):
    m, n, k = shape
    generator = torch.Generator().manual_seed(seed)
    if name == "tf32":
        return torch.randn((m, k), generator=generator), torch.randn((k, n), generator=generator)
    if name == "s8":
        a = torch.randint(-128, 128, (m, k), generator=generator, dtype=torch.int8)
        b = torch.randint(-128, 128, (k, n), generator=generator, dtype=torch.int8)
    else:
        torch_type = TYPES[name][1]
        a = torch.randn((m, k), generator=generator).to(torch_type)
        b = torch.randn((k, n), generator=generator).to(torch_type)
    return a, b


def library(name: str, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor | None:
    """The library's product, None for e5m2 x e5m2, which torch._scaled_mm refuses."""
    if name == "e5m2":
        return None
    b_column_major = b.T.contiguous().T
    if name == "s8":
        return torch._int_mm(a, b_column_major)
    one = torch.ones((), device=a.device, dtype=torch.float32)
    return torch._scaled_mm(a, b_column_major, one, one, out_dtype=torch.bfloat16)


SHAPES = [(1024, 1024, 1024), (1000, 1016, 1008)]
OPT_IN = {"TILEC_TRANSPOSE_MN_MAJOR_OPERANDS": "1"}
MMA_SYNC_TYPES = ["s8", "tf32"]
# the K-major copy filled from the cp.async pipeline's tile, or from the TMA ring's slot
COPY_SOURCES = {"cp_async": {"TILEC_RING_TRANSPOSES": "0"},
                "ring": {"TILEC_RING_TRANSPOSES": "1"}}


def compile_k_by_n(name: str, a: torch.Tensor, b: torch.Tensor, target: str = "cuda"):
    """matmul_typed with B stored K x N (run with OPT_IN set: it is part of the kernel's key)."""
    element, _, out = TYPES[name]
    return matmul_typed.compile(a, b, target=target, in_dtype=element, out_dtype=out,
                                accum_dtype=T.int32 if name == "s8" else T.float32,
                                block_N=128, block_K=64, b_k_major=False)


def compile_k_by_n_mma_sync(name: str, a: torch.Tensor, b: torch.Tensor):
    """matmul_typed for sm_80 (ldmatrix + mma.sync) with B stored K x N, int8 or tf32."""
    element, out, accum = (T.int8, T.int32, T.int32) if name == "s8" else \
        (T.float32, T.float32, T.float32)
    return matmul_typed.compile(a, b, target="cuda:sm_80", in_dtype=element, out_dtype=out,
                                accum_dtype=accum, block_N=128,
                                block_K=64 if name == "s8" else 32, b_k_major=False)
HOPPER_ONLY = True  # wgmma: precompile_frontend.py compiles these for TMA targets only


def precompile(target: str) -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR (the sm_80 ones whatever the
    suite's arch)."""
    for source in COPY_SOURCES.values():
        with mock.patch.dict(os.environ, {**OPT_IN, **source}):
            for name in TYPES:
                for shape in SHAPES:
                    compile_k_by_n(name, *operands(name, shape, seed=0), target=target)
    with mock.patch.dict(os.environ, OPT_IN):
        for name in MMA_SYNC_TYPES:
            for shape in SHAPES:
                compile_k_by_n_mma_sync(name, *operands(name, shape, seed=0))


@pytest.mark.parametrize("source", list(COPY_SOURCES))
@pytest.mark.parametrize("shape", SHAPES, ids=["aligned", "ragged"])
@pytest.mark.parametrize("name", list(TYPES))
def test_k_by_n_b_on_wgmma(name: str, shape: tuple[int, int, int], source: str,
                           monkeypatch) -> None:
    """`ring`: TILEC_RING_TRANSPOSES=1, the copy reads the TMA ring's slot (where B's rows
    are 16-byte aligned; the ragged shape's are not, and keep the cp.async pipeline)."""
    for variable, value in {**OPT_IN, **COPY_SOURCES[source]}.items():
        monkeypatch.setenv(variable, value)
    a, b = operands(name, shape, seed=sum(shape) + len(name))
    kernel = compile_k_by_n(name, a, b)
    assert "wgmma.mma_async" in kernel.asm["ptx"] and "transpose_b = true" in \
        kernel.asm["tile-cuda"]
    if source == "ring" and shape[1] % 16 == 0:
        assert "cp.async.bulk.tensor" in kernel.asm["ptx"]
    c = kernel.get_profiler().run_poisoned(a.cuda(), b.cuda())
    torch.cuda.synchronize()
    expected = a.double() @ b.double()
    if name == "s8":
        assert torch.equal(c.cpu().long(), expected.long())
    else:
        assert not c.isnan().any(), "elements left unwritten"
        torch.testing.assert_close(c.double().cpu(), expected, rtol=2e-2, atol=1e-1)
    peer = library(name, a.cuda(), b.cuda()) if shape[0] % 16 == 0 else None
    if peer is not None:
        if name == "s8":
            assert torch.equal(c, peer)
        else:  # both sum exact products in f32 (orders differ), then round to bf16
            torch.testing.assert_close(c.double(), peer.double(), rtol=2e-2, atol=1e-1)


@pytest.mark.parametrize("shape", SHAPES, ids=["aligned", "ragged"])
@pytest.mark.parametrize("name", MMA_SYNC_TYPES)
def test_k_by_n_b_on_mma_sync(name: str, shape: tuple[int, int, int], monkeypatch) -> None:
    for variable, value in OPT_IN.items():
        monkeypatch.setenv(variable, value)
    a, b = operands(name, shape, seed=sum(shape) + 2 * len(name))
    kernel = compile_k_by_n_mma_sync(name, a, b)
    assert "mma.sync" in kernel.asm["ptx"] and "transpose_b = true" in kernel.asm["tile-cuda"]
    c = kernel.get_profiler().run_poisoned(a.cuda(), b.cuda())
    torch.cuda.synchronize()
    expected = a.double() @ b.double()
    if name == "s8":
        assert torch.equal(c.cpu().long(), expected.long())
    else:  # tf32 products (10-bit mantissas) summed in f32
        assert not c.isnan().any(), "elements left unwritten"
        error = ((c.double().cpu() - expected).norm() / expected.norm()).item()
        assert error < 3e-3, error
