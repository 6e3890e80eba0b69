"""check-metal-types: what the metal target's MSL cannot hold, an error at its line.

Metal has no double, and MSL 2.1 (the version the metal target writes) no 64-bit integers.
spirv-cross refuses both when it writes the MSL ("double types are not supported in buffers in
MSL", "64-bit integers are only supported in MSL 2.2 and above"), at the end of the compile and
naming no line. This pass, run on the metal target's spirv.module, names the first op that
computes on a float64 value, else on a 64-bit integer, at its source line. A 64-bit integer
may be the frontend's own: an index widened to int64 before its conversion to a float
(T.Cast(T.float16, 0.5 ** place) over a loop variable) is one, which spirv-cross refuses too.
"""

from __future__ import annotations

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import LOCATION, op_error, walk

# ops that only declare a value (at the function's start, far from the line that computes)
DECLARATIONS = ("spirv.Constant", "spirv.Variable", "spirv.GlobalVariable",
                "spirv.mlir.addressof")


def _element(type_: ir.Type) -> ir.Type:
    return ir.VectorType(type_).element_type if isinstance(type_, ir.VectorType) else type_


def _is_float64(type_: ir.Type) -> bool:
    return isinstance(_element(type_), ir.F64Type)


def _is_int64(type_: ir.Type) -> bool:
    element = _element(type_)
    return isinstance(element, ir.IntegerType) and ir.IntegerType(element).width == 64


def _first_located(ops: list[ir.Operation]) -> ir.Operation:
    """The first of `ops` whose location names a source line (the first one where none does)."""
    return next((op for op in ops if LOCATION.search(str(op.location))), ops[0])


@register
class CheckMetalTypes(TilePass):
    """Reject float64 and 64-bit integer values in a spirv.module bound for Metal."""

    name = "check-metal-types"
    summary = "float64 and 64-bit integer values: an error at their line (Metal has no " \
              "double, MSL 2.1 no 64-bit integers)"

    def run(self, module: ir.Module) -> None:
        with module.context:
            ops = [op for op in walk(module.operation) if op.name not in DECLARATIONS]
            for wide, message in (
                    (_is_float64, "the metal target has no float64 values: Metal has no double "
                                  "(compute in float32)"),
                    (_is_int64, "the metal target has no 64-bit integer values: MSL 2.1 has "
                                "none (use int32)")):
                found = [op for op in ops
                         if any(wide(value.type) for value in [*op.results, *op.operands])]
                if found:
                    raise op_error(_first_located(found), message)
