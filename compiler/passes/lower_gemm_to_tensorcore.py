"""lower-gemm-to-tensorcore: the canonical tile GEMM kernel → a tensor-core kernel (sm_90a, sm_80).

Recognizes, in the frontend's tile IR, the kernel of the quickstart:

    tile.kernel grid(ceildiv(N, BN), ceildiv(M, BM)) threads [T] {
      A_s = alloc shared [BM, BK] ([BK, BM] with transpose_A); B_s = alloc shared [BK, BN]
      ([BN, BK] with transpose_B); C_f = alloc fragment [BM, BN] f32 (i32 for int8)
      tile.fill C_f, 0
      tile.pipelined k = 0 to ceildiv(K, BK) stages S {
        tile.copy A[by*BM, k*BK] (A[k*BK, by*BM]) -> A_s
        tile.copy B[k*BK, bx*BN] (B[bx*BN, k*BK]) -> B_s
        tile.gemm A_s, B_s, C_f {transpose_a?, transpose_b?} }
      [C_h = alloc fragment [BM, BN] f16|bf16; tile.parallel { C_h[i,j] = truncf(C_f[i,j]) }]
      tile.copy C_h (or C_f) -> C[by*BM, bx*BN] }

(A, B, C the entry's row-major tensors) and replaces it by a generated gpu.module with the
tensor-core kernel that the CUDA target's scheduling passes decided (infer-mma-layout's tile.mma
on the gemm is required: without it the kernel is left alone). The config is built from the
decisions alone: tile.mma (consumer warpgroups / warp grid), tile.swizzle (the operand tiles'
pattern, which the generator fixes: 128B on sm_90a, xor on sm_80), tile.pipeline (K tile,
stages) and tile.async (operand copies), tile.store (staged columns), tile.warp_specialize and
tile.raster (group_m, persistent). A decision a pass left out (it found
e.g. rows not 16-byte aligned) leaves the kernel to the SIMT path; one the generator cannot
follow is a CompileError at the op carrying it. The generator is `tilec.compiler.tensorcore`'s
for the target arch: on sm_90a TMA + mbarrier
pipeline, producer warpgroup, wgmma consumers, TMA-store epilogue; on sm_80 cp.async, ldmatrix,
mma.sync. Operand types: f16/bf16 in any layout; float8 e4m3/e5m2 (sm_90a), int8 and float32
(as tf32) with K-major operands only (A as M x K, B as N x K: transpose_B), which is what the
instructions read. Outputs: f16/bf16 (converted) or f32 from fp32 accumulators, i32 from int8.
`T.use_swizzle(panel)` sets the grouped tile order's panel (M-tiles per group; its order
argument is not distinguished). Anything else (other epilogues, other layouts or types, a K
known only at run time, a single k-tile) is left alone for the SIMT lowering, and so is every
kernel of a module with `tile.per_op_gemms` (TILEC_PER_OP_GEMMS=1: the per-op path's kernel of
the same GEMM, for benchmarks that time both). The arch comes from the pass option, else the
module attribute `tile.arch`, else sm_90a.

Output: the entry func keeps its signature (the runtime's ABI is read from it) with an empty
body; `gpu.module @kernels` holds the kernel, named as the entry; the module attribute
`tile.tensorcore` is a JSON string with the launch metadata the CUDA target must use instead of
lowering the (removed) tile.kernel: threads, shared_bytes, grid (when it replaces the
frontend's), abi slots (["tma", p, role] = a pointer to the CUtensorMap of tensor parameter p,
built by tilec.runtime.tma; ["ptr", p]; ["dim", p, d] as i64), tma (box/swizzle per role) and
the chosen config.

A may also be read from registers: a fragment A_f [BM, BK] of A's type that the loop fills from
the whole of A_s between the copies and the gemm (`tile.copy A_s -> A_f; tile.gemm A_f, B_s,
C_f`, A not transposed). On sm_90a that is the wgmma kernel with `a_registers` (each warp
ldmatrix-loads its rows of A from the TMA slot, then the RS form of wgmma), which tile.mma's
a_source = "registers" asks for; the mma.sync kernel (sm_80) reads A from shared memory only,
so there such a kernel stays on the SIMT path.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import (
    as_operation,
    constant_index,
    copy_parts,
    defining_op,
    op_error,
    scope,
)
from tilec.compiler.passes._scheduling import (
    ACCUMULATOR_TYPES,
    OPERAND_TYPES,
    OUTPUT_TYPES,
    PER_OP_GEMMS_ATTR,
    PIPELINE_ATTR,
    TMA_PIPELINE,
    DecisionValue,
    read_decision,
    target_description,
    tensorcore_type,
)
from tilec.compiler.passes.infer_mma_layout import MMA_ATTR, register_a_fill
from tilec.compiler.passes.pipeline_async_copies import ASYNC_ATTR
from tilec.compiler.passes.rasterize_blocks import RASTER_ATTR
from tilec.compiler.passes.select_epilogue_store import STORE_ATTR, conversion_target
from tilec.compiler.passes.select_shared_swizzle import SWIZZLE_ATTR
from tilec.compiler.passes.specialize_warps import WARP_SPECIALIZE_ATTR
from tilec.compiler.tensorcore.ampere import AmpereGemmConfig, ampere_gemm_mlir
from tilec.compiler.tensorcore.dtypes import K_STEP_BYTES, OPERAND_BYTES, accumulator
from tilec.compiler.tensorcore.emitter import KernelInterface
from tilec.compiler.tensorcore.hopper import HopperGemmConfig, hopper_gemm_mlir

PASS_NAME = "lower-gemm-to-tensorcore"
LAUNCH_ATTR = "tile.tensorcore"
# per tensor-core family (the target description's `mma`): generator, tile.mma kind,
# tile.pipeline mechanism, operands' tile.async, tile.store kind
GENERATORS = {
    "wgmma": ("wgmma", "wgmma", TMA_PIPELINE, "tma", "tma"),
    "mma.sync": ("mma.sync", "mma.sync", "cp.async", "cp.async", "shared-staged"),
}
OPERAND_SWIZZLES = {"wgmma": "128B", "mma.sync": "xor"}  # how each generator lays out A/B tiles
GemmConfig = HopperGemmConfig | AmpereGemmConfig
SETMAXNREG = (40, 232)  # the wgmma kernel's producer / consumer registers when it sets them


@dataclass(frozen=True)
class GemmOps:
    """The ops of the canonical kernel that carry the scheduling passes' decisions."""

    kernel: ir.Operation  # tile.raster, tile.warp_specialize
    loop: ir.Operation  # tile.pipeline
    gemm: ir.Operation  # tile.mma
    operand_copies: tuple[ir.Operation, ir.Operation]  # tile.async (A, B)
    operand_tiles: tuple[ir.Value, ir.Value]  # tile.swizzle: the shared tiles of A, B
    store: ir.Operation  # tile.store


