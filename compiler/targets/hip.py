"""The HIP target: tile → gpu (SIMT) → ROCDL/LLVM dialect → LLVM IR → AMDGPU ISA → HSACO.

For AMD CDNA GPUs, gfx942 (MI300X, the default) and gfx90a (MI210 / MI250X). MLIR's wheel has
no AMDGPU backend, so past the LLVM IR the system's LLVM 22 does the rest (Debian `llvm-22`,
`lld-22`, the same 22.1.8 as the wheel) with ROCm's device libraries (`rocm-device-libs`: ocml
math, ockl) linked in where the kernel calls them.

Stages ("tile" is the frontend's IR, added by the driver):
  tile-schedule  canonicalize + cse, module attribute `tile.arch` (the description's name),
             apply-fast-math with fast math. The CUDA scheduling passes (tensor-core warps,
             ldmatrix swizzles, TMA, warp specialization) are NVIDIA's and do not run
  tile-hip   check-parallel-updates, check-scalar-stores (as on CUDA), check-thread-branches
             (a tile-wide statement under a condition that differs
             between threads is an error: no thread ranges here), lower-sub-byte-types,
             stage-reduce-operands, plan-mfma-gemms (the gemms that
             run on MFMA where they stand, with their wave grid and layouts), then the
             target-neutral passes shared with CUDA, reading the description's 64-lane
             wavefront and 64 KiB LDS: infer-fragment-layout, lower-gemm-simt (the other
             gemms), insert-shared-barriers, plan-shared-memory
  gpu        lower-tile-to-gpu (shuffles over the wavefront, LDS as workgroup memory,
             atomics as memref.atomic_rmw, MFMA gemms as rocdl.mfma ops: passes/_mfma.py),
             place-private-allocas (per-thread arrays in
             address space 5), lower-float8-conversions (OCP float8 casts as integer code),
             lower-device-prints (T.print), canonicalize, cse; an NVIDIA-only op left (TMA,
             mbarriers, cp.async, T.ws...) is an error at the kernel's line
  rocdl      math-expand-ops (tanh in terms of exp: AMDGPU cannot lower LLVM's tanh), upstream
             convert-gpu-to-rocdl / convert-amdgpu-to-rocdl with the chip, target attached
             (rocdl-attach-target)
  llvmir     the gpu.module as an LLVM IR module for amdgcn-amd-amdhsa
  amdgcn     device libraries linked (llvm-link --only-needed), opt -O3, AMDGPU assembly (llc)
  hsaco      llc -filetype=obj, ld.lld -shared: the code object HIP's module API loads

Kernel ABI: the CUDA target's (compiler/targets/cuda.py): every parameter in order, a tensor as
one global pointer, a scalar as itself, then each dynamic dimension as int64; launch["abi"]
lists the slots. Launch metadata: grid, threads, shared_bytes (dynamic LDS), entry, arch.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import llvm as llvm_dialect

from tilec.compiler.passes._ir_walk import op_error, walk
from tilec.compiler.passes._scheduling import ARCH_ATTR
from tilec.compiler.pipeline import (
    CompileOptions,
    Stage,
    check_translatable,
    mlir_passes,
    run_pass_pipeline,
    tile_passes,
)
from tilec.compiler.targets.cuda import SHARED_BYTES_ATTR, check_grid, kernel_abi, kernel_op
from tilec.compiler.targets.description import DEFAULT_HIP_ARCH, TargetDescription, describe
from tilec.errors import CompileError

ABI = "tilec-hip-bare-v1"
TRIPLE = "amdgcn-amd-amdhsa"
LLVM_VERSION = "22"  # the wheel's MLIR emits LLVM 22 IR: the system's LLVM must read it

TILE_PASSES = ("check-parallel-updates", "check-scalar-stores", "check-static-indices",
               "check-thread-branches", "lower-sub-byte-types", "stage-reduce-operands",
               "plan-mfma-gemms", "infer-fragment-layout", "lower-gemm-simt",
               "insert-shared-barriers", "plan-shared-memory")
GPU_PASSES = ("lower-tile-to-gpu", "place-private-allocas", "lower-float8-conversions",
              "lower-device-prints")
# dialects whose ops only the NVIDIA lowering understands
NVIDIA_DIALECTS = ("nvvm.", "nvgpu.")


def target_of(options: CompileOptions) -> TargetDescription:
    """The chip named in the target ("hip:gfx90a"), else TILEC_HIP_ARCH, else gfx942."""
    target = describe(options.arch or os.environ.get("TILEC_HIP_ARCH", "") or DEFAULT_HIP_ARCH)
    if not target.is_amd:
        raise CompileError(f"the hip target compiles for AMD chips, not {target.name}")
    return target


# math ops convert-gpu-to-rocdl leaves as LLVM intrinsics that the AMDGPU backend has no
# lowering or library call for (llc: "no libcall available for ftanh"): rewritten in terms of
# exp first, as the SPIR-V target does.
MATH_EXPANSIONS = ("tanh",)


def rocdl_pipeline(target: TargetDescription) -> str:
    """Upstream lowering of a module holding only a gpu.module to the ROCDL + LLVM dialects."""
    chip = target.chip
    return ",".join([
        "convert-vector-to-scf",
        "convert-scf-to-cf",
        "expand-strided-metadata",
        "lower-affine",
        f"rocdl-attach-target{{chip={chip} O=3}}",
        f"gpu.module(math-expand-ops{{ops={','.join(MATH_EXPANSIONS)}}},"
        f"convert-amdgpu-to-rocdl{{chipset={chip}}},"
        f"convert-gpu-to-rocdl{{chipset={chip} index-bitwidth=64 runtime=HIP}},"
        "canonicalize,cse,reconcile-unrealized-casts)",
    ])


def _tile_schedule(module: ir.Module, options: CompileOptions) -> None:
    run_pass_pipeline(module, "canonicalize,cse", options)
    module.operation.attributes[ARCH_ATTR] = ir.StringAttr.get(target_of(options).name)
    checks = ("insert-bounds-checks",) if options.bounds_check else ()
    fast_math = ("apply-fast-math",) if options.fast_math else ()
    if checks + fast_math:
        tile_passes("tile-schedule", checks + fast_math).run(module, options)


def _reject_nvidia_ops(module: ir.Module, location: CompileError) -> None:
    for op in walk(module.operation):
        if op.name.startswith(NVIDIA_DIALECTS):
            raise CompileError(
                f"the kernel needs {op.name}, an NVIDIA instruction (TMA, mbarriers, cp.async, "
                "warp specialization); the hip target has none", location.filename,
                location.lineno)


def _lower_to_gpu(module: ir.Module, options: CompileOptions) -> None:
    options.extra["abi"] = kernel_abi(module)
    kernel = kernel_op(module)
    options.extra["threads"] = list(ir.DenseI64ArrayAttr(kernel.attributes["threads"]))
    check_grid(kernel, target_of(options), "HIP")
    location = op_error(kernel, "")  # the kernel's file:line, for errors found after lowering
    tile_passes("gpu", GPU_PASSES).run(module, options)
    run_pass_pipeline(module, "canonicalize,cse", options)
    _reject_nvidia_ops(module, location)
    functions = [op for op in walk(module.operation) if op.name == "gpu.func"]
    shared_bytes = max((ir.IntegerAttr(function.attributes[SHARED_BYTES_ATTR]).value
                        for function in functions if SHARED_BYTES_ATTR in function.attributes),
                       default=0)
    target = target_of(options)
    if shared_bytes > target.max_shared_bytes:
        raise CompileError(
            f"the kernel needs {shared_bytes} bytes of LDS; a workgroup on {target.name} has at "
            f"most {target.max_shared_bytes} (use smaller tiles or fewer stages)",
            location.filename, location.lineno)
    options.extra["shared_bytes"] = shared_bytes


def _translate(module: ir.Module, options: CompileOptions) -> str:
    """The gpu.module's functions as one LLVM IR module for the AMDGPU triple."""
    device = ir.Module.create()
    for op in module.body.operations:
        if op.operation.name == "gpu.module":
            for inner in op.operation.regions[0].blocks[0].operations:
                inner.operation.clone(ir.InsertionPoint(device.body))
            # AMDGPU's (32-bit LDS and private pointers), which convert-gpu-to-rocdl set:
            # without it LLVM would take 64-bit pointers in every address space
            device.operation.attributes["llvm.data_layout"] = op.operation.attributes[
                "llvm.data_layout"]
    device.operation.attributes["llvm.target_triple"] = ir.StringAttr.get(TRIPLE)
    check_translatable(device)
    try:
        return llvm_dialect.translate_module_to_llvmir(device.operation)
    except Exception as error:  # the binding raises a bare RuntimeError/MLIRError
        raise CompileError(f"translation to LLVM IR failed: {error}") from None


