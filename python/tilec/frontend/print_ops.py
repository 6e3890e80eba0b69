"""T.print: printing from the device on each run, in TileLang's format (a mixin of the
KernelBuilder).

Each line is one `gpu.printf` whose format starts `msg='...' BlockIdx=(%d, %d, %d),
ThreadIdx=(%d, %d, %d)`, as TileLang's debug prints write it. The frontend gives the block's
three indices as the first arguments and marks the op with `tile.print_threads`: -1 when every
thread prints, else the one thread (x, 0, 0) that does. lower-device-prints adds the thread's
indices after the block's and keeps the printing thread (on CUDA), or makes the op a call of C's
printf (the CPU target, whose one thread per block prints each line once, as thread (0, 0, 0)).

What prints, as in TileLang: a scalar from every thread (msg `expr<source text>` by default); a
buffer element by element with its name, flat index and dtype (msg `buffer<name, dtype>` by
default), a shared buffer from the thread `warp_group_id * 128 + warp_id * 32` alone, a fragment
copied into shared memory first and printed the same way, a local or global buffer from every
thread; `T.print(msg="...")` the message alone.
"""

from __future__ import annotations

import ast
from typing import Any

from mlir import ir
from mlir.dialects import arith, gpu

import tilec.dialect as tile
import tilec.language as T
from tilec.frontend.values import Affine, Buffer, Scalar

PRINT_THREADS = "tile.print_threads"  # -1: every thread prints; else the printing thread's x
EVERY_THREAD = -1
WARPGROUP_SIZE, WARP_SIZE = 128, 32
HEADER = "msg='{msg}' BlockIdx=(%d, %d, %d), ThreadIdx=(%d, %d, %d)"
# TileLang's dtype names (the C types of its debug prints) and printf conversions; floats are
# printed as doubles, integers narrower than 32 bits as int
_C_TYPES = {
    "float64": ("double", "%lf"), "float32": ("float", "%f"), "float16": ("half_t", "%f"),
    "bfloat16": ("bfloat16_t", "%f"), "float8_e4m3": ("fp8_e4_t", "%f"),
    "float8_e4m3fn": ("fp8_e4_t", "%f"), "float8_e5m2": ("fp8_e5_t", "%f"),
    "int8": ("signed char", "%d"), "uint8": ("unsigned char", "%u"), "int16": ("short", "%d"),
    "uint16": ("unsigned short", "%u"), "int32": ("int", "%d"), "uint32": ("uint", "%u"),
    "int64": ("long", "%ld"), "uint64": ("ulong", "%lu"), "index": ("int", "%d"),
    "bool": ("bool", "%d"),
}  # an index (a block or thread index, a loop's) prints as TileLang's int32 indices do


def _escaped(text: str) -> str:
    """`text` inside a printf format: its own % signs printed as such."""
    return text.replace("%", "%%")


