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
tensor-core kernel of `tilec.compiler.tensorcore` for the target arch: on sm_90a TMA + mbarrier
pipeline, producer warpgroup, wgmma consumers, TMA-store epilogue; on sm_80 cp.async, ldmatrix,
mma.sync. Operand types: f16/bf16 in any layout; float8 e4m3/e5m2 (sm_90a), int8 and float32
(as tf32) with K-major operands only (A as M x K, B as N x K: transpose_B), which is what the
instructions read. Outputs: f16/bf16 (converted) or f32 from fp32 accumulators, i32 from int8.
`T.use_swizzle(panel)` sets the grouped tile order's panel (M-tiles per group; its order
argument is not distinguished). Anything else (other epilogues, other layouts or types, rows
that are not 16-byte aligned) is left alone for the SIMT lowering. The arch comes from the pass
option, else the module attribute `tile.arch`, else sm_90a.

Output: the entry func keeps its signature (the runtime's ABI is read from it) with an empty
body; `gpu.module @kernels` holds the kernel, named as the entry; the module attribute
`tile.tensorcore` is a JSON string with the launch metadata the CUDA target must use instead of
lowering the (removed) tile.kernel: threads, shared_bytes, grid (when it replaces the
frontend's), abi slots (["tma", p, role] = a pointer to the CUtensorMap of tensor parameter p,
built by tilec.runtime.tma; ["ptr", p]; ["dim", p, d] as i64), tma (box/swizzle per role) and
the chosen config.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import asdict, dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import as_operation, constant_index, defining_op, scope
from tilec.compiler.tensorcore.ampere import ampere_gemm_mlir
from tilec.compiler.tensorcore.dtypes import OPERAND_BYTES, OUTPUT_BYTES, accumulator
from tilec.compiler.tensorcore.emitter import KernelInterface
from tilec.compiler.tensorcore.hopper import hopper_gemm_mlir
from tilec.compiler.tensorcore.schedule import ampere_config, hopper_config
from tilec.errors import CompileError

ARCHES = ("sm_80", "sm_90a")
LAUNCH_ATTR = "tile.tensorcore"
H200_SMS = 132  # persistent grid size; a GPU with fewer SMs runs the extra CTAs in a second wave


@dataclass
class GemmMatch:
    """What the recognizer learned about a canonical GEMM kernel."""

    a: int  # parameter numbers of A, B, C
    b: int
    c: int
    block_m: int
    block_n: int
    block_k: int
    threads: int
    stages: int
    dtype: str  # operand type (tilec.compiler.tensorcore.dtypes)
    shape: tuple[int | None, int | None, int | None]  # M, N, K (None: dynamic)
    group_m: int  # M-tiles per raster group (T.use_swizzle's panel size; 8 without it)
    out_dtype: str = "f16"
    trans_a: bool = False
    trans_b: bool = False


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


# element types by short name -> the kernels' names for them, per role (f32 operands run as tf32)
_FLOAT_ELEMENTS = (
    (ir.F16Type, "f16"),
    (ir.BF16Type, "bf16"),
    (ir.Float8E4M3FNType, "e4m3"),
    (ir.Float8E5M2Type, "e5m2"),
    (ir.F32Type, "f32"),
)
_OPERAND_TYPES = {
    "f16": "f16", "bf16": "bf16", "e4m3": "e4m3", "e5m2": "e5m2", "f32": "tf32", "i8": "s8"
}
_OUTPUT_TYPES = {"f16": "f16", "bf16": "bf16", "f32": "f32", "i32": "s32"}
_ACCUMULATOR_TYPES = {"f32": "f32", "i32": "s32"}


def _kernel_type(type_: ir.Type, names: dict[str, str]) -> str | None:
    """The kernel's name (from `names`) for an element type, or None when it has none."""
    for type_class, element in _FLOAT_ELEMENTS:
        if isinstance(type_, type_class):
            return names.get(element)
    if isinstance(type_, ir.IntegerType):
        return names.get(f"i{ir.IntegerType(type_).width}")
    return None


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
    copies = [op for op in loop_ops if op.name == "tile.copy"]
    if len(gemms) != 1 or len(copies) != 2 or len(loop_ops) != 3:
        return None
    gemm = gemms[0]
    if ir.BoolAttr(gemm.attributes["clear_accum"]).value:
        return None
    trans_a = ir.BoolAttr(gemm.attributes["transpose_a"]).value
    trans_b = ir.BoolAttr(gemm.attributes["transpose_b"]).value
    a_shared, b_shared, acc = gemm.operands[0], gemm.operands[1], gemm.operands[2]
    if scope(a_shared) != "shared" or scope(b_shared) != "shared" or scope(acc) != "fragment":
        return None
    acc_type = ir.MemRefType(acc.type)
    a_tile = list(ir.MemRefType(a_shared.type).shape)
    b_tile = list(ir.MemRefType(b_shared.type).shape)
    block_m, block_k = reversed(a_tile) if trans_a else a_tile
    block_k2, block_n = reversed(b_tile) if trans_b else b_tile
    if block_k2 != block_k or list(acc_type.shape) != [block_m, block_n]:
        return None
    dtype = _kernel_type(ir.MemRefType(a_shared.type).element_type, _OPERAND_TYPES)
    b_dtype = _kernel_type(ir.MemRefType(b_shared.type).element_type, _OPERAND_TYPES)
    if dtype is None or b_dtype != dtype:
        return None
    if _kernel_type(acc_type.element_type, _ACCUMULATOR_TYPES) != accumulator(dtype):
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
        stored = _conversion_target(after[0], acc)
        if stored is None:
            return None
    elif [op.name for op in after] != ["tile.copy"]:
        return None
    out = after[-1]
    if out.operands[0] != stored or len(out.operands) != 6:
        return None
    c_param = _param_number(out.operands[3], entry_block)
    out_dtype = _kernel_type(ir.MemRefType(out.operands[3].type).element_type, _OUTPUT_TYPES)
    stored_type = _kernel_type(ir.MemRefType(stored.type).element_type, _OUTPUT_TYPES)
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
    threads = _i64s(kernel, "threads")
    stages = ir.IntegerAttr(loop.attributes["num_stages"]).value
    attributes = kernel.attributes
    panel = attributes["tile.swizzle_panel"] if "tile.swizzle_panel" in attributes else None
    return GemmMatch(
        a_param,
        b_param,
        c_param,
        block_m,
        block_n,
        block_k,
        math.prod(threads),
        stages,
        dtype,
        (m, n, k),
        ir.IntegerAttr(panel).value if panel is not None else 8,
        out_dtype,
        trans_a,
        trans_b,
    )


def _conversion_target(parallel: ir.Operation, acc: ir.Value) -> ir.Value | None:
    """The fragment a pure `dst[i, j] = truncf(acc[i, j])` tile.parallel writes, else None."""
    body = parallel.regions[0].blocks[0]
    ops = [op for op in _ops(body) if op.name != "tile.yield"]
    if [op.name for op in ops] != ["memref.load", "arith.truncf", "memref.store"]:
        return None
    load, trunc, store = ops
    indices = list(body.arguments)
    if load.operands[0] != acc or list(load.operands[1:]) != indices:
        return None
    if trunc.operands[0] != load.results[0] or store.operands[0] != trunc.results[0]:
        return None
    if list(store.operands[2:]) != indices or scope(store.operands[1]) != "fragment":
        return None
    return store.operands[1]


def _interface(entry: ir.Operation, match: GemmMatch, arch: str) -> tuple[KernelInterface, list]:
    """gpu.func parameters in the CUDA runtime's ABI order, prologue binding M, N, K, and the
    ABI slots: one per entry parameter (TMA map or pointer), then every dynamic dimension."""
    name = ir.StringAttr(entry.attributes["sym_name"]).value
    types = ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value).inputs
    roles = {match.a: "A", match.b: "B", match.c: "C"}
    prefix = "%tm" if arch == "sm_90a" else "%"
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
            tma = arch == "sm_90a" and role is not None
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


