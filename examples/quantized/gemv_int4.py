"""Weight-only int4 GEMV: C[m, n] = sum over k of A[m, k] * (B[n, k] - zeros[n, g]) * scales[n, g]
with g = k // group.

B holds T.uint4 weights packed two to a byte along K (a torch uint8 tensor of shape (N, K / 2),
the low nibble first), scales and zeros are fp16 per row and group of 128; activations fp16,
accumulation fp32. A warp reduces `rows_per_warp` rows for `block_m` rows of A: each lane copies
the 32 activations of its part of K of each of them once and 32 weights of each row (one 16-byte
load a row), decodes the weights in registers, sums a * q and a over its 32 (one group holds
them all), applies scale and zero once per group, and the warp sums its lanes with shuffles.
Fast math lets multiply-adds contract into FMAs, as nvcc does by default. Run it to check it
against torch in float32 (it needs a GPU).
"""

import torch

import tilec as tilelang
import tilec.language as T


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def gemv_int4(A, B, scales, zeros, warps=4, rows_per_warp=2, block_m=1, group=128, per_lane=32):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K), T.uint4)
    scales: T.Tensor((N, K // group), T.float16)
    zeros: T.Tensor((N, K // group), T.float16)
    C = T.empty((M, N), T.float16)
    lanes = 32
    chunk = lanes * per_lane  # weights of a row a warp reads in one step
    with T.Kernel(T.ceildiv(N, warps * rows_per_warp), T.ceildiv(M, block_m),
                  threads=(lanes, warps)) as (bx, by):
        a_local = T.alloc_local((block_m, per_lane), T.float16)
        b_local = T.alloc_local((rows_per_warp, per_lane), T.uint4)
        a_sum = T.alloc_local((block_m,), T.float32)
        dot = T.alloc_local((block_m, rows_per_warp), T.float32)
        acc = T.alloc_local((block_m, rows_per_warp), T.float32)
        lane = T.get_thread_binding(0)
        row = (bx * warps + T.get_thread_binding(1)) * rows_per_warp
        T.clear(acc)
        for ko in T.serial(T.ceildiv(K, chunk)):
            k0 = ko * chunk + lane * per_lane
            for m in T.unroll(block_m):
                T.copy(A[by * block_m + m, k0:k0 + per_lane], a_local[m, :])
            for r in T.unroll(rows_per_warp):
                T.copy(B[row + r, k0:k0 + per_lane], b_local[r, :])
            # over a group, sum a * (q - zero) * scale = scale * (sum a * q - zero * sum a)
            T.clear(a_sum)
            T.clear(dot)
            for v in T.unroll(per_lane):
                for m in T.unroll(block_m):
                    a = T.Cast(T.float32, a_local[m, v])
                    a_sum[m] += a
                    for r in T.unroll(rows_per_warp):
                        dot[m, r] += a * T.Cast(T.float32, b_local[r, v])
            for r in T.unroll(rows_per_warp):
                scale = T.Cast(T.float32, scales[row + r, k0 // group])
                zero = T.Cast(T.float32, zeros[row + r, k0 // group])
                for m in T.unroll(block_m):
                    acc[m, r] += scale * (dot[m, r] - zero * a_sum[m])
        for m in T.unroll(block_m):
            for r in T.unroll(rows_per_warp):
                for step in T.unroll(5):
                    acc[m, r] += T.shfl_xor(acc[m, r], 16 >> step)
                if lane == 0:
                    C[by * block_m + m, row + r] = acc[m, r]
    return C


def pack_uint4(values: torch.Tensor) -> torch.Tensor:
    """(..., K) integers in [0, 16) -> (..., K / 2) uint8, element 2j in the low nibble."""
    values = values.to(torch.uint8)
    return (values[..., 0::2] | (values[..., 1::2] << 4)).contiguous()


def random_int4_weights(n: int, k: int, group: int = 128, device: str = "cpu"):
    """Random weights in [0, 16), fp16 scales in [0.01, 0.11), zeros in [0, 15)."""
    q = torch.randint(0, 16, (n, k), device=device, dtype=torch.uint8)
    scales = (torch.rand(n, k // group, device=device) * 0.1 + 0.01).half()
    zeros = (torch.rand(n, k // group, device=device) * 15).half()
    return q, scales, zeros


def dequantize_int4(q: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor,
                    group: int = 128) -> torch.Tensor:
    """The float32 weights (q - zero) * scale."""
    return ((q.float() - zeros.float().repeat_interleave(group, 1))
            * scales.float().repeat_interleave(group, 1))


def main() -> None:
    if not torch.cuda.is_available():
        print("gemv_int4 uses thread bindings and warp shuffles: it runs on CUDA only")
        return
    torch.manual_seed(0)
    m, n, k = 1, 4096, 4096
    a = torch.randn(m, k, device="cuda").half()
    q, scales, zeros = random_int4_weights(n, k, device="cuda")
    c = gemv_int4(a, pack_uint4(q), scales, zeros)
    reference = a.float() @ dequantize_int4(q, scales, zeros).t()
    error = ((c.float() - reference).norm() / reference.norm()).item()
    print(f"int4 GEMV {m}x{n}x{k}: relative error {error:.2e}")
    assert error < 1e-2, "result differs from torch"


if __name__ == "__main__":
    main()
