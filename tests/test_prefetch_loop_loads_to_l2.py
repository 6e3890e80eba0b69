"""prefetch-loop-loads-to-l2 (opt-in, TILEC_PREFETCH_L2=d) on the int4 GEMV
(examples/quantized/gemv.py's gemv_uint_half2, sm_90a, the three codegen opt-ins): the step
loop's weight loads of iteration i + d prefetched into L2 at iteration i. The pass adds only
prefetches: with them erased, the gpu stage canonicalizes to the stage without the pass, so
no value the kernel computes changes. Its PTX: the weights' prefetches (not the activations'
every block reads, nor the 2-byte scales), assembled by ptxas in as many registers as
without. The rewrite: lit_tests/passes/prefetch-loop-loads-to-l2.mlir; GPU numerics and speed:
the device job's ablation (not yet run)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from mlir import ir
from mlir.passmanager import PassManager

from tilec.compiler.passes._ir_walk import walk
from tilec.compiler.passes.prefetch_loop_loads_to_l2 import PrefetchLoopLoadsToL2
from tilec.dialect import new_context

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "quantized"))

from gemv import gemv_uint_half2, meta_weights  # noqa: E402

from tilec.compiler.tensorcore.ptx import ptxas_check  # noqa: E402

N, K = 256, 4 * 1024  # four steps of 4 rows x 4 words a lane
CODEGEN = ("TILEC_UNSWITCH_INVARIANT_CONDITIONS", "TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS")


def _kernel(monkeypatch: pytest.MonkeyPatch, distance: int, target: str = "cuda:sm_90a"):
    for name in CODEGEN:
        monkeypatch.setenv(name, "1")
    monkeypatch.delenv("TILEC_PREFETCH_LOOP_LOADS", raising=False)
    monkeypatch.setenv("TILEC_PREFETCH_L2", str(distance))
    return gemv_uint_half2.compile(
        torch.empty(1, K, dtype=torch.float16, device="meta"),
        torch.empty(N, K // 8, dtype=torch.uint32, device="meta"),
        *meta_weights("uint4", N, K)[1:], target=target)


def _canonical(module: ir.Module) -> str:
    PassManager.parse("builtin.module(canonicalize,cse)", module.context).run(module.operation)
    return str(module)


def test_only_prefetches_are_added(monkeypatch: pytest.MonkeyPatch) -> None:
    gpu_stage = _kernel(monkeypatch, 0).asm["gpu"]
    with new_context():
        module = ir.Module.parse(gpu_stage)
        before = _canonical(ir.Module.parse(gpu_stage))
        PrefetchLoopLoadsToL2().run(module)
        prefetches = [op for op in walk(module.operation) if op.name == "nvvm.prefetch"]
        # the aligned loop version: iteration 1 before the loop, i + 2 in it, a row's 16
        # bytes each (4 rows); the other version tests alignment in the loop, around its
        # copies, which are then no load-only branches (prefetch-loop-loads leaves them too)
        assert len(prefetches) == 2 * 4
        for op in prefetches:
            op.erase()
        assert _canonical(module) == before


def _registers(ptx: str) -> int:
    result = subprocess.run(["ptxas", "-arch=sm_90a", "-v", "-o", "/dev/null", "-"],
                            input=ptx, capture_output=True, text=True, check=True)
    return int(re.search(r"Used (\d+) registers", result.stderr).group(1))


@pytest.mark.skipif(subprocess.run(["which", "ptxas"], capture_output=True).returncode != 0,
                    reason="ptxas is not on this machine")
def test_ptx_prefetches_the_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _kernel(monkeypatch, 0).get_kernel_source()
    ptx = _kernel(monkeypatch, 2).get_kernel_source()
    assert "prefetch" not in plain
    assert ptx.count("prefetch.global.L2") == 2 * 4
    assert "ld.local" not in ptx and ptx.count("ld.global") == plain.count("ld.global")
    ptxas_check(ptx, "sm_90a")
    assert _registers(ptx) <= _registers(plain)


def test_left_out_below_sm_90(monkeypatch: pytest.MonkeyPatch) -> None:
    """LLVM's NVPTX backend cannot select prefetch.global.L2 for sm_80 / sm_89 (an abort in
    the user's process): there the setting leaves the kernel as it is."""
    ptx = _kernel(monkeypatch, 2, target="cuda:sm_80").get_kernel_source()
    assert "prefetch" not in ptx and "ld.global" in ptx
