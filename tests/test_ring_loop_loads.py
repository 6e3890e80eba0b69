"""ring-loop-loads (opt-in, TILEC_LOOP_LOAD_RING=S) on the int4 GEMV (examples/quantized/gemv.py's
gemv_uint_half2, sm_90a, the three codegen opt-ins): the step loop's weights, scales and zeros
copied by cp.async into per-thread shared-memory slots a step ahead and read back from them;
the activations every block reads stay global loads. Checked here: the PTX (the weights' 16-byte
loads and every 2-byte scale / zero load replaced by cp.async and ld.shared, a wait per step),
its shared memory (the two loop versions' rings share their bytes), and that ptxas assembles it
in no more registers and without local memory. The rewrite: lit_tests/passes/ring-loop-loads.mlir;
GPU numerics (against float64 and bit for bit against the loop without the ring) and speed:
tests/gpu/test_ring_loop_loads_gpu.py and the device job's ablation (not yet run)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "quantized"))

from gemv import gemv_uint_half2, meta_weights  # noqa: E402

from tilec.compiler.tensorcore.ptx import ptxas_check  # noqa: E402

N, K = 256, 4 * 1024  # four steps of 4 rows x 4 words a lane
CODEGEN = ("TILEC_UNSWITCH_INVARIANT_CONDITIONS", "TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS")
THREADS = 128  # 4 warps of 4 rows
pytestmark = pytest.mark.skipif(
    subprocess.run(["which", "ptxas"], capture_output=True).returncode != 0,
    reason="ptxas is not on this machine")


def _kernel(monkeypatch: pytest.MonkeyPatch, slots: int):
    for name in CODEGEN:
        monkeypatch.setenv(name, "1")
    monkeypatch.delenv("TILEC_PREFETCH_LOOP_LOADS", raising=False)
    monkeypatch.delenv("TILEC_PREFETCH_L2", raising=False)
    monkeypatch.setenv("TILEC_LOOP_LOAD_RING", str(slots))
    return gemv_uint_half2.compile(
        torch.empty(1, K, dtype=torch.float16, device="meta"),
        torch.empty(N, K // 8, dtype=torch.uint32, device="meta"),
        *meta_weights("uint4", N, K)[1:], target="cuda:sm_90a")


def _registers(ptx: str) -> int:
    result = subprocess.run(["ptxas", "-arch=sm_90a", "-v", "-o", "/dev/null", "-"],
                            input=ptx, capture_output=True, text=True, check=True)
    return int(re.search(r"Used (\d+) registers", result.stderr).group(1))


@pytest.mark.parametrize("slots", [2, 3])
def test_weights_scales_and_zeros_come_through_the_ring(slots: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    plain_kernel = _kernel(monkeypatch, 0)
    plain = plain_kernel.get_kernel_source()
    kernel = _kernel(monkeypatch, slots)
    ptx = kernel.get_kernel_source()
    assert "cp.async" not in plain
    # the aligned loop version: 4 rows' 16-byte weights (.cg) and 8 scale / zero words (.ca)
    # issued before the loop (slots - 1 iterations) and in it; the element-wise version rings
    # the 8 scale / zero words only (its copies check alignment in the loop)
    assert ptx.count("cp.async.cg.shared.global") == 4 * slots
    assert ptx.count("cp.async.ca.shared.global") == 8 * slots * 2
    assert ptx.count("cp.async.wait_group") == 2
    assert f"cp.async.wait_group \t{slots - 1};" in ptx
    assert plain.count("ld.global.v4") - ptx.count("ld.global.v4") == 4
    assert ptx.count("ld.shared.v4") == 4
    halves = plain.count("ld.global.b16") - ptx.count("ld.global.b16")
    assert halves == 8 * 2 and ptx.count("ld.shared.b16") == halves
    # one ring of (4 x 16 + 8 x 4) bytes a thread and slot, shared by the two loop versions
    assert kernel.artifact.launch["shared_bytes"] == slots * THREADS * (4 * 16 + 8 * 4)
    assert "ld.local" not in ptx
    ptxas_check(ptx, "sm_90a")
    if slots == 2:  # three slots take 72 registers at this shape (64 at 1 x 28672 x 8192)
        assert _registers(ptx) <= _registers(plain)
