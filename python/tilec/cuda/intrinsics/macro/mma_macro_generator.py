"""TileLang's MMA emitters (`mma_macro_generator`): objects whose methods write, into a kernel,
each warp's ldmatrix loads, mma.sync instructions and stores over per-thread local buffers,
through TVM's PTX intrinsics and index maps.

tilec does not have them: its kernels hold no per-thread PTX intrinsics. It lowers `T.gemm` on
shared and fragment buffers to the same instructions (ldmatrix + mma.sync on sm_80, wgmma on
sm_90a), picking the warp tiling and register layouts itself. Making an emitter is an error at
the caller's line, before any kernel is built on it.
"""

from __future__ import annotations

from typing import Any

from tilec.errors import at_caller


class _HandWrittenMma:
    def __init__(self, *args: Any, **kwargs: Any):
        raise at_caller(f"{type(self).__name__} (per-warp ldmatrix / mma.sync code written by "
                        "hand) is not implemented by tilec: write the tile product as "
                        "T.gemm(A_shared, B_shared, C_local) on a T.alloc_fragment accumulator, "
                        "which tilec lowers to ldmatrix + mma.sync (sm_80) or wgmma (sm_90a)")


class TensorCoreIntrinEmitter(_HandWrittenMma):
    """Raises (see the module docstring)."""


class TensorCoreIntrinEmitterWithLadderTransform(_HandWrittenMma):
    """Raises (see the module docstring)."""


class INT4TensorCoreIntrinEmitter(_HandWrittenMma):
    """Raises (see the module docstring)."""


class INT4TensorCoreIntrinEmitterWithLadderTransform(_HandWrittenMma):
    """Raises (see the module docstring)."""


__all__ = ["INT4TensorCoreIntrinEmitter", "INT4TensorCoreIntrinEmitterWithLadderTransform",
           "TensorCoreIntrinEmitter", "TensorCoreIntrinEmitterWithLadderTransform"]
