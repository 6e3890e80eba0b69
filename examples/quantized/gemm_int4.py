"""Small-batch GEMM with int4 weights on tensor cores: C = A @ dequant(B).T.

B holds T.uint4 weights packed two to a byte along K (torch uint8, shape (N, K / 2)), scales and
zeros fp16 per row and group of 128. A block decodes a (block_N, block_K) tile of weights into a
fp16 shared tile ((q - zero) * scale) and multiplies it with the (block_M, block_K) tile of A,
accumulating in fp32: C^T = W A^T, so the weight rows are the gemm's M (64 rows per wgmma atom
on sm_90a) and the batch its N, which a batch of 1 to 64 fills once (block_M = 64; rows of A past
M read as zeros). A step covers at most one group of 128 along K.

`gemm_int4` is written tile style and runs on every target (it decodes element by element).
`gemm_int4_words` (CUDA) reads B as T.uint32 words (gemv_uint4_words' layout) and has thread t
decode row t of the weight tile in registers with gemv's nibble_scaled bit trick (its row's
scale and zero read once per step), then store the row with 16-byte vectors.
"""

from collections.abc import Callable

import torch
from gemv import FAST_MATH, nibble_scaled, weights

import tilec as tilelang
import tilec.language as T


@T.macro
def store_transposed(C_local, C, bx, by):
    """The block's accumulator of C^T (block_N weight rows by block_M rows of A) stored as C's
    rows by * block_M.. and columns bx * block_N.. (those past C are skipped)."""
    block_N, block_M = C_local.shape
    for i, j in T.Parallel(block_N, block_M):
        C[by * block_M + j, bx * block_N + i] = C_local[i, j]


@tilelang.jit(pass_configs=FAST_MATH)
def gemm_int4(A, B, scales, zeros, block_M=64, block_N=128, block_K=128, group=128,
              threads=128, num_stages=2):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K), T.uint4)
    scales: T.Tensor((N, K // group), T.float16)
    zeros: T.Tensor((N, K // group), T.float16)
    C = T.empty((M, N), T.float16)
    assert group % block_K == 0, "a step reads one group of each row"
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_N, block_K), T.uint4)
        B_decoded = T.alloc_shared((block_N, block_K), T.float16)
        C_local = T.alloc_fragment((block_N, block_M), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[bx * block_N, k * block_K], B_shared)
            for i, j in T.Parallel(block_N, block_K):
                n, g = bx * block_N + i, k * block_K // group
                B_decoded[i, j] = (T.Cast(T.float16, B_shared[i, j]) - zeros[n, g]) * scales[n, g]
            T.gemm(B_decoded, A_shared, C_local, transpose_B=True)
        store_transposed(C_local, C, bx, by)
    return C


@tilelang.jit(pass_configs=FAST_MATH)
def gemm_int4_words(A, B, scales, zeros, block_M=64, block_N=128, block_K=128, group=128,
                    num_stages=2):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 8), T.uint32)
    scales: T.Tensor((N, K // group), T.float16)
    zeros: T.Tensor((N, K // group), T.float16)
    C = T.empty((M, N), T.float16)
    assert group % block_K == 0, "a step reads one group of each row"
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=block_N) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_N, block_K // 8), T.uint32)
        B_decoded = T.alloc_shared((block_N, block_K), T.float16)
        C_local = T.alloc_fragment((block_N, block_M), T.float32)
        words = T.alloc_local((block_K // 8,), T.uint32)
        decoded = T.alloc_local((block_K,), T.float16)
        tid = T.get_thread_binding(0)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[bx * block_N, k * (block_K // 8)], B_shared)
            g = k * block_K // group
            scale = T.Cast(T.float32, scales[bx * block_N + tid, g])
            shift = -T.Cast(T.float32, zeros[bx * block_N + tid, g]) * scale
            T.copy(B_shared[tid, :], words)
            for w in T.unroll(block_K // 8):
                for j in T.unroll(8):  # nibble_scaled is q * 16 ** (j % 5)
                    decoded[w * 8 + j] = T.Cast(T.float16, nibble_scaled(words[w], j)
                                                * (scale * 0.0625 ** (j % 5)) + shift)
            T.copy(decoded, B_decoded[tid, :])
            T.gemm(B_decoded, A_shared, C_local, transpose_B=True)
        store_transposed(C_local, C, bx, by)
    return C


def check_examples(fmt: str, shape: tuple[int, int, int],
                   kernels: dict[str, Callable]) -> None:
    """Runs each kernel, `kernels[name](a, weight_args)`, on random fp16 activations and weights
    of a format (on the GPU when there is one, else on the CPU target) and checks it against
    float32 torch."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    m, n, k = shape
    a = torch.randn(m, k, device=device).half()
    args, weight = weights(fmt, n, k, device)
    reference = a.float() @ weight.t()
    for name, kernel in kernels.items():
        c = kernel(a, args)
        error = ((c.float() - reference).norm() / reference.norm()).item()
        print(f"{name} {m}x{n}x{k} on {device}: relative error {error:.2e}")
        assert error < 1e-2, "result differs from torch"


def main() -> None:
    kernels = {"gemm_int4": lambda a, args: gemm_int4(a, *args)}
    if torch.cuda.is_available():  # thread bindings: CUDA only
        kernels["gemm_int4_words"] = lambda a, args: gemm_int4_words(
            a, args[0].view(torch.uint32), *args[1:])
    check_examples("uint4", (16, 512, 1024), kernels)


if __name__ == "__main__":
    main()
