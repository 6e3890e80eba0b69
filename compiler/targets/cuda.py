"""The CUDA target: tile → gpu (SIMT) → NVVM/LLVM dialect → PTX → cubin (ptxas), sm_80 / sm_90a.

Stages ("tile" is the frontend's IR, added by the driver):
  tile-schedule  canonicalize + cse, module attribute `tile.arch` (and `tile.disable_tma` when
             the options say so), check-parallel-updates (no T.Parallel read-modify-write
             of an element several points share: a reduction), check-scalar-stores (no
             scalar statement every thread runs into one shared or tensor element: a race
             or an atomic once per thread), check-static-indices (no block-buffer access
             outside its buffer at an index loops of constant bounds make known),
             lower-sub-byte-types (2- and
             4-bit buffers as bytes),
             apply-fast-math with fast math, widen-register-bound-blocks (sm_90a: a
             block of one warpgroup whose fragments overflow its registers runs on two),
             widen-k-tiles (sm_90a: GEMM loops over
             64-byte K rows run over 128-byte ones), mask-scores-after-gemm and
             rotate-attention-loop (by default on sm_90a where f32 denormals are flushed,
             TILEC_ROTATE_ATTENTION_LOOP=0 off, =1 on any chip: a 0 / -inf
             initialisation of the scores applied as a mask after Q K^T; attention's loop
             issues Q K^T of the next key tile before P V of the current one; with
             TILEC_RESCALE_UNDER_QK=1 O's rescale runs right after that Q K^T's issue,
             under its wgmmas, where P V's wait has passed), then the scheduling
             passes, which only annotate ops with their decisions (tile.* attributes):
             infer-mma-layout (tensor-core instruction and warp split of each gemm),
             select-shared-swizzle (shared operand layouts), select-epilogue-store (how the
             accumulator reaches global memory), pipeline-async-copies (TMA / cp.async and
             the depth of each T.Pipelined loop), specialize-warps (producer / consumer
             warpgroups), rasterize-blocks (tile order, persistent grid)
  tile-cuda  lower-gemm-to-tensorcore (a GEMM kernel the annotations put on tensor cores
             becomes a TMA/wgmma (sm_90a) or cp.async/mma.sync (sm_80) kernel, but with
             TILEC_PER_OP_GEMMS=1); for the other kernels check-thread-branches (no
             tile-wide statement under a condition that differs between threads, but for a
             thread range), then the SIMT passes:
             plan-wgmma-gemms (sm_90a: the gemms lower-tile-to-gpu
             computes with wgmma where they stand, their accumulator and operand layouts),
             plan-mma-sync-gemms (sm_80: the same with ldmatrix + mma.sync),
             plan-tma-pipelines (sm_90a: loops feeding them through a TMA ring and a
             producer warpgroup), opted in (TILEC_EPILOGUE_SHARED_SOURCE=1)
             stage-epilogue-source (the epilogue's residual tile loaded by the ring's
             producer into its drained slots; before prefetch-epilogue-operands, whose
             default preload then finds no global read of it), fold-accumulator-clears (a
             T.clear before a ring loop as its first wgmma's scale-d = 0;
             TILEC_FOLD_ACCUMULATOR_CLEARS=0 off), stage-reduce-operands
             (reductions over or into shared buffers through fragments),
             infer-fragment-layout (thread/register mapping of fragments and T.Parallel),
             lower-gemm-simt (the other gemms on CUDA cores), insert-shared-barriers
  gpu        lower-tile-to-gpu: one `gpu.func` in `gpu.module @kernels` (then canonicalize, cse);
             a tensor-core kernel is already there; opted in,
             unswitch-invariant-conditions (TILEC_UNSWITCH_INVARIANT_CONDITIONS=1: a loop
             testing uniform conditions fixed before it, the copies' alignment, in two
             versions), pack-half-pairs (TILEC_PACK_HALF_PAIRS=1) and fuse-lop3
             (TILEC_FUSE_LOP3=1); then prefetch-loop-loads (TILEC_PREFETCH_LOOP_LOADS=1: a
             loop's global loads issued one iteration ahead into registers it carries, the
             function capped at 128 registers; =N caps it at N) and
             prefetch-loop-loads-to-l2 (TILEC_PREFETCH_L2=d, or =auto: the same loads of
             iteration i + d prefetched into L2 at iteration i, no registers)
  nvvm       upstream passes to the NVVM + LLVM dialects, target attached (chip, +ptx80, O3);
             with fast math, f32 denormals flushed (TILEC_FAST_MATH_FTZ=0 keeps them)
  ptx        PTX text from the NVPTX backend (gpu-module-to-binary format=isa); libdevice math
             is linked in, so the PTX is self-contained
  cubin      `ptxas -arch=<chip>` when ptxas is on the machine; otherwise the PTX goes on as is
             and the driver JIT-compiles it at load time. A kernel calling T.call_extern is
             linked with its T.import_source code (nvcc, ptxas -c, nvlink: cuda_extern.py)

Kernel ABI (python/tilec/runtime/cuda.py builds it; documented in lower_tile_to_gpu.py):
  every parameter in order: a tensor as one device pointer to its first element (contiguous,
  row-major), a scalar as its own type; then every dynamic dimension of every tensor parameter
  (in parameter, then dimension order) as int64. launch["abi"] lists the slots:
  ["ptr", param], ["scalar", param, dtype] and ["dim", param, dim]; tensor-core kernels on
  sm_90a also take ["tma", param, role]: a pointer to the TMA map of that tensor, which the
  runtime encodes from launch["tma"][role] (python/tilec/runtime/tma.py); a kernel whose loop
  plan-tma-pipelines fed by TMA takes those last, one per copy of the loop, then one for the
  epilogue source stage-epilogue-source loads, then one per TMA-stored copy.
Launch metadata: grid (from the frontend), threads, shared_bytes (dynamic shared memory; the
runtime raises the per-kernel limit past 48 KB when it needs more), entry (the symbol name),
arch.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

from mlir import ir
from mlir.dialects import gpu

from tilec.compiler.passes._builders import entry_function
from tilec.compiler.passes._ir_walk import op_error, walk
from tilec.compiler.passes._scheduling import (
    ARCH_ATTR,
    DEFER_PIPELINE_GEMM_WAITS_ATTR,
    DISABLE_TMA_ATTR,
    DRAINED_CHECKS_ATTR,
    MMA_SYNC_FALLBACK_ATTR,
    OVERLAP_RING_GEMMS_ATTR,
    PER_OP_GEMMS_ATTR,
    PINGPONG_OPT_IN_ATTR,
    REGISTER_A_STEP_GROUPS_ATTR,
    REGISTER_A_STEPS_ATTR,
    RESCALE_UNDER_QK_ATTR,
    RING_LAG_ATTR,
    RING_PRIVATE_TILES_ATTR,
    RING_TRANSPOSES_ATTR,
    ROTATE_ATTENTION_LOOP_ATTR,
    SIMT_SLICES_IN_PLACE_ATTR,
    SPLIT_WGMMA_N_ATTR,
    STAGED_EPILOGUE_ATTR,
    TRANSPOSE_OPERANDS_ATTR,
    VECTOR_LOADS_ATTR,
)
from tilec.compiler.passes._tma_ring import MAPS_ATTR, TILES_ATTR
from tilec.compiler.passes._user_sync import COOPERATIVE_ATTR
from tilec.compiler.passes.hint_streamed_loads import (
    AUTO_CAP as STREAM_AUTO_CAP,
)
from tilec.compiler.passes.hint_streamed_loads import (
    MAX_REGISTERS_ATTR as STREAM_MAX_REGISTERS_ATTR,
)
from tilec.compiler.passes.infer_fragment_layout import SHARED_STORE_RUNS_ATTR
from tilec.compiler.passes.lower_gemm_to_tensorcore import LAUNCH_ATTR
from tilec.compiler.passes.pipeline_async_copies import ASYNC_GATHERS_ATTR, TABLE_LOADS_ATTR
from tilec.compiler.passes.prefetch_epilogue_operands import opt_in as epilogue_prefetch_opt_in
from tilec.compiler.passes.prefetch_loop_loads import MAX_REGISTERS_ATTR
from tilec.compiler.passes.prefetch_loop_loads_to_l2 import DISTANCE_ATTR
from tilec.compiler.passes.ring_loop_loads import SLOTS_ATTR
from tilec.compiler.passes.stage_epilogue_source import OPT_IN_ATTR as SHARED_SOURCE_ATTR
from tilec.compiler.passes.stage_epilogue_source import VARIABLE as SHARED_SOURCE_VARIABLE
from tilec.compiler.passes.vectorize_element_copies import passes as element_copy_passes
from tilec.compiler.pipeline import (
    CompileOptions,
    Stage,
    run_pass_pipeline,
    tile_passes,
)
from tilec.compiler.targets.cuda_extern import compile_extern, extern_unit, link
from tilec.compiler.targets.description import DEFAULT_CUDA_ARCH, TargetDescription, describe
from tilec.errors import CompileError

ABI = "tilec-cuda-bare-v1"
SHARED_BYTES_ATTR = "tile.shared_bytes"  # on the gpu.func: the dynamic shared memory it needs

SCHEDULE_PASSES = (
    "widen-register-bound-blocks",
    "widen-k-tiles",
    "transpose-mn-major-operands",
    "mask-scores-after-gemm",
    "rotate-attention-loop",
    "infer-mma-layout",
    "select-shared-swizzle",
    "select-epilogue-store",
    "pipeline-async-copies",
    "specialize-warps",
    "rasterize-blocks",
)
# loop versioning LLVM does not do on GPUs, and instruction selection the NVPTX backend leaves
# to ptxas: opt-in until measured on the H200
GPU_OPT_INS = (("TILEC_UNSWITCH_INVARIANT_CONDITIONS", "unswitch-invariant-conditions"),
               ("TILEC_PACK_HALF_PAIRS", "pack-half-pairs"), ("TILEC_FUSE_LOP3", "fuse-lop3"))
# run on the branches the first group's canonicalize folded (the loop versions' copies)
PREFETCH_VARIABLE = "TILEC_PREFETCH_LOOP_LOADS"  # 1, or the register cap the pass sets
PREFETCH_L2_VARIABLE = "TILEC_PREFETCH_L2"  # the distance in iterations, or auto
RING_VARIABLE = "TILEC_LOOP_LOAD_RING"  # 1, or the ring's slots
# the register cap of functions hint-streamed-loads hints (with TILEC_STREAMED_LOAD_HINTS=1), or
# auto: sized from their loops' loads
STREAM_REGISTERS_VARIABLE = "TILEC_STREAM_MAX_REGISTERS"
LATE_GPU_OPT_INS = ((RING_VARIABLE, "ring-loop-loads"),
                    (PREFETCH_VARIABLE, "prefetch-loop-loads"),
                    (PREFETCH_L2_VARIABLE, "prefetch-loop-loads-to-l2"),
                    ("TILEC_STREAMED_LOAD_HINTS", "hint-streamed-loads"))
# a T.clear of an accumulator as its ring loop's first wgmma scale-d = 0 (=0 keeps the clear)
FOLD_CLEARS_VARIABLE = "TILEC_FOLD_ACCUMULATOR_CLEARS"
TILE_PASSES = (
    "check-thread-branches",
    "plan-wgmma-gemms", "plan-mma-sync-gemms", "plan-tma-pipelines", "overlap-ring-gemms",
    # stage-epilogue-source first: the residual it takes through shared memory is then no
    # global read for prefetch-epilogue-operands' default preload
    "plan-warpgroup-pingpong", "stage-epilogue-source", "prefetch-epilogue-operands",
    # on the ring loop's final body, the epilogue passes' statements in it; =0 leaves it out
    "fold-accumulator-clears", "stage-reduce-operands", "defer-pipeline-gemm-waits",
    "infer-fragment-layout", "lower-gemm-simt", "insert-shared-barriers", "plan-shared-memory",
)


def target_of(options: CompileOptions) -> TargetDescription:
    """The chip to compile for: the one named in the target, else TILEC_CUDA_ARCH, else the
    current GPU's (named as the jit names it), else sm_90a (the project's GPU) on a machine
    without one."""
    return describe(options.arch or os.environ.get("TILEC_CUDA_ARCH", "") or _device_arch())


def _device_arch() -> str:
    from tilec.jit import resolve_target

    return resolve_target("cuda").partition(":")[2] or DEFAULT_CUDA_ARCH


def flush_denormals(options: CompileOptions) -> bool:
    """Whether the kernel's f32 math flushes denormals to zero: under fast math, as nvcc's
    --use_fast_math (TileLang's fast math) implies -ftz=true; TILEC_FAST_MATH_FTZ=0 keeps them
    (and a function computing on half-precision values keeps them but for libdevice's math:
    _flush_denormals).
    exp2 is then one ex2.approx.ftz.f32 (one MUFU.EX2); without .ftz ptxas wraps each
    ex2.approx.f32 in a range check and two multiplies, three of the attention loop's
    instructions per score (flash_fwd d128's consumer loop body on sm_90a: 631 SASS
    instructions, 433 with ftz)."""
    return options.fast_math and os.environ.get("TILEC_FAST_MATH_FTZ") != "0"


def rotate_attention_loops(options: CompileOptions) -> bool:
    """Whether mask-scores-after-gemm and rotate-attention-loop run: TILEC_ROTATE_ATTENTION_LOOP
    =1 on any chip, =0 never; by default on a wgmma chip (sm_90a) where f32 denormals are
    flushed. Why that default: on an H100 in 3 interleaved rounds (benchmarks/results/
    2026-12-07-h100_attention-rounds-b3c290d.json) the rotated loop with denormals flushed beat
    the plain loop on all six rows (flash_fwd d128 1.053x / causal 1.042x, TileLang's example
    1.178x / 1.113x, d64 1.086x / 1.018x), while the rotation alone was mixed (0.95-1.08x):
    with .ftz the softmax's exp2 is short enough to run under P V's wgmmas."""
    setting = os.environ.get("TILEC_ROTATE_ATTENTION_LOOP")
    if setting in ("0", "1"):
        return setting == "1"
    return target_of(options).has_wgmma and flush_denormals(options)


# ops that move a half-precision value without computing on it: NVPTX gives none a .ftz form
MOVES_HALVES = frozenset((
    "llvm.load", "llvm.store", "llvm.bitcast", "llvm.insertelement", "llvm.extractelement",
    "llvm.shufflevector", "llvm.insertvalue", "llvm.extractvalue", "llvm.select", "llvm.br",
    "llvm.cond_br", "llvm.return", "llvm.inline_asm", "llvm.freeze", "llvm.mlir.undef",
    "llvm.mlir.poison"))


def _is_half(type_: ir.Type) -> bool:
    """f16 / bf16, or a vector of them."""
    if isinstance(type_, ir.VectorType):
        type_ = ir.VectorType(type_).element_type
    return isinstance(type_, (ir.F16Type, ir.BF16Type))


def computes_on_halves(function: ir.Operation) -> bool:
    """Whether an op of `function` computes on or widens a half-precision value. NVPTX takes
    denormal-fp-math-f32 for its f16 instructions too: flushed, the half2 GEMV's HFMA2s became
    fma.rn.ftz.f16x2 and a widening cvt.ftz.f32.f16 (fp16 denormals read as 0), where nvcc's
    -ftz flushes single precision only."""
    return any(op.name not in MOVES_HALVES and any(_is_half(value.type) for value in op.operands)
               for op in walk(function))


def _flush_denormals(module: ir.Module) -> None:
    """Each gpu.module's functions flush f32 denormals: the module flag nvvm-reflect-ftz = 1
    (libdevice's __nvvm_reflect picks its ftz code: __nv_exp2f becomes ex2.approx.ftz.f32), and
    on the functions that do not compute on half-precision values (computes_on_halves) the
    LLVM attribute denormal-fp-math-f32 = preserve-sign (NVPTX then selects the .ftz forms of
    f32 arithmetic). The NVVM target's own ftz flag changes neither here."""
    flag = ir.Attribute.parse('#llvm.mlir.module_flag<override, "nvvm-reflect-ftz", 1 : i32>')
    for gpu_module in module.body.operations:
        if gpu_module.operation.name != "gpu.module":
            continue
        body = gpu_module.regions[0].blocks[0]
        for op in body.operations:
            if op.operation.name == "llvm.func" and op.operation.regions[0].blocks and \
                    not computes_on_halves(op.operation):
                op.operation.attributes["denormal_fp_math_f32"] = ir.StringAttr.get(
                    "preserve-sign")
        with ir.InsertionPoint.at_block_begin(body), gpu_module.location:
            ir.Operation.create("llvm.module_flags",
                                attributes={"flags": ir.ArrayAttr.get([flag])})


def _to_nvvm(module: ir.Module, options: CompileOptions) -> None:
    run_pass_pipeline(module, nvvm_pipeline(target_of(options)), options)
    if flush_denormals(options):
        _flush_denormals(module)


def nvvm_pipeline(target: TargetDescription) -> str:
    """The first half of upstream's gpu-lower-to-nvvm-pipeline, for a module holding only
    a gpu.module (the host side is our runtime, not MLIR's)."""
    return ",".join([
        "convert-nvgpu-to-nvvm",
        "convert-vector-to-scf",
        "convert-scf-to-cf",
        "convert-nvvm-to-llvm",
        "expand-strided-metadata",
        f"nvvm-attach-target{{chip={target.chip} features={target.ptx_features} O=3}}",
        "lower-affine",
        "gpu.module(convert-gpu-to-nvvm{index-bitwidth=64},canonicalize,cse,"
        "reconcile-unrealized-casts)",
    ])


def _emit_ptx(module: ir.Module, options: CompileOptions) -> str:
    run_pass_pipeline(module, "gpu-module-to-binary{format=isa}", options)
    for op in module.body.operations:
        if op.operation.name == "gpu.binary":
            objects = op.operation.attributes["objects"]
            return gpu.ObjectAttr(objects[0]).object.decode()
    raise CompileError("the NVPTX backend produced no PTX")


def ptxas_path() -> str | None:
    found = shutil.which("ptxas")
    if found:
        return found
    fallback = "/usr/local/cuda/bin/ptxas"
    return fallback if os.path.exists(fallback) else None


def assemble(ptx: str, arch: str) -> bytes:
    """PTX → cubin with ptxas (raises CompileError with ptxas's message on failure)."""
    ptxas = ptxas_path()
    if ptxas is None:
        raise CompileError("ptxas not found (install the CUDA toolkit or put ptxas on PATH)")
    with tempfile.TemporaryDirectory(prefix="tilec-ptxas-") as folder:
        source, output = os.path.join(folder, "kernel.ptx"), os.path.join(folder, "kernel.cubin")
        with open(source, "w") as file:
            file.write(ptx)
        result = subprocess.run([ptxas, f"-arch={arch}", "-O3", source, "-o", output],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise CompileError(f"ptxas -arch={arch} rejected the PTX:\n{result.stderr.strip()}")
        with open(output, "rb") as file:
            return file.read()


def _cubin(ptx: str, options: CompileOptions) -> bytes | str:
    chip = target_of(options).chip
    unit = options.extra.get("extern")
    if unit is not None:  # T.call_extern: the kernel links with its T.import_source code
        return link(ptx, compile_extern(unit, chip), unit, chip)
    if ptxas_path() is None:
        return ptx
    return assemble(ptx, chip)


def kernel_abi(module: ir.Module) -> list[list]:
    """The launch slots of the entry function's parameters (see the module docstring)."""
    entry = entry_function(module).operation
    params = ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value).inputs
    slots: list[list] = []
    dims: list[list] = []
    for number, type_ in enumerate(params):
        if isinstance(type_, ir.MemRefType):
            slots.append(["ptr", number])
            dims += [["dim", number, d] for d, extent in enumerate(type_.shape)
                     if extent == ir.ShapedType.get_dynamic_size()]
        else:
            slots.append(["scalar", number, str(type_)])
    return slots + dims


def _tile_schedule(module: ir.Module, options: CompileOptions) -> None:
    # folded index arithmetic first: fragment accesses must index by T.Parallel's variables
    run_pass_pipeline(module, "canonicalize,cse", options)
    module.operation.attributes[ARCH_ATTR] = ir.StringAttr.get(target_of(options).name)
    if options.disable_tma:
        module.operation.attributes[DISABLE_TMA_ATTR] = ir.UnitAttr.get()
    for variable, name in (("TILEC_TMA_RING_LAG", RING_LAG_ATTR),
                           ("TILEC_VECTOR_EPILOGUE_LOADS", VECTOR_LOADS_ATTR),
                           ("TILEC_WARPGROUP_PINGPONG", PINGPONG_OPT_IN_ATTR),
                           ("TILEC_OVERLAP_RING_GEMMS", OVERLAP_RING_GEMMS_ATTR),
                           ("TILEC_RESCALE_UNDER_QK", RESCALE_UNDER_QK_ATTR),
                           ("TILEC_STAGED_EPILOGUE", STAGED_EPILOGUE_ATTR),
                           ("TILEC_PER_OP_GEMMS", PER_OP_GEMMS_ATTR),
                           ("TILEC_TRANSPOSE_MN_MAJOR_OPERANDS", TRANSPOSE_OPERANDS_ATTR),
                           ("TILEC_RING_TRANSPOSES", RING_TRANSPOSES_ATTR),
                           ("TILEC_SPLIT_WGMMA_N", SPLIT_WGMMA_N_ATTR),
                           ("TILEC_MMA_SYNC_FALLBACK", MMA_SYNC_FALLBACK_ATTR),
                           ("TILEC_SIMT_SLICES_IN_PLACE", SIMT_SLICES_IN_PLACE_ATTR),
                           ("TILEC_DEFER_PIPELINE_GEMM_WAITS", DEFER_PIPELINE_GEMM_WAITS_ATTR),
                           (SHARED_SOURCE_VARIABLE, SHARED_SOURCE_ATTR)):
        if os.environ.get(variable) == "1":
            module.operation.attributes[name] = ir.UnitAttr.get()
    for variable, name in (("TILEC_PIPELINE_TABLE_LOADS", TABLE_LOADS_ATTR),  # MLA decode 3.7x
                           ("TILEC_REGISTER_A_STEPS", REGISTER_A_STEPS_ATTR),  # 0.957 -> 0.987
                           ("TILEC_ASYNC_GATHERS", ASYNC_GATHERS_ATTR),  # conv2d 1.2-1.4x
                           ("TILEC_DRAINED_CHECKS", DRAINED_CHECKS_ATTR),  # no C7514 (conv2d)
                           ("TILEC_SHARED_STORE_RUNS", SHARED_STORE_RUNS_ATTR),  # int4 GEMM 3.6x
                           # the per-op rows' barriers (H100: batched GEMM 0.93 -> 0.99x torch)
                           ("TILEC_RING_PRIVATE_TILES", RING_PRIVATE_TILES_ATTR)):
        if os.environ.get(variable) != "0":  # defaults (measured, or a fix); "0" turns them off
            module.operation.attributes[name] = ir.UnitAttr.get()
    if target_of(options).has_l2_prefetch:  # else its prefetches would be dropped
        epilogue_prefetch_opt_in(module, preload_default=1)  # scale + residual 0.895 -> 0.950
    step_groups = os.environ.get("TILEC_REGISTER_A_STEP_GROUPS", "")
    if step_groups.isdigit() and int(step_groups) > 0:
        module.operation.attributes[REGISTER_A_STEP_GROUPS_ATTR] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), int(step_groups))
    if rotate_attention_loops(options):
        module.operation.attributes[ROTATE_ATTENTION_LOOP_ATTR] = ir.UnitAttr.get()
    fast_math = ("apply-fast-math",) if options.fast_math else ()
    checks = ("insert-bounds-checks",) if options.bounds_check else ()
    checks += ("check-parallel-updates", "check-scalar-stores", "check-static-indices",
               *element_copy_passes(), "lower-sub-byte-types")
    tile_passes("tile-schedule", checks + fast_math + SCHEDULE_PASSES).run(module, options)


