"""The GEMVs of examples/quantized/gemv.py with hint-streamed-loads (TILEC_STREAMED_LOAD_HINTS=1:
the packed weights loaded with L1::no_allocate and an L2 evict-first policy): int4 half2 with
fp16 zeros on top of the other opt-in code generation (activations 16-byte aligned, and 2 bytes
past it: the loop's element-wise version), the int2 and mxfp4 element kernels on the defaults.
N = 1000 ends inside a block's rows, K = 2560 inside a step (the copies' bounds checks). Each
result, its output poisoned (NaN) first, is checked against float64 and must equal the kernel's
result without the hints bit for bit: a cache hint changes where bytes are kept, not the bytes.
Compiled in process (the whole compiler on the GPU machine), or from the job's cache
(`precompile`)."""

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

HINTS = "TILEC_STREAMED_LOAD_HINTS"
N, K = 1000, 2560
# name: (kernel, format, config, packed as words, other opt-ins)
CASES = {
    "int4_half2": (gemv.gemv_uint_half2, "uint4", {"bits": 4}, True, True),
    "int2": (gemv.gemv_uint, "uint2", {"bits": 2}, False, False),
    "mxfp4": (gemv.gemv_mxfp4, "mxfp4", {}, False, False),
}
ORDER = [("int4_half2", False), ("int2", False), ("mxfp4", False), ("int4_half2", True)]


def _settings(hints: bool, codegen: bool) -> dict[str, str]:
    """The variables a kernel of the test compiles under."""
    return {**dict.fromkeys(CODEGEN, "1" if codegen else "0"), HINTS: "1" if hints else "0"}


@pytest.mark.parametrize("case, misaligned", ORDER)
def test_hinted_equals_plain(case: str, misaligned: bool,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    kernel, fmt, config, words, codegen = CASES[case]
    torch.manual_seed(len(case) + misaligned)
    inputs, weight = device_inputs(fmt, N, K, words, misaligned)
    check_opted_in(kernel, config, inputs, weight, _settings(True, codegen),
                   _settings(False, codegen), monkeypatch, tolerance=3e-3)


def precompile(target: str = "cuda:sm_90a") -> None:
    """Compile every kernel the test runs into TILEC_CACHE_DIR (on the compiler machine)."""
    for kernel, fmt, config, words, codegen in CASES.values():
        for hints in (True, False):
            apply(_settings(hints, codegen))
            kernel.compile(*meta_inputs(fmt, N, K, words), target=target, **config)


if __name__ == "__main__":
    precompile()