@dataclass
class GemmMatch:
    """What the recognizer learned about a canonical GEMM kernel."""

    a: int  # parameter numbers of A, B, C
    b: int
    c: int
    block_m: int
    block_n: int
    dtype: str  # operand type (tilec.compiler.tensorcore.dtypes)
    shape: tuple[int | None, int | None, int | None]  # M, N, K (None: dynamic)
    out_dtype: str
    trans_a: bool
    trans_b: bool
    a_registers: bool  # A from a fragment the loop copies its shared tile into
    ops: GemmOps


def _ops(block: ir.Block) -> list[ir.Operation]:
    return [as_operation(op) for op in block.operations]


def _tile_ops(block: ir.Block) -> list[ir.Operation]:
    """Ops of a block other than pure index arithmetic and terminators."""
    return [
        op
        for op in _ops(block)
        if not op.name.startswith("arith.") and op.name not in ("tile.yield",)
    ]


def _i64s(op: ir.Operation, name: str) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _scaled(value: ir.Value, base: ir.Value, factor: int) -> bool:
    """Is `value` = base * factor (arith.muli in either order)?"""
    op = defining_op(value)
    if op is None or op.name != "arith.muli":
        return False
    lhs, rhs = op.operands[0], op.operands[1]
    return (lhs == base and constant_index(rhs) == factor) or (
        rhs == base and constant_index(lhs) == factor
    )


