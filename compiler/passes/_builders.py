"""IR-building helpers the lowering passes share: loop nests, constants, type conversions.

Every helper emits at the current `ir.InsertionPoint` and `ir.Location` (the caller enters the
location of the op it lowers, so the generated IR keeps the user's file:line).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

from mlir import ir
from mlir.dialects import arith, func, memref, scf, vector

from tilec.compiler.passes._scalar import cast
from tilec.dialect import scope_of
from tilec.errors import CompileError

IndexLike = int | ir.Value


def index(value: IndexLike) -> ir.Value:
    """An `index` value: Python ints become constants, values pass through."""
    if isinstance(value, ir.Value):
        return value
    return arith.constant(ir.IndexType.get(), value)


def constant_index_value(value: ir.Value) -> int | None:
    """The integer an `arith.constant` of index type holds, or None when not a constant."""
    owner = value.owner
    if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
        owner = owner.operation
    if isinstance(owner, ir.Operation) and owner.name == "arith.constant":
        attr = owner.attributes["value"]
        if isinstance(attr, ir.IntegerAttr):
            return attr.value
    return None


def private_word_element(load: ir.Operation) -> tuple[ir.Value, list, int] | None:
    """(buffer, leading indices, last index) of an 8- or 16-bit `memref.load` from a private
    buffer whose 32-bit words can be read whole: a memref.alloca aligned to 4 bytes or more,
    identity layout, static shape, a last extent of whole words, the last index a constant.
    None for any other load."""
    if load.name != "memref.load":
        return None
    buffer = load.operands[0]
    allocation = buffer.owner
    if isinstance(allocation, ir.Block):
        return None
    allocation = allocation.operation if hasattr(allocation, "operation") else allocation
    if allocation.name != "memref.alloca":
        return None
    attributes = allocation.attributes
    if "alignment" not in attributes or ir.IntegerAttr(attributes["alignment"]).value < 4:
        return None  # its words could straddle 4-byte boundaries
    memref_type = ir.MemRefType(buffer.type)
    element = memref_type.element_type
    width = element.width if isinstance(element, ir.IntegerType) else (
        16 if str(element) in ("f16", "bf16") else 0)
    identity = ir.AffineMap.get_identity(memref_type.rank)
    if (width not in (8, 16) or ir.AffineMapAttr(memref_type.layout).value != identity
            or not memref_type.has_static_shape or memref_type.shape[-1] % (32 // width)):
        return None
    last = constant_index_value(load.operands[-1])
    if last is None:
        return None
    return buffer, list(load.operands[1:-1]), last


def word_holding(buffer: ir.Value, leading: list, last: int) -> ir.Value:
    """The i32 word of a private buffer (private_word_element's) holding element `last` of
    its row: the word's elements read as one vector and bitcast."""
    element = ir.MemRefType(buffer.type).element_type
    per_word = 32 // (element.width if isinstance(element, ir.IntegerType) else 16)
    i32 = ir.IntegerType.get_signless(32)
    elements = vector.load(ir.VectorType.get([per_word], element), buffer,
                           [*leading, index(last - last % per_word)])
    word = vector.bitcast(ir.VectorType.get([1], i32), elements)
    return vector.extract(word, [], [0])


def is_float(type_: ir.Type) -> bool:
    return isinstance(type_, ir.FloatType)


def zero(type_: ir.Type) -> ir.Value:
    """The zero of a scalar type (float or integer)."""
    if is_float(type_):
        return arith.constant(type_, ir.FloatAttr.get(type_, 0.0))
    return arith.constant(type_, ir.IntegerAttr.get(type_, 0))


def convert(value: ir.Value, to_type: ir.Type) -> ir.Value:
    """Converts a scalar between float and signless-integer types (integers as signed), as
    _scalar.cast does (two floats of one width, f16 and bf16, through f32)."""
    return cast(value, to_type)


def add(lhs: ir.Value, rhs: ir.Value) -> ir.Value:
    return arith.addf(lhs, rhs) if is_float(lhs.type) else arith.addi(lhs, rhs)


def mul(lhs: ir.Value, rhs: ir.Value) -> ir.Value:
    return arith.mulf(lhs, rhs) if is_float(lhs.type) else arith.muli(lhs, rhs)


def dim_sizes(buffer: ir.Value) -> list[ir.Value]:
    """The buffer's extents as index values (constants where static)."""
    memref_type = ir.MemRefType(buffer.type)
    sizes = []
    for dim, size in enumerate(memref_type.shape):
        if ir.ShapedType.is_dynamic_size(size):
            sizes.append(memref.dim(buffer, index(dim)))
        else:
            sizes.append(index(size))
    return sizes


class BoundsGuard:
    """Decides, per element, whether an index tuple lies inside a global buffer.

    Dimensions whose box is provably inside (constant corner, static extent) need no check.
    """

    def __init__(self, buffer: ir.Value, offsets: Sequence[ir.Value], box: Sequence[int]):
        memref_type = ir.MemRefType(buffer.type)
        self.checked_dims: list[int] = []
        self.sizes: list[ir.Value] = []
        if scope_of(memref_type) != "global":
            return
        self.sizes = dim_sizes(buffer)
        for dim, (offset, extent) in enumerate(zip(offsets, box, strict=True)):
            corner = constant_index_value(offset)
            size = memref_type.shape[dim]
            static_inside = (
                corner is not None
                and not ir.ShapedType.is_dynamic_size(size)
                and 0 <= corner
                and corner + extent <= size
            )
            if not static_inside:
                self.checked_dims.append(dim)

    def condition(self, indices: Sequence[ir.Value]) -> ir.Value | None:
        """An i1 that is true when `indices` are in bounds; None when no check is needed."""
        inside = None
        for dim in self.checked_dims:
            # unsigned compare: a negative index wraps to a huge one and fails too
            ok = arith.cmpi(arith.CmpIPredicate.ult, indices[dim], self.sizes[dim])
            inside = ok if inside is None else arith.andi(inside, ok)
        return inside


def loop_nest(
    extents: Sequence[IndexLike], body: Callable[[list[ir.Value]], None]
) -> list[scf.ForOp]:
    """Emits nested `scf.for` loops from 0 to each extent (outermost first) around `body(ivs)`."""
    loops: list[scf.ForOp] = []
    zero_index, one = index(0), index(1)

    def level(depth: int, ivs: list[ir.Value]) -> None:
        if depth == len(extents):
            body(ivs)
            return
        loop = scf.ForOp(zero_index, index(extents[depth]), one)
        loops.append(loop)
        with ir.InsertionPoint(loop.body):
            level(depth + 1, [*ivs, loop.induction_variable])
            scf.YieldOp([])

    level(0, [])
    return loops


def reduction_loop(
    lower: IndexLike,
    upper: IndexLike,
    init: ir.Value,
    step_fn: Callable[[ir.Value, ir.Value], ir.Value],
) -> ir.Value:
    """`scf.for` carrying one value: acc = step_fn(iv, acc) for iv in [lower, upper)."""
    loop = scf.ForOp(index(lower), index(upper), index(1), [init])
    with ir.InsertionPoint(loop.body):
        scf.YieldOp([step_fn(loop.induction_variable, loop.inner_iter_args[0])])
    return loop.results[0]


@cache
def _tile_op_classes() -> dict[str, type[ir.OpView]]:
    import tilec.dialect as tile_dialect

    return {
        cls.OPERATION_NAME: cls
        for cls in vars(tile_dialect).values()
        if isinstance(cls, type) and issubclass(cls, ir.OpView) and hasattr(cls, "OPERATION_NAME")
    }


def typed_view(op: ir.Operation) -> ir.OpView:
    """The op's generated Python class (with named accessors), for tile ops too.

    `op.opview` finds a dialect's classes under `mlir.dialects`, where tilec.dialect also
    registers itself as `mlir.dialects.tile`; a plain OpView (a lookup made before that
    import) gets its tile class here.
    """
    view = op.opview
    tile_class = _tile_op_classes().get(op.name)
    if tile_class is None or isinstance(view, tile_class):
        return view
    typed = tile_class.__new__(tile_class)
    ir.OpView.__init__(typed, op)
    return typed


def ops_named(root: ir.Operation, names: Sequence[str]) -> list[ir.OpView]:
    """Every op under `root` with one of `names`, innermost first (post-order)."""
    found: list[ir.OpView] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in names:
            found.append(typed_view(op))
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.POST_ORDER)
    return found


def move_body(source: ir.Block, before: ir.Operation) -> None:
    """Moves every op of `source` except its terminator before `before`."""
    ops = list(source.operations)
    for op in ops[:-1]:
        op.operation.move_before(before)


def entry_function(module: ir.Module) -> func.FuncOp:
    """The one function marked `tile.entry` (the frontend's kernel)."""
    entries = [
        op.opview
        for op in module.body.operations
        if op.operation.name == "func.func" and "tile.entry" in op.operation.attributes
    ]
    if len(entries) != 1:
        raise CompileError(f"expected one func.func with `tile.entry`, found {len(entries)}")
    return entries[0]