@functools.cache
def llvm_tool(name: str) -> str | None:
    """An LLVM 22 tool ("llc", "opt", "llvm-link", "ld.lld", "llvm-readelf"...): `name-22` on
    PATH, else Debian's /usr/lib/llvm-22/bin; None when neither is there."""
    found = shutil.which(f"{name}-{LLVM_VERSION}")
    if found:
        return found
    fallback = f"/usr/lib/llvm-{LLVM_VERSION}/bin/{name}"
    return fallback if os.access(fallback, os.X_OK) else None


def toolchain_missing() -> str | None:
    """Why HSACO cannot be built here (None: it can)."""
    missing = [name for name in ("llvm-link", "opt", "llc", "ld.lld") if llvm_tool(name) is None]
    if missing:
        return (f"the hip target needs LLVM {LLVM_VERSION}'s {', '.join(missing)} (Debian: "
                f"apt-get install llvm-{LLVM_VERSION} lld-{LLVM_VERSION} rocm-device-libs)")
    if device_libs() is None:
        return ("the hip target needs ROCm's device libraries (Debian: apt-get install "
                "rocm-device-libs, or set TILEC_ROCM_DEVICE_LIBS to the folder of ockl.bc)")
    return None


@functools.cache
def device_libs() -> str | None:
    """The folder holding ocml.bc / ockl.bc: TILEC_ROCM_DEVICE_LIBS, ROCm's, or Debian's."""
    candidates = [os.environ.get("TILEC_ROCM_DEVICE_LIBS", ""), "/opt/rocm/amdgcn/bitcode",
                  *glob.glob("/usr/lib/*/amdgcn/bitcode"), "/usr/lib/amdgcn/bitcode"]
    return next((folder for folder in candidates
                 if folder and os.path.isfile(os.path.join(folder, "ockl.bc"))), None)


