"""spirv-lower-float-atomics: each store spirv-prepare-float-atomics marked as the atomic add.

spirv-prepare-float-atomics carries a float32 atomic add through convert-gpu-to-spirv as a
`spirv.Store %pointer, %value` at a location named `tilec.float_atomic_add`. Here it becomes
- on a float pointer (the target environment has AtomicFloat32AddEXT): spirv.EXT.AtomicFAdd;
- on an i32 pointer (the buffer held as bits): the loop every device can run

      expected = 0                               (the bits of +0.0: a zeroed sum takes one try)
      loop: seen = AtomicCompareExchange(pointer, bits(float(expected) + value), expected)
            until seen == expected               (else retry from what memory held)

  Reading the old value through the exchange itself keeps every access to the buffer atomic
  (WebGPU's atomics cannot be read by a plain load). The expected bits live in a function
  variable (SPIR-V puts those in the entry block).
Both are Device-scope atomics on storage buffers and Workgroup-scope ones on shared memory,
acquire-release as upstream's integer atomics are (relaxed on a failed exchange, which SPIR-V
allows no release on).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import spirv

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import as_operation, op_error, walk
from tilec.compiler.passes.spirv_prepare_float_atomics import FLOAT_ADD

SCOPES = {"StorageBuffer": "Device", "Workgroup": "Workgroup"}


def _marked(op: ir.Operation) -> bool:
    location = op.location
    return location.is_a_name() and location.name_str == FLOAT_ADD


@register
class SpirvLowerFloatAtomics(TilePass):
    """Rewrite each FLOAT_ADD-marked spirv.Store into the float atomic add it stands for."""

    name = "spirv-lower-float-atomics"
    summary = "spirv.Store marked tilec.float_atomic_add -> spirv.EXT.AtomicFAdd, or a " \
              "compare-and-swap loop on i32 bits"

    def run(self, module: ir.Module) -> None:
        with module.context:
            for op in [op for op in walk(module.operation) if op.name == "spirv.Store"]:
                if _marked(op):
                    _lower(op)


def _lower(store: ir.Operation) -> None:
    pointer, value = store.operands[0], store.operands[1]
    space = str(pointer.type).rpartition(",")[2].strip(" >")
    if space not in SCOPES:
        raise op_error(store, f"a float atomic add on {space} memory")
    scope = ir.Attribute.parse(f"#spirv.scope<{SCOPES[space]}>")
    semantics = ir.Attribute.parse("#spirv.memory_semantics<AcquireRelease>")
    with store.location.child_loc:
        if isinstance(value.type, ir.FloatType):
            with ir.InsertionPoint(store):
                ir.Operation.create("spirv.EXT.AtomicFAdd", results=[value.type],
                                    operands=[pointer, value],
                                    attributes={"memory_scope": scope, "semantics": semantics})
        else:
            _cas_loop(store, pointer, value, scope, semantics)
    store.erase()


def _function_entry(op: ir.Operation) -> ir.Block:
    while op.name != "spirv.func":
        op = as_operation(op.parent)
    return op.regions[0].blocks[0]


def _cas_loop(store: ir.Operation, pointer: ir.Value, bits: ir.Value, scope: ir.Attribute,
              semantics: ir.Attribute) -> None:
    i32, f32 = bits.type, ir.F32Type.get()
    relaxed = ir.Attribute.parse("#spirv.memory_semantics<None>")
    with ir.InsertionPoint.at_block_begin(_function_entry(store)):
        expected = spirv.VariableOp(ir.Type.parse("!spirv.ptr<i32, Function>"),
                                    ir.Attribute.parse("#spirv.storage_class<Function>")).result
    with ir.InsertionPoint(store):
        spirv.StoreOp(expected, spirv.ConstantOp(i32, ir.IntegerAttr.get(i32, 0)).result)
        loop = spirv.LoopOp([], ir.Attribute.parse("#spirv.loop_control<None>"))
    entry, header, retry, merge = (loop.body.blocks.append() for _ in range(4))
    with ir.InsertionPoint(entry):
        spirv.BranchOp([], header)
    with ir.InsertionPoint(header):
        old = spirv.LoadOp(i32, expected).result
        total = spirv.FAddOp(spirv.BitcastOp(f32, old).result,
                             spirv.BitcastOp(f32, bits).result).result
        seen = spirv.AtomicCompareExchangeOp(pointer, scope, semantics, relaxed,
                                             spirv.BitcastOp(i32, total).result, old).result
        spirv.StoreOp(expected, seen)
        spirv.BranchConditionalOp(spirv.INotEqualOp(seen, old).result, [], [], retry, merge)
    with ir.InsertionPoint(retry):  # the continue block: retry from what memory held
        spirv.BranchOp([], header)
    with ir.InsertionPoint(merge):
        spirv.MergeOp([])
