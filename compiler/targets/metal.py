"""The Metal target: Metal Shading Language for Apple GPUs, made from the SPIR-V by spirv-cross.

The stages are the SPIR-V family's (compiler/targets/spirv.py), with check-metal-types last in
its spirv stage (float64 values and 64-bit integer tensors, which MSL 2.1 cannot hold: an error
at their line), and one more:
  msl   spirv-cross --msl (MSL 2.1: SIMD-group shuffles) of the validated SPIR-V binary

Metal's SIMD groups have 32 threads; the kernels assume 8-lane subgroups as the vulkan target's
do (lanes 8 apart combine through threadgroup memory), so the SPIR-V an MSL kernel is made from
is the one that runs on lavapipe in CI. The artifact's binary is the MSL source; its launch
metadata holds the argument table (`arguments`: which ABI slot each `[[buffer(i)]]` takes,
read back from the kernel's signature) and the threadgroup size. No Metal compiler exists off
macOS: `smoke_check` parses the MSL with clang as C++ for OpenCL against the headers in
msl_shim/ (address spaces, types, names), which is all this machine can check.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import tempfile

from tilec.compiler.pipeline import CompileOptions, Stage
from tilec.compiler.targets import spirv
from tilec.errors import CompileError

MSL_VERSION = "20100"
SHIM = os.path.join(os.path.dirname(__file__), "msl_shim")
CLANG_VERSIONS = ("clang-22", "clang")
BUFFER_ARGUMENT = re.compile(r"\b(\w+) \[\[buffer\((\d+)\)\]\]")
KERNEL = re.compile(r"^kernel void (\w+)\((.*)\)$", re.MULTILINE)
# MSL's function and address-space qualifiers, which spirv-cross writes as they are where an
# entry point has one for its name (it renames C++'s keywords and `main`): the kernel
# function is then named with a 0, as spirv-cross does `main0`
MSL_QUALIFIERS = frozenset({"kernel", "vertex", "fragment", "device", "constant", "thread",
                            "threadgroup", "threadgroup_imageblock", "ray_data", "object_data"})
OP_ENTRY_POINT = 15


def _msl(product: spirv.SpirvBinary, options: CompileOptions) -> str:
    return msl_of(product.binary)


def entry_point_name(binary: bytes) -> str:
    """The name of a SPIR-V binary's (first) OpEntryPoint."""
    words = struct.unpack(f"<{len(binary) // 4}I", binary)
    position = 5  # after the header
    while position < len(words):
        count, opcode = words[position] >> 16, words[position] & 0xFFFF
        if opcode == OP_ENTRY_POINT:
            name = struct.pack(f"<{count - 3}I", *words[position + 3:position + count])
            return name.split(b"\0", 1)[0].decode()
        position += count
    raise CompileError("the SPIR-V binary has no entry point")


def msl_of(binary: bytes) -> str:
    """The MSL spirv-cross makes of a SPIR-V binary (an entry point named as one of MSL's
    qualifiers renamed)."""
    entry = entry_point_name(binary)
    rename = ["--rename-entry-point", entry, f"{entry}0", "comp"] \
        if entry in MSL_QUALIFIERS else []
    with tempfile.TemporaryDirectory(prefix="tilec-metal-") as folder:
        source, output = os.path.join(folder, "kernel.spv"), os.path.join(folder, "kernel.metal")
        with open(source, "wb") as file:
            file.write(binary)
        spirv.run_tool([spirv.spirv_tool("spirv-cross"), source, "--msl", "--msl-version",
                        MSL_VERSION, *rename, "--output", output], "MSL generation")
        with open(output) as file:
            return file.read()


def stages(options: CompileOptions) -> list[Stage]:
    return [*spirv.stages(options, (*spirv.SPIRV_FIXES, "check-metal-types")),
            Stage("msl", _msl, f"spirv-cross --msl --msl-version {MSL_VERSION}")]


def kernel_signature(msl: str) -> tuple[str, str]:
    """The name and parameters of the MSL's one kernel function: spirv-cross renames an entry
    point whose name MSL reserves (`main`, TileLang's usual prim_func name, is `main0`)."""
    found = KERNEL.findall(msl)
    if len(found) != 1:
        raise CompileError(f"spirv-cross's MSL has {len(found)} kernel functions; expected one")
    return found[0]


def argument_table(parameters: str, entry: str, abi: list[list]) -> list[dict]:
    """Each `[[buffer(i)]]` of the kernel's `parameters` with the ABI slot it binds (each
    buffer keeps the SPIR-V entry point's name: `{entry}_arg_{i}`)."""
    table = []
    for name, buffer in BUFFER_ARGUMENT.findall(parameters):
        number = int(buffer)
        if number >= len(abi) or name != f"{entry}_arg_{number}":
            raise CompileError(f"MSL argument {name} [[buffer({number})]] matches no ABI slot")
        table.append({"buffer": number, "name": name, "slot": abi[number]})
    return table


def finish(product: str, options: CompileOptions, kernel_name: str
           ) -> tuple[bytes, str, dict]:
    if not isinstance(product, str):
        raise CompileError("the metal target finishes after its 'msl' stage")
    launch = spirv.launch_metadata(options, kernel_name)
    launch["entry"], parameters = kernel_signature(product)
    launch["arguments"] = argument_table(parameters, kernel_name, launch["abi"])
    launch["msl_version"] = MSL_VERSION
    return product.encode(), "msl", launch


def clang() -> str | None:
    return next((found for name in CLANG_VERSIONS if (found := shutil.which(name))), None)


def smoke_check(msl: str) -> None:
    """Parse and type-check MSL as C++ for OpenCL 2021 against msl_shim/ (clang); a
    CompileError with clang's diagnostics where it does not parse."""
    compiler = clang()
    if compiler is None:
        raise CompileError("clang not found (apt-get install clang-22)")
    with tempfile.TemporaryDirectory(prefix="tilec-metal-") as folder:
        path = os.path.join(folder, "kernel.metal")
        with open(path, "w") as file:
            file.write(msl)
        # Metal has no double: its 0.0 literals are floats
        result = subprocess.run([compiler, "-x", "clcpp", "-cl-std=clc++2021",
                                 "-cl-single-precision-constant", "-fsyntax-only", "-I", SHIM,
                                 path], capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError(f"the MSL does not parse:\n{result.stderr.strip()}")