class PrintOps:
    """t_print; mixed into KernelBuilder."""

    def t_print(self, nodes: dict, node: ast.Call) -> None:
        self.require_kernel(node, "T.print")
        msg = self.const_arg(nodes, "msg", node, "")
        if not isinstance(msg, str):
            self.error(node, f"T.print's msg is a string, got {msg!r}")
        lane = self.printing_thread(nodes, node)
        if "obj" not in nodes or (isinstance(nodes["obj"], ast.Constant)
                                  and nodes["obj"].value is None):
            if not msg:
                self.error(node, "T.print() needs a value, a buffer or a msg to print")
            self.emit_print(HEADER.format(msg=_escaped(msg)), [], EVERY_THREAD, node)
            return
        value = self.eval(nodes["obj"])
        if isinstance(value, Buffer):
            self.print_buffer(value, msg, lane, node)
            return
        scalar = self.rvalue(value, nodes["obj"])
        if not isinstance(scalar, (Scalar, int, float, bool)):
            self.error(node, f"T.print prints a buffer, a scalar or a msg, got "
                             f"{type(value).__name__}")
        dtype = scalar.dtype if isinstance(scalar, Scalar) else (
            T.float32 if isinstance(scalar, float) else T.int32)
        msg = msg or f"expr<{ast.unparse(nodes['obj'])}>"
        c_type, conversion = _C_TYPES.get(dtype.name, (None, None))
        if c_type is None:
            self.error(node, f"T.print cannot print a {dtype.name} value")
        header = HEADER.format(msg=_escaped(msg))
        self.emit_print(f"{header}: dtype={c_type} value={conversion}",
                        [self.printf_argument(scalar, dtype, node)], EVERY_THREAD, node)

    def printing_thread(self, nodes: dict, node: ast.Call) -> int:
        """The thread that prints a shared or fragment buffer (TileLang's warp_group_id * 128
        + warp_id * 32)."""
        group = self.const_arg(nodes, "warp_group_id", node, 0)
        warp = self.const_arg(nodes, "warp_id", node, 0)
        if not all(isinstance(v, int) and v >= 0 for v in (group, warp)):
            self.error(node, f"T.print's warp_group_id and warp_id are integers >= 0, got "
                             f"{group!r} and {warp!r}")
        lane = group * WARPGROUP_SIZE + warp * WARP_SIZE
        threads = self.block_size()
        if lane >= threads[0]:
            self.error(node, f"T.print from thread {lane} (warp_group_id={group}, warp_id="
                             f"{warp}), but the block has {threads[0]} threads along x")
        return lane

    def print_buffer(self, buffer: Buffer, msg: str, lane: int, node: ast.Call) -> None:
        """Every element of `buffer`, one line each, in row-major order."""
        c_type, conversion = _C_TYPES.get(buffer.dtype.name, (None, None))
        if c_type is None:
            self.error(node, f"T.print cannot print a {buffer.dtype.name} buffer")
        name = buffer.name or "buffer"
        if buffer.scope != "global":
            msg = msg or f"buffer<{name}, {buffer.dtype.name}>"
        threads = lane if buffer.scope in ("shared", "fragment") else EVERY_THREAD
        if buffer.scope == "fragment":  # spread over the threads: gather it in shared memory
            staging = self.allocate("shared", list(buffer.static_shape), buffer.dtype, node)
            self.emit_copy(self.whole(buffer), self.whole(staging))
            staging.name = name
            buffer = staging
        line = (f"{HEADER.format(msg=_escaped(msg))}: buffer={_escaped(name)}, index=%d, "
                f"dtype={c_type} value={conversion}")

        def body(indices: list[ir.Value]) -> None:
            flat = indices[0]
            for index, extent in zip(indices[1:], buffer.dims[1:], strict=True):
                flat = arith.addi(arith.muli(flat, self.index_value(extent, node)), index)
            point = [Scalar(i, T.index, affine=Affine.variable()) for i in indices]
            element = self.load(buffer, point, node)
            position = arith.index_cast(ir.IntegerType.get_signless(32), flat)
            self.emit_print(line, [position, self.printf_argument(element, buffer.dtype, node)],
                            threads, node)

        self.element_loops(list(buffer.dims), [], body, node)

    def element_loops(self, extents: list[Any], indices: list[ir.Value], body, node) -> None:
        """A serial tile.for per dimension around `body(indices)`."""
        if not extents:
            body(indices)
            return
        loop = tile.ForOp(self.index_value(0, node), self.index_value(extents[0], node),
                          self.index_value(1, node))
        block = loop.body.blocks.append(ir.IndexType.get())
        with ir.InsertionPoint(block):
            self.element_loops(extents[1:], [*indices, block.arguments[0]], body, node)
            tile.yield_()

    def printf_argument(self, value: Any, dtype: T.DType, node: ast.AST) -> ir.Value:
        """`value` as printf takes it: a float as a double, an integer as 32 or 64 bits."""
        if dtype.kind == "float":
            return self.materialize(self.cast(value, T.float64, node), T.float64, node).value
        if dtype.kind == "index" or (dtype.kind in ("int", "uint", "bool") and dtype.bits < 32):
            return self.materialize(self.cast(value, T.int32, node), T.int32, node).value
        return self.materialize(value, dtype, node).value

    def emit_print(self, line: str, arguments: list[ir.Value], threads: int,
                   node: ast.AST) -> None:
        """One gpu.printf of `line` (a newline added) after the block's indices."""
        blocks = [self.materialize(self.cast(self.block_index(d, node), T.int32, node),
                                   T.int32, node).value for d in range(3)]
        op = gpu.PrintfOp(line + "\n", [*blocks, *arguments])
        op.operation.attributes[PRINT_THREADS] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), threads)
