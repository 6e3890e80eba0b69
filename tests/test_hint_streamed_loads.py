"""hint-streamed-loads (opt-in, TILEC_STREAMED_LOAD_HINTS=1) on the int4 GEMV
(examples/quantized/gemv.py's gemv_uint_half2, sm_90a, the three codegen opt-ins): every load
of the packed weights of 4 bytes or more becomes an ld.global with L1::no_allocate and the
function's L2 evict-first policy; the activations (every block's), scales and zeros (2 bytes)
are left as they were, and nothing else changes. Its PTX assembles with ptxas in no more
registers; with TILEC_STREAM_MAX_REGISTERS=N it is capped at N, with =auto at the registers
of a step's loads plus 40 (int4 80, int2 96). The rewrite:
lit_tests/passes/hint-streamed-loads.mlir; GPU numerics:
tests/gpu/test_hint_streamed_loads_gpu.py; speed: the device job (not yet run)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch
from mlir import ir

from tilec.compiler.passes._ir_walk import walk
from tilec.compiler.passes.hint_streamed_loads import HintStreamedLoads
from tilec.dialect import new_context

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "quantized"))

from gemv import compile_options, gemv_uint_half2, meta_weights  # noqa: E402

N, K = 256, 4 * 1024  # four steps of 4 rows x 4 words a lane
CODEGEN = ("TILEC_UNSWITCH_INVARIANT_CONDITIONS", "TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS")
HINTED = "ld.global.L1::no_allocate.L2::cache_hint"


def _kernel(monkeypatch: pytest.MonkeyPatch, hints: bool, cap: int | str = 0, fmt: str = "uint4",
            **options):
    for name in CODEGEN:
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("TILEC_STREAMED_LOAD_HINTS", "1" if hints else "0")
    monkeypatch.setenv("TILEC_STREAM_MAX_REGISTERS", str(cap))
    weights = meta_weights(fmt, N, K)
    return gemv_uint_half2.compile(
        torch.empty(1, K, dtype=torch.float16, device="meta"), weights[0].view(torch.uint32),
        *weights[1:], target="cuda:sm_90a", **compile_options(fmt), **options)


def _loads_by_tensor(module: ir.Module) -> Counter:
    """Global loads per tensor (the memref's type) and width."""
    found: Counter = Counter()
    for op in walk(module.operation):
        if op.name in ("vector.load", "memref.load") and \
                str(op.operands[0].type).endswith(", 1>"):
            found[(str(op.operands[0].type), str(op.results[0].type))] += 1
    return found


def test_only_the_weights_are_hinted(monkeypatch: pytest.MonkeyPatch) -> None:
    gpu_stage = _kernel(monkeypatch, False).asm["gpu"]
    with new_context():
        module = ir.Module.parse(gpu_stage)
        before = _loads_by_tensor(module)
        HintStreamedLoads().run(module)
        after = _loads_by_tensor(module)
        hinted = [op for op in walk(module.operation) if op.name == "llvm.inline_asm"
                  and str(op.attributes["asm_string"]).strip('"').startswith(HINTED)]
        policies = [op for op in walk(module.operation) if op.name == "llvm.inline_asm"
                    and "createpolicy" in str(op.attributes["asm_string"])]
    weights = f"memref<{N}x{K // 8}xi32, 1>"
    gone = before - after
    # every load of the weights (both loop versions' 16-byte loads of the 4 rows, the
    # bounds-checked copies' element-wise words), no other load
    assert set(gone) == {(weights, "vector<4xi32>"), (weights, "i32")}
    assert gone[(weights, "vector<4xi32>")] == 8
    assert not any(tensor == weights for tensor, _ in after)
    assert after == before - gone
    assert len(hinted) == sum(gone.values()) and len(policies) == 1


@pytest.mark.skipif(subprocess.run(["which", "ptxas"], capture_output=True).returncode != 0,
                    reason="ptxas is not on this machine")
def test_ptx_hints_the_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _kernel(monkeypatch, False).get_kernel_source()
    ptx = _kernel(monkeypatch, True).get_kernel_source()
    assert HINTED not in plain
    assert ptx.count(f"{HINTED}.v4.b32") == 8 and ptx.count(f"{HINTED}.b32") == 16
    assert ptx.count("createpolicy.fractional.L2::evict_first.b64") == 1
    # the activations' 16-byte loads stay plain (two loop versions x 4 a step)
    assert ptx.count("ld.global.v4.b32") == plain.count("ld.global.v4.b32") - 8
    assert _registers(ptx) <= _registers(plain)


def _registers(ptx: str) -> int:
    result = subprocess.run(["ptxas", "-arch=sm_90a", "-v", "-o", "/dev/null", "-"],
                            input=ptx, capture_output=True, text=True, check=True)
    assert "spill" not in result.stderr or " 0 bytes spill stores" in result.stderr
    return int(re.search(r"Used (\d+) registers", result.stderr).group(1))


@pytest.mark.skipif(subprocess.run(["which", "ptxas"], capture_output=True).returncode != 0,
                    reason="ptxas is not on this machine")
def test_register_cap_of_streaming_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    """TILEC_STREAM_MAX_REGISTERS=80 caps the hinted GEMV (ptxas then issues a step's loads
    together: SASS, NOTES), without spills; without the hints there is nothing to cap."""
    capped = _kernel(monkeypatch, True, 80).get_kernel_source()
    assert ".maxnreg 80" in capped and _registers(capped) <= 80
    assert ".maxnreg" not in _kernel(monkeypatch, False, 80).get_kernel_source()


@pytest.mark.skipif(subprocess.run(["which", "ptxas"], capture_output=True).returncode != 0,
                    reason="ptxas is not on this machine")
@pytest.mark.parametrize(("fmt", "options", "cap"), [("uint4", {}, 80),
                                                     ("uint2", {"integer_zeros": True}, 96)])
def test_auto_cap_from_the_step_loads(monkeypatch: pytest.MonkeyPatch, fmt: str, options: dict,
                                      cap: int) -> None:
    """TILEC_STREAM_MAX_REGISTERS=auto: the registers of a step's loads (int4: 16 of weights,
    16 of activations, 4 zeros, 4 scales; int2: 32 of activations) plus 40, the least cap at
    which ptxas issued all of the step's weight loads at its start (SASS, the pass's
    docstring); ptxas fits it without spills."""
    ptx = _kernel(monkeypatch, True, "auto", fmt, **options).get_kernel_source()
    assert f".maxnreg {cap}" in ptx and _registers(ptx) <= cap
