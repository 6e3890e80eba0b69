"""place-ascend-buffers: which of an Ascend AI core's local memories holds each tile buffer.

An Ascend core computes on two units with their own memories: the Cube unit multiplies
matrices it reads from L0A / L0B (loaded from L1) into L0C; the Vector unit computes on the
Unified Buffer (UB). A tile buffer's uses decide where it lives, written on its tile.alloc as
`tile.ascend_position` (AscendC's TPosition names):

  "A1" / "B1"  a shared buffer that is operand A / B of a tile.gemm (L1; the emitter stages
               each gemm's operands through L0A / L0B itself)
  "CO1"        a gemm's accumulator (L0C): cleared by tile.fill, accumulated by tile.gemm,
               written out by a tile.copy to global memory (the Fixpipe). One the vector unit
               reads after its last gemm (an epilogue: bias, activation, a row reduction)
               also gets `tile.ascend_through_gm`: the emitter moves it to UB through a
               per-core global workspace (Fixpipe out, DataCopy in), since the 910B's L0C has
               no path to UB
  "FIX"        a fragment that only holds an accumulator converted to another type (a
               T.Parallel of `F[i, j] = cast(C[i, j])`, as T.copy of an f32 accumulator into
               an f16 tensor makes) and is then copied to global memory: the Fixpipe converts
               on its way out, so the T.Parallel gets `tile.ascend_fixpipe` and emits nothing
  "SCALAR"     a T.alloc_var / T.alloc_local buffer ("var" / "local" scope): the scalar
               unit's own variables, no UB
  "VECCALC"    every other buffer (UB), for copies, T.Parallel bodies and reductions

What one memory cannot do is an error at the op: a gemm operand the vector unit also reads,
an accumulator the vector unit reads before a gemm accumulates into it again.
"""

from __future__ import annotations

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import as_operation, copy_parts, op_error, scope, walk

POSITION_ATTR = "tile.ascend_position"
FIXPIPE_ATTR = "tile.ascend_fixpipe"
THROUGH_GM_ATTR = "tile.ascend_through_gm"
GEMM_ROLES = ("A1", "B1", "CO1")
CONVERSIONS = ("arith.truncf", "arith.extf")


def _conversion(parallel: ir.Operation) -> tuple[ir.Value, ir.Value] | None:
    """(accumulator, converted fragment) of a T.Parallel that is only
    `F[point] = convert(C[point])` over both buffers' whole shape; else None."""
    body = parallel.regions[0].blocks[0]
    ops = [as_operation(op) for op in body.operations if as_operation(op).name != "tile.yield"]
    if len(ops) != 3:
        return None
    load, convert, store = ops
    if load.name != "memref.load" or store.name != "memref.store":
        return None
    arguments = list(body.arguments)
    if (convert.name not in CONVERSIONS or list(load.operands)[1:] != arguments
            or list(store.operands)[2:] != arguments or convert.operands[0] != load.result
            or store.operands[0] != convert.result):
        return None
    extents = list(ir.DenseI64ArrayAttr(parallel.attributes["extents"]))
    source, target = load.operands[0], store.operands[1]
    if any(list(ir.MemRefType(v.type).shape) != extents for v in (source, target)):
        return None
    return source, target


def _fixpipe_conversions(module: ir.Module) -> dict:
    """converted fragment -> its T.Parallel, for each conversion of a gemm accumulator whose
    fragment is used by nothing else but copies to global memory."""
    found = {}
    for op in walk(module.operation):
        if op.name != "tile.parallel" or (parts := _conversion(op)) is None:
            continue
        source, target = parts
        if not any(as_operation(u.owner).name == "tile.gemm" and u.operand_number == 2
                   for u in source.uses):
            continue
        if any(as_operation(u.owner).name not in ("tile.gemm", "tile.fill")
               and as_operation(u.owner).parent != op for u in source.uses):
            continue  # the vector unit reads the accumulator elsewhere: it goes to UB
        users = [(as_operation(u.owner), u.operand_number) for u in target.uses]
        if all(user.parent == op or (user.name == "tile.copy" and number == 0
                                     and scope(copy_parts(user)[3]) == "global")
               for user, number in users):
            found[target] = op
    return found


def _role_users(alloc: ir.Operation) -> list[tuple[ir.Operation, int]]:
    """Every (op, operand number) using the buffer `alloc` makes."""
    return [(as_operation(use.owner), use.operand_number) for use in alloc.result.uses]


def _statement_of(op: ir.Operation) -> tuple[ir.Operation, int]:
    """The statement of the kernel body that holds `op`, and its place there."""
    while op.parent is not None and op.parent.name != "tile.kernel":
        op = as_operation(op.parent)
    block = op.parent.regions[0].blocks[0]
    return op, [as_operation(child) for child in block.operations].index(op)


def _after_every_gemm(alloc: ir.Operation, reads: list[ir.Operation]) -> None:
    """The vector unit reads an accumulator only once no gemm accumulates into it again."""
    gemms = [as_operation(use.owner) for use in alloc.result.uses
             if as_operation(use.owner).name == "tile.gemm"]
    last = max(_statement_of(gemm)[1] for gemm in gemms)
    for read in reads:
        _, place = _statement_of(read)
        if place <= last:
            raise op_error(read, f"{read.name} uses a gemm accumulator that a later tile.gemm "
                                 "accumulates into; on Ascend it lives in L0C, which the vector "
                                 "unit reads only after the last gemm (through global memory)")


def _position(alloc: ir.Operation, conversions: dict) -> str:
    if alloc.result in conversions:
        return "FIX"
    if scope(alloc.result) in ("var", "local"):
        return "SCALAR"
    users = _role_users(alloc)
    roles = {GEMM_ROLES[number] for user, number in users if user.name == "tile.gemm"}
    if not roles:
        return "VECCALC"
    if len(roles) > 1:
        raise op_error(alloc, "a buffer is two operands of tile.gemm at once; the ascend target "
                              "keeps A, B and the accumulator in separate memories")
    role = roles.pop()
    vector_reads = []
    for user, number in users:
        if user.name == "tile.gemm":
            continue
        if role == "CO1":
            copied_out = (user.name == "tile.copy" and number == 0
                          and scope(copy_parts(user)[3]) == "global")
            parallel = user.parent
            while parallel is not None and parallel.name != "tile.parallel":
                parallel = parallel.parent
            converted = parallel is not None and FIXPIPE_ATTR in parallel.attributes
            if not (user.name == "tile.fill" or copied_out or converted):
                vector_reads.append(user)
            continue
        if user.name == "tile.copy" and number > 0:  # written by a copy from global memory
            continue
        raise op_error(user, f"{user.name} uses a gemm operand; on Ascend it lives in L1, which "
                             "the vector unit does not read")
    if vector_reads:
        _after_every_gemm(alloc, vector_reads)
        alloc.attributes[THROUGH_GM_ATTR] = ir.UnitAttr.get()
    return role


@register
class PlaceAscendBuffers(TilePass):
    """Every tile.alloc gets the AscendC position of the memory it lives in."""

    name = "place-ascend-buffers"
    summary = "tile.alloc -> tile.ascend_position: L1 / L0C for the cube, UB for the rest"

    def run(self, module: ir.Module) -> None:
        with module.context:
            conversions = _fixpipe_conversions(module)
            for parallel in conversions.values():
                parallel.attributes[FIXPIPE_ATTR] = ir.UnitAttr.get()
            for op in walk(module.operation):
                if op.name == "tile.alloc":
                    op.attributes[POSITION_ATTR] = ir.StringAttr.get(_position(op, conversions))
