"""fuse-lop3: a tree of 32-bit and / or / xor over at most three values as one `lop3.b32` on
NVIDIA GPUs.

A LOP3 computes any bitwise function of three registers, named by its 8-bit truth table. The
NVPTX backend emits each arith.andi / ori / xori as its own and.b32 / or.b32 / xor.b32, and
ptxas does not fuse two of them with a constant each: the int4 decode
`(word & 0x000F000F) | 0x64006400` (the fields of a pair OR-ed into the mantissas of 1024)
stays two LOP3s, 128 of the int4 GEMV step's 530 SASS instructions. Here each such tree, from
a root down through and / or / xor ops used only by it, becomes one `lop3.b32` (inline PTX;
ptxas keeps it one LOP3, a constant in a register set once).
Constants 0 and -1 fold into the truth table and take no input; the tree grows while it
reads at most three distinct values. Scalars of i32 only; a single op is left to ptxas.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, llvm

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import (
    constant_index_value,
    ops_named,
    private_word_element,
    word_holding,
)
from tilec.compiler.passes._ir_walk import defining_op

BITWISE = {"arith.andi": int.__and__, "arith.ori": int.__or__, "arith.xori": int.__xor__}
INDEX_CASTS = ("arith.index_cast", "arith.index_castui")
# the truth-table inputs of lop3's three operands a, b, c
INPUT_TABLES = (0xF0, 0xCC, 0xAA)


def _constant(value: ir.Value) -> int | None:
    """A constant's low 32 bits (the only bits a 32-bit bitwise result reads)."""
    constant = constant_index_value(value)
    return None if constant is None else constant & 0xFFFFFFFF


def _is_i32(value: ir.Value) -> bool:
    return isinstance(value.type, ir.IntegerType) and ir.IntegerType(value.type).width == 32


def _only_use_is(value: ir.Value, user: ir.Operation) -> bool:
    uses = list(value.uses)
    return len(uses) == 1 and uses[0].owner == user


def _narrowed(value: ir.Value) -> ir.Value:
    """An index value cast from an i32 one: that i32 value (the low 32 bits are the same)."""
    owner = defining_op(value)
    if (owner is not None and owner.name in INDEX_CASTS and _is_i32(owner.operands[0])
            and isinstance(value.type, ir.IndexType)):
        return owner.operands[0]
    return value


def _feeding(value: ir.Value) -> list[ir.Operation]:
    """The ops a tree reading `value` absorbs with it: a bitwise op of i32, or an i32 cast
    of an index bitwise op (the frontend computes `word & mask` in index; the low 32 bits of
    and / or / xor are those of their operands' low 32 bits)."""
    op = defining_op(value)
    if op is None:
        return []
    if op.name in BITWISE:
        return [op]
    if (op.name in INDEX_CASTS and _is_i32(value)
            and isinstance(op.operands[0].type, ir.IndexType)):
        inner = defining_op(op.operands[0])
        if (inner is not None and inner.name in BITWISE
                and _only_use_is(op.operands[0], op) and inner.block == op.block):
            return [op, inner]
    return []


def _exact_bits(value: ir.Value) -> int:
    """How many low bits of _widened(value) are value's (32: all, zero-extended)."""
    if _is_i32(value):
        return 32
    owner = defining_op(value)
    if owner is not None and owner.name == "arith.shrui":
        amount = _constant(owner.operands[1])
        if amount is not None:
            exact = _exact_bits(owner.operands[0])
            return exact if exact == 32 else max(0, exact - amount)
    if owner is not None and private_word_element(owner) is not None:
        return ir.IntegerType(value.type).width
    return 32


