"""TileLang's hand-written MMA emitter (tests/gpu/mma_emitter_kernels.py) on the GPU: its gemm
on wgmma (sm_90a) and on ldmatrix + mma.sync (sm_80 PTX, which the driver compiles for the GPU
it runs on), against float64, outputs poisoned first. Compiled in process, or taken from
TILEC_CACHE_DIR (tests/gpu/precompile_frontend.py calls precompile)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from mma_emitter_kernels import emitter_gemm  # noqa: E402

import tilec.language as T  # noqa: E402

M, N, K = 384, 256, 512
ARCHS = ["sm_90a", "sm_80"]
VARIANTS = [(T.float16, "tiled", True), (T.float16, "global", False), (T.int8, "plain", True)]


def compile_emitter_gemm(arch: str, in_dtype: str, store: str, b_transposed: bool):
    integer = in_dtype == T.int8
    return emitter_gemm.compile(
        M=M, N=N, K=K, in_dtype=in_dtype, accum_dtype=T.int32 if integer else T.float32,
        out_dtype=T.int32 if integer else T.float32, chunk=64 if integer else 32,
        b_transposed=b_transposed, store=store, target=f"cuda:{arch}")


def precompile() -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR (both archs, whatever the suite's:
    the sm_80 PTX runs on the GPU through the driver)."""
    for arch in ARCHS:
        for variant in VARIANTS:
            compile_emitter_gemm(arch, *variant)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("in_dtype", "store", "b_transposed"), VARIANTS)
def test_emitter_gemm_on_gpu(arch: str, in_dtype: str, store: str, b_transposed: bool) -> None:
    generator = torch.Generator().manual_seed(7)
    integer = in_dtype == T.int8
    b_shape = (N, K) if b_transposed else (K, N)
    if integer:
        a = torch.randint(-128, 128, (M, K), generator=generator, dtype=torch.int8)
        b = torch.randint(-128, 128, b_shape, generator=generator, dtype=torch.int8)
    else:
        a = torch.randn((M, K), generator=generator).half()
        b = torch.randn(b_shape, generator=generator).half()
    kernel = compile_emitter_gemm(arch, in_dtype, store, b_transposed)
    produced = kernel.get_profiler().run_poisoned(a.cuda(), b.cuda())
    torch.cuda.synchronize()
    expected = a.double() @ (b.double().T if b_transposed else b.double())
    produced = produced.cpu()
    if integer:
        assert torch.equal(produced.long(), expected.long())
        return
    assert not produced.isnan().any(), "elements left unwritten"
    torch.testing.assert_close(produced.double(), expected, rtol=1e-4, atol=1e-3)
