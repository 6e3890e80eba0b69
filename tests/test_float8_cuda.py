"""float8 conversions in CUDA kernels (lower-float8-conversions): TileLang's per-token cast to
float8_e4m3fn and back, written as its example writes it (a fragment copy from f32 into f8, a
T.Parallel widening e5m2), rounds as torch does on the CPU target and assembles for sm_90a
(cvt.rn.satfinite pairs, cvt to f16 pairs) and sm_80 (integer code, no cvt to float8)."""

from __future__ import annotations

import pytest
import torch

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path

GROUP = 128


def quantize(M: int, N: int, block_m: int = 8):
    """q = clamp(x / scale) as e4m3 (scale = rowwise amax / 448 per 128 columns) and
    back = q widened through e5m2 to f32."""

    @T.prim_func
    def kernel(X: T.Tensor((M, N), "float32"), Q: T.Tensor((M, N), "float8_e4m3fn"),
               back: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_m), T.ceildiv(N, GROUP), threads=128) as (bx, by):
            x = T.alloc_fragment((block_m, GROUP), "float32")
            amax = T.alloc_fragment((block_m,), "float32")
            scaled = T.alloc_fragment((block_m, GROUP), "float32")
            q = T.alloc_fragment((block_m, GROUP), "float8_e4m3fn")
            wide = T.alloc_fragment((block_m, GROUP), "float32")
            T.copy(X[bx * block_m, by * GROUP], x)
            T.reduce_absmax(x, amax, dim=1)
            for i, j in T.Parallel(block_m, GROUP):
                scaled[i, j] = T.clamp(x[i, j] * 448.0 / T.max(amax[i], 1e-4), -448.0, 448.0)
            T.copy(scaled, q)
            for i, j in T.Parallel(block_m, GROUP):
                wide[i, j] = T.cast(T.cast(q[i, j], "float8_e5m2"), "float32")
            T.copy(q, Q[bx * block_m, by * GROUP])
            T.copy(wide, back[bx * block_m, by * GROUP])

    return kernel


def reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    amax = x.abs().view(x.shape[0], -1, GROUP).amax(dim=2).clamp_min(1e-4)
    scaled = (x.view(x.shape[0], -1, GROUP) * 448.0 / amax[..., None]).clamp(-448, 448)
    q = scaled.view_as(x).to(torch.float8_e4m3fn)
    return q, q.to(torch.float8_e5m2).float()


def test_cpu_rounds_as_torch() -> None:
    torch.manual_seed(3)
    x = torch.randn(16, 256) * 10
    q, back = torch.full_like(x, 7.0).to(torch.float8_e4m3fn), torch.full_like(x, 7.0)
    tilec.compile(quantize(16, 256), target="cpu")(x, q, back)
    want_q, want_back = reference(x)
    assert torch.equal(q.view(torch.uint8), want_q.view(torch.uint8))
    assert torch.equal(back, want_back)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_cuda_assembles_with_the_chip_conversions(arch: str) -> None:
    kernel = tilec.compile(quantize(16, 256), target=f"cuda:{arch}")
    assert kernel.artifact.binary_kind == "cubin"
    ptx = kernel.get_kernel_source()
    hardware = arch == "sm_90a"
    assert ("cvt.rn.satfinite.e4m3x2.f32" in ptx) == hardware
    assert ("cvt.rn.f16x2.e4m3x2" in ptx) == hardware
    assert ("cvt.rn.satfinite.e5m2x2.f32" in ptx or "e5m2x2.f16x2" in ptx) == hardware
