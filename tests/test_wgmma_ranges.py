"""A gemm in a thread range that does not start on a warpgroup of the hardware's
(tests/gpu/wgmma_range_kernels.py: threads 32..287, 64..191): wgmma is issued by warps
4k..4k+3 together, so such a range runs its gemm on mma.sync, a warp's instruction, and
T.wgmma_gemm there is an error at its line; a range from thread 128 keeps wgmma. Checked in
the sm_90a code (PTX assembled by ptxas) and on the CPU target against float64, the outputs
NaN-poisoned; tests/gpu/test_wgmma_ranges_gpu.py runs the kernels on the GPU."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import poisoned, randn

from tilec.compiler.targets.cuda import ptxas_path
from tilec.errors import CompileError

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from wgmma_range_kernels import RANGES, VECTOR, gemm_in_a_range, reference  # noqa: E402

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")

SIZES = {"M": 200, "N": 300, "K": 520}  # ragged M and N, K not a multiple of block_K
OFF_WARPGROUPS = [name for name, (first, _, _) in RANGES.items() if first % 128]


def _compile(name: str, target: str, **knobs):
    first, end, threads = RANGES[name]
    return gemm_in_a_range.compile(**SIZES, first=first, end=end, threads=threads,
                                   target=target, **knobs)


@needs_ptxas
@pytest.mark.parametrize("name", list(RANGES))
def test_range_gemm_instruction(name: str) -> None:
    """Off the hardware's warpgroups: mma.sync over the range's warps, no wgmma, the PTX the
    sm_80 kernel has but its .target; from thread 128: wgmma. ptxas assembles each."""
    kernel = _compile(name, "cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    ptx = kernel.asm["ptx"]
    first, end, _ = RANGES[name]
    if name in OFF_WARPGROUPS:
        assert "wgmma" not in ptx and "tile.wgmma" not in kernel.asm["tile-cuda"]
        assert re.search(r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32", ptx)
        assert "ldmatrix" in ptx
        sm80 = _compile(name, "cuda:sm_80").asm["ptx"]
        assert ptx.replace(".target sm_90a", ".target sm_80") == sm80
    else:
        assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in ptx
        assert "mma.sync" not in ptx
    # the range's block barriers: named ones over exactly its threads
    counts = {int(n) for n in re.findall(r"bar\.sync\s+\d+, (\d+);", ptx)}
    assert end - first in counts


@pytest.mark.parametrize("name", list(RANGES))
def test_range_gemm_cpu_numerics(rng: torch.Generator, name: str) -> None:
    """The GPU test's kernels on the CPU target (the ranges run in turn) against float64."""
    a = randn((SIZES["M"], SIZES["K"]), torch.float16, rng)
    b = randn((SIZES["K"], SIZES["N"]), torch.float16, rng)
    x = randn((VECTOR,), torch.float32, rng)
    blocks = (-(-SIZES["M"] // 128), -(-SIZES["N"] // 128))
    c = poisoned((SIZES["M"], SIZES["N"]), torch.float32)
    y = poisoned((*blocks, VECTOR), torch.float32)
    _compile(name, "cpu")(a, b, x, c, y)
    expected_c, expected_y = reference(a, b, x, blocks)
    assert not c.isnan().any() and not y.isnan().any()
    torch.testing.assert_close(c.double(), expected_c, rtol=1e-3, atol=2e-3)
    torch.testing.assert_close(y.double(), expected_y, rtol=0, atol=0)


@pytest.mark.parametrize("name", OFF_WARPGROUPS)
def test_wgmma_gemm_off_warpgroups_is_an_error(name: str) -> None:
    first = RANGES[name][0]
    with pytest.raises(CompileError, match=rf"wgmma_range_kernels.py:\d+: T.wgmma_gemm runs on "
                                           rf"whole warpgroups .* start at thread {first}, not "
                                           rf"a multiple of 128"):
        _compile(name, "cuda:sm_90a", wgmma_required=True)


def test_wgmma_gemm_on_a_warpgroup_compiles() -> None:
    ptx = _compile("warpgroups_1_2", "cuda:sm_90a", wgmma_required=True).asm["ptx"]
    assert "wgmma.mma_async" in ptx