def _is_zero(value: ir.Value) -> bool:
    op = defining_op(value)
    if op is None or op.name != "arith.constant":
        return False
    attribute = op.attributes["value"]
    if isinstance(attribute, ir.FloatAttr):
        return ir.FloatAttr(attribute).value == 0.0
    return isinstance(attribute, ir.IntegerAttr) and ir.IntegerAttr(attribute).value == 0


def _param_number(value: ir.Value, entry_block: ir.Block) -> int | None:
    if isinstance(value, ir.BlockArgument) and value.owner == entry_block:
        return value.arg_number
    return None


def match_gemm(entry: ir.Operation) -> GemmMatch | None:
    """The canonical GEMM's parameters, or None when the entry is anything else."""
    entry_block = entry.regions[0].blocks[0]
    kernels = [op for op in _ops(entry_block) if op.name == "tile.kernel"]
    if len(kernels) != 1:
        return None
    kernel = kernels[0]
    body = kernel.regions[0].blocks[0]
    ops = _tile_ops(body)
    pipelined = [op for op in ops if op.name == "tile.pipelined"]
    if len(pipelined) != 1 or len(body.arguments) != 2:
        return None
    loop = pipelined[0]
    loop_ops = _tile_ops(loop.regions[0].blocks[0])
    gemms = [op for op in loop_ops if op.name == "tile.gemm"]
    if len(gemms) != 1:
        return None
    gemm = gemms[0]
    if ir.BoolAttr(gemm.attributes["clear_accum"]).value:
        return None
    trans_a = ir.BoolAttr(gemm.attributes["transpose_a"]).value
    trans_b = ir.BoolAttr(gemm.attributes["transpose_b"]).value
    a_shared, b_shared, acc = gemm.operands[0], gemm.operands[1], gemm.operands[2]
    a_fill = register_a_fill(gemm) if scope(a_shared) == "fragment" else None
    if a_fill is not None:
        # A from registers: its fill sits between the global copies and the gemm
        if trans_a or loop_ops[-2:] != [a_fill, gemm]:
            return None
        a_shared = copy_parts(a_fill)[0]
        loop_ops = loop_ops[:-2] + [gemm]
    copies = [op for op in loop_ops if op.name == "tile.copy"]
    if len(copies) != 2 or len(loop_ops) != 3:
        return None
    if scope(a_shared) != "shared" or scope(b_shared) != "shared" or scope(acc) != "fragment":
        return None
    acc_type = ir.MemRefType(acc.type)
    a_tile = list(ir.MemRefType(a_shared.type).shape)
    b_tile = list(ir.MemRefType(b_shared.type).shape)
    block_m, block_k = reversed(a_tile) if trans_a else a_tile
    block_k2, block_n = reversed(b_tile) if trans_b else b_tile
    if block_k2 != block_k or list(acc_type.shape) != [block_m, block_n]:
        return None
    dtype = tensorcore_type(ir.MemRefType(a_shared.type).element_type, OPERAND_TYPES)
    b_dtype = tensorcore_type(ir.MemRefType(b_shared.type).element_type, OPERAND_TYPES)
    if dtype is None or b_dtype != dtype:
        return None
    if tensorcore_type(acc_type.element_type, ACCUMULATOR_TYPES) != accumulator(dtype):
        return None

    k_iv = loop.regions[0].blocks[0].arguments[0]
    bx, by = body.arguments[0], body.arguments[1]
    if any(len(copy.operands) != 6 for copy in copies):
        return None  # 2-d boxes: src, 2 offsets, dst, 2 offsets
    by_destination = {copy.operands[3]: copy for copy in copies}
    if set(by_destination) != {a_shared, b_shared}:
        return None
    a_copy, b_copy = by_destination[a_shared], by_destination[b_shared]
    a_param = _param_number(a_copy.operands[0], entry_block)
    b_param = _param_number(b_copy.operands[0], entry_block)
    if a_param is None or b_param is None:
        return None
    a_offsets, b_offsets = list(a_copy.operands[1:3]), list(b_copy.operands[1:3])
    if _i64s(a_copy, "src_shape") != a_tile or _i64s(b_copy, "src_shape") != b_tile:
        return None
    if any(constant_index(v) != 0 for v in (*a_copy.operands[4:6], *b_copy.operands[4:6])):
        return None
    a_expected = [(by, block_m), (k_iv, block_k)]
    b_expected = [(k_iv, block_k), (bx, block_n)]
    for offsets, expected, transposed in (
        (a_offsets, a_expected, trans_a),
        (b_offsets, b_expected, trans_b),
    ):
        pairs = list(reversed(expected)) if transposed else expected
        if not all(_scaled(v, base, f) for v, (base, f) in zip(offsets, pairs, strict=True)):
            return None
    if constant_index(loop.operands[0]) != 0 or constant_index(loop.operands[2]) != 1:
        return None

    # before the loop: the accumulator cleared; after it: optional conversion, then the store
    position = ops.index(loop)
    before = [op for op in ops[:position] if op.name != "tile.alloc"]
    if len(before) != 1 or before[0].name != "tile.fill" or before[0].operands[0] != acc:
        return None
    if not _is_zero(before[0].operands[1]):
        return None
    after = [op for op in ops[position + 1 :] if op.name != "tile.alloc"]
    stored = acc
    if [op.name for op in after] == ["tile.parallel", "tile.copy"]:
        stored = conversion_target(after[0], acc)
        if stored is None:
            return None
    elif [op.name for op in after] != ["tile.copy"]:
        return None
    out = after[-1]
    if out.operands[0] != stored or len(out.operands) != 6:
        return None
    c_param = _param_number(out.operands[3], entry_block)
    out_dtype = tensorcore_type(ir.MemRefType(out.operands[3].type).element_type, OUTPUT_TYPES)
    stored_type = tensorcore_type(ir.MemRefType(stored.type).element_type, OUTPUT_TYPES)
    if c_param is None or out_dtype is None:
        return None
    if stored_type not in (out_dtype, accumulator(dtype)):  # tile.copy converts accumulators
        return None
    if _i64s(out, "dst_shape") != [block_m, block_n]:
        return None
    if not (_scaled(out.operands[4], by, block_m) and _scaled(out.operands[5], bx, block_n)):
        return None

    a_shape = ir.MemRefType(a_copy.operands[0].type).shape
    b_shape = ir.MemRefType(b_copy.operands[0].type).shape
    dynamic = ir.ShapedType.get_dynamic_size()

    def static(extent: int) -> int | None:
        return None if extent == dynamic else extent

    m, k = (static(a_shape[1]), static(a_shape[0])) if trans_a else map(static, a_shape)
    n = static(b_shape[0] if trans_b else b_shape[1])
    # the frontend's loop and grid must cover the whole problem, exactly once
    if k is not None and constant_index(loop.operands[1]) not in (None, math.ceil(k / block_k)):
        return None
    grid = [constant_index(v) for v in kernel.operands]
    if len(grid) != 2:
        return None
    if n is not None and grid[0] not in (None, math.ceil(n / block_n)):
        return None
    if m is not None and grid[1] not in (None, math.ceil(m / block_m)):
        return None
    return GemmMatch(
        a_param,
        b_param,
        c_param,
        block_m,
        block_n,
        dtype,
        (m, n, k),
        out_dtype,
        trans_a,
        trans_b,
        a_fill is not None,
        GemmOps(kernel, loop, gemm, (a_copy, b_copy), (a_shared, b_shared), out),
    )