def _control_libraries(folder: str, chip: str) -> list[str]:
    """ocml/ockl's configuration constants: code object v5, 64-lane waves, IEEE denormals and
    rounding (no fast-math shortcuts), the chip's ISA version (a close one where the library
    predates the chip: only ockl's queries read it)."""
    isa = chip.removeprefix("gfx")
    while isa and not os.path.isfile(os.path.join(folder, f"oclc_isa_version_{isa}.bc")):
        isa = {"942": "940", "941": "940"}.get(isa, "")
    names = ["ocml", "ockl", "oclc_abi_version_500", "oclc_wavefrontsize64_on",
             "oclc_daz_opt_off", "oclc_finite_only_off", "oclc_unsafe_math_off",
             "oclc_correctly_rounded_sqrt_on"] + ([f"oclc_isa_version_{isa}"] if isa else [])
    return [os.path.join(folder, f"{name}.bc") for name in names]


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError(f"{what} failed ({' '.join(command[:1])}):\n{result.stderr.strip()}")


@dataclass
class DeviceCode:
    """The "amdgcn" stage's product: the assembly to read, the optimized bitcode to assemble."""

    assembly: str
    bitcode: bytes

    def __str__(self) -> str:
        return self.assembly


def _codegen(llvm_ir: str, options: CompileOptions) -> DeviceCode:
    why = toolchain_missing()
    if why is not None:
        raise CompileError(why)
    chip = target_of(options).chip
    machine = [f"-mtriple={TRIPLE}", f"-mcpu={chip}", "-O3"]
    with tempfile.TemporaryDirectory(prefix="tilec-hip-") as folder:
        source, linked, optimized, assembly = (os.path.join(folder, name) for name in (
            "kernel.ll", "linked.bc", "optimized.bc", "kernel.s"))
        with open(source, "w") as file:
            file.write(llvm_ir)
        libraries = []
        if "@__ocml_" in llvm_ir or "@__ockl_" in llvm_ir:
            libraries = ["--only-needed", *_control_libraries(device_libs(), chip)]
        _run([llvm_tool("llvm-link"), source, *libraries, "-o", linked], "linking the device "
             "libraries")
        _run([llvm_tool("opt"), *machine, linked, "-o", optimized], "optimizing the LLVM IR")
        _run([llvm_tool("llc"), *machine, optimized, "-o", assembly], "AMDGPU code generation")
        with open(assembly) as file, open(optimized, "rb") as bitcode:
            return DeviceCode(file.read(), bitcode.read())


