"""The int4 GEMVs (examples/quantized/gemv.py) with prefetch-loop-loads (TILEC_PREFETCH_LOOP_LOADS:
a step loop's loads issued one step ahead into registers the loop carries, the kernel capped at
128 registers, or at 96) on top of the other opt-in code generation of the GEMVs. K = 2560 ends
half-way through the third step of the half2 kernel (the next step's bounds-checked copies read
zeros there, the last step re-reads its own addresses), and the activations start 16-byte
aligned or 2 bytes past it (the loop's element-wise version, prefetched too). Each result, its
output poisoned (NaN) first, is checked against float64 and must equal the kernel's result
without the prefetch bit for bit: the pass moves loads, not arithmetic. Compiled in process
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

PREFETCH = "TILEC_PREFETCH_LOOP_LOADS"
N, K = 1024, 2560
# name: (kernel, weights as uint32 words, config)
CASES = {
    "half2_int4": (gemv.gemv_uint_half2, True, {"bits": 4}),
    "uint4": (gemv.gemv_uint, False, {"bits": 4}),
}


def _settings(prefetch: str) -> dict[str, str | None]:
    """The variables a kernel of the test compiles under (the prefetch unset: off)."""
    return {**dict.fromkeys(CODEGEN, "1"), PREFETCH: prefetch or None}


@pytest.mark.parametrize("misaligned", [False, True])
@pytest.mark.parametrize("prefetch", ["1", "96"])
@pytest.mark.parametrize("case", list(CASES))
def test_prefetched_equals_the_loop(case: str, prefetch: str, misaligned: bool,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    kernel, words, config = CASES[case]
    torch.manual_seed(len(case) + int(prefetch) + misaligned)
    inputs, weight = device_inputs("uint4", N, K, words, misaligned)
    check_opted_in(kernel, config, inputs, weight, _settings(prefetch), _settings(""),
                   monkeypatch, tolerance=2e-3)


def precompile(target: str = "cuda:sm_90a") -> None:
    """Compile every kernel the test runs into TILEC_CACHE_DIR (on the compiler machine)."""
    for kernel, words, config in CASES.values():
        for setting in ("1", "96", ""):
            apply(_settings(setting))
            kernel.compile(*meta_inputs("uint4", N, K, words), target=target, **config)


if __name__ == "__main__":
    precompile()
