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

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "quantized"))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

import gemv  # noqa: E402

CODEGEN = ("TILEC_UNSWITCH_INVARIANT_CONDITIONS", "TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS")
PREFETCH = "TILEC_PREFETCH_LOOP_LOADS"
N, K = 1024, 2560
# name: (kernel, weights as uint32 words, config)
CASES = {
    "half2_int4": (gemv.gemv_uint_half2, True, {"bits": 4}),
    "uint4": (gemv.gemv_uint, False, {"bits": 4}),
}


def _settings(monkeypatch: pytest.MonkeyPatch, prefetch: str) -> None:
    for name in CODEGEN:
        monkeypatch.setenv(name, "1")
    if prefetch:
        monkeypatch.setenv(PREFETCH, prefetch)
    else:
        monkeypatch.delenv(PREFETCH, raising=False)


def _inputs(words: bool, misaligned: bool) -> tuple[list, torch.Tensor]:
    a = torch.randn(1, K, device="cuda").half()
    args, weight = gemv.weights("uint4", N, K, "cuda")
    if words:
        args[0] = args[0].view(torch.uint32)
    if misaligned:  # 2 bytes past a 16-byte boundary
        flat = torch.empty(K + 1, dtype=a.dtype, device="cuda")
        flat[1:].copy_(a[0])
        a = flat[1:].view(1, K)
    return [a, *args], weight


@pytest.mark.parametrize("misaligned", [False, True])
@pytest.mark.parametrize("prefetch", ["1", "96"])
@pytest.mark.parametrize("case", list(CASES))
def test_prefetched_equals_the_loop(case: str, prefetch: str, misaligned: bool,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    kernel, words, config = CASES[case]
    torch.manual_seed(len(case) + int(prefetch) + misaligned)
    inputs, weight = _inputs(words, misaligned)
    results = {}
    for setting in (prefetch, ""):
        _settings(monkeypatch, setting)
        compiled = kernel.compile(*inputs, target="cuda", **config)
        results[setting] = compiled.get_profiler().run_poisoned(*inputs)
        torch.cuda.synchronize()
    prefetched = results[prefetch]
    assert not prefetched.isnan().any(), "elements left unwritten"
    expected = inputs[0].double() @ weight.double().t()
    error = ((prefetched.double() - expected).norm() / expected.norm()).item()
    assert error < 2e-3, f"relative error {error:.2e} against float64"
    assert torch.equal(prefetched, results[""]), "the prefetched kernel differs from the loop"


def precompile(target: str = "cuda:sm_90a") -> None:
    """Compile every kernel the test runs into TILEC_CACHE_DIR (on the compiler machine; the
    alignment of the tensors is no part of a kernel's key)."""
    import os

    for kernel, words, config in CASES.values():
        a = torch.empty(1, K, dtype=torch.float16, device="meta")
        args = gemv.meta_weights("uint4", N, K)
        if words:
            args[0] = torch.empty(N, K // 8, dtype=torch.uint32, device="meta")
        os.environ.update(dict.fromkeys(CODEGEN, "1"))
        for setting in ("1", "96", ""):
            os.environ.pop(PREFETCH, None)
            if setting:
                os.environ[PREFETCH] = setting
            kernel.compile(a, *args, target=target, **config)


if __name__ == "__main__":
    precompile()