def _interface(entry: ir.Operation, match: GemmMatch, tma_operands: bool
               ) -> tuple[KernelInterface, list]:
    """gpu.func parameters in the CUDA runtime's ABI order, prologue binding M, N, K, and the
    ABI slots: one per entry parameter (TMA map or pointer), then every dynamic dimension."""
    name = ir.StringAttr(entry.attributes["sym_name"]).value
    types = ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value).inputs
    roles = {match.a: "A", match.b: "B", match.c: "C"}
    prefix = "%tm" if tma_operands else "%"
    params: list[tuple[str, str]] = []
    slots: list[list] = []
    dims: list[tuple[str, str]] = []
    dim_slots: list[list] = []
    dim_names: dict[tuple[int, int], str] = {}
    dynamic = ir.ShapedType.get_dynamic_size()
    for number, type_ in enumerate(types):
        if isinstance(type_, ir.MemRefType):
            role = roles.get(number)
            params.append((f"{prefix}{role}" if role else f"%unused{number}", "!llvm.ptr"))
            tma = tma_operands and role is not None
            slots.append(["tma", number, role] if tma else ["ptr", number])
            for d, extent in enumerate(type_.shape):
                if extent == dynamic:
                    dim_names[(number, d)] = f"%dim{number}_{d}"
                    dims.append((dim_names[(number, d)], "i64"))
                    dim_slots.append(["dim", number, d])
        else:
            params.append((f"%unused{number}", str(type_)))
            slots.append(["scalar", number, str(type_)])
    prologue = []
    sources = {
        "M": (match.a, int(match.trans_a), match.shape[0]),
        "K": (match.a, 1 - int(match.trans_a), match.shape[2]),
        "N": (match.b, 1 - int(match.trans_b), match.shape[1]),
    }
    for symbol, (number, d, extent) in sources.items():
        if extent is not None:
            prologue.append(f"%{symbol} = arith.constant {extent} : i32")
        else:
            prologue.append(f"%{symbol} = arith.trunci {dim_names[(number, d)]} : i64 to i32")
    return KernelInterface(name, params + dims, prologue), slots + dim_slots


