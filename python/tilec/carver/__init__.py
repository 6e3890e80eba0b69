"""tilec.carver: TileLang's carver on tilec's own tile knowledge.

`arch.CUDA("cuda")` / `arch.auto_infer_current_arch()` describe the device (SMs, shared memory,
registers, warp size); `MatmulTemplate(M, N, K, in_dtype, out_dtype, accum_dtype)
.with_arch(arch).recommend_hints(topk)` gives the GEMM tiles tilec's tensor-core kernels take,
ranked by a documented cost model (tilec.carver.template).
"""

from tilec.carver import arch
from tilec.carver.arch import CDNA, CPU, CUDA, RDNA, auto_infer_current_arch, get_arch
from tilec.carver.roller import Hint
from tilec.carver.template import MatmulTemplate

__all__ = ["CDNA", "CPU", "CUDA", "RDNA", "Hint", "MatmulTemplate", "arch",
           "auto_infer_current_arch", "get_arch"]
