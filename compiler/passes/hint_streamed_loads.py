"""hint-streamed-loads: global loads of data that a kernel reads once, a GEMV's weights, are
issued as `ld.global.L1::no_allocate.L2::cache_hint` with an L2 evict-first policy.

A weight-only GEMV streams its weights (117 MB for int4 at 28672 x 8192, twice the H200's
50 MB L2) through L1 and L2 once. Loaded plainly, each weight line is allocated in L1, where it
competes with the activations every warp re-reads, and in L2 at normal priority, where each new
line evicts whatever the set holds: lines the kernel's next reads (activations, scales) or the
next kernels want, or dirty lines earlier kernels wrote, which must then be written back to DRAM
inside this kernel's time. Marked evict-first in L2, a streamed line is the first candidate in
its set, so the stream replaces its own earlier lines and leaves the rest of L2 as it was; not
allocated in L1, it leaves L1 to the data that is reused there.

Taken: in a gpu.func of known grid and block (`known_grid_size`, `known_block_size`), a
`vector.load` of 4, 8 or 16 bytes (rank 1, `alignment` at least its bytes) or a `memref.load`
of a 4- or 8-byte scalar from a global memref (a kernel argument or a view of one) such that
  - at most MAX_SHARERS blocks read its bytes (`_loop_loads.read_by_few_blocks`: the blocks
    along the grid dimensions its address does not depend on), and its address depends on every
    thread dimension of more than one thread (no other warp of the block reads them again);
  - it is read once along a loop: its address depends on the variable of an enclosing scf.for,
    and every other load of that tensor in the function lies in the outermost such loop or in
    another branch of an scf.if around it (a loop's unswitched version);
  - nothing in the function stores to that tensor (the hinted load is an asm the compiler does
    not order against stores).
Loads of 1 or 2 bytes (a GEMV's per-group scales, whose 32-byte sectors serve several steps
from L1) and everything else are left alone. The policy is one `createpolicy` per function.

With the module's `tile.stream_max_registers` (TILEC_STREAM_MAX_REGISTERS=N on CUDA), a function
holding hinted loads also gets `nvvm.maxnreg` N (unless it has a cap). Why: ptxas, at its own
register target, issues a step's loads in pieces, each right before its use once the registers
of the previous piece are free; the int4 GEMV's step (4 rows of weights, activations, zeros,
scales) made three memory round trips in series (loads at SASS instructions 1-9, 150-161 and
201-204 of 343, 56 registers); at 80 registers every load of the step issues within its first
32 instructions, one round trip a step, for fewer resident warps (6 blocks an SM against 9).
`tile.stream_max_registers` 0 (TILEC_STREAM_MAX_REGISTERS=auto) sizes the cap from the loop
instead: the 32-bit registers one iteration's far loads fill (`_loop_loads.plan_loop_loads`'
loads of the loops that hold hinted loads; a 2-byte scale takes a register of its own) plus
STEP_REGISTERS, to a multiple of 8. In the sm_90a SASS of the GEMVs' aligned step loops that
is the least cap at which every weight, activation and zero load issues at the step's start
(ptxas 13): int4 (40 registers of loads) 80, where 72 left its scales a round trip behind;
int2 with integer zeros (56) 96, where its own 80 left two rows' weights and zeros behind.

Unmeasured on a GPU: opt-in (TILEC_STREAMED_LOAD_HINTS=1 on CUDA, sm_80 and later).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, llvm, vector

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import ancestors, as_operation, defining_op, walk
from tilec.compiler.passes._loop_loads import (
    LOADS,
    VIEWS,
    cap_registers,
    element_address,
    known_grid,
    loaded_bytes,
    plan_loop_loads,
    read_by_few_blocks,
    value_bytes,
)

MAX_REGISTERS_ATTR = "tile.stream_max_registers"  # on the module: the cap of streaming functions
AUTO_CAP = 0  # that attribute's value for a cap sized from the hinted loops' loads
STEP_REGISTERS = 40  # an iteration's registers beside its loads' (accumulators, addresses, decode)
MOST_REGISTERS = 255  # a thread's registers on every CUDA target
POLICY_ASM = "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;"
LOAD_PREFIX = "ld.global.L1::no_allocate.L2::cache_hint"
WORD_BYTES = (4, 8, 16)  # the loads taken: one, two or four 32-bit registers
# ops that may use a tensor the hinted loads read: they read it, view it, or take its address
READING_OPS = (*LOADS, *VIEWS, "memref.extract_strided_metadata",
               "memref.extract_aligned_pointer_as_index", "memref.dim")


def _root(memory: ir.Value) -> ir.Value:
    """The memref a view was taken from (through subviews and casts)."""
    op = defining_op(memory)
    while op is not None and op.name in VIEWS:
        memory = op.operands[0]
        op = defining_op(memory)
    return memory


def _is_global(memory: ir.Value) -> bool:
    space = ir.MemRefType(memory.type).memory_space
    if space is None:
        return True
    return str(space).split(":")[0].strip() in ("1", "#gpu.address_space<global>")


@dataclass
class _Sources:
    """What an address is computed from: thread dimensions and block arguments."""

    threads: set[str]
    arguments: list[ir.Value]


def _sources(values: list[ir.Value]) -> _Sources:
    threads: set[str] = set()
    arguments: list[ir.Value] = []
    seen: set[ir.Operation] = set()
    work = list(values)
    while work:
        value = work.pop()
        owner = defining_op(value)
        if owner is None:
            if value not in arguments:
                arguments.append(value)
            continue
        if owner in seen:
            continue
        seen.add(owner)
        if owner.name in ("gpu.thread_id", "gpu.lane_id"):
            dimension = "x" if owner.name == "gpu.lane_id" else str(
                owner.attributes["dimension"]).split()[-1].strip(">")
            threads.add(dimension)
        work.extend(owner.operands)
    return _Sources(threads, arguments)


def _stream_loop(load: ir.Operation, arguments: list[ir.Value]) -> ir.Operation | None:
    """The outermost scf.for around `load` whose variable its address depends on."""
    found = None
    for parent in ancestors(load):
        if parent.name == "scf.for" and parent.regions[0].blocks[0].arguments[0] in arguments:
            found = parent
    return found


def _branch_child(op: ir.Operation, owner: ir.Operation) -> int | None:
    """The region of `owner` that `op` (nested in it) lies in."""
    chain = [op, *ancestors(op)]
    for child in chain:
        parent = child.parent
        if parent is not None and as_operation(parent) == owner:
            for number, region in enumerate(owner.regions):
                if any(as_operation(inner) == child for block in region.blocks
                       for inner in block.operations):
                    return number
    return None


def _apart(loop: ir.Operation, other: ir.Operation) -> bool:
    """Whether `other` lies in `loop` or in another branch of an scf.if around both."""
    outer = ancestors(other)
    if loop in outer:
        return True
    loop_chain = ancestors(loop)
    common = next((op for op in outer if op in loop_chain), None)
    if common is None or common.name != "scf.if":
        return False
    return _branch_child(loop, common) != _branch_child(other, common)


def _read_only(function: ir.Operation, root: ir.Value) -> bool:
    """Whether every op of the function that uses the tensor reads it."""
    return all(op.name in READING_OPS for op in walk(function)
               if any(_root(operand) == root for operand in op.operands
                      if isinstance(operand.type, ir.MemRefType)))


def _word_shape(load: ir.Operation) -> int | None:
    """The 32-bit registers a takeable load fills (None where it is not one)."""
    if load.name not in ("vector.load", "memref.load") or not _is_global(load.operands[0]):
        return None
    value_type = load.results[0].type
    if load.name == "vector.load":
        vector_type = ir.VectorType(value_type)
        element = vector_type.element_type
        if vector_type.rank != 1 or not isinstance(element, (ir.IntegerType, ir.FloatType)):
            return None
        if isinstance(element, ir.IntegerType) and ir.IntegerType(element).width < 8:
            return None
        alignment = load.attributes["alignment"].value if "alignment" in load.attributes else 0
        if alignment < loaded_bytes(load):
            return None
    elif not isinstance(value_type, (ir.IntegerType, ir.FloatType)):
        return None
    size = loaded_bytes(load)
    return size // 4 if size in WORD_BYTES else None


def _hinted(load: ir.Operation, policy: ir.Value) -> ir.Value:
    """The load's value from one hinted ld of its address."""
    words = _word_shape(load)
    value_type = load.results[0].type
    address = element_address(load.operands[0], list(load.operands[1:]))
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    if load.name == "memref.load":
        register_type, suffix, constraint = (i32, "b32", "=r") if words == 1 else \
            (i64, "b64", "=l")
        word = llvm.InlineAsmOp(register_type, [address, policy],
                                f"{LOAD_PREFIX}.{suffix} $0, [$1], $2;",
                                f"{constraint},l,l").result
        return word if word.type == value_type else arith.bitcast(value_type, word)
    registers = ", ".join(f"${n}" for n in range(words))
    text = f"{LOAD_PREFIX}.v{words}.b32 {{{registers}}}, [${words}], ${words + 1};" \
        if words > 1 else f"{LOAD_PREFIX}.b32 $0, [$1], $2;"
    constraints = ",".join(["=r"] * words + ["l", "l"])
    if words == 1:
        parts = [llvm.InlineAsmOp(i32, [address, policy], text, constraints).result]
    else:
        result = llvm.InlineAsmOp(llvm.StructType.get_literal([i32] * words),
                                  [address, policy], text, constraints).result
        parts = [llvm.extractvalue(i32, result, [n]) for n in range(words)]
    packed = vector.from_elements(ir.VectorType.get([words], i32), parts)
    return packed if packed.type == value_type else vector.bitcast(value_type, packed)


