"""lower-device-prints: T.print's gpu.printf ops made whole for their target.

The frontend emits each line of T.print as a `gpu.printf` marked `tile.print_threads`, the
block's three indices its first arguments; the format expects the thread's three indices after
them (TileLang's `BlockIdx=(..), ThreadIdx=(..)` prefix). This pass adds them and drops the mark:
- in a gpu.func (run after lower-tile-to-gpu): gpu.thread_id x, y, z; a print of one thread
  (`tile.print_threads` = x >= 0) runs under `scf.if` on thread (x, 0, 0). The op stays a
  gpu.printf, which convert-gpu-to-nvvm makes a vprintf call;
- anywhere else (the CPU target, run after prepare-cpu-entry): thread (0, 0, 0), the one thread
  that runs each block, so a line meant for one thread prints once per block and so does a line
  meant for every thread. The op becomes a call of C's printf (its format an internal global
  string) and of fflush(NULL), so the lines reach a redirected stdout while the process runs.
A gpu.printf without the mark is left alone.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu, llvm, scf

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._builders import ops_named

PRINT_THREADS = "tile.print_threads"
BLOCK_INDICES = 3


@register
class LowerDevicePrints(TilePass):
    """Adds ThreadIdx to T.print's gpu.printf: gpu.thread_id on GPUs, printf calls on the CPU."""

    name = "lower-device-prints"
    summary = "T.print's gpu.printf: thread indices added; C printf calls on the CPU"

    def run(self, module: ir.Module) -> None:
        prints = [op for op in ops_named(module.operation, ("gpu.printf",))
                  if PRINT_THREADS in op.operation.attributes]
        host = _HostPrintf(module)
        for op in prints:
            threads = ir.IntegerAttr(op.operation.attributes[PRINT_THREADS]).value
            arguments = list(op.operation.operands)
            line = ir.StringAttr(op.operation.attributes["format"]).value
            with ir.InsertionPoint(op), op.location:
                if _in_gpu_function(op):
                    _device_print(line, arguments, threads)
                else:
                    host.call(line, arguments)
            op.operation.erase()


def _in_gpu_function(op: ir.OpView) -> bool:
    parent = op.operation.parent
    while parent is not None:
        if parent.name == "gpu.func":
            return True
        parent = parent.parent
    return False


def _device_print(line: str, arguments: list[ir.Value], threads: int) -> None:
    i32 = ir.IntegerType.get_signless(32)
    index = [gpu.thread_id(getattr(gpu.Dimension, axis)) for axis in "xyz"]
    values = [*arguments[:BLOCK_INDICES], *(arith.index_cast(i32, i) for i in index),
              *arguments[BLOCK_INDICES:]]
    if threads < 0:
        gpu.printf(line, *values)
        return
    wanted = [arith.constant(ir.IndexType.get(), n) for n in (threads, 0, 0)]
    chosen = arith.cmpi(arith.CmpIPredicate.eq, index[0], wanted[0])
    for axis in (1, 2):
        chosen = arith.andi(chosen, arith.cmpi(arith.CmpIPredicate.eq, index[axis],
                                               wanted[axis]))
    guarded = scf.IfOp(chosen)
    with ir.InsertionPoint(guarded.then_block):
        gpu.printf(line, *values)
        scf.YieldOp([])


class _HostPrintf:
    """printf and fflush declared once in the module, a global string per format."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self.formats: dict[str, str] = {}
        self.declared = False

    def declare(self) -> None:
        if self.declared:
            return
        self.declared = True
        with ir.InsertionPoint.at_block_begin(self.module.body), ir.Location.unknown():
            for name, signature in (("printf", "!llvm.func<i32 (ptr, ...)>"),
                                    ("fflush", "!llvm.func<i32 (ptr)>")):
                llvm.LLVMFuncOp(name, ir.TypeAttr.get(ir.Type.parse(signature)),
                                linkage=ir.Attribute.parse("#llvm.linkage<external>"))

    def format_global(self, line: str) -> str:
        if line in self.formats:
            return self.formats[line]
        name = f"tilec_print_format_{len(self.formats)}"
        self.formats[line] = name
        data = line.encode() + b"\0"
        with ir.InsertionPoint.at_block_begin(self.module.body), ir.Location.unknown():
            llvm.GlobalOp(ir.Type.parse(f"!llvm.array<{len(data)} x i8>"), name,
                          ir.Attribute.parse("#llvm.linkage<internal>"), constant=True,
                          value=ir.StringAttr.get(data.decode("latin-1")))
        return name

    def call(self, line: str, arguments: list[ir.Value]) -> None:
        self.declare()
        name = self.format_global(line)
        i32 = ir.IntegerType.get_signless(32)
        pointer = llvm.PointerType.get()
        zero = arith.constant(i32, 0)
        values = [*arguments[:BLOCK_INDICES], zero, zero, zero, *arguments[BLOCK_INDICES:]]
        text = llvm.mlir_addressof(pointer, name)
        llvm.CallOp(i32, [text, *values], [], [],
                    var_callee_type=ir.TypeAttr.get(ir.Type.parse("!llvm.func<i32 (ptr, ...)>")),
                    callee=ir.FlatSymbolRefAttr.get("printf"))
        llvm.CallOp(i32, [llvm.mlir_zero(pointer)], [], [],
                    callee=ir.FlatSymbolRefAttr.get("fflush"))