def _need(op: ir.Operation, name: str, decision: dict, key: str) -> DecisionValue:
    if key not in decision:
        raise op_error(op, f"{PASS_NAME}: {name} lacks '{key}'")
    return decision[key]


def _expect(op: ir.Operation, name: str, decision: dict, key: str, wanted: DecisionValue,
            generator: str) -> None:
    """A decision field the generator fixes: anything else contradicts it."""
    value = _need(op, name, decision, key)
    if value != wanted:
        raise op_error(op, f"{PASS_NAME}: {name} {key} = {_show(value)} contradicts the "
                           f"{generator} kernel, which needs {_show(wanted)}")


def _show(value: DecisionValue) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class Schedule:
    """The scheduling passes' decisions for the canonical kernel, as read off its ops."""

    mma: dict[str, DecisionValue]
    pipeline: dict[str, DecisionValue]
    store: dict[str, DecisionValue]
    raster: dict[str, DecisionValue]
    warp_specialize: dict[str, DecisionValue] | None
    copies: tuple[str, str]  # tile.async of the A and B copies
    swizzles: tuple[str, str]  # tile.swizzle of the A and B tiles


def read_schedule(ops: GemmOps) -> Schedule | None:
    """The decisions, or None when a pass left one out: then it found that part impossible
    (e.g. rows not 16-byte aligned) and the kernel stays on the SIMT path."""
    mma = read_decision(ops.gemm, MMA_ATTR)
    pipeline = read_decision(ops.loop, PIPELINE_ATTR)
    store = read_decision(ops.store, STORE_ATTR)
    raster = read_decision(ops.kernel, RASTER_ATTR)
    copies = tuple(
        ir.StringAttr(copy.attributes[ASYNC_ATTR]).value
        for copy in ops.operand_copies
        if ASYNC_ATTR in copy.attributes
    )
    tiles = [defining_op(operand) for operand in ops.operand_tiles]
    swizzles = tuple(
        ir.StringAttr(tile.attributes[SWIZZLE_ATTR]).value
        for tile in tiles
        if tile is not None and SWIZZLE_ATTR in tile.attributes
    )
    if None in (mma, pipeline, store, raster) or len(copies) != 2 or len(swizzles) != 2:
        return None
    if "split" in mma:  # warpgroups over N: the generators split M only (per-op path)
        return None
    return Schedule(mma, pipeline, store, raster,
                    read_decision(ops.kernel, WARP_SPECIALIZE_ATTR), copies, swizzles)


