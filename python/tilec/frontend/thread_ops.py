"""The T intrinsics that speak of one thread of a block: thread and block indices, barriers,
warp shuffles and warp reductions (a mixin of the KernelBuilder).

Kernel-level statements outside T.Parallel run on every thread of the block, as in TileLang, so
a thread index makes code per-thread. They become upstream ops in the tile IR: gpu.thread_id,
gpu.barrier, nvvm.barrier (a named barrier), nvvm.shfl.sync (shuffles: its `width` is CUDA's
lane-group width, which gpu.shuffle's is not) and nvvm.vote.sync, which the CUDA lowering keeps
(their member masks, written whole here, name-live-lanes narrows to the lanes that run them);
the CPU target runs each block as one thread, so it drops barriers and rejects the others
(compiler/passes/lower_tile_structure_to_scf.py).
"""

from __future__ import annotations

import ast
from typing import Any

from mlir import ir
from mlir.dialects import arith, gpu, nvvm

import tilec.language as T
from tilec.frontend.values import Affine, Scalar, mlir_type

AXES = "xyz"
FULL_MASK = 0xFFFFFFFF
WARP_SIZE = 32
_SHUFFLE_KINDS = {"shfl_xor": "bfly", "shfl_down": "down", "shfl_up": "up", "shfl_sync": "idx"}
_WARP_COMBINE = {"sum": "+", "bitand": "&", "bitor": "|"}


