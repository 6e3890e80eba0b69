"""The CPU target: tile → scf/memref/arith loops → LLVM dialect → LLVM IR → host object → .so.

It is the reference semantics of the tile ops (one thread runs each block, blocks run in turn),
used to check numerics on machines without a GPU.

Stages ("tile" is the frontend's IR, added by the driver):
  loops   tile passes: check-parallel-updates, check-scalar-stores, check-static-indices,
          lower-sub-byte-types, sequentialize-barriers, lower-tile-ops-to-loops,
          lower-tile-structure-to-scf, prepare-cpu-entry, lower-device-prints
          (apply-fast-math first when the options ask for fast math)
  llvm    upstream MLIR passes down to the LLVM dialect (f16/bf16/float8 math done in f32,
          float8 conversions expanded by expand-narrow-float-conversions)
  llvmir  LLVM IR text (what `get_kernel_source()` shows for the CPU); bf16 values as i16
  asm     host assembly, optimized at -O2 without loop unrolling by llvmlite (LLVM 22); the
          product also carries the object code, which `finish` links with `cc -shared` into
          the artifact's .so

ABI of the entry (python/tilec/runtime/cpu.py calls it through ctypes, without MLIR):
  void tilec_<kernel>(args...) where, in the kernel's parameter order,
  - a tensor of rank r passes 2 + 1 + 2r values: allocated pointer, aligned pointer (both the
    data pointer), offset (int64 0), r sizes (int64), r strides (int64, in elements; row-major
    contiguous);
  - an integer scalar passes as its C integer type (i1 as an 8-bit bool), f32/f64 as
    float/double, and f16/bf16/float8 scalars as float (truncated inside).
  The function runs the whole grid; launch["entry"] names the symbol, launch["abi"] this ABI.
  The object code is tuned for the compiling machine's CPU (llvmlite's host CPU and features):
  a CPU artifact is meant to run where it was built.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from functools import cache

from mlir import ir
from mlir.dialects import llvm as llvm_dialect

from tilec.compiler.passes import get_pass, prefetch_epilogue_operands
from tilec.compiler.passes._scheduling import RESCALE_UNDER_QK_ATTR, ROTATE_ATTENTION_LOOP_ATTR
from tilec.compiler.passes.prepare_cpu_entry import ENTRY_PREFIX
from tilec.compiler.passes.vectorize_element_copies import passes as element_copy_passes
from tilec.compiler.pipeline import (
    CompileOptions,
    Stage,
    after_pass,
    check_translatable,
    run_pass_pipeline,
    tile_passes,
    verify,
)
from tilec.errors import CompileError

ABI = "mlir-memref-expanded-v1"

TILE_PASSES = ("check-parallel-updates", "check-scalar-stores", "check-static-indices",
               "lower-sub-byte-types", "sequentialize-barriers", "lower-tile-ops-to-loops",
               "lower-tile-structure-to-scf", "prepare-cpu-entry", "lower-device-prints")

# x86 has no arithmetic on half types: do it in f32 (math first, then arith). What is left are
# conversions: float8 ones become integer code (expand-narrow-float-conversions), bf16 ones go
# through f32 (same pass) and become integer code (arith-expand), so no libgcc helper
# (__truncsfbf2 needs GCC >= 13) is needed.
NARROW_FLOATS = "bf16,f16,f8E4M3FN,f8E5M2"
TO_F32_MATH = ",".join(
    [
        "canonicalize",
        "cse",
        "math-extend-to-supported-types{target-type=f32}",
        f"arith-emulate-unsupported-floats{{source-types={NARROW_FLOATS} target-type=f32}}",
    ]
)
TO_LLVM = ",".join(
    [
        "convert-scf-to-cf",
        "arith-expand{include-bf16=true}",
        "expand-strided-metadata",
        "lower-affine",
        "convert-vector-to-llvm",  # T.float16x2 values: pairs packed and reinterpreted
        "finalize-memref-to-llvm",
        "convert-math-to-llvm",
        "convert-math-to-libm",
        "convert-arith-to-llvm",
        "convert-cf-to-llvm",
        "convert-func-to-llvm",
        "convert-ub-to-llvm",
        "reconcile-unrealized-casts",
        "canonicalize",
    ]
)


def _to_llvm_dialect(module: ir.Module, options: CompileOptions) -> None:
    run_pass_pipeline(module, TO_F32_MATH, options)
    conversions = get_pass("expand-narrow-float-conversions")()
    start = time.perf_counter()
    conversions.run(module)
    verify(module, f"after {conversions.name}")
    after_pass(options, conversions.name, module, time.perf_counter() - start)
    run_pass_pipeline(module, TO_LLVM, options)


@dataclass
class HostCode:
    """The "asm" stage's product: assembly to read, object code to link."""

    assembly: str
    object_code: bytes

    def __str__(self) -> str:
        return self.assembly


BFLOAT_TYPE = re.compile(r"\bbfloat\b")
BFLOAT_CONSTANT = re.compile(r"\b0xR([0-9A-Fa-f]{4})\b")


