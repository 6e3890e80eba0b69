"""sm_80 tensor-core kernels of the CUDA suite: gemms the whole-kernel matcher declines, each
lowered where it stands to ldmatrix + mma.sync (plan-mma-sync-gemms, compiler/passes/
_mma_sync.py): a T.Parallel epilogue, a batched 3-D grid, transposed operands, A from
registers, attention's two gemms with the softmax between them, int8 and tf32.

`CASES` lists them with their inputs and float64 references. tests/gpu/precompile_frontend.py
compiles them for cuda:sm_80 into the suite's cache; tests/gpu/test_mma_sync_kernels.py runs
them on the GPU (on a Hopper GPU the runtime loads their sm_80 PTX, which the driver compiles
for it: an sm_80 cubin loads on 8.x GPUs only); tests/test_mma_sync_per_op.py checks their PTX
and their numerics on the CPU target here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tilec.language as T

TARGET = "cuda:sm_80"


def bias_relu(M: int, N: int, K: int, block_M: int = 128, block_N: int = 128,
              block_K: int = 32, threads: int = 128, dtype: str = "float16",
              register_a: bool = False):
    """relu(A @ B + bias), the epilogue in T.Parallel on the accumulator; with `register_a`,
    A copied from its shared tile into a fragment first (mma.sync reads it from registers)."""

    @T.prim_func
    def kernel(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
               bias: T.Tensor((N,), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            A_frag = T.alloc_fragment((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                if register_a:
                    T.copy(A_shared, A_frag)
                    T.gemm(A_frag, B_shared, C_local)
                else:
                    T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j] + bias[bx * block_N + j], 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return kernel


def transposed(M: int, N: int, K: int, block_M: int = 64, block_N: int = 64, block_K: int = 32):
    """A^T @ B^T / 2 with A stored K x M (ldmatrix.trans) and B stored N x K (ldmatrix); the
    halving in T.Parallel keeps the kernel from the whole-kernel matcher."""

    @T.prim_func
    def kernel(A: T.Tensor((K, M), "float16"), B: T.Tensor((N, K), "float16"),
               C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_K, block_M), "float16")
            B_shared = T.alloc_shared((block_N, block_K), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[k * block_K, by * block_M], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_A=True, transpose_B=True)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] *= 0.5
            T.copy(C_local, C[by * block_M, bx * block_N])

    return kernel


def batched(Bt: int, M: int, N: int, K: int, block_M: int = 64, block_N: int = 64,
            block_K: int = 32, in_dtype: str = "bfloat16", out_dtype: str = "bfloat16",
            accum_dtype: str = "float32"):
    """C[b] = A[b] @ B[b]^T on a 3-D grid, B stored N x K (every type's K-major form)."""

    @T.prim_func
    def kernel(A: T.Tensor((Bt, M, K), in_dtype), B: T.Tensor((Bt, N, K), in_dtype),
               C: T.Tensor((Bt, M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), Bt, threads=128) as (
                bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), in_dtype)
            B_shared = T.alloc_shared((block_N, block_K), in_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[bz, by * block_M, k * block_K], A_shared)
                T.copy(B[bz, bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C[bz, by * block_M, bx * block_N])

    return kernel


def attention(batch: int, heads: int, seq: int, dim: int, block_M: int = 64,
              block_N: int = 64):
    """softmax(Q K^T / sqrt(dim)) V with an online softmax between the two gemms: the second
    reads the cast scores from registers."""
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # log2(e): exp2 below
    shape = [batch, seq, heads, dim]

    @T.prim_func
    def kernel(Q: T.Tensor(shape, "float16"), K: T.Tensor(shape, "float16"),
               V: T.Tensor(shape, "float16"), Output: T.Tensor(shape, "float16")):
        with T.Kernel(T.ceildiv(seq, block_M), heads, batch, threads=128) as (bx, by, bz):
            q_tile = T.alloc_shared([block_M, dim], "float16")
            k_tile = T.alloc_shared([block_N, dim], "float16")
            v_tile = T.alloc_shared([block_N, dim], "float16")
            scores = T.alloc_fragment([block_M, block_N], "float32")
            probs = T.alloc_fragment([block_M, block_N], "float16")
            out = T.alloc_fragment([block_M, dim], "float32")
            row_max = T.alloc_fragment([block_M], "float32")
            old_max = T.alloc_fragment([block_M], "float32")
            rescale = T.alloc_fragment([block_M], "float32")
            row_sum = T.alloc_fragment([block_M], "float32")
            total = T.alloc_fragment([block_M], "float32")
            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], q_tile)
            T.fill(out, 0)
            T.fill(total, 0)
            T.fill(row_max, -T.infinity("float32"))
            for k in T.Pipelined(T.ceildiv(seq, block_N), num_stages=1):
                T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], k_tile)
                for i, j in T.Parallel(block_M, block_N):
                    scores[i, j] = T.if_then_else(k * block_N + j >= seq, -T.infinity("float32"),
                                                  0)
                T.gemm(q_tile, k_tile, scores, transpose_B=True)
                T.copy(row_max, old_max)
                T.reduce_max(scores, row_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    rescale[i] = T.exp2(old_max[i] * scale - row_max[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    scores[i, j] = T.exp2(scores[i, j] * scale - row_max[i] * scale)
                T.reduce_sum(scores, row_sum, dim=1)
                for i in T.Parallel(block_M):
                    total[i] = total[i] * rescale[i] + row_sum[i]
                T.copy(scores, probs)
                for i, j in T.Parallel(block_M, dim):
                    out[i, j] *= rescale[i]
                T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], v_tile)
                T.gemm(probs, v_tile, out)
            for i, j in T.Parallel(block_M, dim):
                out[i, j] /= total[i]
            T.copy(out, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])

    return kernel


