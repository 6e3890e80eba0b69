"""The T intrinsics of Hopper's producer/consumer kernels: mbarriers, bulk (TMA) copies into
shared memory, warp-specialized blocks and register reallocation (a mixin of the KernelBuilder).

They follow TileLang: `T.alloc_barrier(counts)` makes mbarriers in shared memory;
`T.mbarrier_arrive` (alias `T.barrier_arrive`) arrives from every thread running it,
`T.mbarrier_wait_parity` (alias `T.barrier_wait`) waits for the phase of a parity,
`T.mbarrier_expect_tx` / `T.mbarrier_arrive_expect_tx` raise the bytes a phase waits for from
one thread; `T.tma_copy(src, dst, barrier=b)` is issued by one thread and completes on `b`;
`with T.ws(g, ...)` runs its body on warpgroups g (threads 128g to 128g + 127) only. A barrier
is named as `bars[i]`, or `bars` for its first. They become tile ops (tile.alloc_barrier,
tile.mbarrier_*, tile.tma_copy, tile.warpgroups); the named-barrier arrive and setmaxnreg are
nvvm ops, as T.sync_threads' named barrier is.

`T.ptx_cp_async(T.access_ptr(S[i, j], "w", n), T.access_ptr(A[k, l], "r", n), n)` is one
thread's own asynchronous copy of n elements (4, 8 or 16 bytes) along the last dimension: a
tile.copy of that 1 x n box marked `tile.cp_async` (each thread running it copies its box; the
CPU target copies at once). `T.cp_async_barrier_noinc(bars[i])` is a tile.mbarrier_arrive
marked `tile.cp_async_noinc`: the arrival comes when the thread's earlier cp.async have landed.
TileLang's other spelling of T.ws, an `if tx < 128: ... elif tx >= 128 and tx < 256: ... else:`
chain in the kernel's body whose branches (two or more) are disjoint ranges of whole
warpgroups of a 1-d block, becomes one tile.warpgroups per branch (TileLang lays each branch
out over its thread range); any other `if` on the thread index stays an `if`.
`T.sync_grid()` is an nvvm.barrier marked `tile.sync_grid`: every thread of the grid waits
there (compiler/passes/_user_sync.py lowers it; the CPU target refuses it).

A loop holding any of them (or a T.ptx_cp_async) is the user's own schedule: a T.Pipelined one
becomes a plain sequential loop (tile.for), which multi-buffering would otherwise change under
the barriers.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from mlir import ir
from mlir.dialects import nvvm

import tilec.dialect as tile
import tilec.language as T
from tilec.compiler.passes._user_sync import (
    CP_ASYNC_ATTR,
    CP_ASYNC_NOINC_ATTR,
    ELSE_BRANCH_ATTR,
    SYNC_GRID_ATTR,
)
from tilec.frontend.values import Buffer, Scalar, mlir_type

BARRIER_SCOPE = "barrier"
MAX_ARRIVE_COUNT = (1 << 20) - 1
CP_ASYNC_BYTES = (4, 8, 16)  # the sizes one cp.async moves
WARPGROUP_THREADS = 128
# the ops that make a loop the user's schedule
USER_SYNC_OPS = ("tile.alloc_barrier", "tile.mbarrier_arrive", "tile.mbarrier_expect_tx",
                 "tile.mbarrier_wait_parity", "tile.tma_copy", "tile.warpgroups",
                 "nvvm.barrier.arrive")


@dataclass
class WarpgroupSpec:
    """What `T.ws(0, 1)` evaluates to, entered by `with`."""

    groups: list[int]


_MIRRORED = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _callee_name(func: ast.expr) -> str | None:
    """`access_ptr` for `T.access_ptr` or a bare `access_ptr`."""
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _walk(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from _walk(inner.operation)


class BarrierOps:
    """t_* handlers of the mbarrier, TMA and warp-specialization intrinsics."""

    # ----- mbarriers ----------------------------------------------------------------------
    def t_alloc_barrier(self, nodes: dict, node: ast.Call) -> Buffer:
        self.require_kernel(node, "T.alloc_barrier")
        counts = self.const_arg(nodes, "arrive_count", node)
        counts = [counts] if isinstance(counts, int) else counts
        if (not isinstance(counts, (list, tuple)) or not counts
                or not all(isinstance(c, int) and not isinstance(c, bool) for c in counts)):
            self.error(node, f"T.alloc_barrier takes an arrive count or a list of them (ints), "
                             f"got {counts!r}")
        for count in counts:
            if not 1 <= count <= MAX_ARRIVE_COUNT:
                self.error(node, f"an arrive count is 1 to {MAX_ARRIVE_COUNT}, got {count}")
        if self.insertion_block_owner() != self.kernel_op.operation:
            self.error(node, "T.alloc_barrier stands directly in the T.Kernel block (barriers "
                             "are initialized once per block), not in a loop, branch or T.ws")
        space = ir.StringAttr.get(BARRIER_SCOPE)
        value = tile.alloc_barrier(
            ir.MemRefType.get([len(counts)], mlir_type(T.uint64), memory_space=space),
            list(counts))
        return Buffer(value, "", (len(counts),), T.uint64, BARRIER_SCOPE)

    def insertion_block_owner(self) -> ir.Operation:
        return ir.InsertionPoint.current.block.owner

    def outside_parallel(self, node: ast.AST, what: str,
                         why: str = "the barrier counts threads") -> None:
        """Barriers and TMA copies act per thread, not per point of a T.Parallel loop."""
        owner = self.insertion_block_owner()
        while owner is not None and owner != self.kernel_op.operation:
            if owner.name == "tile.parallel":
                self.error(node, f"{what} cannot stand in T.Parallel (its points are spread "
                                 f"over the threads; {why})")
            owner = owner.parent

    def barrier_ref(self, nodes: dict, key: str, node: ast.Call) -> tuple[Buffer, ir.Value]:
        """`bars[i]` or `bars` (its first): the barrier buffer and the index of one barrier."""
        self.require_kernel(node, "a barrier")
        self.outside_parallel(node, "a barrier operation")
        expr = nodes.get(key)
        if expr is None:
            self.error(node, f"argument '{key}' (a barrier from T.alloc_barrier) is missing")
        if isinstance(expr, ast.Subscript):
            buffer = self.eval(expr.value)
            position: Any = self.rvalue(self.eval(expr.slice), expr.slice)
        else:
            buffer, position = self.eval(expr), 0
        if not isinstance(buffer, Buffer) or buffer.scope != BARRIER_SCOPE:
            self.error(node, f"argument '{key}' must be a barrier of T.alloc_barrier (bars[i]), "
                             f"got {buffer!r}")
        if isinstance(position, int) and not 0 <= position < buffer.dims[0]:
            self.error(node, f"barrier index {position} is outside the {buffer.dims[0]} "
                             "barriers allocated")
        return buffer, self.index_value(position, expr)

    def t_mbarrier_arrive(self, nodes: dict, node: ast.Call) -> None:
        buffer, position = self.barrier_ref(nodes, "mbarrier", node)
        if self.arg(nodes, "cta_id") is not None:
            self.error(node, "T.mbarrier_arrive(cta_id=...) arrives on a cluster barrier; tilec "
                             "launches no thread-block clusters")
        tile.mbarrier_arrive(buffer.value, position)

    def t_barrier_arrive(self, nodes: dict, node: ast.Call) -> None:
        self.t_mbarrier_arrive(nodes, node)

    def t_mbarrier_wait_parity(self, nodes: dict, node: ast.Call) -> None:
        buffer, position = self.barrier_ref(nodes, "mbarrier", node)
        parity = self.i32_arg(nodes, "parity", node)
        tile.mbarrier_wait_parity(buffer.value, position, parity)

    def t_barrier_wait(self, nodes: dict, node: ast.Call) -> None:
        self.t_mbarrier_wait_parity(nodes, node)

    def t_mbarrier_expect_tx(self, nodes: dict, node: ast.Call) -> None:
        buffer, position = self.barrier_ref(nodes, "mbarrier", node)
        tile.mbarrier_expect_tx(buffer.value, position, self.i32_arg(nodes, "tx", node))

    def t_mbarrier_arrive_expect_tx(self, nodes: dict, node: ast.Call) -> None:
        buffer, position = self.barrier_ref(nodes, "mbarrier", node)
        tile.mbarrier_expect_tx(buffer.value, position, self.i32_arg(nodes, "tx", node),
                                arrive=True)

    def i32_arg(self, nodes: dict, key: str, node: ast.Call) -> ir.Value:
        value = self.rvalue(self.arg(nodes, key), node)
        if value is None:
            self.error(node, f"argument '{key}' is missing")
        if isinstance(value, bool) or not isinstance(value, (int, Scalar)) or (
                isinstance(value, Scalar) and not value.dtype.is_integer):
            self.error(node, f"argument '{key}' must be an integer, got {value!r}")
        return self.materialize(value, T.int32, node).value

    # ----- per-thread cp.async --------------------------------------------------------------
    def t_ptx_cp_async(self, nodes: dict, node: ast.Call) -> None:
        self.require_kernel(node, "T.ptx_cp_async")
        self.outside_parallel(node, "T.ptx_cp_async", "it is one thread's own copy")
        if self.arg(nodes, "predicate") is not None:
            self.error(node, "T.ptx_cp_async(predicate=...) is not supported by tilec: put the "
                             "call under an `if`")
        dst, dst_at = self.cp_async_element(nodes["dst_access_ptr"], "dst_access_ptr", node)
        src, src_at = self.cp_async_element(nodes["src_access_ptr"], "src_access_ptr", node)
        if src.scope != "global" or dst.scope != "shared":
            self.error(node, f"T.ptx_cp_async copies a global tensor's elements into a shared "
                             f"buffer, not {src.scope} '{src.name}' into {dst.scope} "
                             f"'{dst.name}'")
        if src.dtype != dst.dtype:
            self.error(node, f"T.ptx_cp_async does not convert: {src.dtype} into {dst.dtype}")
        count = self.const_arg(nodes, "num_elems", node)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1 or (
                count * src.dtype.bits) % 8 or count * src.dtype.bits // 8 not in CP_ASYNC_BYTES:
            self.error(node, f"T.ptx_cp_async moves 4, 8 or 16 bytes: num_elems={count!r} "
                             f"elements of {src.dtype}")
        for buffer, at in ((src, src_at), (dst, dst_at)):
            last = at[-1]
            if isinstance(last, int) and isinstance(buffer.dims[-1], int) and \
                    last + count > buffer.dims[-1]:
                self.error(node, f"T.ptx_cp_async: {count} elements from column {last} leave "
                                 f"'{buffer.name}' (its last dimension is {buffer.dims[-1]})")
        op = tile.copy(src.value, [self.index_value(i) for i in src_at],
                       [1] * (src.rank - 1) + [count],
                       dst.value, [self.index_value(i) for i in dst_at],
                       [1] * (dst.rank - 1) + [count])
        op.operation.attributes[CP_ASYNC_ATTR] = ir.UnitAttr.get()

    def cp_async_element(self, expr: ast.expr, key: str, node: ast.Call
                         ) -> tuple[Buffer, list[Any]]:
        """The buffer and element an operand of T.ptx_cp_async names: `T.access_ptr(buf[i, j],
        mode, ...)` (TileLang's form) or `buf[i, j]`."""
        base = expr
        if isinstance(expr, ast.Call) and _callee_name(expr.func) == "access_ptr":
            offsets = [k for k in expr.keywords if k.arg == "offset"]
            if not expr.args or offsets:
                self.error(node, f"T.ptx_cp_async: {key} is T.access_ptr(buf[i, j], mode, n) "
                                 "of one element (no offset=)")
            base = expr.args[0]
        if isinstance(base, ast.Subscript):
            buffer = self.eval(base.value)
            if isinstance(buffer, Buffer):
                indices = self.element_indices(buffer, base)
                self.check_index_bounds(buffer, indices, node)
                return buffer, indices
        else:
            buffer = self.eval(base)
            if isinstance(buffer, Buffer):
                return buffer, [0] * buffer.rank
        self.error(node, f"T.ptx_cp_async: {key} must name an element of a buffer "
                         f"(T.access_ptr(buf[i, j], ...)), got {ast.unparse(expr)}")

    def t_cp_async_barrier_noinc(self, nodes: dict, node: ast.Call) -> None:
        buffer, position = self.barrier_ref(nodes, "barrier", node)
        op = tile.mbarrier_arrive(buffer.value, position)
        op.operation.attributes[CP_ASYNC_NOINC_ATTR] = ir.UnitAttr.get()

    # ----- named barriers, fences, registers ------------------------------------------------
    def t_named_barrier_arrive(self, nodes: dict, node: ast.Call) -> None:
        """bar.arrive: the threads running it arrive at named barrier `barrier_id` of
        `thread_count` threads without waiting (T.sync_threads(id, count) waits there)."""
        self.require_kernel(node, "T.named_barrier_arrive")
        barrier_id = self.rvalue(self.arg(nodes, "barrier_id"), node)
        count = self.rvalue(self.arg(nodes, "thread_count"), node)
        if isinstance(barrier_id, int) and not 0 <= barrier_id < 16:
            self.error(node, f"a named barrier id is 0 to 15, got {barrier_id}")
        if isinstance(count, int) and (count <= 0 or count % 32):
            self.error(node, f"a named barrier's thread count is a positive multiple of 32, "
                             f"got {count}")
        nvvm.BarrierArriveOp(self.materialize(count, T.int32, node).value,
                             barrierId=self.materialize(barrier_id, T.int32, node).value)

    def t_sync_grid(self, nodes: dict, node: ast.Call) -> None:
        """A grid-wide barrier: an nvvm.barrier (the block's) marked tile.sync_grid."""
        self.require_kernel(node, "T.sync_grid")
        self.outside_parallel(node, "T.sync_grid", "every thread of the grid waits there")
        op = nvvm.BarrierOp(None)
        op.operation.attributes[SYNC_GRID_ATTR] = ir.UnitAttr.get()

    def t_fence_proxy_async(self, nodes: dict, node: ast.Call) -> None:
        self.require_kernel(node, "T.fence_proxy_async")
        tile.fence_proxy_async()

    def t_set_max_nreg(self, nodes: dict, node: ast.Call) -> None:
        """setmaxnreg.inc/dec (sm_90a): the warpgroup's register budget per thread."""
        self.require_kernel(node, "T.set_max_nreg")
        count = self.const_arg(nodes, "reg_count", node)
        increase = self.const_arg(nodes, "is_inc", node)
        if not isinstance(count, int) or not 24 <= count <= 256 or count % 8:
            self.error(node, f"a register count is a multiple of 8 from 24 to 256, got {count!r}")
        if increase not in (0, 1, True, False):
            self.error(node, f"is_inc is 1 (increase) or 0 (decrease), got {increase!r}")
        actions = nvvm.SetMaxRegisterAction
        action = actions.increase if increase else actions.decrease
        nvvm.SetMaxRegisterOp(count, action)

    def t_inc_max_nreg(self, nodes: dict, node: ast.Call) -> None:
        self.t_set_max_nreg({**nodes, "is_inc": ast.Constant(1)}, node)

    def t_dec_max_nreg(self, nodes: dict, node: ast.Call) -> None:
        self.t_set_max_nreg({**nodes, "is_inc": ast.Constant(0)}, node)

    def t_annotate_producer_reg_dealloc(self, nodes: dict, node: ast.Call) -> None:
        self.annotated_registers(nodes, node, 24, 0)

    def t_annotate_consumer_reg_alloc(self, nodes: dict, node: ast.Call) -> None:
        self.annotated_registers(nodes, node, 240, 1)

    def annotated_registers(self, nodes: dict, node: ast.Call, default: int,
                            increase: int) -> None:
        """TileLang's register annotations of a producer / consumer branch: setmaxnreg."""
        def placed(value: int) -> ast.expr:
            return ast.copy_location(ast.Constant(value), node)

        self.t_set_max_nreg({"reg_count": nodes.get("reg_count", placed(default)),
                             "is_inc": placed(increase)}, node)

    def t_ptx_commit_group(self, nodes: dict, node: ast.Call) -> None:
        self.require_kernel(node, "T.ptx_commit_group")
        with self.at(node):
            nvvm.cp_async_commit_group()

    def t_ptx_wait_group(self, nodes: dict, node: ast.Call) -> None:
        self.require_kernel(node, "T.ptx_wait_group")
        count = self.const_arg(nodes, "num", node)
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= 7:
            self.error(node, f"T.ptx_wait_group takes the number of groups left in flight, "
                             f"0 to 7, known when the kernel is built; got {count!r}")
        with self.at(node):
            nvvm.cp_async_wait_group(count)

    def t_no_set_max_nreg(self, nodes: dict, node: ast.Call) -> None:
        """TileLang's opt-out of its automatic register reallocation, which tilec never does."""
        self.require_kernel(node, "T.no_set_max_nreg")

    # ----- TMA ------------------------------------------------------------------------------
    def t_tma_copy(self, nodes: dict, node: ast.Call) -> None:
        self.require_kernel(node, "T.tma_copy")
        for option in ("cluster_mask", "leader_scope_threads"):
            if self.arg(nodes, option) is not None:
                self.error(node, f"T.tma_copy({option}=...) is not supported by tilec")
        src, dst = self.paired_boxes(self.region(nodes["src"]), self.region(nodes["dst"]),
                                     "T.tma_copy", node)
        if src.buffer.scope != "global" or dst.buffer.scope != "shared":
            if src.buffer.scope == "shared" and dst.buffer.scope == "global":
                self.error(node, "T.tma_copy from shared to global (a TMA store) is not "
                                 "supported by tilec: use T.copy")
            self.error(node, f"T.tma_copy loads a global box into shared memory, not "
                             f"{src.buffer.scope} into {dst.buffer.scope}")
        if src.buffer.dtype != dst.buffer.dtype:
            self.error(node, f"T.tma_copy does not convert: {src.buffer.dtype} into "
                             f"{dst.buffer.dtype}")
        if "barrier" not in nodes or self.arg(nodes, "barrier") is None:
            self.error(node, "T.tma_copy into shared memory needs barrier= (a barrier of "
                             "T.alloc_barrier that the data's arrival completes)")
        buffer, position = self.barrier_ref(nodes, "barrier", node)
        tile.tma_copy(src.buffer.value, [self.index_value(o) for o in src.offsets], src.extents,
                      dst.buffer.value, [self.index_value(o) for o in dst.offsets], dst.extents,
                      buffer.value, position)

    # ----- warp specialization --------------------------------------------------------------
    def t_ws(self, nodes: dict, node: ast.Call) -> WarpgroupSpec:
        self.require_kernel(node, "T.ws")
        groups = self.const_arg(nodes, "warp_group_idx", node)
        groups = list(groups) if isinstance(groups, (list, tuple)) else [groups]
        if not groups or not all(isinstance(g, int) and not isinstance(g, bool) for g in groups):
            self.error(node, f"T.ws takes warpgroup indices (ints), got {groups!r}")
        threads = 1
        for extent in self.block_size():
            threads *= extent
        for group in groups:
            if not 0 <= group or (group + 1) * WARPGROUP_THREADS > threads:
                self.error(node, f"warpgroup {group} is not in a block of {threads} threads "
                                 f"(warpgroup g is threads {WARPGROUP_THREADS}g to "
                                 f"{WARPGROUP_THREADS}g + {WARPGROUP_THREADS - 1})")
        if len(set(groups)) != len(groups):
            self.error(node, f"T.ws lists a warpgroup twice: {groups}")
        return WarpgroupSpec(groups)

    def warpgroups_block(self, spec: WarpgroupSpec, node: ast.With) -> None:
        """`with T.ws(...)`: a tile.warpgroups whose body only those warpgroups run."""
        if node.items[0].optional_vars is not None:
            self.error(node, "`with T.ws(...)` binds no names")
        self.outside_parallel(node, "a T.ws block")
        owner = self.insertion_block_owner()
        while owner is not None and owner != self.kernel_op.operation:
            if owner.name == "tile.warpgroups":
                self.error(node, "T.ws blocks cannot be nested")
            owner = owner.parent
        op = tile.WarpgroupsOp(spec.groups)
        with ir.InsertionPoint(op.body.blocks.append()), self.scope():
            self.body(node.body)
            tile.yield_()

    # ----- thread-range branches as warpgroup blocks ------------------------------------------
    def warpgroup_branches(self, node: ast.If) -> list[tuple[list[int], list[ast.stmt]]] | None:
        """TileLang's warp-specialized form, `if tx < 128: ... elif tx >= 128 and tx < 256:
        ... elif tx >= 256: ...` standing in the kernel's body: each branch of such a chain
        (two or more, each a range of whole warpgroups of a 1-d block) as the warpgroups it
        runs on, so its fragments and T.Parallel loops are laid out over those threads, as
        TileLang lays them out over the branch's thread range. None for any other `if`."""
        if not self.in_kernel or self.insertion_block_owner() != self.kernel_op.operation:
            return None
        size = self.block_size()
        threads = size[0]
        if size[1] != 1 or size[2] != 1 or threads % WARPGROUP_THREADS or \
                threads <= WARPGROUP_THREADS:
            return None
        branches: list[tuple[list[int], list[ast.stmt]]] = []
        taken: set[int] = set()
        current: ast.stmt | None = node
        while current is not None:
            if isinstance(current, ast.If):
                span = self.thread_span(current.test, threads)
                body, rest = current.body, current.orelse
                current = rest[0] if len(rest) == 1 and isinstance(rest[0], ast.If) else None
                tail = rest if current is None and rest else None
            else:
                break
            if span is None:
                return None
            groups = self.whole_warpgroups(span)
            if groups is None or taken & set(groups):
                return None
            taken |= set(groups)
            branches.append((groups, body))
            if tail is not None:
                remaining = sorted(set(range(threads // WARPGROUP_THREADS)) - taken)
                if not remaining or remaining != list(range(remaining[0], remaining[-1] + 1)):
                    return None
                branches.append((remaining, tail))
        return branches if len(branches) >= 2 else None

    def whole_warpgroups(self, span: tuple[int, int]) -> list[int] | None:
        low, high = span
        if low >= high or low % WARPGROUP_THREADS or high % WARPGROUP_THREADS:
            return None
        return list(range(low // WARPGROUP_THREADS, high // WARPGROUP_THREADS))

    def thread_span(self, test: ast.expr, threads: int) -> tuple[int, int] | None:
        """[low, high) of the thread indices `test` holds for, when it compares the 1-d thread
        index with constants (`tx < 128`, `tx >= 128 and tx < 256`, `128 <= tx < 256`)."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            low, high = 0, threads
            for value in test.values:
                span = self.thread_span(value, threads)
                if span is None:
                    return None
                low, high = max(low, span[0]), min(high, span[1])
            return low, high
        if not isinstance(test, ast.Compare):
            return None
        low, high = 0, threads
        operands = [test.left, *test.comparators]
        for left, op, right in zip(operands, test.ops, operands[1:], strict=False):
            left_value, right_value = self.eval(left), self.eval(right)
            if self.is_thread_x(left_value) and _is_int(right_value):
                bound, op_type = right_value, type(op)
            elif self.is_thread_x(right_value) and _is_int(left_value):
                bound, op_type = left_value, _MIRRORED.get(type(op))
            else:
                return None
            if op_type is ast.Lt:
                high = min(high, bound)
            elif op_type is ast.LtE:
                high = min(high, bound + 1)
            elif op_type is ast.Gt:
                low = max(low, bound + 1)
            elif op_type is ast.GtE:
                low = max(low, bound)
            else:
                return None
        return low, high

    @staticmethod
    def is_thread_x(value: Any) -> bool:
        """Whether `value` is the thread index along x (gpu.thread_id x) itself."""
        if not isinstance(value, Scalar):
            return False
        owner = value.value.owner
        op = getattr(owner, "operation", owner)
        return (isinstance(op, ir.Operation) and op.name == "gpu.thread_id"
                and "x" in str(op.attributes["dimension"]))

    def warpgroup_chain(self, branches: list[tuple[list[int], list[ast.stmt]]]) -> None:
        """The branches of warpgroup_branches, each a tile.warpgroups block; those after the
        first are marked as its else branches (a thread runs one of them)."""
        for number, (groups, body) in enumerate(branches):
            op = tile.WarpgroupsOp(groups)
            if number:
                op.operation.attributes[ELSE_BRANCH_ATTR] = ir.UnitAttr.get()
            with ir.InsertionPoint(op.body.blocks.append()), self.scope():
                self.body(body)
                tile.yield_()

    def serial_if_user_synchronized(self, loop: ir.OpView) -> None:
        """A T.Pipelined loop holding barriers, TMA copies or T.ws becomes a tile.for."""
        if not any(inner.name in USER_SYNC_OPS or CP_ASYNC_ATTR in inner.attributes
                   for inner in _walk(loop.operation)):
            return
        with loop.location, ir.InsertionPoint(loop):
            serial = tile.ForOp(loop.lower, loop.upper, loop.step)
        old = loop.body.blocks[0]
        block = serial.body.blocks.append(ir.IndexType.get(),
                                          arg_locs=[old.arguments[0].location])
        old.arguments[0].replace_all_uses_with(block.arguments[0])
        with loop.location, ir.InsertionPoint(block):
            end = tile.YieldOp()
        for inner in [op.operation for op in old.operations]:
            if inner.name == "tile.yield":
                inner.erase()
            else:
                inner.move_before(end)
        loop.operation.erase()