def _bfloat_as_i16(llvm_ir: str) -> str:
    """Carries bf16 values as i16 bit patterns.

    After arith-expand a bf16 value is only loaded, stored, selected or bitcast, but the x86
    backend keeps `bfloat` values as f32 in registers and rounds them back through
    __truncsfbf2, which libgcc before GCC 13 lacks. As i16 nothing needs a helper.
    """

    def constant(match: re.Match) -> str:
        bits = int(match.group(1), 16)
        return str(bits - 0x10000 if bits >= 0x8000 else bits)

    return BFLOAT_CONSTANT.sub(constant, BFLOAT_TYPE.sub("i16", llvm_ir))


def _translate(module: ir.Module, options: CompileOptions) -> str:
    check_translatable(module)
    try:
        llvm_ir = llvm_dialect.translate_module_to_llvmir(module.operation)
    except Exception as error:  # the binding raises a bare RuntimeError/MLIRError
        raise CompileError(f"translation to LLVM IR failed: {error}") from None
    return _bfloat_as_i16(llvm_ir)


@cache
def _target_machine():
    """The host's target machine (position-independent: the object goes into a .so)."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=2,
        reloc="pic",
        codemodel="default",
    )


def _codegen(llvm_ir: str, options: CompileOptions) -> HostCode:
    import llvmlite.binding as llvm

    machine = _target_machine()
    try:
        module = llvm.parse_assembly(llvm_ir)
        module.verify()
    except RuntimeError as error:
        raise CompileError(f"llvmlite rejected the LLVM IR: {error}") from None
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    tuning = llvm.create_pipeline_tuning_options(speed_level=2)
    # full unrolling of the static tile loops multiplies code size and codegen time (3 s for
    # ten small reductions) for a modest speedup; vectorization stays on
    tuning.loop_unrolling = False
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(module, builder)
    return HostCode(machine.emit_assembly(module), machine.emit_object(module))


def stages(options: CompileOptions) -> list[Stage]:
    """The CPU target's stages after "tile"."""
    fast_math = ("apply-fast-math",) if options.fast_math else ()
    checks = ("insert-bounds-checks",) if options.bounds_check else ()
    # CUDA's opt-in, run here too where set so its numerics are checked
    rotation = ("mask-scores-after-gemm", "rotate-attention-loop",
                *prefetch_epilogue_operands.opted_in())
    # as on the CUDA target (unless TILEC_VECTORIZE_ELEMENT_COPIES=0): after the checks, before
    # the sub-byte lowering
    split = TILE_PASSES.index("lower-sub-byte-types")
    passes = TILE_PASSES[:split] + element_copy_passes() + TILE_PASSES[split:]
    loops = tile_passes("loops", rotation + checks + fast_math + passes,
                        "tile ops as scf loops over memrefs; C entry")

    def run_loops(module: ir.Module, options: CompileOptions) -> None:
        # the rotation sm_90a runs by default, here with TILEC_ROTATE_ATTENTION_LOOP=1 only (the
        # CPU target stays the reference semantics), so its numerics are checked
        if os.environ.get("TILEC_ROTATE_ATTENTION_LOOP") == "1":
            module.operation.attributes[ROTATE_ATTENTION_LOOP_ATTR] = ir.UnitAttr.get()
        if os.environ.get("TILEC_RESCALE_UNDER_QK") == "1":  # CUDA's opt-in, checked here
            module.operation.attributes[RESCALE_UNDER_QK_ATTR] = ir.UnitAttr.get()
        prefetch_epilogue_operands.opt_in(module)  # CUDA's opt-in, its numerics checked here
        loops.run(module, options)

    return [
        Stage("loops", run_loops, loops.doc),
        Stage("llvm", _to_llvm_dialect, "narrow floats computed in f32; LLVM dialect"),
        Stage("llvmir", _translate, "LLVM IR text"),
        Stage("asm", _codegen, "host assembly and object code (llvmlite, -O2)"),
    ]


def _compiler() -> str:
    for name in (os.environ.get("CC", ""), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise CompileError("the CPU target links with a C compiler (cc, gcc or clang); none found")


def link_shared_library(object_code: bytes) -> bytes:
    """Links object code into a shared library; fails here if a helper symbol is missing."""
    with tempfile.TemporaryDirectory(prefix="tilec-cpu-") as directory:
        object_path = os.path.join(directory, "kernel.o")
        library_path = os.path.join(directory, "kernel.so")
        with open(object_path, "wb") as file:
            file.write(object_code)
        command = [_compiler(), "-shared", "-o", library_path, object_path, "-lm", "-Wl,-z,defs"]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise CompileError(f"linking the CPU kernel failed:\n{result.stderr.strip()}")
        with open(library_path, "rb") as file:
            return file.read()


def finish(product: HostCode, options: CompileOptions, kernel_name: str) -> tuple[bytes, str, dict]:
    """Links the object into the artifact's .so; names the entry symbol and the ABI."""
    if not isinstance(product, HostCode):
        raise CompileError("the CPU target finishes after its 'asm' stage")
    launch = {"entry": ENTRY_PREFIX + kernel_name, "abi": ABI}
    return link_shared_library(product.object_code), "so", launch