def _tile_cuda(module: ir.Module, options: CompileOptions) -> None:
    tile_passes("tile-cuda", ["lower-gemm-to-tensorcore"]).run(module, options)
    if LAUNCH_ATTR in module.operation.attributes:  # the whole kernel is on tensor cores now
        return
    passes = [name for name in TILE_PASSES if name != "fold-accumulator-clears"
              or os.environ.get(FOLD_CLEARS_VARIABLE) != "0"]
    tile_passes("tile-cuda", passes).run(module, options)


def _take_tensorcore_kernel(module: ir.Module, options: CompileOptions) -> bool:
    """A kernel lower-gemm-to-tensorcore replaced already sits in gpu.module @kernels: keep its
    launch metadata and drop the (emptied) entry function. False when there is none."""
    attributes = module.operation.attributes
    if LAUNCH_ATTR not in attributes:
        return False
    launch = json.loads(ir.StringAttr(attributes[LAUNCH_ATTR]).value)
    options.extra.update(abi=launch["abi"], threads=launch["threads"],
                         shared_bytes=launch["shared_bytes"], tensorcore=launch)
    for op in list(module.body.operations):
        if op.operation.name == "func.func":
            op.operation.erase()
    return True


def _gpu_functions(module: ir.Module) -> list[ir.Operation]:
    """The gpu.funcs of the module's gpu.modules (their bodies are not walked)."""
    return [function.operation for op in module.body.operations
            if op.operation.name == "gpu.module"
            for function in op.operation.regions[0].blocks[0].operations
            if function.operation.name == "gpu.func"]


