"""The quantized GEMVs (examples/quantized/gemv.py) with the opt-in code generation for decode-bound
loops: unswitch-invariant-conditions (TILEC_UNSWITCH_INVARIANT_CONDITIONS=1: the step loop in a
version for 16-byte aligned tensors and the loop as it was), fuse-lop3 (TILEC_FUSE_LOP3=1: a
sub-byte field taken from the 32-bit word of its private buffer by a shift and one LOP3 with
the float conversion's bits) and pack-half-pairs. The aligned version runs on fresh torch
tensors, the loop as it was where the activations start 2 bytes or the weights 4 bytes past a
16-byte boundary (views at a storage offset). Each result, its output poisoned (NaN) first, is
checked against float64 and must equal the kernel's result without the opt-ins bit for bit:
the rewrites compute what the loop computed. Compiled in process (the whole compiler on the
GPU machine)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "quantized"))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

import gemv  # noqa: E402

OPT_INS = ("TILEC_UNSWITCH_INVARIANT_CONDITIONS", "TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS")
N, K = 1024, 2048
# name: (kernel, format, weights as uint32 words, config)
CASES = {
    "half2_int4": (gemv.gemv_uint_half2, "uint4", True, {"bits": 4}),
    "half2_int4_integer_zeros": (gemv.gemv_uint_half2, "uint4", True,
                                 {"bits": 4, "integer_zeros": True}),
    "uint4": (gemv.gemv_uint, "uint4", False, {"bits": 4}),
    "uint2": (gemv.gemv_uint, "uint2", False, {"bits": 2}),
    "mxfp4": (gemv.gemv_mxfp4, "mxfp4", False, {}),
}


def _offset(tensor: torch.Tensor, elements: int) -> torch.Tensor:
    """A contiguous copy of `tensor` starting `elements` elements into its storage."""
    flat = torch.empty(tensor.numel() + elements, dtype=tensor.dtype, device=tensor.device)
    view = flat[elements:].view(tensor.shape)
    view.copy_(tensor)
    return view


def _run(monkeypatch: pytest.MonkeyPatch, opted_in: bool, kernel, inputs: list, config: dict
         ) -> torch.Tensor:
    for name in OPT_INS:
        if opted_in:
            monkeypatch.setenv(name, "1")
        else:
            monkeypatch.delenv(name, raising=False)
    compiled = kernel.compile(*inputs, target="cuda", **config)
    result = compiled.get_profiler().run_poisoned(*inputs)
    torch.cuda.synchronize()
    return result


@pytest.mark.parametrize("misaligned", ["none", "activations", "weights"])
@pytest.mark.parametrize("case", list(CASES))
def test_opted_in_equals_the_loop(case: str, misaligned: str,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    kernel, fmt, words, config = CASES[case]
    torch.manual_seed(K + N + len(case) + len(misaligned))
    a = torch.randn(1, K, device="cuda").half()
    args, weight = gemv.weights(fmt, N, K, "cuda", config.get("integer_zeros", False))
    if words:
        args[0] = args[0].view(torch.uint32)
    if misaligned == "activations":
        a = _offset(a, 1)  # 2 bytes past the boundary
    elif misaligned == "weights":
        args[0] = _offset(args[0], 4 // args[0].element_size())  # 4 bytes past it
    inputs = [a, *args]
    opted_in = _run(monkeypatch, True, kernel, inputs, config)
    plain = _run(monkeypatch, False, kernel, inputs, config)
    assert not opted_in.isnan().any(), "elements left unwritten"
    expected = a.double() @ weight.double().t()
    error = ((opted_in.double() - expected).norm() / expected.norm()).item()
    assert error < 2e-3, f"relative error {error:.2e} against float64"
    assert torch.equal(opted_in, plain), "the opted-in kernel differs from the plain one"


def precompile(target: str = "cuda:sm_90a") -> None:
    """Compile every kernel the test runs into TILEC_CACHE_DIR (on the compiler machine; the
    alignment of the tensors is no part of a kernel's key)."""
    import os

    for kernel, fmt, words, config in CASES.values():
        a = torch.empty(1, K, dtype=torch.float16, device="meta")
        args = gemv.meta_weights(fmt, N, K)
        if words:
            args[0] = torch.empty(N, K * gemv.BITS[fmt] // 32, dtype=torch.uint32,
                                  device="meta")
        for opted_in in (True, False):
            for name in OPT_INS:
                os.environ.pop(name, None)
                if opted_in:
                    os.environ[name] = "1"
            kernel.compile(a, *args, target=target, **config)


if __name__ == "__main__":
    precompile()
