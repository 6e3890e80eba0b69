"""place-private-allocas: per-thread arrays of a gpu.module in the private address space (AMD).

lower-tile-to-gpu keeps a fragment's registers and local buffers in `memref.alloca`s of the
default memory space, which the NVPTX backend takes as thread-local. The AMDGPU backend does
not: its stack lives in address space 5 and an alloca elsewhere fails LLVM's verifier ("alloca
on amdgpu must be in addrspace(5)"). This pass gives every such alloca, and the views made
from it, `#gpu.address_space<private>`, which convert-gpu-to-rocdl maps to address space 5;
SROA then keeps the arrays indexed at constants in VGPRs, as on NVIDIA. A derived memref the
pass cannot retype (anything but a view of the array) is an error at that op.
"""

from __future__ import annotations

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import op_error, walk

PRIVATE = "#gpu.address_space<private>"
# ops whose memref result is a view of their first operand: it lives where the operand does
VIEW_OPS = frozenset({
    "memref.subview", "memref.cast", "memref.reinterpret_cast", "memref.collapse_shape",
    "memref.expand_shape", "memref.transpose", "memref.view",
})


def _in_private(type_: ir.MemRefType, private: ir.Attribute) -> ir.MemRefType:
    return ir.MemRefType.get(type_.shape, type_.element_type, type_.layout, private)


def _retype(value: ir.Value, private: ir.Attribute) -> None:
    """Moves `value` (a default-space memref) and every view made from it to `private`."""
    value.set_type(_in_private(ir.MemRefType(value.type), private))
    for use in list(value.uses):
        user = use.owner
        if isinstance(user, ir.OpView):
            user = user.operation
        derived = [result for result in user.results if isinstance(result.type, ir.MemRefType)
                   and ir.MemRefType(result.type).memory_space is None]
        if not derived:
            continue
        if user.name not in VIEW_OPS or use.operand_number != 0:
            raise op_error(user, f"{user.name} makes a memref from a per-thread array; the AMD "
                                 "target places those arrays in private memory and cannot "
                                 "follow this op")
        for result in derived:
            _retype(result, private)


@register
class PlacePrivateAllocas(TilePass):
    """Every default-space memref.alloca inside a gpu.module moves to private memory."""

    name = "place-private-allocas"
    summary = "gpu.module allocas (and their views) in #gpu.address_space<private> (AMDGPU)"

    def run(self, module: ir.Module) -> None:
        with module.context:
            private = ir.Attribute.parse(PRIVATE)
            for gpu_module in [op for op in walk(module.operation) if op.name == "gpu.module"]:
                for op in [op for op in walk(gpu_module) if op.name == "memref.alloca"]:
                    if ir.MemRefType(op.results[0].type).memory_space is None:
                        _retype(op.results[0], private)
