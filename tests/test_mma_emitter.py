"""TileLang's hand-written MMA emitter (TensorCoreIntrinEmitter, tests/gpu/mma_emitter_kernels.py
in TileLang's syntax): the block tile it computes on the CPU target against float64 (f16 into
f32, int8 into int32, B stored N x K and K x N, the accumulator stored through a 4-d or 2-d
shared tile or into C), the tensor-core code the CUDA target gives its gemm (ldmatrix +
mma.sync on sm_80, wgmma on sm_90a, PTX through ptxas), and its errors at the kernel's line."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import assert_close, randn

import tilec.language as T
from tilec.errors import TilecError

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from mma_emitter_kernels import emitter_gemm  # noqa: E402

M, N, K = 128, 192, 96


def operands(in_dtype: str, b_transposed: bool, rng: torch.Generator,
             shape: tuple[int, int, int] = (M, N, K)) -> tuple[torch.Tensor, torch.Tensor]:
    m, n, k = shape
    if in_dtype == T.int8:
        a = torch.randint(-128, 128, (m, k), generator=rng, dtype=torch.int8)
        b = torch.randint(-128, 128, (n, k) if b_transposed else (k, n), generator=rng,
                          dtype=torch.int8)
        return a, b
    return (randn((m, k), torch.float16, rng),
            randn((n, k) if b_transposed else (k, n), torch.float16, rng))


def reference(a: torch.Tensor, b: torch.Tensor, b_transposed: bool) -> torch.Tensor:
    return a.double() @ (b.double().T if b_transposed else b.double())


@pytest.mark.parametrize(("b_transposed", "store"), [
    (True, "tiled"), (False, "tiled"), (True, "plain"), (True, "global")])
def test_f16_on_cpu(b_transposed: bool, store: str, rng: torch.Generator) -> None:
    a, b = operands(T.float16, b_transposed, rng)
    kernel = emitter_gemm.compile(M=M, N=N, K=K, b_transposed=b_transposed, store=store,
                                  out_dtype=T.float32, target="cpu")
    c = kernel(a, b)
    assert_close(c, reference(a, b, b_transposed), torch.float32)


def test_transposed_a_on_cpu(rng: torch.Generator) -> None:
    """A stored K x M (a_transposed): the emitter reads its K step down the tile's columns."""
    a, b = operands(T.float16, False, rng)
    kernel = emitter_gemm.compile(M=M, N=N, K=K, a_transposed=True, b_transposed=False,
                                  out_dtype=T.float32, target="cpu")
    c = kernel(a.T.contiguous(), b)
    assert_close(c, reference(a, b, False), torch.float32)


def test_int8_on_cpu(rng: torch.Generator) -> None:
    """int8 into int32 (k_dim 32, as TileLang's m16n8k32): exact."""
    a, b = operands(T.int8, True, rng, (M, N, 128))
    kernel = emitter_gemm.compile(M=M, N=N, K=128, in_dtype=T.int8, accum_dtype=T.int32,
                                  out_dtype=T.int32, chunk=64, target="cpu")
    c = kernel(a, b)
    assert torch.equal(c.long(), reference(a, b, True).long())


def test_narrow_warp_tiles_on_cpu(rng: torch.Generator) -> None:
    """warp_col_tiles 24: 8-column B pieces (n_dim 8), three per warp; 1 x 4 warps."""
    shape = (64, 192, 64)
    a, b = operands(T.float16, True, rng, shape)
    kernel = emitter_gemm.compile(M=64, N=192, K=64, block_row_warps=1, block_col_warps=4,
                                  warp_row_tiles=64, warp_col_tiles=48, chunk=16,
                                  out_dtype=T.float32, target="cpu")
    assert_close(kernel(a, b), reference(a, b, True), torch.float32)
    kernel = emitter_gemm.compile(M=64, N=96, K=64, block_row_warps=2, block_col_warps=2,
                                  warp_row_tiles=32, warp_col_tiles=24, chunk=32, store="plain",
                                  out_dtype=T.float32, target="cpu")
    a, b = operands(T.float16, True, rng, (64, 96, 64))
    assert_close(kernel(a, b), reference(a, b, True), torch.float32)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("in_dtype", [T.float16, T.int8])
def test_tensor_cores_on_cuda(arch: str, in_dtype: str) -> None:
    """The emitter's gemm runs on tensor cores; ptxas assembles the PTX without spills."""
    integer = in_dtype == T.int8
    kernel = emitter_gemm.compile(
        M=256, N=256, K=256, in_dtype=in_dtype, accum_dtype=T.int32 if integer else T.float32,
        out_dtype=T.int32 if integer else T.float16, target=f"cuda:{arch}")
    ptx = kernel.get_kernel_source()
    if arch == "sm_80":
        shape = "m16n8k32.row.col.s32.s8.s8" if integer else "m16n8k16.row.col.f32.f16.f16"
        assert re.search(rf"mma\.sync\.aligned\.{re.escape(shape)}", ptx)
        assert "ldmatrix.sync.aligned" in ptx
    else:
        assert "wgmma.mma_async" in ptx
    assert not re.search(r"\bfma\.rn\.f32\b", ptx)
    assert kernel.asm["cubin"]
    assert "ld.local" not in ptx and "st.local" not in ptx


