"""assign-spirv-storage-classes: every memref of a gpu.module in its SPIR-V storage class.

lower-tile-to-gpu names memory as the NVIDIA and AMD backends do: global tensors in the
numeric address space 1, shared memory in `#gpu.address_space<workgroup>`, per-thread arrays in
`#gpu.address_space<private>` (place-private-allocas) or the default space. Upstream's
map-memref-spirv-storage-class{client-api=vulkan} maps 1 to `Generic`, which a Vulkan shader
cannot have. This pass retypes every memref value of the gpu.module (op results, block
arguments, the gpu.func signatures) to `#spirv.storage_class<...>`: global memory is a
`StorageBuffer`, workgroup memory `Workgroup`, private and default-space memory `Function`
(what convert-gpu-to-spirv makes of an alloca). A memory space it does not know is an error at
the op whose memref has it.
"""

from __future__ import annotations

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import op_error, walk

STORAGE_CLASSES = {
    "1": "StorageBuffer",
    "#gpu.address_space<global>": "StorageBuffer",
    "#gpu.address_space<workgroup>": "Workgroup",
    "#gpu.address_space<private>": "Function",
    "None": "Function",
}


def _storage_class(space: ir.Attribute | None) -> str | None:
    """The SPIR-V storage class of a memref memory space (None where it has none)."""
    if space is not None and str(space).startswith("#spirv.storage_class"):
        return str(space)
    if isinstance(space, ir.IntegerAttr):
        key = str(ir.IntegerAttr(space).value)
    else:
        key = str(space)
    found = STORAGE_CLASSES.get(key)
    return None if found is None else f"#spirv.storage_class<{found}>"


def _retyped(type_: ir.Type, op: ir.Operation) -> ir.Type:
    if not isinstance(type_, ir.MemRefType):
        return type_
    memref_type = ir.MemRefType(type_)
    storage = _storage_class(memref_type.memory_space)
    if storage is None:
        raise op_error(op, f"{op.name} has a memref in memory space {memref_type.memory_space}, "
                           "which has no SPIR-V storage class")
    return ir.MemRefType.get(memref_type.shape, memref_type.element_type, memref_type.layout,
                             ir.Attribute.parse(storage))


@register
class AssignSpirvStorageClasses(TilePass):
    """Retype the gpu.modules' memrefs to SPIR-V storage classes (see the module doc)."""

    name = "assign-spirv-storage-classes"
    summary = "gpu.module memrefs in #spirv.storage_class (global: StorageBuffer, shared: " \
              "Workgroup, private: Function)"

    def run(self, module: ir.Module) -> None:
        with module.context:
            for gpu_module in [op for op in walk(module.operation) if op.name == "gpu.module"]:
                for op in walk(gpu_module):
                    for result in op.results:
                        result.set_type(_retyped(result.type, op))
                    for region in op.regions:
                        for block in region.blocks:
                            for argument in block.arguments:
                                argument.set_type(_retyped(argument.type, op))
                    if op.name == "gpu.func":
                        function = ir.FunctionType(ir.TypeAttr(
                            op.attributes["function_type"]).value)
                        op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                            [_retyped(t, op) for t in function.inputs],
                            [_retyped(t, op) for t in function.results]))
