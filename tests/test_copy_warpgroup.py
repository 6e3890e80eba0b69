"""A 384-thread block whose gemm splits 128 rows over two warpgroups (layouts over 256, the
third warpgroup a copy of the first): its A descriptors take the warpgroup index modulo 2
(`_wgmma.gemm_warpgroup`), so the copy reads the first warpgroup's rows, never the 64 rows
past A's tile. Checked in the sm_90a code of tests/gpu/copy_warpgroup_kernels.py's GEMM
(cp.async loop, register A, the TMA ring of TILEC_PER_OP_GEMMS=1), which ptxas assembles,
and its CPU numerics; tests/gpu/test_copy_warpgroup_gpu.py runs it on the GPU."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import randn

from tilec.compiler.passes._tma_ring import own_slabs
from tilec.compiler.passes._wgmma import accumulator_layout
from tilec.compiler.targets.cuda import ptxas_path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from copy_warpgroup_kernels import gemm_384, reference  # noqa: E402

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")

# (sizes, knobs, TILEC_PER_OP_GEMMS): ragged M and N, K not a multiple of block_K
CASES = {
    "cp_async": ({"M": 200, "N": 300, "K": 520}, {}, False),
    "register_a": ({"M": 200, "N": 300, "K": 520}, {"register_a": True}, False),
    "tma_ring": ({"M": 200, "N": 320, "K": 1000}, {"stages": 3}, True),
}
# the warpgroup index masked to 0..1, made warp-uniform, times A's 64-row slab (64 rows of
# 128 bytes), added to A's address
MASKED_SLAB = re.compile(
    r"%(\S+) = arith\.andi %\S+, %c1\S* : index\n"
    r"\s*%(\S+) = arith\.index_cast %\1 : index to i32\n"
    r"\s*%(\S+), %\S+ = gpu\.shuffle  idx %\2, [^\n]*\n"
    r"\s*%(\S+) = arith\.index_cast %\3 : i32 to index\n"
    r"\s*%\S+ = arith\.muli %\4, %c8192")


def _compiled(monkeypatch, tmp_path, case: str, target: str):
    sizes, knobs, per_op = CASES[case]
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    if per_op:
        monkeypatch.setenv("TILEC_PER_OP_GEMMS", "1")
    else:
        monkeypatch.delenv("TILEC_PER_OP_GEMMS", raising=False)
    return gemm_384.compile(**sizes, **knobs, target=target)


@needs_ptxas
@pytest.mark.parametrize("case", list(CASES))
def test_copy_warpgroup_reads_the_first_warpgroups_rows(monkeypatch, tmp_path,
                                                        case: str) -> None:
    """Every path runs m64n128k16 wgmmas in a block of 384 threads (512 with the ring's
    producer), assembled by ptxas; where A is read from shared memory its descriptors start
    (tid / 128 & 1) * 8192 bytes in."""
    kernel = _compiled(monkeypatch, tmp_path, case, "cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    ptx, tile, gpu = kernel.asm["ptx"], kernel.asm["tile-cuda"], kernel.asm["gpu"]
    assert set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.(\w+)\.", ptx)) == {"m64n128k16"}
    assert "warpgroups = 2" in tile
    assert f".maxntid {512 if case == 'tma_ring' else 384}, 1, 1" in ptx
    assert ("tile.tma_ring = {consumers = 3" in tile) == (case == "tma_ring")
    if case == "register_a":
        assert "a_registers = true" in tile
    else:
        assert MASKED_SLAB.search(gpu), "A's slab offset from an unmasked warpgroup index"


@pytest.mark.parametrize("case", list(CASES))
def test_copy_warpgroup_gemm_cpu_numerics(monkeypatch, tmp_path, rng: torch.Generator,
                                          case: str) -> None:
    """The GPU test's kernels on the CPU target against float64, the output NaN-poisoned."""
    sizes = CASES[case][0]
    a = randn((sizes["M"], sizes["K"]), torch.float16, rng)
    b = randn((sizes["K"], sizes["N"]), torch.float16, rng)
    c = _compiled(monkeypatch, tmp_path, case, "cpu").get_profiler().run_poisoned(a, b)
    assert not c.isnan().any()
    torch.testing.assert_close(c.double(), reference(a, b), rtol=1e-3, atol=2e-3)


def test_three_consumers_never_store_their_own_slabs() -> None:
    """A TMA ring of 3 consumers (a 384-thread block) over a layout of 2 warpgroups: the
    accumulator's store is not split into per-warpgroup slabs (whose slab would come from
    the unmasked warpgroup index); it was a LayoutError out of the compiler."""
    layout = accumulator_layout(128, 128, 2, False)
    assert own_slabs(layout, 2)
    assert not own_slabs(layout, 3)
