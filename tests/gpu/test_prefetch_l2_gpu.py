"""The half2 GEMVs (examples/quantized/gemv.py, int4 and int2 with integer zeros) with
prefetch-loop-loads-to-l2 (TILEC_PREFETCH_L2=d: the weights of step i + d prefetched into L2 at
step i) on top of the other opt-in code generation of the GEMVs, at distances 1 and 2. K = 2560
ends inside the third int4 step (the prefetched step's bounds-checked copies prefetch only runs
wholly inside), and the activations start 16-byte aligned or 2 bytes past it (the loop's
element-wise version). Each result, its output poisoned (NaN) first, is checked against float64
and must equal the kernel's result without the prefetch bit for bit: the pass adds prefetches
and nothing else. Compiled in process (the whole compiler on the GPU machine), or from the
job's cache (`precompile`)."""

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

PREFETCH_L2 = "TILEC_PREFETCH_L2"
N, K = 1024, 2560
# name: (format, config)
CASES = {
    "int4": ("uint4", {"bits": 4, "integer_zeros": True}),
    "int2": ("uint2", {"bits": 2, "integer_zeros": True}),
}


def _settings(distance: str) -> dict[str, str]:
    """The variables a kernel of the test compiles under (0: the prefetches off)."""
    return {**dict.fromkeys(CODEGEN, "1"), "TILEC_PREFETCH_LOOP_LOADS": "0",
            PREFETCH_L2: distance or "0"}


@pytest.mark.parametrize("misaligned", [False, True])
@pytest.mark.parametrize("distance", ["1", "2"])
@pytest.mark.parametrize("case", list(CASES))
def test_prefetched_equals_the_loop(case: str, distance: str, misaligned: bool,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    fmt, config = CASES[case]
    torch.manual_seed(len(case) + int(distance) + misaligned)
    inputs, weight = device_inputs(fmt, N, K, True, misaligned, integer_zeros=True)
    check_opted_in(gemv.gemv_uint_half2, config, inputs, weight, _settings(distance),
                   _settings(""), monkeypatch, tolerance=3e-3)


def precompile(target: str = "cuda:sm_90a") -> None:
    """Compile every kernel the test runs into TILEC_CACHE_DIR (on the compiler machine)."""
    for fmt, config in CASES.values():
        for setting in ("1", "2", ""):
            apply(_settings(setting))
            gemv.gemv_uint_half2.compile(*meta_inputs(fmt, N, K, True), target=target, **config)


if __name__ == "__main__":
    precompile()
