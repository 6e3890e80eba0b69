"""MLIR (gpu + nvgpu + nvvm) text -> PTX with the upstream NVVM pipeline, and ptxas checks.

The pipeline string is the one DESIGN.md records as working with the MLIR 22.1.8 wheel:
sm_90a needs +ptx80 (the default +ptx60 is rejected for wgmma/TMA).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mlir import ir
from mlir.dialects import gpu
from mlir.passmanager import PassManager


def nvvm_pipeline(chip: str) -> str:
    features = "+ptx80" if chip.startswith("sm_90") else "+ptx70"
    return (
        "builtin.module(gpu-lower-to-nvvm-pipeline{"
        f"cubin-chip={chip} cubin-features={features} cubin-format=isa opt-level=3}})"
    )


def mlir_to_ptx(text: str, chip: str) -> str:
    """Lower a module holding one gpu.module to PTX text."""
    with ir.Context():
        module = ir.Module.parse(text)
        module.operation.verify()
        PassManager.parse(nvvm_pipeline(chip)).run(module.operation)
        for op in module.body.operations:
            if op.operation.name == "gpu.binary":
                return gpu.ObjectAttr(op.attributes["objects"][0]).object.decode()
    raise RuntimeError("no gpu.binary produced")


@dataclass
class PtxasReport:
    """What `ptxas -v` says about one kernel."""

    ok: bool
    registers: int
    spill_bytes: int
    log: str


def ptxas_check(ptx: str, chip: str) -> PtxasReport:
    """Assemble with ptxas (when present) to validate the PTX and read registers/spills."""
    if shutil.which("ptxas") is None:
        return PtxasReport(True, -1, -1, "ptxas not found")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        proc = subprocess.run(
            ["ptxas", f"-arch={chip}", "-v", str(src), "-o", str(Path(tmp) / "k.cubin")],
            capture_output=True,
            text=True,
        )
    log = proc.stdout + proc.stderr
    registers = spills = -1
    for line in log.splitlines():
        if "Used" in line and "registers" in line:
            registers = int(line.split("Used")[1].split("registers")[0])
        if "spill stores" in line:
            spills = int(line.split("bytes spill stores")[0].split(",")[-1])
    return PtxasReport(proc.returncode == 0, registers, spills, log)
