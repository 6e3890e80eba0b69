"""Operand and output element types of the tensor-core kernels, and what each instruction needs.

Operand types name the PTX type: "f16", "bf16" (fp32 accumulation), "e4m3", "e5m2" (fp8,
fp32 accumulation, sm_90a only), "s8" (int32 accumulation), "tf32" (fp32 inputs read as tf32,
fp32 accumulation). Output types: "f16", "bf16", "f32" (from fp32 accumulators), "s32" (int8).

Every MMA step consumes 32 bytes of K whatever the type (k16 for 16-bit, k32 for 8-bit, k8 for
tf32), so shared tiles, swizzles and descriptors are laid out in bytes and shared by all types.
Only 16-bit operands may be MN-major (transposed in wgmma's sense, ldmatrix.trans on sm_80).
"""

from __future__ import annotations

OPERAND_BYTES = {"f16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1, "s8": 1, "tf32": 4}
OUTPUT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "s32": 4}
K_STEP_BYTES = 32  # bytes of K per wgmma / mma.sync instruction

# torch dtype names (tilec.runtime.tma and the benchmarks), per kernel type
TORCH_NAMES = {
    "f16": "float16",
    "bf16": "bfloat16",
    "e4m3": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
    "s8": "int8",
    "tf32": "float32",
    "f32": "float32",
    "s32": "int32",
}


def accumulator(dtype: str) -> str:
    """PTX type of the accumulators: s32 for int8, else f32."""
    return "s32" if dtype == "s8" else "f32"


def default_output(dtype: str) -> str:
    """The output type when none is given: the operand type for 16-bit, else the accumulator's
    (fp8 has no useful fp8 output without scaling; bf16 is the usual choice, named explicitly)."""
    if dtype in ("f16", "bf16"):
        return dtype
    if dtype in ("e4m3", "e5m2"):
        return "bf16"
    return accumulator(dtype)


def mn_major_allowed(dtype: str) -> bool:
    """wgmma and ldmatrix.trans transpose 16-bit elements only."""
    return OPERAND_BYTES[dtype] == 2


def check_types(dtype: str, out_dtype: str, trans_a: bool, trans_b: bool) -> None:
    """Raise ValueError for combinations no tensor-core instruction runs."""
    if dtype not in OPERAND_BYTES:
        raise ValueError(f"unsupported operand type {dtype}")
    if out_dtype not in OUTPUT_BYTES:
        raise ValueError(f"unsupported output type {out_dtype}")
    if (accumulator(dtype) == "s32") != (out_dtype == "s32"):
        raise ValueError(f"{dtype} operands cannot produce {out_dtype}")
    if not mn_major_allowed(dtype) and (trans_a or not trans_b):
        raise ValueError(f"{dtype} operands must be K-major: A as M x K, B as N x K (transpose_B)")
