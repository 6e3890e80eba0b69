"""widen-register-bound-blocks: a block of one warpgroup whose wgmma accumulators and fragments
cannot fit one thread's registers runs on two warpgroups, each holding half the rows.

TileLang's flash_attention/example_mha_fwd_bshd.py at its main() configuration (128 x 128
tiles, d 128, 128 threads) gives one warpgroup the scores S (128 x 128 f32: 128 registers a
thread), P (f16: 64) and the output O (128 x 128 f32: 128): 320 registers where a consumer
warpgroup has 240 (setmaxnreg, `_tma_ring.MAX_REGISTERS`). S and O alone are 256, so no
register allocation of that block avoids spilling: ptxas spilled 1652 bytes a thread and the
H200 ran it at 142 TFLOP/s. Over 256 threads every fragment is half as many registers a thread
(160), infer-mma-layout gives each gemm two consumer warpgroups of 64 rows each, and the block
is the one TileLang's tuned configuration (256 threads) compiles to.

A tile program's meaning does not depend on its block's thread count unless it names threads,
so the count is the compiler's to choose. A `tile.kernel` is widened from 128 to 256 threads
when, on a chip with wgmma,
- its block is one-dimensional, 128 threads (one warpgroup);
- it holds at least one tile.gemm, and every gemm's accumulator has a multiple of 128 rows
  (two warpgroups of 64-row wgmma atoms, infer-mma-layout's split);
- its fragments need more than MAX_REGISTERS 32-bit registers a thread at 128 threads (their
  bytes over the threads: every fragment counted as live, an upper bound of what is);
- nothing in it observes the thread count: its ops are all tile ops with a meaning per tile
  (alloc, copy, fill, gemm, parallel, pipelined, for, reduce, atomic_add, yield), arith /
  math / index / scf / memref element ops, affine.apply and gpu.barrier; no thread index, warp
  intrinsic, T.ws block, mbarrier or user fragment layout (`tile.layout`), which a wider block
  would change.
The rewrite is the kernel's `threads` attribute; every later pass reads the block from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import kernels, scope, walk
from tilec.compiler.passes._scalar import bit_width
from tilec.compiler.passes._scheduling import target_description
from tilec.compiler.passes._tma_ring import MAX_REGISTERS

WARPGROUP_THREADS = 128
WARPGROUP_ROWS = 64  # a wgmma atom's rows: each warpgroup of the widened block takes its own
TILE_OPS = ("tile.alloc", "tile.copy", "tile.fill", "tile.gemm", "tile.parallel",
            "tile.pipelined", "tile.for", "tile.reduce", "tile.atomic_add", "tile.yield")
PER_ELEMENT_DIALECTS = ("arith", "math", "index", "scf")
OTHER_OPS = ("memref.load", "memref.store", "memref.dim", "affine.apply", "gpu.barrier")
USER_LAYOUT_ATTR = "tile.layout"


def _is_thread_count_free(op: ir.Operation) -> bool:
    """Whether `op` means the same in a block of any thread count."""
    if USER_LAYOUT_ATTR in op.attributes:
        return False
    return op.name in TILE_OPS or op.name in OTHER_OPS or \
        op.name.split(".")[0] in PER_ELEMENT_DIALECTS


def fragment_registers(kernel: ir.Operation, threads: int) -> int:
    """The 32-bit registers a thread needs for every fragment of `kernel` at `threads`."""
    total = 0
    for op in walk(kernel):
        if op.name == "tile.alloc" and scope(op.result) == "fragment":
            buffer_type = ir.MemRefType(op.result.type)
            bits = math.prod(buffer_type.shape) * bit_width(buffer_type.element_type)
            total += max(1, -(-bits // (32 * threads)))
    return total


def should_widen(kernel: ir.Operation) -> bool:
    """Whether `kernel` runs on two warpgroups instead of one (module docstring)."""
    if list(ir.DenseI64ArrayAttr(kernel.attributes["threads"])) != [WARPGROUP_THREADS]:
        return False
    ops = list(walk(kernel))
    gemms = [op for op in ops if op.name == "tile.gemm"]
    if not gemms or any(
            ir.MemRefType(gemm.operands[2].type).shape[0] % (2 * WARPGROUP_ROWS)
            for gemm in gemms):
        return False
    if not all(_is_thread_count_free(op) for op in ops):
        return False
    return fragment_registers(kernel, WARPGROUP_THREADS) > MAX_REGISTERS


@register
@dataclass
class WidenRegisterBoundBlocks(TilePass):
    """Run a one-warpgroup block whose fragments overflow its registers on two warpgroups."""

    name = "widen-register-bound-blocks"
    summary = "blocks of 128 threads whose fragments exceed the registers -> 256 threads (sm_90a)"
    arch: str = ""

    def run(self, module: ir.Module) -> None:
        if not target_description(module, self.arch, self.name).has_wgmma:
            return
        for kernel in kernels(module):
            if should_widen(kernel):
                kernel.attributes["threads"] = ir.DenseI64ArrayAttr.get(
                    [2 * WARPGROUP_THREADS])
