"""tests/gpu/branch_chain_kernels.py on the GPU: the consumer-first warp-specialized ring of an
`if tx < 128: ... else:` chain, exactly against its float32 reference with the output poisoned
(NaN) first. A block barrier between the branches hangs it: the kernel's end is awaited with a
deadline, so a hang fails the test (the process may then need its own timeout to exit).
Compiled in process (the whole compiler on the GPU machine), or taken from TILEC_CACHE_DIR."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from branch_chain_kernels import WIDTH, consumer_first_ring, reference  # noqa: E402

SHAPES = [(64, 1), (100, 5), (1000, 8)]  # rows, steps: one tile, a ragged one, many blocks
DEADLINE_S = 20.0
HOPPER_ONLY = True  # wgmma: precompile_frontend.py compiles these for TMA targets only


def precompile(target: str) -> None:
    """Every kernel these tests compile, into TILEC_CACHE_DIR."""
    for rows, steps in SHAPES:
        consumer_first_ring.compile(rows, steps, target=target)


def _finish_within(seconds: float) -> None:
    done = torch.cuda.Event()
    done.record()
    start = time.monotonic()
    while not done.query():
        if time.monotonic() - start > seconds:
            pytest.fail(f"the kernel did not finish in {seconds} s: a hang")
        time.sleep(0.01)


@pytest.mark.parametrize(("rows", "steps"), SHAPES)
def test_consumer_first_ring_on_gpu(rows: int, steps: int) -> None:
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("mbarrier waits need a Hopper GPU")
    generator = torch.Generator().manual_seed(rows + steps)
    a = torch.randn((steps * rows, WIDTH), generator=generator).cuda()
    kernel = consumer_first_ring.compile(rows, steps)
    out = torch.full_like(a, float("nan"))
    kernel(a, out)
    _finish_within(DEADLINE_S)
    produced = out.cpu()
    assert not produced.isnan().any(), "elements left unwritten"
    # 2a + 1 rounds once in float32 however it is evaluated (2a is exact), so the float32
    # reference is the exact answer: every element must have come through the ring unchanged
    torch.testing.assert_close(produced, reference(a.cpu()), rtol=0, atol=0)
