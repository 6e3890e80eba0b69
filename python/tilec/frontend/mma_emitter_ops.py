"""TileLang's hand-written MMA emitters (`TensorCoreIntrinEmitter`: ldmatrix_a / ldmatrix_b /
mma / stmatrix over per-thread local buffers) built as the block-level tile ops they amount to
(a mixin of the KernelBuilder).

In TileLang each warp loads its own A and B pieces of one K step into per-thread registers,
multiplies them with mma.sync into its accumulator pieces and stores them where its warp tile
lies, the warps together covering the block tile. tilec builds the same computation on the
block: when a T.Kernel block starts, the emitter calls in its body name the local buffers that
are an emitter's A, B and C, and each of those `T.alloc_local` (its per-thread size checked
against the emitter's) becomes the block-level buffer the per-thread ones make up: A and B
the K step's operand tiles (block_M x k_dim and block_N x k_dim shared tiles: what the warps'
ldmatrix read, kept where T.gemm's tensor-core lowerings read operands), C the block_M x
block_N accumulator fragment. `ldmatrix_*` is then a copy of the K step's box of the shared
tile, `mma` a T.gemm with B transposed, `stmatrix` a T.Parallel store. Every target runs it, the
CPU's numerics included; the CUDA target lowers the gemm as T.gemm's (ldmatrix + mma.sync on
sm_80, wgmma on sm_90a).
"""

from __future__ import annotations

import ast
import inspect
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mlir import ir

import tilec.dialect as tile
import tilec.language as T
from tilec.frontend.values import Buffer, Region, Scalar

_ROLES = {"ldmatrix_a": ("A",), "ldmatrix_b": ("B",), "mma": ("A", "B", "C"),
          "stmatrix": ("C",)}


def _is_emitter(value: Any) -> bool:
    from tilec.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter

    return isinstance(value, TensorCoreIntrinEmitter)