def test_get_swizzle_layout_is_a_swizzle_request() -> None:
    """The example's T.Layout over get_swizzle_layout (built by a helper defining its index
    function, run as Python on the buffer) asks for the 64-byte swizzle of both 64-byte-row
    operand tiles; a T.Layout that moves elements otherwise stays an error."""
    kernel = emitter_gemm.compile(M=256, N=256, K=256, target="cuda:sm_80")
    requests = re.findall(r"tile\.alloc \{tile\.swizzle_request = #tile\.swizzle<(\w+)>",
                          kernel.asm["tile"])
    assert requests == ["64B", "64B"]


def _program(body: str, tmp_path: Path, name: str) -> object:
    path = tmp_path / f"{name}.py"
    path.write_text(body)
    namespace: dict = {}
    exec(compile(body, str(path), "exec"), namespace)  # noqa: S102
    return namespace["kernel"]


_HEADER = """import tilec as tilelang
import tilec.language as T
from tilec.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter

@tilelang.jit
def kernel(A, B):
    A: T.Tensor((64, 32), T.float16)
    B: T.Tensor((64, 32), T.float16)
    C = T.empty((64, 64), T.float32)
    e = TensorCoreIntrinEmitter(a_dtype=T.float16, b_dtype=T.float16, accum_dtype=T.float32,
                                b_transposed=True, block_row_warps=2, block_col_warps=2,
                                warp_row_tiles=32, warp_col_tiles=32, chunk=32)
    with T.Kernel(1, 1, threads={threads}) as (bx, by):
        A_shared = T.alloc_shared((64, 32), T.float16)
        B_shared = T.alloc_shared((64, 32), T.float16)
        A_local = T.alloc_local(({a_size},), T.float16)
        B_local = T.alloc_local((16,), T.float16)
        C_local = T.alloc_local((32,), T.float32)
        T.copy(A, A_shared)
        T.copy(B, B_shared)
        T.clear(C_local)
        for ki in T.serial(2):
            e.ldmatrix_a(A_local, A_shared, ki)
            e.ldmatrix_b(B_local, B_shared, ki)
            e.mma(A_local, B_local, C_local)
        {last}
    return C
"""


@pytest.mark.parametrize(("threads", "a_size", "last", "message", "at"), [
    (128, 8, "e.stmatrix(C_local, C, pid_m=bx, pid_n=by)",
     r"'A_local', the A buffer of TensorCoreIntrinEmitter, holds 16 elements per thread",
     "A_local = "),
    (64, 16, "e.stmatrix(C_local, C, pid_m=bx, pid_n=by)",
     r"tiles the block over 2 x 2 warps \(128 threads\), but T.Kernel has 64", "A_local = "),
    (128, 16, "C[0, 0] = C_local[0]",
     r"'C_local' is the C buffer of TensorCoreIntrinEmitter, whose elements are each thread's",
     "C[0, 0]"),
    (128, 16, "e.stmatrix(C_local, C, pid_m=bx)", r"takes pid_m and pid_n together",
     "e.stmatrix"),
    (128, 16, "T.annotate_layout({A_shared: T.Layout((64, 32), lambda i, j: (j, i))})",
     r"shared buffer 'A_shared' takes tilec.layout.make_swizzled_layout", "T.annotate_layout"),
])
def test_errors_name_the_line(threads: int, a_size: int, last: str, message: str, at: str,
                              tmp_path: Path) -> None:
    body = _HEADER.format(threads=threads, a_size=a_size, last=last)
    kernel = _program(body, tmp_path, "emitter_errors")
    with pytest.raises(TilecError, match=message) as raised:
        kernel.compile(target="cpu")
    line = next(n for n, text in enumerate(body.splitlines(), 1) if text.strip().startswith(at))
    assert raised.value.lineno == line


def test_outside_a_kernel_and_removed_emitters() -> None:
    from tilec.cuda.intrinsics.macro.mma_macro_generator import (
        INT4TensorCoreIntrinEmitter,
        TensorCoreIntrinEmitter,
    )

    emitter = TensorCoreIntrinEmitter(a_dtype=T.float16, b_dtype=T.float16,
                                      accum_dtype=T.float32, warp_row_tiles=32,
                                      warp_col_tiles=32, chunk=32)
    assert (emitter.local_size_a, emitter.local_size_b, emitter.local_size_out) == (8, 8, 8)
    assert (emitter.warp_rows, emitter.warp_cols, emitter.k_dim) == (2, 2, 16)
    with pytest.raises(TilecError, match=r"writes kernel code: call it inside"):
        emitter.mma(None, None, None)
    with pytest.raises(AttributeError, match=r"mma_atom is not implemented by tilec"):
        emitter.mma_atom  # noqa: B018
    with pytest.raises(TilecError, match=r"TileLang removed it .* 99ee74b"):
        INT4TensorCoreIntrinEmitter(a_dtype=T.int8, b_dtype=T.int8)
