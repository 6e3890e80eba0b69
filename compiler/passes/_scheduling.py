"""What the CUDA scheduling passes share: the target they decide for, the tensor-core names of
element types, and their decisions as builtin attributes (so tilec-opt prints and re-reads them).

Every scheduling pass (infer-mma-layout, select-shared-swizzle, select-epilogue-store,
pipeline-async-copies, specialize-warps, rasterize-blocks) and their consumer
lower-gemm-to-tensorcore read the target through `target_description`, so one lookup order and
one error serve them all, and they branch on its capabilities (wgmma, TMA), not on arch names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mlir import ir

from tilec.compiler.passes._ir_walk import op_error
from tilec.compiler.targets.description import DEFAULT_CUDA_ARCH, TargetDescription, describe
from tilec.errors import CompileError

ARCH_ATTR = "tile.arch"  # module attribute the cuda target sets before the scheduling passes
DISABLE_TMA_ATTR = "tile.disable_tma"  # unit module attribute: no TMA ring (the user's configs)
# unit module attributes, opt-ins not yet measured on hardware (the CUDA target sets them from
# TILEC_TMA_RING_LAG=1 / TILEC_VECTOR_EPILOGUE_LOADS=1): a one-gemm TMA ring leaves two wgmma
# groups of 64-byte K rows in flight (plan-tma-pipelines); T.Parallel reads global memory in
# vectors along a fragment's contiguous registers (lower-tile-to-gpu)
RING_LAG_ATTR = "tile.ring_lag"
VECTOR_LOADS_ATTR = "tile.vector_epilogue_loads"
# TILEC_WARPGROUP_PINGPONG=1: an attention loop's two consumer warpgroups take turns issuing
# their gemms (plan-warpgroup-pingpong)
PINGPONG_OPT_IN_ATTR = "tile.warpgroup_pingpong"
# TILEC_OVERLAP_RING_GEMMS=1: a several-gemm TMA ring loop leaves its last gemm in flight into
# the next iteration (overlap-ring-gemms)
OVERLAP_RING_GEMMS_ATTR = "tile.overlap_ring_gemms"
# attention's T.Pipelined loop issues the next key tile's Q K^T before this one's P V
# (rotate-attention-loop, mask-scores-after-gemm): set by default on sm_90a where fast math
# flushes f32 denormals, by TILEC_ROTATE_ATTENTION_LOOP=1 on any CUDA chip and on the CPU
ROTATE_ATTENTION_LOOP_ATTR = "tile.rotate_attention_loop"
# TILEC_RESCALE_UNDER_QK=1: in the rotated loop the output's rescale runs after the next key
# tile's Q K^T is issued, under its wgmmas (rotate-attention-loop)
RESCALE_UNDER_QK_ATTR = "tile.rescale_under_qk"
# TILEC_STAGED_EPILOGUE=1: an mma.sync gemm's accumulator store goes through a padded shared
# tile (plan-mma-sync-gemms)
STAGED_EPILOGUE_ATTR = "tile.staged_epilogue"
# TILEC_PER_OP_GEMMS=1: lower-gemm-to-tensorcore declines every kernel, so each gemm takes the
# per-op path (benchmarks time the two paths' kernels of one GEMM side by side)
PER_OP_GEMMS_ATTR = "tile.per_op_gemms"
# the CUDA target's default (TILEC_REGISTER_A_STEPS=0 turns it off): a TMA ring's register-A
# chain loads A's registers one K step at a time, each just before that step's wgmma, so the
# gemm's groups stay in flight (plan-tma-pipelines; on an H100 the per-op 8192^3 f16 chain went
# from 0.957x to 0.987x of the whole-kernel GEMM, right results)
REGISTER_A_STEPS_ATTR = "tile.register_a_steps"
# TILEC_REGISTER_A_STEP_GROUPS=N (with the steps): before a K step's A loads,
# wait until at most N wgmma groups are in flight (default: the steps of a K tile less one, the
# fewest waits that keep the registers safe; the whole-kernel GEMM leaves one)
REGISTER_A_STEP_GROUPS_ATTR = "tile.register_a_step_groups"
# TILEC_TRANSPOSE_MN_MAJOR_OPERANDS=1: an 8-bit / tf32 gemm's MN-major shared operand is
# transposed into a K-major tile before it, so wgmma runs it (transpose-mn-major-operands)
TRANSPOSE_OPERANDS_ATTR = "tile.transpose_mn_major_operands"
# TILEC_RING_TRANSPOSES=1: a TMA ring's loop may hold such transposes, each reading the slot
# TMA just filled (plan-tma-pipelines), where it stayed on the cp.async pipeline
RING_TRANSPOSES_ATTR = "tile.ring_transposes"
# the CUDA target's default (TILEC_RING_PRIVATE_TILES=0 leaves it out; on an H100 the per-op
# batched GEMM went from 0.93x to 0.99x of torch): a TMA ring whose kernel touches no shared memory
# but the ring's slots and TMA stores' staging tiles drops the consumers' block barriers around its
# loop and between persistent tiles (lower-tile-to-gpu, `_tma_ring.RingLowering.private_tiles`)
RING_PRIVATE_TILES_ATTR = "tile.ring_private_tiles"
# TILEC_SPLIT_WGMMA_N=1: a 64-row gemm of a block of 2 or 4 warpgroups runs on all of them,
# each a wgmma of its share of N (infer-mma-layout's `split = "n"`)
SPLIT_WGMMA_N_ATTR = "tile.split_wgmma_n"
# TILEC_MMA_SYNC_FALLBACK=1: on sm_90a a gemm wgmma cannot take (N under 64 or not a multiple
# of it, 32-row tiles) gets infer-mma-layout's mma.sync decision instead of the CUDA cores, and
# plan-mma-sync-gemms reads its column-slice operands in place as plan-wgmma-gemms does
MMA_SYNC_FALLBACK_ATTR = "tile.mma_sync_fallback"
# TILEC_SIMT_SLICES_IN_PLACE=1: lower-gemm-simt reads a CUDA-core gemm's column-slice operand
# (`Q_shared[:, :D]`, copied into a tile of its own by the frontend) from the larger tile
SIMT_SLICES_IN_PLACE_ATTR = "tile.simt_slices_in_place"
# TILEC_DEFER_PIPELINE_GEMM_WAITS=1: a cp.async pipeline loop's wgmma gemms leave their groups in
# flight until a statement touches their registers (defer-pipeline-gemm-waits)
DEFER_PIPELINE_GEMM_WAITS_ATTR = "tile.defer_pipeline_gemm_waits"
# on by default (TILEC_DRAINED_CHECKS=0 off): past a cp.async pipeline loop feeding wgmma, a
# copy's alignment check is tested after the loop's drain (lower-tile-to-gpu's
# drained_pointer_aligned), where LLVM tested it ahead of the last wgmma wait and ptxas
# serialized every wgmma of conv2d's implicit GEMM (C7514)
DRAINED_CHECKS_ATTR = "tile.drained_checks"
PIPELINE_ATTR = "tile.pipeline"  # on tile.pipelined, written by pipeline-async-copies
TMA_PIPELINE = "tma-mbarrier"  # its `mechanism` when TMA loads feed wgmma through mbarriers

# element types -> the tensor-core kernels' names for them, per role (f32 operands run as tf32)
_FLOAT_ELEMENTS = (
    (ir.F16Type, "f16"),
    (ir.BF16Type, "bf16"),
    (ir.Float8E4M3FNType, "e4m3"),
    (ir.Float8E5M2Type, "e5m2"),
    (ir.F32Type, "f32"),
)
OPERAND_TYPES = {
    "f16": "f16", "bf16": "bf16", "e4m3": "e4m3", "e5m2": "e5m2", "f32": "tf32", "i8": "s8"
}
OUTPUT_TYPES = {"f16": "f16", "bf16": "bf16", "f32": "f32", "i32": "s32"}
ACCUMULATOR_TYPES = {"f32": "f32", "i32": "s32"}

DecisionValue = str | bool | int | Sequence[int]


def target_description(module: ir.Module, option: str, pass_name: str) -> TargetDescription:
    """The target a pass decides for: its `arch` option, else the module's `tile.arch`, else
    sm_90a. An unknown chip is a CompileError: silently scheduling for the wrong tensor cores
    would produce a kernel that cannot run."""
    arch = option
    attributes = module.operation.attributes
    if not arch and ARCH_ATTR in attributes:
        arch = ir.StringAttr(attributes[ARCH_ATTR]).value
    try:
        return describe(arch or DEFAULT_CUDA_ARCH)
    except CompileError as error:
        raise CompileError(f"{pass_name}: {error}") from None


def tensorcore_type(type_: ir.Type, names: Mapping[str, str]) -> str | None:
    """The kernels' name (from `names`: OPERAND_TYPES, OUTPUT_TYPES, ACCUMULATOR_TYPES) for an
    element type, or None when the tensor cores have none for it in that role."""
    for type_class, element in _FLOAT_ELEMENTS:
        if isinstance(type_, type_class):
            return names.get(element)
    if isinstance(type_, ir.IntegerType):
        return names.get(f"i{ir.IntegerType(type_).width}")
    return None


def _to_attribute(value: DecisionValue, context: ir.Context) -> ir.Attribute:
    if isinstance(value, bool):
        return ir.BoolAttr.get(value, context)
    if isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64, context), value)
    if isinstance(value, str):
        return ir.StringAttr.get(value, context)
    return ir.DenseI64ArrayAttr.get(list(value), context)


def decision_attr(fields: Mapping[str, DecisionValue], context: ir.Context) -> ir.DictAttr:
    """A decision as a DictionaryAttr: str → StringAttr, bool → BoolAttr, int → i64,
    a sequence of ints → DenseI64ArrayAttr."""
    return ir.DictAttr.get(
        {key: _to_attribute(value, context) for key, value in fields.items()}, context
    )


def _from_attribute(attribute: ir.Attribute) -> DecisionValue | None:
    if isinstance(attribute, ir.BoolAttr):
        return attribute.value
    if isinstance(attribute, ir.IntegerAttr):
        return attribute.value
    if isinstance(attribute, ir.StringAttr):
        return attribute.value
    if isinstance(attribute, ir.DenseI64ArrayAttr):
        return tuple(attribute)
    return None


def read_decision(op: ir.Operation, name: str) -> dict[str, DecisionValue] | None:
    """The decision `name` recorded on `op` as Python values, or None when it has none; a
    malformed one (hand-written IR) is a CompileError at the op."""
    if name not in op.attributes:
        return None
    entries = op.attributes[name]
    if not isinstance(entries, ir.DictAttr):
        raise op_error(op, f"{name} must be a dictionary, got {entries}")
    decision = {}
    for entry in (entries[i] for i in range(len(entries))):
        value = _from_attribute(entry.attr)
        if value is None:
            raise op_error(op, f"{name}: unexpected value {entry.attr} for '{entry.name}'")
        decision[entry.name] = value
    return decision