def _check_common(match: GemmMatch, schedule: Schedule, family: str) -> int:
    """The checks both generators share; returns the K tile."""
    ops = match.ops
    generator, kind, mechanism, copy, store = GENERATORS[family]
    _expect(ops.gemm, MMA_ATTR, schedule.mma, "kind", kind, generator)
    a_source = "registers" if match.a_registers else "shared"
    _expect(ops.gemm, MMA_ATTR, schedule.mma, "a_source", a_source, generator)
    instr_m, instr_n = (64, match.block_n) if family == "wgmma" else (16, 8)
    k_step = K_STEP_BYTES // OPERAND_BYTES[match.dtype]
    _expect(ops.gemm, MMA_ATTR, schedule.mma, "instr", (instr_m, instr_n, k_step), generator)
    _expect(ops.loop, PIPELINE_ATTR, schedule.pipeline, "mechanism", mechanism, generator)
    for op, value in zip(ops.operand_copies, schedule.copies, strict=True):
        if value != copy:
            raise op_error(op, f'{PASS_NAME}: {ASYNC_ATTR} = "{value}" contradicts the '
                               f'{generator} kernel, which loads its operands by "{copy}"')
    for operand, swizzle in zip(ops.operand_tiles, schedule.swizzles, strict=True):
        if swizzle != OPERAND_SWIZZLES[family]:
            raise op_error(defining_op(operand),
                           f'{PASS_NAME}: {SWIZZLE_ATTR} = "{swizzle}" contradicts the '
                           f'{generator} kernel, which swizzles its operand tiles '
                           f'"{OPERAND_SWIZZLES[family]}"')
    _expect(ops.store, STORE_ATTR, schedule.store, "kind", store, generator)
    k_tile = _need(ops.loop, PIPELINE_ATTR, schedule.pipeline, "k_tile")
    if not isinstance(k_tile, int) or k_tile < 1:
        raise op_error(ops.loop, f"{PASS_NAME}: {PIPELINE_ATTR} k_tile = {_show(k_tile)} must "
                                 "be a positive number of elements")
    return k_tile


def hopper_from(match: GemmMatch, schedule: Schedule, stages: DecisionValue) -> HopperGemmConfig:
    """The wgmma kernel the decisions describe (CompileError where they contradict it)."""
    ops = match.ops
    generator = GENERATORS["wgmma"][0]
    _expect(ops.store, STORE_ATTR, schedule.store, "swizzle", "128B", generator)
    consumers = _need(ops.gemm, MMA_ATTR, schedule.mma, "warpgroups")
    warps = schedule.warp_specialize
    if warps is None:
        raise op_error(ops.kernel, f"{PASS_NAME}: the {generator} kernel is warp-specialized "
                                   f"but the kernel has no {WARP_SPECIALIZE_ATTR}")
    _expect(ops.kernel, WARP_SPECIALIZE_ATTR, warps, "producer_warpgroups", 1, generator)
    _expect(ops.kernel, WARP_SPECIALIZE_ATTR, warps, "consumer_warpgroups", consumers, generator)
    threads = 128 * (consumers + 1) if isinstance(consumers, int) else 0
    _expect(ops.kernel, WARP_SPECIALIZE_ATTR, warps, "threads", threads, generator)
    if "setmaxnreg" in warps:
        _expect(ops.kernel, WARP_SPECIALIZE_ATTR, warps, "setmaxnreg", SETMAXNREG, generator)
    return _build(ops.gemm, generator, lambda: HopperGemmConfig(
        block_m=match.block_m,
        block_n=match.block_n,
        block_k=schedule.pipeline["k_tile"],
        stages=stages,
        consumers=consumers,
        dtype=match.dtype,
        persistent=_need(ops.kernel, RASTER_ATTR, schedule.raster, "persistent"),
        group_m=_need(ops.kernel, RASTER_ATTR, schedule.raster, "group_m"),
        epilogue_n=_need(ops.store, STORE_ATTR, schedule.store, "columns"),
        setmaxnreg="setmaxnreg" in warps,
        out_dtype=match.out_dtype,
        trans_a=match.trans_a,
        trans_b=match.trans_b,
        a_registers=match.a_registers,
    ))


