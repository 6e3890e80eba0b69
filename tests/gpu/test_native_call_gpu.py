"""The native kernel call on the GPU: every kernel of the CUDA suite (tests/gpu/kernels.py)
called as a kernel object, its outputs allocated by the call, computes what torch computes on
the Python call (the first) and on the native call (the second), where its plan takes it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_cuda_suite import (  # noqa: E402
    CASES,
    TOLERANCE,
    _case_id,
    _make,
    artifact_of,
    native_call_module,
)

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

ALLOCATED = [case for case in CASES if not case[0].zero_outputs]  # atomics need zeroed outputs


@pytest.mark.parametrize("case", ALLOCATED, ids=[_case_id(c) for c in ALLOCATED])
def test_kernel_call_matches_torch(monkeypatch, case) -> None:
    from tilec.jit import JITKernel

    native = native_call_module()

    monkeypatch.setenv("TILEC_NATIVE_CALL", "1")
    spec, shape = case
    kernel = JITKernel(artifact_of(spec), (__file__, 1))
    generator = torch.Generator().manual_seed(11)
    inputs = [_make(p, shape, generator) for p in spec.params if not p.is_output]
    expected = spec.reference(*[a.cpu() for a in inputs])
    dtype = spec.params[-1].dtype
    for call in ("python", "native"):
        produced = kernel(*inputs)
        produced = produced[0] if isinstance(produced, tuple) else produced
        torch.cuda.synchronize()
        error = ((produced.double().cpu() - expected).norm()
                 / expected.norm().clamp_min(1e-30)).item()
        assert error <= TOLERANCE[dtype], f"{call} call: relative error {error:.3g}"
    plain = all(slot[0] in ("ptr", "dim") for slot in kernel.artifact.launch["abi"]) and all(
        isinstance(d, int) or d.isidentifier() for p in spec.params for d in p.shape)
    if plain:  # pointers and shape symbols only: the second call was the native one
        assert isinstance(kernel._call, native.Call), kernel.call_path
        assert kernel.call_path == "native call"
