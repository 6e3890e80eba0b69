"""vectorize-element-copies (opt-in, TILEC_VECTORIZE_ELEMENT_COPIES=1): TileLang's way of filling
registers, `for v in T.vectorized(8): a_local[v] = A[by, k + v]`, becomes one tile.copy of the
run. Checked here: CPU numerics of a GEMV in that style (activations and packed int4 weight
bytes copied element by element) with and without the pass, against float64, outputs poisoned;
its sm_90a PTX, whose element loads become one 16-byte and one 4-byte load a step, assembled by
ptxas. The rewrite itself: lit_tests/passes/vectorize-element-copies.mlir."""

from __future__ import annotations

import re

import pytest
import torch

import tilec
import tilec.language as T
from tilec.compiler.tensorcore.ptx import ptxas_check

VARIABLE = "TILEC_VECTORIZE_ELEMENT_COPIES"


@tilec.jit
def element_copy_gemv(A, B):
    """C = A @ W.T, W's int4 codes two to a byte of B (the low nibble first), each block one
    output; a step copies 8 activations and their 4 weight bytes element by element."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.int8)
    C = T.empty((M, N), T.float32)
    with T.Kernel(N, M, threads=1) as (bx, by):
        a_local = T.alloc_local((8,), T.float16)
        b_local = T.alloc_local((4,), T.int8)
        acc = T.alloc_local((1,), T.float32)
        T.clear(acc)
        for ko in T.serial(K // 8):
            for v in T.vectorized(8):
                a_local[v] = A[by, ko * 8 + v]
            for v in T.vectorized(4):
                b_local[v] = B[bx, ko * 4 + v]
            for v in T.unroll(8):
                code = (b_local[v // 2] >> (4 * (v % 2))) & 15
                acc[0] += T.Cast(T.float32, a_local[v]) * T.Cast(T.float32, code)
        C[by, bx] = acc[0]
    return C


def _reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    codes = b.to(torch.uint8)
    weight = torch.stack((codes & 15, codes >> 4), -1).reshape(b.shape[0], -1)
    return a.double() @ weight.double().t()


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
    torch.testing.assert_close(out.double(), _reference(a, b), rtol=1e-5, atol=1e-3)


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