def ampere_from(match: GemmMatch, schedule: Schedule, stages: DecisionValue) -> AmpereGemmConfig:
    """The mma.sync kernel the decisions describe (CompileError where they contradict it)."""
    ops = match.ops
    generator = GENERATORS["mma.sync"][0]
    _expect(ops.store, STORE_ATTR, schedule.store, "vector_bytes", 16, generator)
    if schedule.warp_specialize is not None:
        raise op_error(ops.kernel, f"{PASS_NAME}: {WARP_SPECIALIZE_ATTR} contradicts the "
                                   f"{generator} kernel, whose warps all load and compute")
    _expect(ops.kernel, RASTER_ATTR, schedule.raster, "persistent", False, generator)
    warps = _need(ops.gemm, MMA_ATTR, schedule.mma, "warps")
    if not isinstance(warps, tuple) or len(warps) != 2:
        raise op_error(ops.gemm, f"{PASS_NAME}: {MMA_ATTR} warps must be [warps_m, warps_n]")
    return _build(ops.gemm, generator, lambda: AmpereGemmConfig(
        block_m=match.block_m,
        block_n=match.block_n,
        block_k=schedule.pipeline["k_tile"],
        stages=stages,
        warps_m=warps[0],
        warps_n=warps[1],
        dtype=match.dtype,
        group_m=_need(ops.kernel, RASTER_ATTR, schedule.raster, "group_m"),
        out_dtype=match.out_dtype,
        trans_a=match.trans_a,
        trans_b=match.trans_b,
    ))


def _build(op: ir.Operation, generator: str, make: Callable[[], GemmConfig]) -> GemmConfig:
    try:
        return make()
    except (ValueError, TypeError, ZeroDivisionError) as error:
        raise op_error(op, f"{PASS_NAME}: the scheduling annotations ask for a {generator} "
                           f"kernel it cannot build: {error}") from None


@register
@dataclass
class LowerGemmToTensorcore(TilePass):
    """Replace the canonical GEMM kernel by the tensor-core kernel its annotations describe."""

    name = PASS_NAME
    summary = "canonical tile GEMM + scheduling annotations -> TMA/wgmma or mma.sync kernel"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        target = target_description(module, self.arch, self.name)
        if target.mma not in GENERATORS or PER_OP_GEMMS_ATTR in module.operation.attributes:
            return
        wgmma = target.has_wgmma
        entries = [
            as_operation(op)
            for op in module.body.operations
            if as_operation(op).name == "func.func" and "tile.entry" in as_operation(op).attributes
        ]
        if len(entries) != 1:
            return
        entry = entries[0]
        match = match_gemm(entry)
        if match is None or MMA_ATTR not in match.ops.gemm.attributes:
            return
        if match.a_registers and not wgmma:
            return  # the mma.sync kernel reads A from shared memory only: SIMT computes it
        schedule = read_schedule(match.ops)
        m, n, k = match.shape
        if schedule is None or k is None:
            return  # the generator binds K as a constant
        if wgmma and schedule.pipeline.get("mechanism") == "cp.async":
            return  # pipeline-async-copies found no TMA ring for the loop: SIMT pipelines it
        k_tile = _check_common(match, schedule, target.mma)
        # Single-k-tile problems stay on the SIMT path; a ring deeper than the K loop has slots
        # that never fill: at most one slot per k-tile.
        k_tiles = math.ceil(k / k_tile)
        if k_tiles < 2:
            return
        stages = _need(match.ops.loop, PIPELINE_ATTR, schedule.pipeline, "stages")
        if isinstance(stages, int):
            stages = min(stages, k_tiles)
        config = (hopper_from if wgmma else ampere_from)(match, schedule, stages)
        interface, slots = _interface(entry, match, tma_operands=wgmma)
        text = (hopper_gemm_mlir if wgmma else ampere_gemm_mlir)(config, interface)
        launch = {"arch": target.name, "abi": slots, **config.launch(), "config": asdict(config)}
        if None not in (m, n):
            tiles = math.ceil(m / match.block_m) * math.ceil(n / match.block_n)
            # a GPU with fewer SMs than the description's part runs the rest in a second wave
            persistent_grid = min(tiles, target.sm_count)
            launch["grid"] = [persistent_grid if launch["persistent"] else tiles, 1, 1]
        self._replace(module, entry, text, launch)

    @staticmethod
    def _replace(module: ir.Module, entry: ir.Operation, text: str, launch: dict) -> None:
        generated = ir.Module.parse(text, context=module.context)
        block = entry.regions[0].blocks[0]
        for op in reversed(_ops(block)):
            if op.name != "func.return":
                op.erase()
        gpu_module = as_operation(generated.body.operations[0])
        gpu_module.move_after(entry)
        attributes = module.operation.attributes
        attributes["gpu.container_module"] = ir.UnitAttr.get(module.context)
        attributes[LAUNCH_ATTR] = ir.StringAttr.get(json.dumps(launch), module.context)