def _lower_to_gpu(module: ir.Module, options: CompileOptions) -> None:
    options.extra["extern"] = extern_unit(module)
    if _take_tensorcore_kernel(module, options):
        return  # its grid is the tiles along x
    options.extra["abi"] = kernel_abi(module)
    kernel = kernel_op(module)
    options.extra["threads"] = list(ir.DenseI64ArrayAttr(kernel.attributes["threads"]))
    check_grid(kernel, target_of(options), "CUDA")
    location = op_error(kernel, "")  # the kernel's file:line, for errors found after lowering
    tile_passes("gpu", ["lower-tile-to-gpu", "lower-float8-conversions",
                        "lower-device-prints"]).run(module, options)
    _producer_launch(module, options)
    run_pass_pipeline(module, "canonicalize,cse", options)
    # on folded indices and constants, the producer warpgroup in the block's size
    tile_passes("gpu", ["name-live-lanes"]).run(module, options)
    # the late opt-ins' numbers, as i32 module attributes where at least the least that counts
    # (1 means "on" alone for the prefetch's register cap, 128 by default, and the ring's slots)
    for variable, attribute, least in ((PREFETCH_VARIABLE, MAX_REGISTERS_ATTR, 2),
                                       (RING_VARIABLE, SLOTS_ATTR, 2),
                                       (STREAM_REGISTERS_VARIABLE, STREAM_MAX_REGISTERS_ATTR, 1),
                                       (PREFETCH_L2_VARIABLE, DISTANCE_ATTR, 1)):
        value = os.environ.get(variable, "")
        if variable == STREAM_REGISTERS_VARIABLE and value == "auto":
            value = str(STREAM_AUTO_CAP)  # the cap sized from the hinted loops' loads
        elif not (value.isdigit() and int(value) >= least):
            continue
        module.operation.attributes[attribute] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(32), int(value))
    counted = (PREFETCH_VARIABLE, PREFETCH_L2_VARIABLE, RING_VARIABLE)  # a number, 0 is off
    target = target_of(options)

    def opted_in(variable: str) -> bool:
        value = os.environ.get(variable, "")
        if variable == PREFETCH_L2_VARIABLE and not target.has_l2_prefetch:
            return False  # LLVM's NVPTX backend aborts on the prefetch below sm_90
        return value == "1" or (variable in counted and value.isdigit() and int(value) > 0) \
            or (variable == PREFETCH_L2_VARIABLE and value == "auto")

    for group in (GPU_OPT_INS, LATE_GPU_OPT_INS):
        opt_ins = [name for variable, name in group if opted_in(variable)]
        if opt_ins:
            tile_passes("gpu", opt_ins).run(module, options)
            run_pass_pipeline(module, "canonicalize,cse", options)
    shared_bytes = max((ir.IntegerAttr(function.attributes[SHARED_BYTES_ATTR]).value
                        for function in _gpu_functions(module)
                        if SHARED_BYTES_ATTR in function.attributes), default=0)
    target = target_of(options)
    if shared_bytes > target.max_shared_bytes:
        raise CompileError(
            f"the kernel needs {shared_bytes} bytes of shared memory; a block on {target.name} "
            f"has at most {target.max_shared_bytes} (use smaller tiles or fewer stages)",
            location.filename, location.lineno)
    options.extra["shared_bytes"] = shared_bytes
    if any(COOPERATIVE_ATTR in function.attributes for function in _gpu_functions(module)):
        options.extra["cooperative"] = True  # T.sync_grid: every block resident at once


