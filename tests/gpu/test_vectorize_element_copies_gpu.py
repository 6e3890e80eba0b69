"""vectorize-element-copies (TILEC_VECTORIZE_ELEMENT_COPIES=1) on the GPU: a GEMV that fills its
registers element by element under T.vectorized, as TileLang's kernels do
(tests/element_copy_kernels.py), with the element loops as copies (a 16-byte load of
activations and a 4-byte load of weight bytes a step) and without, its activations 16-byte
aligned or 2 bytes past (the copy's element-wise fallback). Each result, its output poisoned
(NaN) first, is checked against float64 and must equal the kernel's result without the pass
bit for bit: the pass changes loads, not arithmetic. Compiled in process (the whole compiler on
the GPU machine), or from the job's cache (`precompile`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from element_copy_kernels import VARIABLE, element_copy_gemv, reference  # noqa: E402

M, N, K = 1, 512, 1024


def _activations(misaligned: bool) -> torch.Tensor:
    a = torch.randn(M, K, device="cuda").half()
    if not misaligned:
        return a
    flat = torch.empty(K + 1, dtype=a.dtype, device="cuda")  # 2 bytes past a 16-byte boundary
    flat[1:].copy_(a[0])
    return flat[1:].view(M, K)


@pytest.mark.parametrize("misaligned", [False, True])
def test_copies_equal_the_element_loops(misaligned: bool,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(7 + misaligned)
    a = _activations(misaligned)
    b = torch.randint(-128, 128, (N, K // 2), dtype=torch.int8, device="cuda")
    results = {}
    for setting in ("1", "0"):
        monkeypatch.setenv(VARIABLE, setting)
        kernel = element_copy_gemv.compile(a, b, target="cuda")
        results[setting] = kernel.get_profiler().run_poisoned(a, b)
        torch.cuda.synchronize()
    copied = results["1"]
    assert not copied.isnan().any(), "elements left unwritten"
    expected = reference(a, b)
    error = ((copied.double() - expected).norm() / expected.norm()).item()
    assert error < 1e-5, f"relative error {error:.2e} against float64"
    assert torch.equal(copied, results["0"]), "the copies differ from the element loops"


def precompile(target: str = "cuda:sm_90a") -> None:
    """Compile both kernels the test runs into TILEC_CACHE_DIR (on the compiler machine)."""
    import os

    a = torch.empty(M, K, dtype=torch.float16, device="meta")
    b = torch.empty(N, K // 2, dtype=torch.int8, device="meta")
    for setting in ("1", "0"):
        os.environ[VARIABLE] = setting
        element_copy_gemv.compile(a, b, target=target)


if __name__ == "__main__":
    precompile()
