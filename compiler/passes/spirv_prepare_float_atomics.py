"""spirv-prepare-float-atomics: float32 atomic adds in a form convert-gpu-to-spirv carries.

Upstream's convert-gpu-to-spirv lowers integer memref.atomic_rmw only. SPIR-V has a float
add (OpAtomicFAddEXT, SPV_EXT_shader_atomic_float_add), an optional feature that Vulkan
drivers such as lavapipe offer and WebGPU and Metal 2.1 lack; what every device has is a
32-bit integer atomic exchange. This pass, run on the gpu.module before the conversion, turns
each float32 `addf` atomic into a `memref.store` of its value at a location named FLOAT_ADD,
which the conversion makes a spirv.Store to the element's pointer; after it,
spirv-lower-float-atomics turns each such store back into the atomic. Where the gpu.module's
target environment lacks the AtomicFloat32AddEXT capability, or the buffer is shared memory
(wgpu's float atomics are on storage buffers only), the buffer the atomic targets (a kernel
argument or a shared alloc) is declared as i32 bits first (loads and stores bitcast), so the
atomic becomes a loop of atomic exchanges on the bits. The two passes run as a pair.
A float atomic of another width or kind is an error at its line (16-bit atomics are not in
Vulkan's core, 64-bit ones an optional feature).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._integer_storage import root_of, store_as_bits
from tilec.compiler.passes._ir_walk import op_error, walk

FLOAT_ADD = "tilec.float_atomic_add"
FLOAT_ADD_CAPABILITY = "AtomicFloat32AddEXT"
ADDF = int(arith.AtomicRMWKind.addf)


def native_float_add(gpu_module: ir.Operation) -> bool:
    """Whether the gpu.module's SPIR-V target environment has the float atomic add."""
    attributes = gpu_module.attributes
    return "spirv.target_env" in attributes and FLOAT_ADD_CAPABILITY in str(
        attributes["spirv.target_env"])


@register
class SpirvPrepareFloatAtomics(TilePass):
    """Each float32 atomic add as a FLOAT_ADD store; its buffer as bits where there is no
    float add for it."""

    name = "spirv-prepare-float-atomics"
    summary = "float32 atomic add -> store marked tilec.float_atomic_add (buffer as i32 bits " \
              "where the target has no AtomicFloat32AddEXT)"

    def run(self, module: ir.Module) -> None:
        with module.context:
            for gpu_module in [op for op in walk(module.operation) if op.name == "gpu.module"]:
                _prepare(gpu_module, native_float_add(gpu_module))


def _prepare(gpu_module: ir.Operation, native: bool) -> None:
    f32, i32 = ir.F32Type.get(), ir.IntegerType.get_signless(32)
    roots: list[ir.Value] = []
    for op in [op for op in walk(gpu_module) if op.name == "memref.atomic_rmw"]:
        value_type = op.operands[0].type
        if not isinstance(value_type, ir.FloatType):
            continue
        if value_type != f32 or ir.IntegerAttr(op.attributes["kind"]).value != ADDF:
            raise op_error(op, f"a {value_type} atomic ({op.attributes['kind']}) has no SPIR-V "
                               "lowering: float32 atomic adds do")
        if list(op.results[0].uses):
            raise op_error(op, "the value a float atomic add returns is not kept on SPIR-V")
        root = root_of(op.operands[1])
        in_storage_buffer = "StorageBuffer" in str(ir.MemRefType(root.type).memory_space)
        if not (native and in_storage_buffer) and all(root != seen for seen in roots):
            roots.append(root)
        with ir.InsertionPoint(op), ir.Location.name(FLOAT_ADD, childLoc=op.location):
            memref.store(op.operands[0], op.operands[1], list(op.operands)[2:])
        op.erase()
    for root in roots:
        for atomic in store_as_bits(root, i32, "float32 atomic adds"):
            raise op_error(atomic, f"an atomic {atomic.attributes['kind']} on a buffer that "
                                   "float32 atomic adds hold as bits")
