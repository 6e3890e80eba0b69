"""checked_grid on the GPU: a grid sized by a call's arguments that comes out negative is a
LaunchError naming the kernel (the native call declines it to the Python launch, which says
why), one of size 0 launches nothing, and a valid one runs right (outputs poisoned first).
Compiled in process, or taken from TILEC_CACHE_DIR (precompile_frontend.py calls precompile)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from test_runtime_grid import varlen_row_copy  # noqa: E402

import tilec  # noqa: E402


def precompile(target: str) -> None:
    """The kernel this test compiles, into TILEC_CACHE_DIR."""
    tilec.compile(varlen_row_copy(16, 2, 1), target=target)
from tilec.errors import LaunchError  # noqa: E402


@pytest.mark.parametrize("max_seqlen", [-8, 0, 16])
def test_runtime_grid_on_gpu(max_seqlen: int) -> None:
    kernel = tilec.compile(varlen_row_copy(16, 2, 1), target="cuda")
    x = torch.randn((16, 2), generator=torch.Generator().manual_seed(3)).cuda()
    bounds = torch.tensor([0, 16], dtype=torch.int32, device="cuda")
    out = torch.full((16, 2), float("nan"), device="cuda")
    if max_seqlen < 0:
        with pytest.raises(LaunchError, match="is below 0"):
            kernel(x, bounds, max_seqlen, out)
        return
    kernel(x, bounds, max_seqlen, out)
    torch.cuda.synchronize()
    if max_seqlen == 0:
        assert out.isnan().all()
    else:
        torch.testing.assert_close(out.cpu(), x.cpu() + 1.0, rtol=0, atol=0)