def _attention_reference(q, k, v):
    import torch

    return torch.nn.functional.scaled_dot_product_attention(
        *(x.transpose(1, 2) for x in (q, k, v))).transpose(1, 2)


@dataclass
class MmaSyncCase:
    """One kernel: `factory()` gives the prim_func (its last parameter is the output),
    `inputs` (name of a torch dtype, shape) are random normals (integers in [-8, 8) for
    int8), `reference` computes the output in float64 from them, `instruction` is the
    mma.sync its PTX must hold and `tolerance` bounds ||out - ref|| / ||ref||. With
    `misaligned`, every input starts one element past a 16-byte boundary (its cp.async copies
    must take the element-by-element path)."""

    name: str
    factory: Callable[[], Any]
    inputs: list[tuple[str, tuple[int, ...]]]
    reference: Callable[..., Any]
    instruction: str
    tolerance: float
    transposed_loads: bool = False  # an MN-major operand: ldmatrix.trans
    misaligned: bool = False

    def make_inputs(self, generator, device: str = "cpu") -> list:
        import torch

        tensors = []
        for dtype, shape in self.inputs:
            if dtype == "int8":
                values = torch.randint(-8, 8, shape, generator=generator, dtype=torch.int8)
            else:
                values = torch.randn(shape, generator=generator).to(getattr(torch, dtype))
            values = values.to(device)
            if self.misaligned:
                storage = torch.empty(values.numel() + 1, dtype=values.dtype, device=device)
                values = storage[1:].view(values.shape).copy_(values)
            tensors.append(values)
        return tensors


F16 = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
BF16 = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
HALF, BFLOAT = 2e-3, 1.5e-2  # fp16 / bf16 outputs; tf32 multiplies with 10 mantissa bits


def _cases() -> list[MmaSyncCase]:
    found = []
    for M, N, K, tile in [(512, 512, 512, {}), (200, 136, 96, {"block_M": 64, "block_N": 64})]:
        for register_a in (False, True):
            kind = "register_a" if register_a else "bias_relu"
            found.append(MmaSyncCase(
                f"sm80_{kind}_{M}x{N}x{K}",
                lambda M=M, N=N, K=K, tile=tile, r=register_a: bias_relu(M, N, K, register_a=r,
                                                                          **tile),
                [("float16", (M, K)), ("float16", (K, N)), ("float16", (N,))],
                lambda a, b, bias: (a @ b + bias).clamp_min(0), F16, HALF,
                transposed_loads=True))
    # K rows of 90 halves (180 bytes, no multiple of 16), and 16-byte rows from misaligned
    # bases: the pipelined copies fall back to element-by-element reads
    for M, N, K, misaligned in [(200, 136, 90, False), (200, 136, 96, True)]:
        found.append(MmaSyncCase(
            f"sm80_bias_relu_{'misaligned_' if misaligned else ''}{M}x{N}x{K}",
            lambda M=M, N=N, K=K: bias_relu(M, N, K, block_M=64, block_N=64),
            [("float16", (M, K)), ("float16", (K, N)), ("float16", (N,))],
            lambda a, b, bias: (a @ b + bias).clamp_min(0), F16, HALF, transposed_loads=True,
            misaligned=misaligned))
    found.append(MmaSyncCase(
        "sm80_transposed_136x200x96", lambda: transposed(136, 200, 96),
        [("float16", (96, 136)), ("float16", (200, 96))], lambda a, b: a.T @ b.T / 2, F16, HALF,
        transposed_loads=True))
    for Bt, M, N, K in [(3, 130, 70, 64), (4, 256, 256, 512)]:
        found.append(MmaSyncCase(
            f"sm80_batched_bf16_{Bt}x{M}x{N}x{K}", lambda Bt=Bt, M=M, N=N, K=K: batched(
                Bt, M, N, K), [("bfloat16", (Bt, M, K)), ("bfloat16", (Bt, N, K))],
            lambda a, b: a @ b.transpose(1, 2), BF16, BFLOAT))
    found.append(MmaSyncCase(
        "sm80_batched_int8_2x136x72x128", lambda: batched(
            2, 136, 72, 128, block_K=64, in_dtype="int8", out_dtype="int32", accum_dtype="int32"),
        [("int8", (2, 136, 128)), ("int8", (2, 72, 128))], lambda a, b: a @ b.transpose(1, 2),
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 0.0))
    found.append(MmaSyncCase(
        "sm80_batched_tf32_2x136x72x96", lambda: batched(
            2, 136, 72, 96, in_dtype="float32", out_dtype="float32"),
        [("float32", (2, 136, 96)), ("float32", (2, 72, 96))],
        lambda a, b: a @ b.transpose(1, 2), "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        2e-3))
    for batch, heads, seq, dim in [(1, 2, 150, 64), (2, 2, 256, 128)]:
        shape = (batch, seq, heads, dim)
        found.append(MmaSyncCase(
            f"sm80_attention_{batch}x{heads}x{seq}x{dim}",
            lambda b=batch, h=heads, s=seq, d=dim: attention(b, h, s, d),
            [("float16", shape)] * 3, _attention_reference, F16, HALF, transposed_loads=True))
    return found


CASES = _cases()
