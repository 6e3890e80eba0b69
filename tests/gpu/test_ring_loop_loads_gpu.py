"""The half2 GEMVs (examples/quantized/gemv.py: int4 with fp16 zeros, int2 with integer zeros)
with ring-loop-loads (TILEC_LOOP_LOAD_RING=S: the weights, scales and zeros of step i + S - 1
copied by cp.async into the thread's shared-memory slots at step i, read back from them) on top
of the other opt-in code generation of the GEMVs, at 2 and 3 slots. N = 1000 ends inside a
block's rows, K = 2560 inside the third int4 step (the copies' bounds checks: the ring is filled
only where the whole-run branch reads it), and the activations start 16-byte aligned or 2 bytes
past it (the loop's element-wise version, whose ring holds the scales and zeros only). Each
result, its output poisoned (NaN) first, is checked against float64 and must equal the kernel's
result without the ring bit for bit: the ring moves bytes, not arithmetic. Compiled in process
(the whole compiler on the GPU machine), or from the job's cache (`precompile`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from gemv_variants import (  # noqa: E402
    CODEGEN,
    apply,
    check_opted_in,
    device_inputs,
    gemv,
    meta_inputs,
)

RING = "TILEC_LOOP_LOAD_RING"
N, K = 1000, 2560
# name: (format, config, integer zeros)
CASES = {
    "int4": ("uint4", {"bits": 4}, False),
    "int2": ("uint2", {"bits": 2, "integer_zeros": True}, True),
}


def _settings(slots: str) -> dict[str, str]:
    """The variables a kernel of the test compiles under (0: no ring)."""
    return {**dict.fromkeys(CODEGEN, "1"), "TILEC_PREFETCH_LOOP_LOADS": "0",
            "TILEC_PREFETCH_L2": "0", RING: slots or "0"}


# most telling first (a device job may stop the run): the default ring of each kernel, then
# misaligned activations (the element-wise loop version), then three slots
ORDER = [(case, slots, misaligned) for slots in ("1", "3") for misaligned in (False, True)
         for case in CASES]


@pytest.mark.parametrize("case, slots, misaligned", ORDER)
def test_ringed_equals_the_loop(case: str, slots: str, misaligned: bool,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    fmt, config, integer_zeros = CASES[case]
    torch.manual_seed(len(case) + int(slots) + misaligned)
    inputs, weight = device_inputs(fmt, N, K, True, misaligned, integer_zeros)
    check_opted_in(gemv.gemv_uint_half2, config, inputs, weight, _settings(slots),
                   _settings(""), monkeypatch, tolerance=3e-3)


def precompile(target: str = "cuda:sm_90a") -> None:
    """Compile every kernel the test runs into TILEC_CACHE_DIR (on the compiler machine)."""
    for fmt, config, _ in CASES.values():
        for setting in ("1", "3", ""):
            apply(_settings(setting))
            gemv.gemv_uint_half2.compile(*meta_inputs(fmt, N, K, True), target=target, **config)


if __name__ == "__main__":
    precompile()
