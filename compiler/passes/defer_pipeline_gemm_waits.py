"""defer-pipeline-gemm-waits: a cp.async pipeline loop's wgmma groups stay in flight until used.

lower-tile-to-gpu waits for a wgmma gemm's group (wait_group 0) right after committing it, so
in a loop of several gemms each one drains the tensor cores before the next statement runs.
FlashAttention's backward (examples/attention/flash_bwd.py) issues five per iteration, with
element-wise work between them that touches only some of their results: the exp2 of P^T
needs K Q^T but not V dO^T, dS^T needs V dO^T but not dV += P^T dO, and dK += dS^T Q is
independent of the dQ^T gemm issued after it. This pass marks such gemms `tile.deferred_wait`
(the mark rotate-attention-loop puts on a TMA ring's gemms, compiler/passes/_wgmma_waits.py):
the lowering then leaves the group pending, waits before the first later statement touching
its accumulator or register A operand with wait_group N (N: the groups committed after it,
which may stay in flight), and waits for every pending group at the end of the body, before
the pipeline's next iteration refills the slots the gemms read.

A gemm is marked when it is a statement of a `tile.pipelined` loop with a cp.async
`tile.pipeline` (not a TMA ring: those have their own schedule), it is a tile.wgmma gemm, the
statement after it does not touch its registers (else it would wait at once: nothing gained),
its registers are not aliased (a view of them would escape the lowering's check), and no
later statement of the body uses its shared operands other than as another gemm's A or B
(a write there would land under the wgmma reading it).

An opt-in: the pass marks gemms only in a module carrying the unit attribute
`tile.defer_pipeline_gemm_waits` (the CUDA target sets it from
TILEC_DEFER_PIPELINE_GEMM_WAITS=1) until measured on a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import as_operation, kernels, scope, touches, walk
from tilec.compiler.passes._scheduling import DEFER_PIPELINE_GEMM_WAITS_ATTR, PIPELINE_ATTR
from tilec.compiler.passes._tma_ring import RING_ATTR
from tilec.compiler.passes._wgmma import WGMMA_ATTR
from tilec.compiler.passes._wgmma_waits import DEFERRED_WAIT_ATTR


def _cp_async_pipeline(loop: ir.Operation) -> bool:
    """Whether pipeline-async-copies made `loop` a cp.async pipeline (not a TMA ring)."""
    if PIPELINE_ATTR not in loop.attributes or RING_ATTR in loop.attributes:
        return False
    mechanism = ir.DictAttr(loop.attributes[PIPELINE_ATTR])["mechanism"]
    return ir.StringAttr(mechanism).value == "cp.async"


def _registers(gemm: ir.Operation) -> list[ir.Value]:
    """The buffers the gemm's group in flight holds: its accumulator and a fragment A."""
    a = gemm.operands[0]
    return [gemm.operands[2]] + [a] * (scope(a) == "fragment")


def _aliased(value: ir.Value) -> bool:
    """Whether an op makes another memref of `value` (a view or reshape of the fragment)."""
    return any(isinstance(result.type, ir.MemRefType)
               for use in value.uses for result in as_operation(use.owner).results)


def _reads_only_as_operand(op: ir.Operation, shared: list[ir.Value]) -> bool:
    """Whether `op` uses the `shared` tiles at most as a gemm's A or B (which only read)."""
    if op.name == "tile.gemm":
        return not any(op.operands[2] == value for value in shared)
    return not touches(op, shared)


def deferrable(statements: list[ir.Operation], at: int) -> bool:
    """Whether the gemm statements[at] may leave its group in flight (module docstring)."""
    gemm = statements[at]
    if gemm.name != "tile.gemm" or WGMMA_ATTR not in gemm.attributes:
        return False
    registers = _registers(gemm)
    later = [op for op in statements[at + 1:] if op.name != "tile.yield"]
    if not later or touches(later[0], registers) or any(map(_aliased, registers)):
        return False
    shared = [v for v in gemm.operands[:2] if scope(v) == "shared"]
    return all(_reads_only_as_operand(op, shared) for op in later)


@register
@dataclass
class DeferPipelineGemmWaits(TilePass):
    """Leave a cp.async pipeline loop's wgmma groups in flight until a statement uses them."""

    name = "defer-pipeline-gemm-waits"
    summary = "cp.async tile.pipelined loops' wgmma gemms -> tile.deferred_wait (opt-in)"

    def run(self, module: ir.Module) -> None:
        if DEFER_PIPELINE_GEMM_WAITS_ATTR not in module.operation.attributes:
            return
        unit = ir.UnitAttr.get(module.context)
        for kernel in kernels(module):
            for loop in (op for op in walk(kernel) if op.name == "tile.pipelined"):
                if not _cp_async_pipeline(loop):
                    continue
                statements = [as_operation(op) for op in loop.regions[0].blocks[0].operations]
                for at, op in enumerate(statements):
                    if deferrable(statements, at):
                        op.attributes[DEFERRED_WAIT_ATTR] = unit
