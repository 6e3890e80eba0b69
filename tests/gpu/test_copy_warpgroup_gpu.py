"""tests/gpu/copy_warpgroup_kernels.py on the GPU (sm_90a): a 384-thread GEMM block whose gemm
splits 128 rows over two warpgroups, the third a copy of the first (cp.async loop, register A,
and the TMA ring of TILEC_PER_OP_GEMMS=1 with its producer as a fourth warpgroup), ragged
sizes, against float64 with the output poisoned (NaN) first. A copy warpgroup whose A
descriptors start 64 rows past the first's reads past A's tile and stores other values over
the first warpgroup's rows of C; under compute-sanitizer's memcheck that read is also an
out-of-bounds shared access where it passes the arena. Compiled in process (the whole
compiler on the GPU machine), or taken from TILEC_CACHE_DIR (`precompile`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from copy_warpgroup_kernels import gemm_384, reference  # noqa: E402

# (sizes, knobs, TILEC_PER_OP_GEMMS): ragged M and N, K not a multiple of block_K
CASES = {
    "cp_async": ({"M": 200, "N": 300, "K": 520}, {}, False),
    "register_a": ({"M": 200, "N": 300, "K": 520}, {"register_a": True}, False),
    "tma_ring": ({"M": 200, "N": 320, "K": 1000}, {"stages": 3}, True),
}
HOPPER_ONLY = True  # wgmma: precompile_frontend.py compiles these for TMA targets only


def precompile(target: str) -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR (the caller restores os.environ)."""
    for sizes, knobs, per_op in CASES.values():
        os.environ.pop("TILEC_PER_OP_GEMMS", None)
        if per_op:
            os.environ["TILEC_PER_OP_GEMMS"] = "1"
        gemm_384.compile(**sizes, **knobs, target=target)


@pytest.mark.parametrize("case", list(CASES))
def test_copy_warpgroup_gemm_on_gpu(monkeypatch, case: str) -> None:
    sizes, knobs, per_op = CASES[case]
    if per_op:
        monkeypatch.setenv("TILEC_PER_OP_GEMMS", "1")
    else:
        monkeypatch.delenv("TILEC_PER_OP_GEMMS", raising=False)
    generator = torch.Generator().manual_seed(384 + sizes["K"] + len(knobs))
    a = torch.randn((sizes["M"], sizes["K"]), generator=generator).half()
    b = torch.randn((sizes["K"], sizes["N"]), generator=generator).half()
    compiled = gemm_384.compile(**sizes, **knobs)
    assert "wgmma.mma_async" in compiled.asm["ptx"]
    c = compiled.get_profiler().run_poisoned(a.cuda(), b.cuda())
    torch.cuda.synchronize()
    assert not c.isnan().any(), "elements left unwritten"
    torch.testing.assert_close(c.double().cpu(), reference(a, b), rtol=1e-3, atol=2e-3)