def _widened(value: ir.Value, i32: ir.Type) -> ir.Value:
    """A narrow unsigned value as an i32 whose low _exact_bits(value) bits are its, those
    above unspecified (a mask follows): an element loaded from a private buffer as its word shifted
    down (read where the element was; the byte extraction and zero-extension LLVM would
    emit are gone), a logical right shift by a constant done in i32 (LLVM narrows
    zext(y) >> c back to a 16-bit shift, which costs ptxas a mask more)."""
    if _is_i32(value):
        return value
    owner = defining_op(value)
    if owner is not None and owner.name == "arith.shrui":
        amount = _constant(owner.operands[1])
        if amount is not None:
            return arith.shrui(_widened(owner.operands[0], i32), arith.constant(i32, amount))
    read = None if owner is None else private_word_element(owner)
    if read is not None:
        buffer, leading, last = read
        width = ir.IntegerType(value.type).width
        with ir.InsertionPoint(owner), owner.location:
            word = word_holding(buffer, leading, last)
            place = (last % (32 // width)) * width
            return arith.shrui(word, arith.constant(i32, place)) if place else word
    return arith.extui(i32, value)


def _truncations_as_masks(root: ir.Operation) -> None:
    """Each i32 `extui(trunci(x : iM to iN))` (M <= 32) that a bitwise op reads, rewritten as
    `andi(x widened to i32, 2 ** N - 1)` (the mask clears what the widening left above x)."""
    i32 = ir.IntegerType.get_signless(32)
    for extend in ops_named(root, ("arith.extui",)):
        extend = extend.operation
        result = extend.results[0]
        truncate = defining_op(extend.operands[0])
        if (not _is_i32(result) or truncate is None or truncate.name != "arith.trunci"
                or not any(use.owner.name in BITWISE for use in result.uses)):
            continue
        source = truncate.operands[0]
        if not isinstance(source.type, ir.IntegerType) or ir.IntegerType(
                source.type).width > 32 or ir.IntegerType(source.type).width % 8:
            continue
        width = ir.IntegerType(truncate.results[0].type).width
        with ir.InsertionPoint(extend), extend.location:
            wide = (_widened(source, i32) if width <= _exact_bits(source)
                    else arith.extui(i32, source))
            masked = arith.andi(wide, arith.constant(i32, (1 << width) - 1))
        result.replace_all_uses_with(masked)
        extend.erase()
        if not list(truncate.results[0].uses):
            truncate.erase()


class _Tree:
    """A bitwise tree under a root op: its ops, and its leaves (values other than 0 / -1)."""

    def __init__(self, root: ir.Operation) -> None:
        self.ops = [root]
        self.leaves: list[ir.Value] = []
        for value in self._leaves_of(root):
            self.leaves.append(value)

    def _leaves_of(self, op: ir.Operation) -> list[ir.Value]:
        found: list[ir.Value] = []
        for value in op.operands:
            if _constant(value) in (0, 0xFFFFFFFF):
                continue
            value = _narrowed(value)
            if not any(value == other for other in found):
                found.append(value)
        return found

    def grow(self) -> None:
        """Absorb the bitwise ops feeding the tree (used by it alone, in its block) while the
        tree reads at most three values."""
        changed = True
        while changed:
            changed = False
            for leaf in list(self.leaves):
                absorbed = _feeding(leaf)
                if (not absorbed or absorbed[0].block != self.ops[0].block
                        or not any(_only_use_is(leaf, user) for user in self.ops)):
                    continue
                rest = [v for v in self.leaves if v != leaf]
                merged = rest + [v for v in self._leaves_of(absorbed[-1])
                                 if not any(v == other for other in rest)]
                if len(merged) <= 3:
                    self.ops += absorbed
                    self.leaves = merged
                    changed = True

    def table(self) -> int:
        """lop3's immediate: the tree evaluated on the inputs' truth tables."""

        def evaluate(value: ir.Value) -> int:
            constant = _constant(value)
            if constant in (0, 0xFFFFFFFF):
                return 0xFF if constant else 0
            for number, leaf in enumerate(self.leaves):
                if _narrowed(value) == leaf:
                    return INPUT_TABLES[number]
            op = defining_op(value)
            if op.name in INDEX_CASTS:
                return evaluate(op.operands[0])
            left, right = (evaluate(v) for v in op.operands)
            return BITWISE[op.name](left, right) & 0xFF

        return evaluate(self.ops[0].results[0])

    def operands(self, i32: ir.Type) -> list[ir.Value]:
        """The leaves as i32 (an index leaf truncated: a bitwise result's low bits), padded to
        lop3's three."""
        found = []
        for leaf in self.leaves:
            if isinstance(leaf.type, ir.IndexType):
                constant = _constant(leaf)
                leaf = (arith.constant(i32, constant - (1 << 32) * (constant >> 31))
                        if constant is not None else arith.index_cast(i32, leaf))
            found.append(leaf)
        return found + [found[0]] * (3 - len(found))


@register
@dataclass
class FuseLop3(TilePass):
    """i32 and / or / xor trees over at most three values -> one lop3.b32."""

    name = "fuse-lop3"
    summary = "trees of i32 andi/ori/xori over <= 3 values in gpu.module -> lop3.b32"

    def run(self, module: ir.Module) -> None:
        i32 = ir.IntegerType.get_signless(32)
        fused: set = set()
        trees = []
        for gpu_module in [op for op in module.body.operations
                           if op.operation.name == "gpu.module"]:
            _truncations_as_masks(gpu_module.operation)
            # users before the ops feeding them: a tree is found from its root
            for op in reversed(ops_named(gpu_module.operation, tuple(BITWISE))):
                op = op.operation
                if op in fused or not _is_i32(op.results[0]):
                    continue
                tree = _Tree(op)
                tree.grow()
                if len(tree.ops) >= 2 and tree.leaves:
                    fused.update(tree.ops)
                    trees.append(tree)
        for tree in trees:  # a root another tree reads as a leaf is replaced there too
            root = tree.ops[0]
            with ir.InsertionPoint(root), root.location:
                result = llvm.InlineAsmOp(
                    i32, tree.operands(i32), f"lop3.b32 $0, $1, $2, $3, {tree.table():#04x};",
                    "=r,r,r,r").result
            root.results[0].replace_all_uses_with(result)
            for dead in tree.ops:
                dead.erase()
