"""The int4 GEMV (examples/quantized/gemv.py's gemv_uint_half2) with its step loop in two versions
(unswitch-invariant-conditions, TILEC_UNSWITCH_INVARIANT_CONDITIONS=1, beside fuse-lop3 and
pack-half-pairs): the version for 16-byte aligned tensors runs on fresh torch tensors, the loop
as it was where the activations or the weights start 2 or 4 bytes past a 16-byte boundary
(views at a storage offset). Each result, its output poisoned (NaN) first, is checked against
float64 and must equal the kernel's result without the opt-ins bit for bit: the versions
compute what the loop computed. Compiled in process (the whole compiler on the GPU machine)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "quantized"))

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

from gemv import gemv_uint_half2, weights  # noqa: E402

OPT_INS = ("TILEC_UNSWITCH_INVARIANT_CONDITIONS", "TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS")
N, K = 1024, 2048


def _offset(tensor: torch.Tensor, elements: int) -> torch.Tensor:
    """A contiguous copy of `tensor` starting `elements` elements into its storage."""
    flat = torch.empty(tensor.numel() + elements, dtype=tensor.dtype, device=tensor.device)
    view = flat[elements:].view(tensor.shape)
    view.copy_(tensor)
    return view


def _run(monkeypatch: pytest.MonkeyPatch, opted_in: bool, inputs: list, **config
         ) -> torch.Tensor:
    for name in OPT_INS:
        if opted_in:
            monkeypatch.setenv(name, "1")
        else:
            monkeypatch.delenv(name, raising=False)
    kernel = gemv_uint_half2.compile(*inputs, target="cuda", **config)
    if opted_in:
        assert kernel.asm["ptx"].count("ld.global.v4") > 8, "the step loop was not versioned"
    result = kernel.get_profiler().run_poisoned(*inputs)
    torch.cuda.synchronize()
    return result


@pytest.mark.parametrize("misaligned", ["none", "activations", "weights"])
@pytest.mark.parametrize("integer_zeros", [False, True], ids=["zeros", "integer_zeros"])
def test_versions_match_the_loop(misaligned: str, integer_zeros: bool,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(K + N + len(misaligned) + integer_zeros)
    a = torch.randn(1, K, device="cuda").half()
    (packed, scales, zeros), weight = weights("uint4", N, K, "cuda", integer_zeros)
    words = packed.view(torch.uint32)
    if misaligned == "activations":
        a = _offset(a, 1)  # 2 bytes past the boundary
    elif misaligned == "weights":
        words = _offset(words, 1)  # 4 bytes past it
    inputs = [a, words, scales, zeros]
    config = {"bits": 4, "integer_zeros": integer_zeros}
    versioned = _run(monkeypatch, True, inputs, **config)
    plain = _run(monkeypatch, False, inputs, **config)
    assert not versioned.isnan().any(), "elements left unwritten"
    expected = a.double() @ weight.double().t()
    error = ((versioned.double() - expected).norm() / expected.norm()).item()
    assert error < 2e-3, f"relative error {error:.2e} against float64"
    assert torch.equal(versioned, plain), "the versioned loop differs from the loop"
