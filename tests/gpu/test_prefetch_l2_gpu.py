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

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "quantized"))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

import gemv  # noqa: E402

CODEGEN = ("TILEC_UNSWITCH_INVARIANT_CONDITIONS", "TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS")
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


def _inputs(fmt: str, misaligned: bool) -> tuple[list, torch.Tensor]:
    a = torch.randn(1, K, device="cuda").half()
    args, weight = gemv.weights(fmt, N, K, "cuda", integer_zeros=True)
    args[0] = args[0].view(torch.uint32)
    if misaligned:  # 2 bytes past a 16-byte boundary
        flat = torch.empty(K + 1, dtype=a.dtype, device="cuda")
        flat[1:].copy_(a[0])
        a = flat[1:].view(1, K)
    return [a, *args], weight


@pytest.mark.parametrize("misaligned", [False, True])
@pytest.mark.parametrize("distance", ["1", "2"])
@pytest.mark.parametrize("case", list(CASES))
def test_prefetched_equals_the_loop(case: str, distance: str, misaligned: bool,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    fmt, config = CASES[case]
    torch.manual_seed(len(case) + int(distance) + misaligned)
    inputs, weight = _inputs(fmt, misaligned)
    results = {}
    for setting in (distance, ""):
        for name, value in _settings(setting).items():
            monkeypatch.setenv(name, value)
        compiled = gemv.gemv_uint_half2.compile(*inputs, target="cuda", **config)
        results[setting] = compiled.get_profiler().run_poisoned(*inputs)
        torch.cuda.synchronize()
    prefetched = results[distance]
    assert not prefetched.isnan().any(), "elements left unwritten"
    expected = inputs[0].double() @ weight.double().t()
    error = ((prefetched.double() - expected).norm() / expected.norm()).item()
    assert error < 3e-3, f"relative error {error:.2e} against float64"
    assert torch.equal(prefetched, results[""]), "the prefetched kernel differs from the loop"


def precompile(target: str = "cuda:sm_90a") -> None:
    """Compile every kernel the test runs into TILEC_CACHE_DIR (on the compiler machine; the
    alignment of the tensors is no part of a kernel's key)."""
    import os

    for fmt, config in CASES.values():
        a = torch.empty(1, K, dtype=torch.float16, device="meta")
        args = gemv.meta_weights(fmt, N, K)
        args[0] = torch.empty(N, K * gemv.BITS[fmt] // 32, dtype=torch.uint32, device="meta")
        for setting in ("1", "2", ""):
            os.environ.update(_settings(setting))
            gemv.gemv_uint_half2.compile(a, *args, target=target, **config)


if __name__ == "__main__":
    precompile()