def kernel_op(module: ir.Module) -> ir.Operation:
    """The module's tile.kernel, which a GPU target launches. None is left of a T.Kernel block
    with no effect (nothing stored, copied or printed, after the branches known when
    compiling): the cleanups remove it as dead code, a CompileError at the kernel's def."""
    kernel = next((op for op in walk(module.operation) if op.name == "tile.kernel"), None)
    if kernel is None:
        raise op_error(entry_function(module).operation,
                       "the kernel does nothing: its T.Kernel block stores, copies or prints "
                       "nothing (after the branches known when compiling), so a GPU has "
                       "nothing to launch")
    return kernel


def check_grid(kernel: ir.Operation, target: TargetDescription, api: str) -> None:
    """A block's threads along an axis or a constant grid size past the target's limit
    (blocks along an axis, or the threads along it where the API counts those) is an error at
    the kernel: the launch would fail on every run. Sizes known at run time are the driver's
    to reject."""
    threads = (list(ir.DenseI64ArrayAttr(kernel.attributes["threads"])) + [1, 1])[:3]
    for axis, (count, limit) in enumerate(zip(threads, target.max_block, strict=True)):
        if count > limit:
            raise op_error(kernel, f"a block has {count} threads along {'xyz'[axis]}; {api} "
                                   f"allows at most {limit} along it (put the threads along x "
                                   "and split its index)")
    for axis, (size, limit) in enumerate(zip(kernel.operands, target.max_grid, strict=False)):
        owner = getattr(size.owner, "operation", None)  # None for a block argument
        if owner is None or owner.name != "arith.constant":
            continue
        blocks = ir.IntegerAttr(owner.attributes["value"]).value
        name = "xyz"[axis]
        if blocks > limit:
            raise op_error(kernel, f"the grid has {blocks} blocks along {name}; {api} "
                                   f"launches at most {limit} (fold the excess into another "
                                   "axis or loop over it in the kernel)")
        if target.max_grid_threads and blocks * threads[axis] > target.max_grid_threads:
            raise op_error(kernel, f"the grid has {blocks} blocks of {threads[axis]} threads "
                                   f"along {name}, {blocks * threads[axis]} threads; {api} "
                                   f"counts at most {target.max_grid_threads} along an axis "
                                   "(fold the excess into another axis or loop over it in the "
                                   "kernel)")