class ThreadOps:
    """t_* handlers of the per-thread intrinsics; mixed into KernelBuilder."""

    # ----- indices ------------------------------------------------------------------------
    def block_size(self) -> list[int]:
        """The block's extents along x, y, z."""
        threads = list(ir.DenseI64ArrayAttr(self.kernel_op.attributes["threads"]))
        return (threads + [1, 1])[:3]

    def thread_index(self, dim: Any, node: ast.AST) -> Any:
        """gpu.thread_id along `dim`; 0 (a constant) along an axis of extent 1."""
        self.require_kernel(node, "a thread index")
        if not isinstance(dim, int) or not 0 <= dim < 3:
            self.error(node, f"a thread dimension is 0, 1 or 2 (x, y, z), got {dim!r}")
        if self.block_size()[dim] == 1:
            return 0
        affine = self.thread_affines.setdefault(dim, Affine.variable())
        value = gpu.ThreadIdOp(getattr(gpu.Dimension, AXES[dim])).result
        return Scalar(value, T.index, affine=affine)

    def block_index(self, dim: Any, node: ast.AST) -> Any:
        """The block index T.Kernel bound along `dim` (0 past the grid's dimensions)."""
        self.require_kernel(node, "a block index")
        if not isinstance(dim, int) or not 0 <= dim < 3:
            self.error(node, f"a grid dimension is 0, 1 or 2 (x, y, z), got {dim!r}")
        arguments = self.kernel_op.regions[0].blocks[0].arguments
        if dim >= len(arguments):
            return 0
        for scope in self.scopes:
            for value in scope.values():
                if isinstance(value, Scalar) and value.value == arguments[dim]:
                    return value
        return Scalar(arguments[dim], T.index, affine=Affine.variable())

    def t_get_thread_binding(self, nodes: dict, node: ast.Call) -> Any:
        return self.thread_index(self.const_arg(nodes, "dim", node, 0), node)

    def t_get_thread_bindings(self, nodes: dict, node: ast.Call) -> list[Any]:
        return [self.thread_index(dim, node) for dim in range(3)]

    def t_get_block_binding(self, nodes: dict, node: ast.Call) -> Any:
        return self.block_index(self.const_arg(nodes, "dim", node, 0), node)

    def t_get_block_bindings(self, nodes: dict, node: ast.Call) -> list[Any]:
        return [self.block_index(dim, node) for dim in range(3)]

    def t_thread_binding(self, nodes: dict, node: ast.Call) -> Any:
        """`T.thread_binding(0, extent, thread="threadIdx.x")`: the index along that axis; the
        extent must be the block's (or grid's, for blockIdx) along it."""
        start = self.const_arg(nodes, "start", node)
        stop = self.const_arg(nodes, "stop", node)
        thread = self.const_arg(nodes, "thread", node)
        if stop is None:
            start, stop = 0, start
        kinds = {f"threadIdx.{axis}": ("thread", n) for n, axis in enumerate(AXES)}
        kinds.update({f"blockIdx.{axis}": ("block", n) for n, axis in enumerate(AXES)})
        if thread not in kinds:
            self.error(node, f"T.thread_binding binds threadIdx.x/y/z or blockIdx.x/y/z, got "
                             f"thread={thread!r}")
        kind, dim = kinds[thread]
        if start != 0:
            self.error(node, f"T.thread_binding starts at 0 in tilec, got {start!r}")
        if kind == "block":
            return self.block_index(dim, node)
        self.require_kernel(node, "T.thread_binding")
        extent = self.block_size()[dim]
        if stop != extent:
            self.error(node, f"T.thread_binding over {stop!r} threads along {thread}, but the "
                             f"block has {extent} there (T.Kernel's threads=)")
        return self.thread_index(dim, node)

    # ----- barriers ---------------------------------------------------------------------
    def t_sync_threads(self, nodes: dict, node: ast.Call) -> None:
        """gpu.barrier; with a barrier id (and thread count), the named barrier bar.sync."""
        self.require_kernel(node, "T.sync_threads")
        barrier_id = self.rvalue(self.arg(nodes, "barrier_id"), node)
        count = self.rvalue(self.arg(nodes, "arrive_count"), node)
        if barrier_id is None:
            if count is not None:
                self.error(node, "T.sync_threads(arrive_count=...) needs a barrier_id too")
            gpu.BarrierOp()
            return
        if isinstance(barrier_id, int) and not 0 <= barrier_id < 16:
            self.error(node, f"a named barrier id is 0 to 15, got {barrier_id}")
        if isinstance(count, int) and (count <= 0 or count % WARP_SIZE):
            self.error(node, f"a named barrier's thread count is a positive multiple of "
                             f"{WARP_SIZE}, got {count}")
        operands = {"barrierId": self.materialize(barrier_id, T.int32, node).value}
        if count is not None:
            operands["numberOfThreads"] = self.materialize(count, T.int32, node).value
        nvvm.BarrierOp(None, **operands)

    # ----- warp shuffles ----------------------------------------------------------------
    def shuffle(self, kind: str, value: Any, lane: Any, width: Any, node: ast.AST) -> Scalar:
        """nvvm.shfl.sync of a scalar over the whole warp, in groups of `width` lanes; narrow
        types travel widened to 32 bits, 64-bit ones as two 32-bit halves."""
        self.require_kernel(node, "a warp shuffle")
        value = self.rvalue(value, node)
        if not isinstance(value, Scalar):
            value = self.materialize(value, T.float32 if isinstance(value, float) else T.int32,
                                     node)
        if isinstance(width, int) and (width <= 0 or width > WARP_SIZE or width & (width - 1)):
            self.error(node, f"a shuffle width is a power of two up to {WARP_SIZE}, got {width}")
        dtype = value.dtype
        if dtype == T.index:
            value, dtype = self.convert(value, T.int32, node, False), T.int32
        i32 = ir.IntegerType.get_signless(32)
        lane_value = self.materialize(lane, T.int32, node).value
        # PTX's c operand: the group's lane mask in bits 8-12, the clamp lane in bits 0-4
        group_bits = self.binop("<<", self.binop("-", WARP_SIZE, width, node), 8, node)
        clamp = group_bits if kind == "up" else self.binop("|", group_bits, WARP_SIZE - 1, node)
        clamp_value = self.materialize(clamp, T.int32, node).value
        mask = arith.constant(i32, -1)
        shuffle_kind = getattr(nvvm.ShflKind, kind)

        def one(word: ir.Value) -> ir.Value:
            return nvvm.ShflOp(word.type, mask, word, lane_value, clamp_value, shuffle_kind).res

        if dtype.bits == 64:
            i64 = ir.IntegerType.get_signless(64)
            bits = arith.bitcast(i64, value.value) if dtype.is_float else value.value
            low = one(arith.trunci(i32, bits))
            high = one(arith.trunci(i32, arith.shrui(bits, arith.constant(i64, 32))))
            joined = arith.ori(arith.extui(i64, low), arith.shli(arith.extui(i64, high),
                                                                  arith.constant(i64, 32)))
            result = arith.bitcast(mlir_type(dtype), joined) if dtype.is_float else joined
            return Scalar(result, dtype)
        if dtype == T.bool:
            moved = one(arith.extui(i32, value.value))
            return Scalar(arith.trunci(mlir_type(T.bool), moved), T.bool)
        carrier = T.float32 if dtype.is_float else T.int32
        wide = self.convert(value, carrier, node, False) if dtype.bits < 32 else value
        moved = Scalar(one(wide.value), carrier)
        if dtype.bits == 32:
            return Scalar(moved.value, dtype)
        return self.convert(moved, dtype, node, False)

    def shuffle_args(self, name: str, nodes: dict, node: ast.Call) -> Scalar:
        mask = self.arg(nodes, "mask", FULL_MASK)
        if mask != FULL_MASK:
            self.error(node, f"T.{name}: tilec gives each shuffle the mask of the lanes that "
                             f"run it (its block's and thread conditions'), so mask must be "
                             f"0xFFFFFFFF (got {mask!r})")
        lane = self.arg(nodes, "srcLane" if name == "shfl_sync" else "delta")
        return self.shuffle(_SHUFFLE_KINDS[name], self.arg(nodes, "value"), lane,
                            self.arg(nodes, "width", WARP_SIZE), node)

    def t_shfl_xor(self, nodes: dict, node: ast.Call) -> Scalar:
        return self.shuffle_args("shfl_xor", nodes, node)

    def t_shfl_down(self, nodes: dict, node: ast.Call) -> Scalar:
        return self.shuffle_args("shfl_down", nodes, node)

    def t_shfl_up(self, nodes: dict, node: ast.Call) -> Scalar:
        return self.shuffle_args("shfl_up", nodes, node)

    def t_shfl_sync(self, nodes: dict, node: ast.Call) -> Scalar:
        return self.shuffle_args("shfl_sync", nodes, node)

    def t_tvm_warp_shuffle(self, nodes: dict, node: ast.Call) -> Scalar:
        if self.arg(nodes, "warp_size") != WARP_SIZE:
            self.error(node, f"T.tvm_warp_shuffle: the warp size is {WARP_SIZE}, got "
                             f"{self.arg(nodes, 'warp_size')!r}")
        return self.shuffle_args("shfl_sync", nodes, node)

    # ----- warp votes ---------------------------------------------------------------------
    def vote(self, kind: str, nodes: dict, node: ast.Call) -> Scalar:
        """nvvm.vote.sync over the whole warp, as int32 0 / 1."""
        self.require_kernel(node, f"T.{kind}_sync")
        mask = self.arg(nodes, "mask", FULL_MASK)
        if mask != FULL_MASK:
            self.error(node, f"T.{kind}_sync: tilec gives each vote the mask of the lanes that "
                             f"run it (its block's and thread conditions'), so mask must be "
                             f"0xFFFFFFFF (got {mask!r})")
        predicate = self.rvalue(self.arg(nodes, "predicate"), node)
        if isinstance(predicate, Scalar) and predicate.dtype.is_float:
            self.error(node, f"T.{kind}_sync takes an integer or bool predicate, got "
                             f"{predicate.dtype}")
        flag = self.to_bool(predicate, node)
        i1 = mlir_type(T.bool)
        result = nvvm.VoteSyncOp(i1, arith.constant(ir.IntegerType.get_signless(32), -1),
                                 flag.value, getattr(nvvm.VoteSyncKind, kind)).res
        return self.convert(Scalar(result, T.bool), T.int32, node, False)

    def t_any_sync(self, nodes: dict, node: ast.Call) -> Scalar:
        return self.vote("any", nodes, node)

    def t_all_sync(self, nodes: dict, node: ast.Call) -> Scalar:
        return self.vote("all", nodes, node)

    # ----- warp reductions --------------------------------------------------------------
    def warp_reduce(self, kind: str, value: Any, node: ast.AST) -> Scalar:
        """A butterfly over the warp's 32 lanes: every lane ends with the whole result."""
        value = self.rvalue(value, node)
        if not isinstance(value, Scalar):
            self.error(node, f"T.warp_reduce_{kind} reduces a value computed on the device, got "
                             f"{value!r}")
        if kind in ("bitand", "bitor") and not value.dtype.is_integer:
            self.error(node, f"T.warp_reduce_{kind} needs an integer, got {value.dtype}")
        offset = WARP_SIZE // 2
        while offset:
            other = self.shuffle("bfly", value, offset, WARP_SIZE, node)
            if kind in _WARP_COMBINE:
                value = self.binop(_WARP_COMBINE[kind], value, other, node)
            else:
                value = self.min_or_max(kind, value, other, node)
            offset //= 2
        return value

    def t_warp_reduce_sum(self, nodes: dict, node: ast.Call) -> Scalar:
        return self.warp_reduce("sum", self.arg(nodes, "value"), node)

    def t_warp_reduce_max(self, nodes: dict, node: ast.Call) -> Scalar:
        return self.warp_reduce("max", self.arg(nodes, "value"), node)

    def t_warp_reduce_min(self, nodes: dict, node: ast.Call) -> Scalar:
        return self.warp_reduce("min", self.arg(nodes, "value"), node)

    def t_warp_reduce_bitand(self, nodes: dict, node: ast.Call) -> Scalar:
        return self.warp_reduce("bitand", self.arg(nodes, "value"), node)

    def t_warp_reduce_bitor(self, nodes: dict, node: ast.Call) -> Scalar:
        return self.warp_reduce("bitor", self.arg(nodes, "value"), node)
