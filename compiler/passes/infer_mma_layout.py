"""infer-mma-layout: which tensor-core instruction computes each tile.gemm, and how the block's
warps share it.

Every later scheduling decision (operand swizzles, pipeline depth, warp roles, epilogue) and the
tensor-core lowering follow from this one, so it is made first and recorded on the op:

- sm_90a: `tile.mma = {kind = "wgmma", warpgroups = C, instr = array<i64: 64, N, Kst>,
  a_source}`. C = 2 consumer warpgroups when the block has 256+ threads and block_m is a
  multiple of 128, else 1; each owns block_m / C rows, which wgmma needs to be 64 or 128 (one
  or two m64 atoms), with 64 <= block_n <= 256 a multiple of 64 and at most 128 accumulator
  registers per thread ((block_m / C / 64) * block_n <= 256). One instruction spans all of
  block_n (N = block_n) and 32 bytes of K (Kst = 16 for 16-bit, 32 for 8-bit, 8 for tf32).
  With the opt-in `tile.split_wgmma_n` (TILEC_SPLIT_WGMMA_N=1 until a GPU has run it) a
  64-row gemm in a block of C = 2 or 4 warpgroups runs on all of them instead (a fragment A
  held whole by each), as TileLang's warp policy does: `split = "n"`, each warpgroup an
  m64n(block_n / C) instruction over its share of the columns, block_n / C a power of two
  from 8 to 256 (the accumulator's `#tile.linear` then has its warpgroup bits along N);
  otherwise the one warpgroup decision above (which plan-wgmma-gemms declines for a block
  of more threads). wgmma is issued by the hardware's warpgroups, warps 4k..4k+3 together:
  a gemm in a thread range that does not start on one (`if 32 <= tx < 288:`, 256 threads
  over warps 1..8) gets the mma.sync decision below over the range's warps instead (the
  sm_80 kernel's code), and T.wgmma_gemm there is an error at its line. With the opt-in
  `tile.mma_sync_fallback` (TILEC_MMA_SYNC_FALLBACK=1 until a GPU has run it) a gemm wgmma
  cannot cover (N = 32, 32-row tiles, one warp: TileLang's kda and sparse MLA backward kernels)
  gets the mma.sync decision below by the per-op lowering's rule (`per_op_fits`: any K) instead
  of none, which leaves it on the CUDA cores.
- sm_80: `tile.mma = {kind = "mma.sync", warps = array<i64: wm, wn>, instr = array<i64: 16, 8,
  Kst>, a_source}`: the warps (threads / 32) as the most square grid over the block's tile
  that the mma.sync kernel accepts (AmpereGemmConfig: warp tiles of 16 x 16 multiples, at most
  128 accumulator registers per thread, copies and stores divided evenly among threads),
  T.gemm's policy first (full_row: warps x 1, full_col: 1 x warps), full_row also where the
  gemm's rows chain through registers (`chained_rows`: the accumulator becoming another
  gemm's A, or A being such an accumulator), so each row stays in one warp and no
  conversion lies between the two.

A and B must be shared memory, except that A may be a fragment (M x K, not transposed): then
wgmma / mma.sync read it from registers (`a_source = "registers"`: the second gemm of
attention, or a GEMM whose loop copies A's shared tile into a fragment, `T.copy(A_shared,
A_frag)`, which `register_a_fill` finds for the later passes). Operand, accumulator and output
types must be ones the tensor cores take (dtypes.check_types: K-major 8-bit and tf32 operands,
f32 / s32 accumulation); the output type is that of the global tensor the accumulator is
finally copied to (directly or through a fragment a tile.parallel fills from it), the
accumulator's own when it never leaves the block.
A gemm that fails any of this gets no attribute and stays on the SIMT path. The accumulator's
tile.alloc is marked `tile.mma_layout = "wgmma-accumulator" | "mma-accumulator"`: its
registers are laid out as the instruction's C fragment, not by infer-fragment-layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.layouts.linear import is_power_of_two
from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import (
    ancestors,
    as_operation,
    constant_index,
    copy_parts,
    defining_op,
    kernels,
    op_error,
    scope,
    walk,
)
from tilec.compiler.passes._scheduling import (
    ACCUMULATOR_TYPES,
    MMA_SYNC_FALLBACK_ATTR,
    OPERAND_TYPES,
    OUTPUT_TYPES,
    SPLIT_WGMMA_N_ATTR,
    DecisionValue,
    decision_attr,
    target_description,
    tensorcore_type,
)
from tilec.compiler.passes.infer_fragment_layout import first_thread, threads_at
from tilec.compiler.passes.lower_gemm_simt import WGMMA_REQUIRED_ATTR
from tilec.compiler.tensorcore.ampere import MMA_SHAPES, AmpereGemmConfig
from tilec.compiler.tensorcore.dtypes import K_STEP_BYTES, OPERAND_BYTES, accumulator, check_types

MMA_ATTR = "tile.mma"
ACCUMULATOR_LAYOUT_ATTR = "tile.mma_layout"
WARPGROUP_THREADS = 128
WARP_THREADS = 32
WGMMA_M = 64
MMA_SYNC_MN = (16, 8)


@dataclass(frozen=True)
class GemmProblem:
    """What the instruction choice reads off one tile.gemm."""

    block_m: int
    block_n: int
    block_k: int
    dtype: str  # operand type (dtypes' names)
    out_dtype: str  # the type the accumulator is stored as
    trans_a: bool
    trans_b: bool
    a_source: str  # "shared" | "registers"

    @property
    def k_step(self) -> int:
        """K elements of one instruction: 32 bytes whatever the type."""
        return K_STEP_BYTES // OPERAND_BYTES[self.dtype]


def _element_type(value: ir.Value) -> ir.Type:
    return ir.MemRefType(value.type).element_type


def _reads(op: ir.Operation, buffer: ir.Value) -> bool:
    return any(inner.name == "memref.load" and inner.operands[0] == buffer for inner in walk(op))


def _parallels_reading(buffer: ir.Value, kernel: ir.Operation) -> list[ir.Operation]:
    """The tile.parallel ops of `kernel` holding a memref.load of `buffer` (found from its
    uses: a scan of the kernel per gemm was a large kernel's slowest part of this pass)."""
    found: list[ir.Operation] = []
    for use in buffer.uses:
        load = as_operation(use.owner)
        if load.name != "memref.load" or use.operand_number != 0:
            continue
        inside: list[ir.Operation] = []  # its enclosing ops up to the kernel
        for op in ancestors(load):
            if op == kernel:
                found += [op for op in inside if op.name == "tile.parallel"
                          and not any(op == known for known in found)]
                break
            inside.append(op)
    return found


def stored_element_type(accumulator_value: ir.Value, kernel: ir.Operation) -> ir.Type:
    """The element type of the global tensor the accumulator is copied to (the first such
    copy), directly or from a fragment that a tile.parallel reading it writes; the
    accumulator's own type otherwise."""
    sources = [accumulator_value]
    for parallel in _parallels_reading(accumulator_value, kernel):
        sources += [
            inner.operands[1]
            for inner in walk(parallel)
            if inner.name == "memref.store" and scope(inner.operands[1]) == "fragment"
        ]
    stores = []
    for source in sources:
        for use in source.uses:
            copy = as_operation(use.owner)
            if copy.name == "tile.copy" and use.operand_number == 0 and \
                    scope(copy_parts(copy)[3]) == "global" and \
                    any(op == kernel for op in ancestors(copy)):
                stores.append(copy)
    if len(stores) > 1:  # the first in program order
        stores = [op for op in walk(kernel) if any(op == store for store in stores)]
    return _element_type(copy_parts(stores[0])[3]) if stores else \
        _element_type(accumulator_value)


def gemm_problem(gemm: ir.Operation, kernel: ir.Operation, k_major: bool = False
                 ) -> GemmProblem | None:
    """The gemm as the tensor cores see it, or None when they cannot run it; with `k_major`,
    as they would see it with its shared operands stored K-major (A as M x K, B as N x K:
    transpose-mn-major-operands' copies)."""
    a, b, c = gemm.operands[0], gemm.operands[1], gemm.operands[2]
    stored_a = ir.BoolAttr(gemm.attributes["transpose_a"]).value
    stored_b = ir.BoolAttr(gemm.attributes["transpose_b"]).value
    trans_a, trans_b = (False, True) if k_major else (stored_a, stored_b)
    if scope(b) != "shared" or scope(c) != "fragment":
        return None
    if scope(a) == "shared":
        a_source = "shared"
    elif scope(a) == "fragment" and not stored_a:
        a_source = "registers"  # register operands are M x K fragments
    else:
        return None
    a_shape, b_shape = ir.MemRefType(a.type).shape, ir.MemRefType(b.type).shape
    if len(a_shape) != 2 or len(b_shape) != 2:
        return None
    block_m, block_k = reversed(a_shape) if stored_a else a_shape
    block_n = b_shape[0] if stored_b else b_shape[1]
    dtype = tensorcore_type(_element_type(a), OPERAND_TYPES)
    if dtype is None or tensorcore_type(_element_type(b), OPERAND_TYPES) != dtype:
        return None
    if tensorcore_type(_element_type(c), ACCUMULATOR_TYPES) != accumulator(dtype):
        return None
    out_dtype = tensorcore_type(stored_element_type(c, kernel), OUTPUT_TYPES)
    if out_dtype is None:
        return None
    try:
        check_types(dtype, out_dtype, trans_a, trans_b)
    except ValueError:
        return None
    return GemmProblem(block_m, block_n, block_k, dtype, out_dtype, trans_a, trans_b, a_source)


def register_a_fill(gemm: ir.Operation) -> ir.Operation | None:
    """The tile.copy that fills a gemm's fragment A with a whole shared tile of the same shape
    and type (zero offsets), the last one before the gemm in its block; None when A is not a
    fragment filled that way. Its source is the shared tile the tensor-core kernel stages A in
    (and ldmatrix-reads), so the shared-operand decisions follow it."""
    a_fragment = gemm.operands[0]
    if scope(a_fragment) != "fragment":
        return None
    fill = None
    for op in gemm.block.operations:
        op = as_operation(op)
        if op == gemm:
            break
        if op.name == "tile.copy" and copy_parts(op)[3] == a_fragment:
            fill = op
    if fill is None:
        return None
    src, src_offsets, src_box, _, dst_offsets, dst_box = copy_parts(fill)
    fragment_type, shared_type = ir.MemRefType(a_fragment.type), ir.MemRefType(src.type)
    alloc = defining_op(src)
    if scope(src) != "shared" or alloc is None or alloc.name != "tile.alloc":
        return None
    shape = list(fragment_type.shape)
    if list(shared_type.shape) != shape or src_box != shape or dst_box != shape:
        return None
    if shared_type.element_type != fragment_type.element_type:
        return None
    if any(constant_index(offset) != 0 for offset in (*src_offsets, *dst_offsets)):
        return None
    return fill


def consumer_warpgroups(block_m: int, threads: int) -> int:
    """Two warpgroups split the rows when the block has the threads and 128-row halves."""
    return 2 if threads >= 2 * WARPGROUP_THREADS and block_m % 128 == 0 else 1


def split_n_decision(problem: GemmProblem, threads: int) -> dict[str, DecisionValue] | None:
    """A 64-row gemm on all of a block's 2 or 4 warpgroups, each running an
    m64n(block_n / warpgroups) wgmma on its share of N (a fragment A held whole by each);
    None where N does not split into such shares."""
    groups = threads // WARPGROUP_THREADS
    columns = problem.block_n // groups
    if problem.block_m != WGMMA_M or groups not in (2, 4) or threads % WARPGROUP_THREADS \
            or columns * groups != problem.block_n:
        return None
    if not 8 <= columns <= 256 or not is_power_of_two(columns):
        return None
    return {
        "kind": "wgmma",
        "warpgroups": groups,
        "split": "n",
        "instr": (WGMMA_M, columns, problem.k_step),
        "a_source": problem.a_source,
    }


def wgmma_decision(problem: GemmProblem, threads: int, split_n: bool = False
                   ) -> dict[str, DecisionValue] | None:
    """sm_90a: the warpgroup split and wgmma shape, or None when wgmma cannot cover the tile;
    with `split_n` (the opt-in), a 64-row tile over several warpgroups split along N."""
    if split_n:
        decision = split_n_decision(problem, threads)
        if decision is not None:
            return decision
    groups = consumer_warpgroups(problem.block_m, threads)
    rows = problem.block_m // groups
    block_n = problem.block_n
    if rows not in (WGMMA_M, 2 * WGMMA_M) or block_n % 64 or not 64 <= block_n <= 256:
        return None
    if (rows // WGMMA_M) * block_n > 256:
        return None  # more than 128 fp32 accumulator registers per thread
    return {
        "kind": "wgmma",
        "warpgroups": groups,
        "instr": (WGMMA_M, block_n, problem.k_step),
        "a_source": problem.a_source,
    }


def _filled_from(value: ir.Value, kernel: ir.Operation) -> list[ir.Value]:
    """The fragments a tile.copy of `value` or a T.Parallel reading it writes."""
    targets = []
    for op in walk(kernel):
        if op.name == "tile.copy" and copy_parts(op)[0] == value:
            targets.append(copy_parts(op)[3])
        elif op.name == "tile.parallel" and _reads(op, value):
            targets += [inner.operands[1] for inner in walk(op) if inner.name == "memref.store"
                        and scope(inner.operands[1]) == "fragment"]
    return targets


def _derived(value: ir.Value, kernel: ir.Operation) -> list[ir.Value]:
    """The fragments filled from `value` through copies and T.Parallel casts, transitively."""
    found: list[ir.Value] = []
    pending = [value]
    while pending:
        for target in _filled_from(pending.pop(), kernel):
            if not any(target == known for known in [value, *found]):
                found.append(target)
                pending.append(target)
    return found


def chained_rows(gemm: ir.Operation, kernel: ir.Operation) -> bool:
    """Whether the gemm's rows should each stay in one warp: its accumulator (copied, or cast
    by a T.Parallel) is another gemm's A from registers, or its own A is such a copy, as in
    attention; over a warps x 1 grid mma.sync's accumulator is that A operand's layout."""
    gemms = [op for op in walk(kernel) if op.name == "tile.gemm"]
    if any(a == other.operands[0] for a in _derived(gemm.operands[2], kernel)
           for other in gemms):
        return True
    return scope(gemm.operands[0]) == "fragment" and any(
        gemm.operands[0] == target for other in gemms
        for target in _derived(other.operands[2], kernel))


def warp_policy(gemm: ir.Operation, kernel: ir.Operation) -> str:
    """How the gemm's warps split its tile: T.gemm's policy, "full_row" (warps x 1) where
    its rows chain through registers (chained_rows)."""
    if chained_rows(gemm, kernel):
        return "full_row"
    policy = gemm.attributes["policy"] if "policy" in gemm.attributes else None
    return ir.StringAttr(policy).value if isinstance(policy, ir.StringAttr) else "square"


def warp_grid(problem: GemmProblem, threads: int, policy: str = "square",
              per_op: bool = False) -> tuple[int, int] | None:
    """The (warps_m, warps_n) over the tile that the mma.sync kernel accepts: the most square
    one, warps x 1 first for "full_row", 1 x warps first for "full_col". With `per_op`, the
    rule of the per-op lowering (`per_op_fits`) instead of the whole-kernel generator's."""
    warps = threads // WARP_THREADS
    if warps < 1 or threads % WARP_THREADS:
        return None
    grids = [(wm, warps // wm) for wm in range(1, warps + 1) if warps % wm == 0]
    grids.sort(key=lambda grid: abs(problem.block_m / grid[0] - problem.block_n / grid[1]))
    if policy in ("full_row", "full_col"):
        grids.sort(key=lambda grid: grid[1 if policy == "full_row" else 0] != 1)
    for warps_m, warps_n in grids:
        if per_op:
            if per_op_fits(problem, warps_m, warps_n):
                return warps_m, warps_n
            continue
        try:
            AmpereGemmConfig(
                block_m=problem.block_m,
                block_n=problem.block_n,
                block_k=problem.block_k,
                warps_m=warps_m,
                warps_n=warps_n,
                dtype=problem.dtype,
                out_dtype=problem.out_dtype,
                trans_a=problem.trans_a,
                trans_b=problem.trans_b,
            )
        except ValueError:
            continue
        return warps_m, warps_n
    return None


def per_op_fits(problem: GemmProblem, warps_m: int, warps_n: int) -> bool:
    """Whether the per-op mma.sync lowering takes the gemm over this warp grid: warp tiles of
    16 x 16 multiples, at most 128 accumulator registers a thread, K a whole number of the
    instruction's 32-byte steps (any count: the lowering loops over them; the whole-kernel
    generator's AmpereGemmConfig also bounds K at 256 bytes and shares global copies out
    evenly, which a gemm between shared tiles does not need)."""
    if problem.dtype not in MMA_SHAPES:
        return False
    try:
        check_types(problem.dtype, problem.out_dtype, problem.trans_a, problem.trans_b)
    except ValueError:
        return False
    warp_m, warp_n = problem.block_m // warps_m, problem.block_n // warps_n
    if warp_m * warps_m != problem.block_m or warp_n * warps_n != problem.block_n:
        return False
    if warp_m % 16 or warp_n % 16 or (warp_m // 16) * (warp_n // 8) * 4 > 128:
        return False
    return problem.block_k % problem.k_step == 0


def mma_sync_decision(problem: GemmProblem, threads: int, policy: str = "square",
                      per_op: bool = False) -> dict[str, DecisionValue] | None:
    """sm_80: the warp grid and mma.sync shape, or None when no warp grid fits."""
    grid = warp_grid(problem, threads, policy, per_op)
    if grid is None:
        return None
    return {
        "kind": "mma.sync",
        "warps": grid,
        "instr": (*MMA_SYNC_MN, problem.k_step),
        "a_source": problem.a_source,
    }


@register
@dataclass
class InferMmaLayout(TilePass):
    """Choose the tensor-core instruction and warp split of every gemm the tensor cores take."""

    name = "infer-mma-layout"
    summary = "tile.gemm -> tile.mma (wgmma warpgroups / mma.sync warp grid, instruction shape)"
    arch: str = ""

    @staticmethod
    def reject_wgmma_required(module: ir.Module, arch: str) -> None:
        for gemm in walk(module.operation):
            if gemm.name == "tile.gemm" and WGMMA_REQUIRED_ATTR in gemm.attributes:
                raise op_error(gemm, f"T.wgmma_gemm needs wgmma (sm_90a); this kernel is "
                                     f"compiled for {arch}")

    @staticmethod
    def _off_warpgroups(gemm: ir.Operation, kernel: ir.Operation) -> bool:
        """Whether the gemm stands in a thread range of whole warps that does not start on a
        warpgroup of the hardware's (`if 32 <= tx < 288:`): wgmma, issued by warps 4k..4k+3
        together, cannot run there, mma.sync (a warp's) can. T.wgmma_gemm there is an
        error at its line."""
        first = first_thread(gemm, kernel)
        if first % WARPGROUP_THREADS == 0:
            return False
        if WGMMA_REQUIRED_ATTR in gemm.attributes:
            raise op_error(gemm, f"T.wgmma_gemm runs on whole warpgroups of the hardware "
                                 f"(warps 4k to 4k+3), and the threads running it here start "
                                 f"at thread {first}, not a multiple of 128: start the range "
                                 f"on a warpgroup (`if 128 <= tx < 384:`) or write T.gemm")
        return True

    def run(self, module: ir.Module) -> None:
        target = target_description(module, self.arch, self.name)
        if not target.mma:
            self.reject_wgmma_required(module, target.name)
            return
        split_n = SPLIT_WGMMA_N_ATTR in module.operation.attributes
        fallback = MMA_SYNC_FALLBACK_ATTR in module.operation.attributes
        context = module.context
        for kernel in kernels(module):
            for gemm in (op for op in walk(kernel) if op.name == "tile.gemm"):
                if WGMMA_REQUIRED_ATTR in gemm.attributes and not target.has_wgmma:
                    raise op_error(gemm, f"T.wgmma_gemm needs wgmma (sm_90a); this kernel is "
                                         f"compiled for {target.name}")
                problem = gemm_problem(gemm, kernel)
                # a gemm in a T.ws block is computed by that block's warpgroups
                threads = threads_at(gemm, kernel)
                if problem is None:
                    continue
                if target.has_wgmma and self._off_warpgroups(gemm, kernel):
                    decision = mma_sync_decision(problem, threads, warp_policy(gemm, kernel))
                elif target.has_wgmma:
                    decision = wgmma_decision(problem, threads, split_n)
                    if decision is None and fallback and \
                            WGMMA_REQUIRED_ATTR not in gemm.attributes:
                        decision = mma_sync_decision(problem, threads,
                                                     warp_policy(gemm, kernel), per_op=True)
                else:
                    decision = mma_sync_decision(problem, threads, warp_policy(gemm, kernel))
                if decision is None:
                    continue
                gemm.attributes[MMA_ATTR] = decision_attr(decision, context)
                alloc = defining_op(gemm.operands[2])
                if alloc is not None and alloc.name == "tile.alloc":
                    alloc.attributes[ACCUMULATOR_LAYOUT_ATTR] = ir.StringAttr.get(
                        f"{'wgmma' if decision['kind'] == 'wgmma' else 'mma'}-accumulator",
                        context)
