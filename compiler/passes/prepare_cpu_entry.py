"""prepare-cpu-entry: gives the kernel function the C-callable shape the CPU runtime calls.

The CPU ABI (python/tilec/runtime/cpu.py builds the calls; compiler/targets/cpu.py documents it):
- the entry symbol is `tilec_<kernel name>` (a kernel named `abs` or `main` must not clash with
  libc), public; every other function becomes private;
- memref parameters keep MLIR's default expansion (allocated pointer, aligned pointer, offset,
  sizes..., strides...), so dynamic sizes reach `memref.dim`;
- float scalars narrower than f32 (f16, bf16, float8) travel as f32 and are truncated on entry:
  C callers (ctypes) have no half types.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import entry_function

ENTRY_PREFIX = "tilec_"


def _travels_as_f32(type_: ir.Type) -> bool:
    return isinstance(type_, ir.FloatType) and type_.width < 32


@register
class PrepareCpuEntry(TilePass):
    """Renames the entry to its C symbol and widens half-precision scalar parameters."""

    name = "prepare-cpu-entry"
    summary = "entry function -> `tilec_<name>` with C-friendly scalar parameters"

    def run(self, module: ir.Module) -> None:
        entry = entry_function(module)
        for op in module.body.operations:
            if op.operation.name == "func.func" and op != entry:
                op.operation.attributes["sym_visibility"] = ir.StringAttr.get("private")
        name = ir.StringAttr(entry.attributes["sym_name"]).value
        entry.attributes["sym_name"] = ir.StringAttr.get(ENTRY_PREFIX + name)
        del entry.attributes["tile.entry"]
        body = entry.body.blocks[0]
        f32 = ir.F32Type.get()
        first = body.operations[0]
        for argument in body.arguments:
            narrow = argument.type
            if not _travels_as_f32(narrow):
                continue
            argument.set_type(f32)
            with ir.InsertionPoint(first), argument.location:
                narrowed = arith.truncf(narrow, argument)
            argument.replace_all_uses_except(narrowed, narrowed.owner.operation)
        result_types = list(ir.FunctionType(entry.type).results)
        entry.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([arg.type for arg in body.arguments], result_types)
        )