def _producer_launch(module: ir.Module, options: CompileOptions) -> None:
    """A kernel with a TMA ring launches its producer warpgroup too (the gpu.func's block
    size) and takes a tensor map per ring copy after its other arguments."""
    kernel = _gpu_functions(module)[0]
    if MAPS_ATTR not in kernel.attributes:
        return
    options.extra["threads"] = list(ir.DenseI32ArrayAttr(kernel.attributes["known_block_size"]))
    maps = {}
    for number, entry in enumerate(ir.ArrayAttr(kernel.attributes[MAPS_ATTR])):
        entry = ir.DictAttr(entry)
        role = f"map{number}"
        options.extra["abi"].append(["tma", ir.IntegerAttr(entry["param"]).value, role])
        maps[role] = {"box": list(ir.DenseI64ArrayAttr(entry["box"])),
                      "swizzle": ir.IntegerAttr(entry["swizzle"]).value}
    options.extra["tma"] = maps
    if TILES_ATTR in kernel.attributes:  # persistent: one block per multiprocessor at most
        tiles = ir.IntegerAttr(kernel.attributes[TILES_ATTR]).value
        options.extra["grid"] = [min(tiles, target_of(options).sm_count)]


def stages(options: CompileOptions) -> list[Stage]:
    target = target_of(options)
    return [
        Stage("tile-schedule", _tile_schedule,
              "canonicalize, cse, tile.arch, lower-sub-byte-types, " + ", ".join(SCHEDULE_PASSES)),
        Stage("tile-cuda", _tile_cuda, "lower-gemm-to-tensorcore | " + ", ".join(TILE_PASSES)),
        Stage("gpu", _lower_to_gpu, "lower-tile-to-gpu, lower-float8-conversions, "
              "lower-device-prints, canonicalize, cse, name-live-lanes"),
        Stage("nvvm", _to_nvvm, nvvm_pipeline(target) + "; under fast math, f32 denormals "
              "flushed (denormal-fp-math-f32, nvvm-reflect-ftz; TILEC_FAST_MATH_FTZ=0 keeps them)"),
        Stage("ptx", _emit_ptx, "gpu-module-to-binary{format=isa}"),
        Stage("cubin", _cubin, "ptxas -arch=<chip> (PTX passes through without ptxas); with "
              "T.call_extern, nvcc + ptxas -c + nvlink"),
    ]


def finish(product: bytes | str, options: CompileOptions, kernel_name: str
           ) -> tuple[bytes, str, dict]:
    """cubin (or PTX for the driver's JIT) plus the launch metadata the runtime needs."""
    launch = {
        "abi": options.extra.get("abi", []),
        "abi_version": ABI,
        "shared_bytes": options.extra.get("shared_bytes", 0),
        "threads": options.extra.get("threads", [1]),
        "entry": kernel_name,
        "arch": target_of(options).name,
    }
    if "tma" in options.extra:
        launch["tma"] = options.extra["tma"]
    if "grid" in options.extra:  # a persistent grid: replaces the frontend's
        launch["grid"] = options.extra["grid"]
    if options.extra.get("cooperative"):
        launch["cooperative"] = True
    tensorcore = options.extra.get("tensorcore")
    if tensorcore:
        launch["tma"] = tensorcore.get("tma", {})
        if "grid" in tensorcore:  # persistent or linearized grid: replaces the frontend's
            launch["grid"] = tensorcore["grid"]
    if isinstance(product, bytes):
        return product, "cubin", launch
    return product.encode(), "ptx", launch