def _hsaco(code: DeviceCode, options: CompileOptions) -> bytes:
    chip = target_of(options).chip
    with tempfile.TemporaryDirectory(prefix="tilec-hip-") as folder:
        bitcode, obj, hsaco = (os.path.join(folder, name) for name in (
            "kernel.bc", "kernel.o", "kernel.hsaco"))
        with open(bitcode, "wb") as file:
            file.write(code.bitcode)
        _run([llvm_tool("llc"), f"-mtriple={TRIPLE}", f"-mcpu={chip}", "-O3",
              "-filetype=obj", bitcode, "-o", obj], "AMDGPU object emission")
        _run([llvm_tool("ld.lld"), "-shared", obj, "-o", hsaco], "linking the code object")
        with open(hsaco, "rb") as file:
            return file.read()


NOTE_FIELD = re.compile(r"^\s+(?:- )?\.(\w+):\s+(\S+)\s*$")


def kernel_descriptors(hsaco: bytes) -> list[dict[str, str]]:
    """Each kernel's entry in the code object's AMDGPU metadata note (`llvm-readelf --notes`):
    its scalar fields (name, vgpr_count, sgpr_count, agpr_count, group_segment_fixed_size,
    private_segment_fixed_size, wavefront_size, max_flat_workgroup_size, *_spill_count...) as
    text; what the HIP runtime reads to launch it."""
    notes = _inspect(hsaco, ["llvm-readelf", "--notes"])
    kernels: list[dict[str, str]] = []
    inside = False
    for line in notes.splitlines():
        if line.startswith("amdhsa.kernels:"):
            inside = True
        elif inside and re.match(r"^[\w.]", line):  # the next top-level key
            inside = False
        elif inside:
            if line.startswith("  - "):
                kernels.append({})
            match = NOTE_FIELD.match(line)
            if match and kernels and line.startswith(("  - .", "    .")):
                kernels[-1][match[1]] = match[2]
    return kernels


def disassemble(hsaco: bytes, chip: str) -> str:
    """The code object's instructions (`llvm-objdump -d --mcpu=CHIP`)."""
    return _inspect(hsaco, ["llvm-objdump", "-d", f"--mcpu={chip}"])


def _inspect(hsaco: bytes, command: list[str]) -> str:
    tool = llvm_tool(command[0])
    if tool is None:
        raise CompileError(f"{command[0]}-{LLVM_VERSION} not found (apt-get install "
                           f"llvm-{LLVM_VERSION})")
    with tempfile.TemporaryDirectory(prefix="tilec-hip-") as folder:
        path = os.path.join(folder, "kernel.hsaco")
        with open(path, "wb") as file:
            file.write(hsaco)
        result = subprocess.run([tool, *command[1:], path], capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError(f"{command[0]} cannot read the code object:\n{result.stderr}")
    return result.stdout


def stages(options: CompileOptions) -> list[Stage]:
    target = target_of(options)
    return [
        Stage("tile-schedule", _tile_schedule, "canonicalize, cse, tile.arch"),
        tile_passes("tile-hip", TILE_PASSES),
        Stage("gpu", _lower_to_gpu, ", ".join(GPU_PASSES) + ", canonicalize, cse"),
        mlir_passes("rocdl", rocdl_pipeline(target)),
        Stage("llvmir", _translate, f"LLVM IR for {TRIPLE}"),
        Stage("amdgcn", _codegen, f"device libraries linked, opt -O3, llc -mcpu={target.chip}"),
        Stage("hsaco", _hsaco, "llc -filetype=obj, ld.lld -shared"),
    ]


def finish(product: bytes, options: CompileOptions, kernel_name: str
           ) -> tuple[bytes, str, dict]:
    """The HSACO plus the launch metadata the runtime needs."""
    if not isinstance(product, bytes):
        raise CompileError("the hip target finishes after its 'hsaco' stage")
    launch = {
        "abi": options.extra.get("abi", []),
        "abi_version": ABI,
        "shared_bytes": options.extra.get("shared_bytes", 0),
        "threads": options.extra.get("threads", [1]),
        "entry": kernel_name,
        "arch": target_of(options).name,
    }
    return product, "hsaco", launch
