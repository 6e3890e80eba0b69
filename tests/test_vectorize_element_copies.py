"""vectorize-element-copies (opt-in, TILEC_VECTORIZE_ELEMENT_COPIES=1): TileLang's way of filling
registers, `for v in T.vectorized(8): a_local[v] = A[by, k + v]`, becomes one tile.copy of the
run. Checked here: CPU numerics of a GEMV in that style (activations and packed int4 weight
bytes copied element by element) with and without the pass, against float64, outputs poisoned;
its sm_90a PTX, whose element loads become one 16-byte and one 4-byte load a step, assembled by
ptxas. The rewrite itself: lit_tests/passes/vectorize-element-copies.mlir; on the GPU:
gpu/test_vectorize_element_copies_gpu.py."""

from __future__ import annotations

import re

import pytest
import torch
from element_copy_kernels import VARIABLE, element_copy_gemv, reference

from tilec.compiler.tensorcore.ptx import ptxas_check


@pytest.mark.parametrize("opted_in", [False, True])
@pytest.mark.parametrize("shape", [(1, 48, 256), (3, 20, 64)])
def test_cpu_numerics(opted_in: bool, shape: tuple[int, int, int],
                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, "1" if opted_in else "0")
    torch.manual_seed(sum(shape))
    m, n, k = shape
    a = torch.randn(m, k).half()
    b = torch.randint(-128, 128, (n, k // 2), dtype=torch.int8)
    kernel = element_copy_gemv.compile(a, b, target="cpu")
    out = kernel.get_profiler().run_poisoned(a, b)
    torch.testing.assert_close(out.double(), reference(a, b), rtol=1e-5, atol=1e-3)


def _ptx(opted_in: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(VARIABLE, "1" if opted_in else "0")
    monkeypatch.setenv("TILEC_UNSWITCH_INVARIANT_CONDITIONS", "1")
    return element_copy_gemv.compile(
        torch.empty(1, 4096, dtype=torch.float16, device="meta"),
        torch.empty(256, 2048, dtype=torch.int8, device="meta"),
        target="cuda:sm_90a").get_kernel_source()


def test_ptx_loads_a_step_in_two(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the pass a step is 8 two-byte and 4 one-byte loads; with it, in the loop version
    for aligned tensors, one 16-byte load of activations and one 4-byte load of weight bytes
    (the element-wise fallback stays in the other version)."""
    plain, vectorized = _ptx(False, monkeypatch), _ptx(True, monkeypatch)
    assert "ld.global.v4" not in plain
    assert len(re.findall(r"ld\.global\.(?:nc\.)?v4\.b32", vectorized)) >= 1
    assert len(re.findall(r"ld\.global\.(?:nc\.)?b32", vectorized)) >= 1
    assert "ld.local" not in vectorized
    ptxas_check(vectorized, "sm_90a")