def _streamed(load: ir.Operation, function: ir.Operation, grid: list[int],
              block: list[int]) -> bool:
    if _word_shape(load) is None or not read_by_few_blocks(load, grid):
        return False
    sources = _sources(list(load.operands[1:]))
    if any(extent > 1 and axis not in sources.threads
           for axis, extent in zip("xyz", block, strict=False)):
        return False
    loop = _stream_loop(load, sources.arguments)
    if loop is None:
        return False
    root = _root(load.operands[0])
    others = [op for op in walk(function) if op.name in LOADS and op != load
              and _root(op.operands[0]) == root]
    return all(_apart(loop, other) for other in others) and _read_only(function, root)


def _load_registers(loop: ir.Operation) -> int:
    """The 32-bit registers one iteration's far loads fill (each value at least one)."""
    plan = plan_loop_loads(loop)
    if plan is None:
        return 0
    return sum(-(-value_bytes(result.type) // 4) for root in plan.roots
               for result in root.results)


def auto_cap(loads: list[ir.Operation]) -> int:
    """The register cap of a function whose hinted loads are `loads` (the module docstring)."""
    loops = {_stream_loop(load, _sources(list(load.operands[1:])).arguments) for load in loads}
    registers = max(_load_registers(loop) for loop in loops)
    return min(MOST_REGISTERS, -(-(registers + STEP_REGISTERS) // 8) * 8)


def hint_function(function: ir.Operation, cap: int | None = None) -> int:
    """Hints the function's streamed loads and, with `cap`, caps its registers (AUTO_CAP: at
    auto_cap's); returns how many loads it hinted."""
    if "known_block_size" not in function.attributes:
        return 0
    grid = known_grid(function)
    if grid is None:
        return 0
    block = list(ir.DenseI32ArrayAttr(function.attributes["known_block_size"]))
    taken = [op for op in walk(function) if _streamed(op, function, grid, block)]
    if not taken:
        return 0
    if cap is not None:
        cap_registers(function, auto_cap(taken) if cap == AUTO_CAP else cap)
    entry = function.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(entry), function.location:
        policy = llvm.InlineAsmOp(ir.IntegerType.get_signless(64), [], POLICY_ASM, "=l").result
    for load in taken:
        with ir.InsertionPoint(load), load.location:
            value = _hinted(load, policy)
        load.results[0].replace_all_uses_with(value)
        load.erase()
    return len(taken)


@register
@dataclass
class HintStreamedLoads(TilePass):
    """Loads of data read once marked L1 no-allocate, L2 evict-first."""

    name = "hint-streamed-loads"
    summary = "global loads read once per kernel as ld.global with L1::no_allocate and an L2 " \
              "evict-first cache hint"

    def run(self, module: ir.Module) -> None:
        attributes = module.operation.attributes
        cap = (ir.IntegerAttr(attributes[MAX_REGISTERS_ATTR]).value
               if MAX_REGISTERS_ATTR in attributes else None)
        for function in [op for op in walk(module.operation) if op.name == "gpu.func"]:
            hint_function(function, cap)

