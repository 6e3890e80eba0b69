"""TileLang's MMA emitters (`mma_macro_generator`): an object made before the kernel whose
methods, called in the kernel, load each warp's A and B pieces (`ldmatrix_a` / `ldmatrix_b`),
multiply them into its accumulator pieces (`mma`) and store those (`stmatrix`), over per-thread
`T.alloc_local` buffers sized as the mma.sync fragments a thread holds.

tilec keeps what those warp programs compute, not their per-thread registers: the block's
warps together load the tile's whole K step, multiply it and store the whole block tile. The
kernel builder (`frontend/mma_emitter_ops.py`) makes each emitter operand the block-level
buffer it stands for and the methods a copy, a T.gemm and a T.Parallel store, which every
target runs (the CPU's numerics included) and the CUDA target puts on tensor cores as it does
T.gemm. Those buffers are reachable only through the emitter (and T.clear / T.fill): an element
of one is a thread's register in TileLang, which tilec does not expose. This class holds the
geometry (TileLang's: k_dim = 256 bits of the operand type, at most `chunk`; 16-row A pieces,
16- or 8-column B pieces).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from tilec.errors import at_caller

WARP_SIZE = 32
M_DIM = 16


def _kernel_method(fn: Callable) -> Callable:
    """A method the kernel builder lowers (`t_mma_emitter_<name>` handlers); called outside a
    kernel it says so."""
    name = fn.__name__

    def outside_a_kernel(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise at_caller(f"{type(self).__name__}.{name}() writes kernel code: call it inside "
                        "`with T.Kernel(...)`")

    outside_a_kernel.__name__ = name
    outside_a_kernel.__doc__ = fn.__doc__
    outside_a_kernel.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    outside_a_kernel.__tilec_op__ = f"mma_emitter_{name}"  # type: ignore[attr-defined]
    return outside_a_kernel


class TensorCoreIntrinEmitter:
    """mma.sync's warp tiling of a block tile, as TileLang's emitter computes it."""

    def __init__(self, a_dtype: Any = "float16", b_dtype: Any = "float16",
                 accum_dtype: Any = "float16", a_transposed: bool = False,
                 b_transposed: bool = False, block_row_warps: int = 2,
                 block_col_warps: int = 2, warp_row_tiles: int = 8, warp_col_tiles: int = 8,
                 chunk: int = 16, reduce_k: int = 1, num_elems_per_byte: int = 1,
                 is_m_first: bool | None = False, thread_var: Any = None):
        import tilec.language as T

        name = type(self).__name__
        try:
            self.a_dtype, self.b_dtype = T.dtype(a_dtype), T.dtype(b_dtype)
            self.accum_dtype = T.dtype(accum_dtype)
        except Exception as error:  # an unknown dtype name
            raise at_caller(f"{name}: {error}") from None
        if self.a_dtype.bits not in (8, 16, 32) or self.b_dtype.bits != self.a_dtype.bits:
            raise at_caller(f"{name}: A and B are 8-, 16- or 32-bit types of one width in "
                            f"tilec, got {self.a_dtype} and {self.b_dtype}")
        if reduce_k != 1 or num_elems_per_byte != 1 or thread_var is not None:
            raise at_caller(f"{name}: reduce_k, num_elems_per_byte and thread_var are not "
                            "supported by tilec (the block's warps split M and N only)")
        if warp_row_tiles < M_DIM or warp_row_tiles % M_DIM or warp_col_tiles < 8 or \
                warp_col_tiles % 8:
            raise at_caller(f"{name}: warp_row_tiles is a multiple of 16 and warp_col_tiles "
                            f"of 8, got {warp_row_tiles} and {warp_col_tiles}")
        self.a_transposed, self.b_transposed = bool(a_transposed), bool(b_transposed)
        self.block_row_warps, self.block_col_warps = block_row_warps, block_col_warps
        self.warp_row_tiles, self.warp_col_tiles = warp_row_tiles, warp_col_tiles
        self.chunk = chunk
        self.is_m_first = bool(is_m_first)
        self.k_dim = min(256 // self.a_dtype.bits, chunk)
        self.n_dim = 16 if warp_col_tiles % 16 == 0 else 8
        self.micro_size_x, self.micro_size_y, self.micro_size_k = M_DIM, self.n_dim, self.k_dim
        self.warp_rows = warp_row_tiles // M_DIM
        self.warp_cols = warp_col_tiles // self.n_dim
        self.local_size_a = M_DIM * self.k_dim // WARP_SIZE
        self.local_size_b = self.n_dim * self.k_dim // WARP_SIZE
        self.local_size_out = M_DIM * self.n_dim // WARP_SIZE
        self.threads = WARP_SIZE * block_row_warps * block_col_warps

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        from tilec.tvm import NotInTilec

        raise NotInTilec(f"{type(self).__name__}.{name} is not implemented by tilec: it "
                         "builds ldmatrix_a, ldmatrix_b, mma and stmatrix (as block-level tile "
                         "ops)")

    @property
    def block_m(self) -> int:
        """Rows of the block tile (all warps' A pieces)."""
        return self.block_row_warps * self.warp_row_tiles

    @property
    def block_n(self) -> int:
        """Columns of the block tile (all warps' B pieces)."""
        return self.block_col_warps * self.warp_col_tiles

    def per_thread_size(self, role: str) -> int:
        """Elements of a thread's local buffer for operand `role` ("A", "B" or "C")."""
        return {"A": self.warp_rows * self.local_size_a,
                "B": self.warp_cols * self.local_size_b,
                "C": self.warp_rows * self.warp_cols * self.local_size_out}[role]

    def block_shape(self, role: str) -> tuple[int, int]:
        """The block-level fragment operand `role`'s per-thread buffers make up together."""
        return {"A": (self.block_m, self.k_dim), "B": (self.block_n, self.k_dim),
                "C": (self.block_m, self.block_n)}[role]

    def operand_dtype(self, role: str) -> Any:
        return {"A": self.a_dtype, "B": self.b_dtype, "C": self.accum_dtype}[role]

    @_kernel_method
    def ldmatrix_a(self, A_local_buf: Any, A_shared_buf: Any, ki: Any, rk: Any = 0) -> None:  # noqa: N803
        """Loads K step `ki` (of K block `rk`, `chunk` wide) of the block's A rows."""

    @_kernel_method
    def ldmatrix_b(self, B_local_buf: Any, B_shared_buf: Any, ki: Any, rk: Any = 0) -> None:  # noqa: N803
        """Loads K step `ki` (of K block `rk`) of the block's B columns."""

    @_kernel_method
    def mma(self, A_local_buf: Any, B_local_buf: Any, C_local_buf: Any) -> None:  # noqa: N803
        """C += A B^T over the loaded K step."""

    @_kernel_method
    def stmatrix(self, C_local_buf: Any, C_buf: Any, pid_m: Any = None,  # noqa: N803
                 pid_n: Any = None) -> None:
        """Stores the accumulator: into a 2-d (block_M, block_N) or 4-d (block_M / 16,
        block_N / n_dim, 16, n_dim) buffer, or with pid_m / pid_n into the global C at that
        block tile."""


class _NotInTilec:
    def __init__(self, *args: Any, **kwargs: Any):
        raise at_caller(f"{type(self).__name__} is not implemented by tilec: {self._why}")


class TensorCoreIntrinEmitterWithLadderTransform(_NotInTilec):
    """Raises: BitBLAS's ladder-transformed operand layouts are not implemented."""

    _why = ("its operands are in BitBLAS's ladder-transformed shared layouts; use "
            "TensorCoreIntrinEmitter or T.gemm on plain tiles")


class INT4TensorCoreIntrinEmitter(_NotInTilec):
    """Raises: TileLang removed this emitter (99ee74b, 'Support int4 T.gemm')."""

    _why = ("TileLang removed it when T.gemm took int4 operands (its commit 99ee74b), so "
            "code importing it fails under TileLang too; write T.gemm on T.int4 tiles, or use "
            "TensorCoreIntrinEmitter for int8")


class INT4TensorCoreIntrinEmitterWithLadderTransform(_NotInTilec):
    """Raises (see INT4TensorCoreIntrinEmitter)."""

    _why = INT4TensorCoreIntrinEmitter._why


__all__ = ["INT4TensorCoreIntrinEmitter", "INT4TensorCoreIntrinEmitterWithLadderTransform",
           "TensorCoreIntrinEmitter", "TensorCoreIntrinEmitterWithLadderTransform"]