class MmaEmitterOps:
    """t_mma_emitter_* handlers and the emitter operands' allocation; mixed into
    KernelBuilder."""

    def find_emitter_operands(self, body: list[ast.stmt]) -> dict[str, tuple[Any, str]]:
        """{local buffer name: (emitter, "A" | "B" | "C")} of the emitter calls in `body`."""
        operands: dict[str, tuple[Any, str]] = {}
        for statement in body:
            for call in ast.walk(statement):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                        and call.func.attr in _ROLES and isinstance(call.func.value, ast.Name)):
                    continue
                emitter = self.peek(call.func.value.id)
                if not _is_emitter(emitter):
                    continue
                for role, argument in zip(_ROLES[call.func.attr], call.args, strict=False):
                    if not isinstance(argument, ast.Name):
                        continue
                    known = operands.setdefault(argument.id, (emitter, role))
                    if known[0] is not emitter or known[1] != role:
                        self.error(call, f"'{argument.id}' is the {known[1]} buffer of an MMA "
                                         f"emitter, here passed as {role}: each emitter "
                                         "operand is one local buffer of its own")
        return operands

    def peek(self, name: str) -> Any:
        """The value `name` has now, or None (no error where it is not bound yet)."""
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return self.outer.get(name)

    def emitter_allocation(self, name: str, value: ast.expr, node: ast.AST) -> Buffer | None:
        """`name = T.alloc_local(shape, dtype)` of an emitter operand: the block fragment it
        stands for; None where `name` is no emitter operand."""
        found = self.emitter_operands.get(name)
        if found is None:
            return None
        emitter, role = found
        what = f"'{name}', the {role} buffer of {type(emitter).__name__}"
        callee = self.eval(value.func) if isinstance(value, ast.Call) else None
        if getattr(callee, "__tilec_op__", None) != "alloc_local":
            self.error(node, f"{what}, is made by T.alloc_local((size,), dtype)")
        try:
            nodes = inspect.signature(T.alloc_local).bind(
                *value.args, **{k.arg: k.value for k in value.keywords}).arguments
        except TypeError as error:
            self.error(node, f"T.alloc_local: {error}")
        size = math.prod(self.shape_arg(nodes, value))
        dtype = self._dtype(self.arg(nodes, "dtype"), value)
        expected = emitter.per_thread_size(role)
        if size != expected:
            self.error(node, f"{what}, holds {expected} elements per thread (mma.sync's "
                             f"fragments of {emitter.warp_rows} x {emitter.warp_cols} "
                             f"instructions), not {size}")
        if not dtype.interchangeable(emitter.operand_dtype(role)):
            self.error(node, f"{what}, has the emitter's dtype {emitter.operand_dtype(role)}, "
                             f"not {dtype}")
        threads = math.prod(self.block_size())
        if threads != emitter.threads:
            self.error(node, f"{type(emitter).__name__} tiles the block over "
                             f"{emitter.block_row_warps} x {emitter.block_col_warps} warps "
                             f"({emitter.threads} threads), but T.Kernel has {threads}")
        scope = {"A": "shared", "B": "shared", "C": "fragment"}[role]
        buffer = self.allocate(scope, list(emitter.block_shape(role)), dtype, value)
        buffer.mma_operand = (emitter, role)
        return buffer

    def refuse_emitter_operand(self, buffer: Buffer, node: ast.AST) -> None:
        """An emitter operand's elements are TileLang's per-thread registers: not reachable."""
        if buffer.mma_operand is not None:
            emitter, role = buffer.mma_operand
            self.error(node, f"'{buffer.name}' is the {role} buffer of "
                             f"{type(emitter).__name__}, whose elements are each thread's "
                             "mma.sync registers in TileLang; tilec keeps it as the block's "
                             "tile: use it only through the emitter's methods and T.clear / "
                             "T.fill")

    def emitter_operand(self, emitter: Any, role: str, nodes: dict, key: str,
                        node: ast.AST) -> Buffer:
        buffer = self.arg(nodes, key)
        if not isinstance(buffer, Buffer) or buffer.mma_operand != (emitter, role):
            self.error(node, f"argument '{key}' is the {role} buffer of this emitter: a "
                             "T.alloc_local assigned to a name in this T.Kernel block and "
                             f"passed by that name, got {buffer!r}")
        return buffer

    @contextmanager
    def points(self, extents: list[int], node: ast.AST) -> Iterator[list[Scalar]]:
        """A tile.parallel over `extents`: the body runs inside it at its point."""
        op = tile.ParallelOp(extents)
        block = op.body.blocks.append(*[ir.IndexType.get()] * len(extents),
                                      arg_locs=[self.location(node)] * len(extents))
        with ir.InsertionPoint(block):
            yield [Scalar(a, T.index) for a in block.arguments]
            tile.yield_()

    def emitter_load(self, emitter: Any, role: str, nodes: dict, node: ast.Call) -> None:
        """ldmatrix_a / ldmatrix_b: the block's K step `ki` (of K block `rk`) into the
        operand's fragment (rows: M or N, columns: K)."""
        fragment = self.emitter_operand(emitter, role, nodes, f"{role}_local_buf", node)
        source = self.region(nodes[f"{role}_shared_buf"])
        shared = source.buffer
        if shared.scope not in ("shared", "fragment", "local") or shared.rank < 2:
            self.error(node, f"the emitter loads {role} from a shared tile of two or more "
                             f"dimensions, got the {shared.scope} buffer '{shared.name}'")
        if any(e != 1 for e in source.extents[:-2] if isinstance(e, int)):
            self.error(node, f"the emitter loads {role} from a 2-d box of '{shared.name}': "
                             "index its leading dimensions")
        ki = self.rvalue(self.arg(nodes, "ki"), node)
        rk = self.rvalue(self.arg(nodes, "rk", 0), node)
        k_start = self.binop("+", self.binop("*", ki, emitter.k_dim, node),
                             self.binop("*", rk, emitter.chunk, node), node)
        k_rows = emitter.a_transposed if role == "A" else not emitter.b_transposed
        rows, k_dim = fragment.static_shape
        box = (k_dim, rows) if k_rows else (rows, k_dim)
        for axis, extent in zip((-2, -1), box, strict=True):
            size, base = shared.static_shape[axis], source.offsets[axis]
            if size is not None and isinstance(base, int) and base + extent > size:
                self.error(node, f"the emitter's {role} box ({box[0]} x {box[1]}) does not "
                                 f"fit in '{shared.name}' {shared.static_shape}")
        leading = list(source.offsets[:-2])
        base_row, base_col = source.offsets[-2], source.offsets[-1]
        if not k_rows and shared.dtype.interchangeable(fragment.dtype):
            offsets = [*leading, base_row, self.binop("+", base_col, k_start, node)]
            self.emit_copy(Region(shared, offsets, [1] * len(leading) + [rows, k_dim]),
                           self.whole(fragment))
            return
        with self.points([rows, k_dim], node) as (i, k):
            k_at = self.binop("+", k_start, k, node)
            at = ([self.binop("+", base_row, k_at, node), self.binop("+", base_col, i, node)]
                  if k_rows else [self.binop("+", base_row, i, node),
                                  self.binop("+", base_col, k_at, node)])
            self.store(fragment, [i, k], self.load(shared, [*leading, *at], node), node)

    def t_mma_emitter_ldmatrix_a(self, emitter: Any, nodes: dict, node: ast.Call) -> None:
        self.emitter_load(emitter, "A", nodes, node)

    def t_mma_emitter_ldmatrix_b(self, emitter: Any, nodes: dict, node: ast.Call) -> None:
        self.emitter_load(emitter, "B", nodes, node)

    def t_mma_emitter_mma(self, emitter: Any, nodes: dict, node: ast.Call) -> None:
        """C += A B^T over the K step the operands hold."""
        a = self.emitter_operand(emitter, "A", nodes, "A_local_buf", node)
        b = self.emitter_operand(emitter, "B", nodes, "B_local_buf", node)
        c = self.emitter_operand(emitter, "C", nodes, "C_local_buf", node)
        self.emit_gemm(a, b, c, T.GemmWarpPolicy.Square,
                       {"transpose_a": False, "transpose_b": True}, False, node)

    def t_mma_emitter_stmatrix(self, emitter: Any, nodes: dict, node: ast.Call) -> None:
        """The accumulator into a 2-d (block_M, block_N) or 4-d (block_M / 16, block_N /
        n_dim, 16, n_dim) buffer, or with pid_m / pid_n into the global C at that tile."""
        c = self.emitter_operand(emitter, "C", nodes, "C_local_buf", node)
        target = self.arg(nodes, "C_buf")
        pid_m, pid_n = (self.rvalue(self.arg(nodes, key), node) for key in ("pid_m", "pid_n"))
        if not isinstance(target, Buffer):
            self.error(node, f"stmatrix stores into a buffer, got {target!r}")
        self.refuse_emitter_operand(target, node)
        if (pid_m is None) != (pid_n is None):
            self.error(node, "stmatrix takes pid_m and pid_n together (a global C's tile)")
        block_m, block_n = c.static_shape
        if pid_m is not None:
            if target.rank != 2:
                self.error(node, f"stmatrix(pid_m=, pid_n=) stores into a 2-d C, got "
                                 f"'{target.name}' of {target.rank} dimensions")
            offsets = [self.binop("*", pid_m, block_m, node), self.binop("*", pid_n, block_n,
                                                                         node)]
            self.convert_box(self.whole(c), Region(target, offsets, [block_m, block_n]), node)
            return
        n_dim = emitter.n_dim
        tiled = {2: (block_m, block_n), 4: (block_m // 16, block_n // n_dim, 16, n_dim)}
        if target.rank not in tiled or any(
                size is not None and size < need
                for size, need in zip(target.static_shape, tiled[target.rank], strict=True)):
            self.error(node, f"stmatrix stores a {block_m} x {block_n} accumulator into a "
                             f"buffer of shape {tiled[2]} or {tiled[4]}, got '{target.name}' "
                             f"{target.static_shape}")
        if target.rank == 2:
            self.convert_box(self.whole(c), Region(target, [0, 0], [block_m, block_n]), node)
            return
        with self.points([block_m, block_n], node) as (i, j):
            at = [self.binop("//", i, 16, node), self.binop("//", j, n_dim, node),
                  self.binop("%", i, 16, node), self.binop("%", j, n_dim, node)]
            self.store(target, at, self.load(c, [i, j], node), node)
