"""A GEMV that fills its registers as TileLang's kernels do, element by element under
T.vectorized, for vectorize-element-copies' tests on the CPU (test_vectorize_element_copies.py)
and on the GPU (gpu/test_vectorize_element_copies_gpu.py). Imports no compiler."""

from __future__ import annotations

import torch

import tilec
import tilec.language as T

VARIABLE = "TILEC_VECTORIZE_ELEMENT_COPIES"


@tilec.jit
def element_copy_gemv(A, B):
    """C = A @ W.T, W's int4 codes two to a byte of B (the low nibble first), each block one
    output; a step copies 8 activations and their 4 weight bytes element by element."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.int8)
    C = T.empty((M, N), T.float32)
    with T.Kernel(N, M, threads=1) as (bx, by):
        a_local = T.alloc_local((8,), T.float16)
        b_local = T.alloc_local((4,), T.int8)
        acc = T.alloc_local((1,), T.float32)
        T.clear(acc)
        for ko in T.serial(K // 8):
            for v in T.vectorized(8):
                a_local[v] = A[by, ko * 8 + v]
            for v in T.vectorized(4):
                b_local[v] = B[bx, ko * 4 + v]
            for v in T.unroll(8):
                code = (b_local[v // 2] >> (4 * (v % 2))) & 15
                acc[0] += T.Cast(T.float32, a_local[v]) * T.Cast(T.float32, code)
        C[by, bx] = acc[0]
    return C


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """element_copy_gemv's result in float64."""
    codes = b.to(torch.uint8)
    weight = torch.stack((codes & 15, codes >> 4), -1).reshape(b.shape[0], -1)
    return a.double() @ weight.double().t()
