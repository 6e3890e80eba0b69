"""Tools for kernel authors: the lowering trace (`trace`), layout pictures and analysis.

`Trace`, `trace_specialization`, `ir_diff` and `unified_ir_diff` come from tilec.tools.trace
(`tilec trace FILE.py`, `kernel.trace()`, `tilec diff A.mlir B.mlir`).
"""

from tilec.tools.trace import Trace, ir_diff, trace_specialization, unified_ir_diff

__all__ = ["Trace", "ir_diff", "trace_specialization", "unified_ir_diff"]
