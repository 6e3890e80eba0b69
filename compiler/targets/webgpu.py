"""The WebGPU target: WGSL, made from the SPIR-V by naga (npm `naga-wasm`, run by node).

The stages are the SPIR-V family's (compiler/targets/spirv.py) for the webgpu description (no
subgroup operations, which WebGPU gates behind an optional feature: lanes combine through
workgroup memory; WebGPU's default 16 KiB of it), with spirv-expand-isnan on the spirv.module
(WGSL has no isNan), and one more:
  wgsl  naga parses and validates the SPIR-V binary and writes it as WGSL

The artifact's binary is the WGSL source; tilec.runtime.webgpu runs it through wgpu (whose
naga validates it again, as a browser's compiler would) on lavapipe here. naga-wasm is looked
for in TILEC_NAGA_WASM, else in the Python environment's `naga/node_modules/naga-wasm`
(`make` installs it there: npm install --prefix .venv/naga naga-wasm@30.1.0).
"""

from __future__ import annotations

import os
import re
import shutil
import sys

from tilec.compiler.pipeline import CompileOptions, Stage
from tilec.compiler.targets import spirv
from tilec.errors import CompileError

NAGA_VERSION = "30.1.0"
ENTRY = re.compile(r"^@compute @workgroup_size\([^)]*\)\s*fn (\w+)\(", re.MULTILINE)
SCRIPT = os.path.join(os.path.dirname(__file__), "naga_wgsl.mjs")


def naga_folder() -> str | None:
    """The naga-wasm package folder, or None where it is not installed."""
    candidates = [os.environ.get("TILEC_NAGA_WASM", ""),
                  os.path.join(sys.prefix, "naga", "node_modules", "naga-wasm")]
    return next((folder for folder in candidates
                 if folder and os.path.isfile(os.path.join(folder, "dist", "node.js"))), None)


def toolchain_missing() -> str | None:
    """Why WGSL cannot be made here, or None."""
    if shutil.which("node") is None:
        return "node not found (apt-get install nodejs npm)"
    if naga_folder() is None:
        return (f"naga-wasm not found (npm install --prefix {sys.prefix}/naga "
                f"naga-wasm@{NAGA_VERSION}, or set TILEC_NAGA_WASM to its folder)")
    return None


def _wgsl(product: spirv.SpirvBinary, options: CompileOptions) -> str:
    why = toolchain_missing()
    if why is not None:
        raise CompileError(why)
    return spirv.run_tool([shutil.which("node"), SCRIPT, naga_folder()], "WGSL generation (naga)",
                          stdin=product.binary).decode()


def stages(options: CompileOptions) -> list[Stage]:
    return [*spirv.stages(options, (*spirv.SPIRV_FIXES, "spirv-expand-isnan")),
            Stage("wgsl", _wgsl, f"naga {NAGA_VERSION} (naga-wasm): SPIR-V -> WGSL")]


def entry_point(wgsl: str) -> str:
    """The WGSL's compute entry point: naga renames what could clash with its own names (a
    name ending in a digit gets an underscore)."""
    found = ENTRY.findall(wgsl)
    if len(found) != 1:
        raise CompileError(f"naga's WGSL has {len(found)} compute entry points; expected one")
    return found[0]


def finish(product: str, options: CompileOptions, kernel_name: str
           ) -> tuple[bytes, str, dict]:
    if not isinstance(product, str):
        raise CompileError("the webgpu target finishes after its 'wgsl' stage")
    launch = spirv.launch_metadata(options, kernel_name)
    launch["entry"] = entry_point(product)
    return product.encode(), "wgsl", launch
