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

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "quantized"))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

import gemv  # noqa: E402

CODEGEN = ("TILEC_UNSWITCH_INVARIANT_CONDITIONS", "TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS")
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


def _inputs(fmt: str, words: bool, misaligned: bool) -> tuple[list, torch.Tensor]:
    a = torch.randn(1, K, device="cuda").half()
    args, weight = gemv.weights(fmt, N, K, "cuda")
    if words:
        args[0] = args[0].view(torch.uint32)
    if misaligned:  # 2 bytes past a 16-byte boundary
        flat = torch.empty(K + 1, dtype=a.dtype, device="cuda")
        flat[1:].copy_(a[0])
        a = flat[1:].view(1, K)
    return [a, *args], weight


@pytest.mark.parametrize("case, misaligned", ORDER)
def test_hinted_equals_plain(case: str, misaligned: bool,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    kernel, fmt, config, words, codegen = CASES[case]
    torch.manual_seed(len(case) + misaligned)
    inputs, weight = _inputs(fmt, words, misaligned)
    results = {}
    for hints in (True, False):
        for name, value in _settings(hints, codegen).items():
            monkeypatch.setenv(name, value)
        compiled = kernel.compile(*inputs, target="cuda", **config)
        results[hints] = compiled.get_profiler().run_poisoned(*inputs)
        torch.cuda.synchronize()
    hinted = results[True]
    assert not hinted.isnan().any(), "elements left unwritten"
    expected = inputs[0].double() @ weight.double().t()
    error = ((hinted.double() - expected).norm() / expected.norm()).item()
    assert error < 3e-3, f"relative error {error:.2e} against float64"
    assert torch.equal(hinted, results[False]), "the hinted kernel differs from the plain one"


def precompile(target: str = "cuda:sm_90a") -> None:
    """Compile every kernel the test runs into TILEC_CACHE_DIR (on the compiler machine; the
    alignment of the tensors is no part of a kernel's key)."""
    import os

    for kernel, fmt, config, words, codegen in CASES.values():
        a = torch.empty(1, K, dtype=torch.float16, device="meta")
        args = gemv.meta_weights(fmt, N, K)
        if words:
            args[0] = torch.empty(N, K * gemv.BITS[fmt] // 32, dtype=torch.uint32,
                                  device="meta")
        for hints in (True, False):
            os.environ.update(_settings(hints, codegen))
            kernel.compile(a, *args, target=target, **config)


if __name__ == "__main__":
    precompile()
