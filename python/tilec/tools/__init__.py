"""Tools for kernel authors, as TileLang's `tilelang.tools`.

- the lowering trace: `Trace`, `trace_specialization`, `ir_diff`, `unified_ir_diff`
  (tilec.tools.trace; `tilec trace FILE.py`, `kernel.trace()`, `tilec diff A.mlir B.mlir`);
- `plot_layout(layout, path)`: a fragment's thread/register map, a shared buffer's swizzle and
  its bank conflicts (tilec.tools.layout_plot, drawn with matplotlib);
- `Analyzer.analysis(kernel_ir, device)`: FLOPs, global bytes and the roofline time of a
  kernel from its tile IR (tilec.tools.analyzer).
"""

from tilec.tools.analyzer import AnalysisResult, Analyzer
from tilec.tools.layout_plot import plot_layout
from tilec.tools.trace import Trace, ir_diff, trace_specialization, unified_ir_diff

__all__ = ["AnalysisResult", "Analyzer", "Trace", "ir_diff", "plot_layout",
           "trace_specialization", "unified_ir_diff"]