def _rows_aligned(match: GemmMatch) -> bool:
    """Are the rows of A, B and C (as stored) known to be multiples of 16 bytes?

    TMA and cp.async move 16-byte pieces: a row length only known at run time could be
    anything, so such a kernel stays on the SIMT path (a dynamic M alone is fine)."""
    m, n, k = match.shape
    elem = OPERAND_BYTES[match.dtype]
    rows = [
        ((m if match.trans_a else k), elem),
        ((k if match.trans_b else n), elem),
        (n, OUTPUT_BYTES[match.out_dtype]),
    ]
    return all(extent is not None and extent * size % 16 == 0 for extent, size in rows)


@register
@dataclass
class LowerGemmToTensorcore(TilePass):
    """Replace the canonical GEMM kernel by the generated tensor-core kernel."""

    name = "lower-gemm-to-tensorcore"
    summary = "canonical tile GEMM -> TMA/wgmma (sm_90a) or cp.async/mma.sync (sm_80) kernel"
    arch: str = ""
    fill_stages: bool = True

    def run(self, module: ir.Module) -> None:
        arch = self.arch
        if not arch and "tile.arch" in module.operation.attributes:
            arch = ir.StringAttr(module.operation.attributes["tile.arch"]).value
        arch = arch or "sm_90a"
        if arch not in ARCHES:
            raise CompileError(f"lower-gemm-to-tensorcore: unsupported arch '{arch}'")
        entries = [
            as_operation(op)
            for op in module.body.operations
            if as_operation(op).name == "func.func" and "tile.entry" in as_operation(op).attributes
        ]
        if len(entries) != 1:
            return
        entry = entries[0]
        match = match_gemm(entry)
        if match is None:
            return
        m, n, k = match.shape
        if not _rows_aligned(match):
            return  # TMA and cp.async move 16-byte pieces of rows
        static = None not in (m, n)
        types = {
            "out_dtype": match.out_dtype,
            "trans_a": match.trans_a,
            "trans_b": match.trans_b,
        }
        knobs = (
            match.block_m,
            match.block_n,
            match.block_k,
            match.threads,
            match.stages,
            match.dtype,
        )
        if arch == "sm_90a":
            config = hopper_config(*knobs, persistent=static, fill_stages=self.fill_stages, **types)
        else:
            config = ampere_config(*knobs, **types)
        if config is None:
            return
        # A ring deeper than the K loop has slots that never fill: at most one slot per k-tile.
        # Single-k-tile problems (and a K only known at run time) stay on the SIMT path.
        if k is None or math.ceil(k / config.block_k) < 2:
            return
        k_tiles = math.ceil(k / config.block_k)
        config = dataclasses.replace(
            config, group_m=match.group_m, stages=min(config.stages, k_tiles))
        interface, slots = _interface(entry, match, arch)
        text = (hopper_gemm_mlir if arch == "sm_90a" else ampere_gemm_mlir)(config, interface)
        launch = {"arch": arch, "abi": slots, **config.launch(), "config": asdict(config)}
        if static:
            tiles = math.ceil(m / match.block_m) * math.ceil(n / match.block_n)
            launch["grid"] = [min(tiles, H200_SMS) if launch["persistent"] else tiles, 1, 1]
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
