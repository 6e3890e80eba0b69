"""spirv-lower-float-atomics: each store spirv-prepare-float-atomics marked as the atomic add.

spirv-prepare-float-atomics carries a float32 atomic add through convert-gpu-to-spirv as a
`spirv.Store %pointer, %value` at a location named `tilec.float_atomic_add`. Here it becomes
- on a float pointer (the target environment has AtomicFloat32AddEXT): spirv.EXT.AtomicFAdd;
- on an i32 pointer (the buffer held as bits): a loop of atomic exchanges every device can run

      carried = value
      loop: held = AtomicExchange(pointer, bits(+0.0))            (take the sum out)
            back = AtomicExchange(pointer, bits(float(held) + carried))
            carried = back                                         (what others added meanwhile)
            until back == bits(+0.0)

  Every value added is in memory or carried by one thread at any time, so the sum is whole
  once every loop has ended (float atomic adds return nothing here: spirv-prepare-float-
  atomics refuses a kept result); a thread loops again only for what another one finished
  adding in between, so the loops end. Not a compare-and-swap loop: wgpu-native's naga reads
  the result of SPIR-V's OpAtomicCompareExchange as an expression it never introduces, and
  rejects any kernel that uses it ("Used by a statement before it was introduced"; used in
  arithmetic, the process aborts). The carried bits live in a function variable (SPIR-V puts
  those in the entry block).
Both are Device-scope atomics on storage buffers and Workgroup-scope ones on shared memory,
acquire-release as upstream's integer atomics are.
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
              "loop of atomic exchanges on i32 bits"

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
            _exchange_loop(store, pointer, value, scope, semantics)
    store.erase()


def _function_entry(op: ir.Operation) -> ir.Block:
    while op.name != "spirv.func":
        op = as_operation(op.parent)
    return op.regions[0].blocks[0]


def _exchange_loop(store: ir.Operation, pointer: ir.Value, bits: ir.Value,
                   scope: ir.Attribute, semantics: ir.Attribute) -> None:
    """The float add of `bits` into `pointer`'s i32 element as the loop of exchanges above."""
    i32, f32 = bits.type, ir.F32Type.get()
    with ir.InsertionPoint.at_block_begin(_function_entry(store)):
        carried = spirv.VariableOp(ir.Type.parse("!spirv.ptr<i32, Function>"),
                                   ir.Attribute.parse("#spirv.storage_class<Function>")).result
    with ir.InsertionPoint(store):
        spirv.StoreOp(carried, bits)
        loop = spirv.LoopOp([], ir.Attribute.parse("#spirv.loop_control<None>"))
    entry, header, retry, merge = (loop.body.blocks.append() for _ in range(4))
    with ir.InsertionPoint(entry):
        spirv.BranchOp([], header)
    with ir.InsertionPoint(header):
        zero = spirv.ConstantOp(i32, ir.IntegerAttr.get(i32, 0)).result
        held = spirv.AtomicExchangeOp(pointer, scope, semantics, zero).result
        total = spirv.FAddOp(spirv.BitcastOp(f32, held).result,
                             spirv.BitcastOp(f32, spirv.LoadOp(i32, carried).result).result)
        back = spirv.AtomicExchangeOp(pointer, scope, semantics,
                                      spirv.BitcastOp(i32, total.result).result).result
        spirv.StoreOp(carried, back)
        spirv.BranchConditionalOp(spirv.INotEqualOp(back, zero).result, [], [], retry, merge)
    with ir.InsertionPoint(retry):  # the continue block: add what came back
        spirv.BranchOp([], header)
    with ir.InsertionPoint(merge):
        spirv.MergeOp([])
