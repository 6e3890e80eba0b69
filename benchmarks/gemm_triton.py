"""The peer: a standard autotuned Triton `tl.dot` GEMM (grouped tile order), C = A @ B.

Only imported on the GPU machine (Triton is there); configs are the usual Hopper picks.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

CONFIGS = [
    triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP": 8}, num_warps=8, num_stages=3),
    triton.Config({"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}, num_warps=4, num_stages=4),
    triton.Config({"BM": 256, "BN": 128, "BK": 64, "GROUP": 8}, num_warps=8, num_stages=3),
    triton.Config({"BM": 64, "BN": 128, "BK": 64, "GROUP": 8}, num_warps=4, num_stages=4),
]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def _matmul_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   GROUP: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    width = GROUP * tiles_n
    first_m = (pid // width) * GROUP
    group_size = tl.minimum(tiles_m - first_m, GROUP)
    pid_m = first_m + (pid % width) % group_size
    pid_n = (pid % width) // group_size
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    a_ptrs = a + rows[:, None] * K + ks[None, :]
    b_ptrs = b + ks[:, None] * N + cols[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BK)):
        k_left = K - k0 * BK
        a_tile = tl.load(a_ptrs, mask=(rows[:, None] < M) & (ks[None, :] < k_left), other=0.0)
        b_tile = tl.load(b_ptrs, mask=(ks[:, None] < k_left) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a_tile, b_tile, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    c_ptrs = c + rows[:, None] * N + cols[None, :]
    tl.store(c_ptrs, acc.to(c.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
    m, k = a.shape
    n = b.shape[1]

    def grid(meta: dict) -> tuple[int]:
        return (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)

    _matmul_kernel[grid](a, b, c, m, n, k)
