"""What the GPU tests of the GEMVs' opt-in loop passes share (test_prefetch_l2_gpu,
test_prefetch_loop_loads_gpu, test_ring_loop_loads_gpu, test_hint_streamed_loads_gpu): a kernel
of examples/quantized/gemv.py run on activations 16-byte aligned or 2 bytes past it (the loop's
element-wise version), compiled under the opt-in's settings and without them, each output
poisoned (NaN) first; the opted-in result is checked against float64 and must equal the other
bit for bit (those passes move loads, never the arithmetic)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "quantized"))

import gemv  # noqa: E402

# the GEMVs' other opt-in code generation, which the loop passes are tested on top of
CODEGEN = ("TILEC_UNSWITCH_INVARIANT_CONDITIONS", "TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS")
Settings = Mapping[str, str | None]  # a variable's value; None: unset


def device_inputs(fmt: str, n: int, k: int, words: bool, misaligned: bool,
                  integer_zeros: bool = False) -> tuple[list, torch.Tensor]:
    """A kernel's arguments on the GPU (activations first; the packed weights as uint32 words
    where `words`) and the float32 (N, K) weight they stand for."""
    a = torch.randn(1, k, device="cuda").half()
    args, weight = gemv.weights(fmt, n, k, "cuda", integer_zeros=integer_zeros)
    if words:
        args[0] = args[0].view(torch.uint32)
    if misaligned:  # 2 bytes past a 16-byte boundary
        flat = torch.empty(k + 1, dtype=a.dtype, device="cuda")
        flat[1:].copy_(a[0])
        a = flat[1:].view(1, k)
    return [a, *args], weight


def meta_inputs(fmt: str, n: int, k: int, words: bool) -> list:
    """The same arguments' shapes and dtypes alone, to compile from (the activations' alignment
    is no part of a kernel's key)."""
    args = gemv.meta_weights(fmt, n, k)
    if words:
        args[0] = torch.empty(n, k * gemv.BITS[fmt] // 32, dtype=torch.uint32, device="meta")
    return [torch.empty(1, k, dtype=torch.float16, device="meta"), *args]


def apply(settings: Settings, setenv: Callable[[str, str], Any] = os.environ.__setitem__,
          unset: Callable[[str], Any] = lambda name: os.environ.pop(name, None)) -> None:
    """Sets (or unsets, for None) each variable: in os.environ, or through a monkeypatch."""
    for name, value in settings.items():
        if value is None:
            unset(name)
        else:
            setenv(name, value)


def check_opted_in(kernel: Any, config: dict, inputs: list, weight: torch.Tensor,
                   opted_in: Settings, plain: Settings, monkeypatch: Any,
                   tolerance: float) -> None:
    """Runs `kernel` compiled under `opted_in` and under `plain`; the first must match float64
    within `tolerance` (relative norm) and equal the second bit for bit."""
    results = []
    for settings in (opted_in, plain):
        apply(settings, monkeypatch.setenv,
              lambda name: monkeypatch.delenv(name, raising=False))
        compiled = kernel.compile(*inputs, target="cuda", **config)
        results.append(compiled.get_profiler().run_poisoned(*inputs))
        torch.cuda.synchronize()
    produced, reference = results
    assert not produced.isnan().any(), "elements left unwritten"
    expected = inputs[0].double() @ weight.double().t()
    error = ((produced.double() - expected).norm() / expected.norm()).item()
    assert error < tolerance, f"relative error {error:.2e} against float64"
    assert torch.equal(produced, reference), "the opted-in kernel differs from the plain one"
