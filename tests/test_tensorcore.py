"""Tensor-core GEMM generators, the scheduling passes' decisions for GEMM kernels and the
lower-gemm-to-tensorcore pass that builds the kernel from them (CPU-only checks).

Numerics and speed are checked on the H200 by benchmarks/gemm.py (results under
benchmarks/results/gemm-*.json); here: configs, decisions, the pass's matching, and that the
generated kernels lower to PTX that ptxas accepts (in a subprocess: the MLIR wheel aborts on
internal errors).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mlir import ir

import tilec
import tilec.language as T
from tilec.compiler.passes import get_pass
from tilec.compiler.passes._ir_walk import walk
from tilec.compiler.passes._scheduling import read_decision
from tilec.compiler.passes.lower_gemm_to_tensorcore import LAUNCH_ATTR, LowerGemmToTensorcore
from tilec.compiler.targets.cuda import SCHEDULE_PASSES
from tilec.compiler.tensorcore.ampere import AmpereGemmConfig
from tilec.compiler.tensorcore.hopper import HopperGemmConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from gemm import matmul, matmul_tn, matmul_typed  # noqa: E402  (the benchmark's kernels)

# matmul_typed (B given N x K) with 64-deep K blocks and two consumer warpgroups
NT_TILE = {"block_K": 64, "threads": 256}


@tilec.jit
def matmul_relu(A, B, block_M=128, block_N=128, block_K=32):
    M, N, K = T.const("M, N, K")
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_K, block_N), T.float16)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        for i, j in T.Parallel(block_M, block_N):
            C_local[i, j] = T.max(C_local[i, j], 0.0)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


@tilec.jit
def matmul_swizzled(A, B, block_M=128, block_N=256, block_K=64):
    M, N, K = T.const("M, N, K")
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
        T.use_swizzle(4)
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_K, block_N), T.float16)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=4):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


def tile_module(kernel, shape, element=T.float16, target="cuda:sm_90a", layout="nn", **knobs):
    m, n, k = shape
    a = (k, m) if layout[0] == "t" else (m, k)
    b = (n, k) if layout[1] == "t" else (k, n)
    spec = kernel.specialize((T.Tensor(a, element), T.Tensor(b, element)), knobs, target)
    return spec.build().module


def schedule(module, arch):
    """The module after the CUDA target's scheduling passes (tile.* decisions added)."""
    with module.context:
        for name in SCHEDULE_PASSES:
            pass_class = get_pass(name)  # the target-neutral ones take no arch
            takes_arch = any(field.name == "arch" for field in dataclasses.fields(pass_class))
            pass_class(**({"arch": arch} if takes_arch else {})).run(module)
    return module


def decision(module, op_name, attribute):
    """The decision `attribute` on the first `op_name` op holding one, or None."""
    for op in walk(module.operation):
        if op.name == op_name and attribute in op.attributes:
            return read_decision(op, attribute)
    return None


def run_pass(module, arch):
    """Schedule, then lower; the tensor-core launch metadata, or None when it left the kernel."""
    schedule(module, arch)
    with module.context:
        LowerGemmToTensorcore(arch=arch).run(module)
        attributes = module.operation.attributes
        if LAUNCH_ATTR not in attributes:
            return None
        return json.loads(ir.StringAttr(attributes[LAUNCH_ATTR]).value)


def test_configs_reject_what_the_kernels_cannot_do():
    with pytest.raises(ValueError):
        HopperGemmConfig(block_n=96)
    with pytest.raises(ValueError):
        HopperGemmConfig(stages=4, epilogue_n=256)  # 256 KiB of shared memory
    with pytest.raises(ValueError):
        HopperGemmConfig(dtype="f32")
    with pytest.raises(ValueError):
        AmpereGemmConfig(block_m=256, block_n=256, warps_m=1, warps_n=1)  # 512 accumulators
    with pytest.raises(ValueError):  # 8-bit operands must be K-major: B given as N x K
        HopperGemmConfig(dtype="e4m3", block_k=128)
    with pytest.raises(ValueError):
        HopperGemmConfig(dtype="tf32", block_k=32, trans_a=True, trans_b=True)
    with pytest.raises(ValueError):  # int8 accumulates in int32 and writes int32
        HopperGemmConfig(dtype="s8", block_k=128, trans_b=True, out_dtype="f16")
    with pytest.raises(ValueError):  # no fp8 mma.sync on sm_80
        AmpereGemmConfig(dtype="e4m3", block_k=64, trans_b=True)


def scheduled(shape, arch="sm_90a", kernel=matmul, element=T.float16, layout="nn", **knobs):
    module = tile_module(kernel, shape, element, f"cuda:{arch}", layout, **knobs)
    return schedule(module, arch)


def test_schedule_keeps_the_users_tiles():
    # the quickstart: one consumer warpgroup, the 32-deep K tile merged into 64-element stages
    quickstart = scheduled((4096, 4096, 4096))
    assert decision(quickstart, "tile.gemm", "tile.mma")["warpgroups"] == 1
    pipeline = decision(quickstart, "tile.pipelined", "tile.pipeline")
    assert pipeline["k_tile"] == 64 and pipeline["stages"] >= 2  # at least 32 x 3 deep in K
    tuned = scheduled((4096, 4096, 4096), element=T.bfloat16, dtype=T.bfloat16, block_N=256,
                      block_K=64, threads=256, num_stages=4)
    assert decision(tuned, "tile.gemm", "tile.mma")["warpgroups"] == 2
    assert decision(tuned, "tile.pipelined", "tile.pipeline")["stages"] == 4
    assert decision(tuned, "tile.kernel", "tile.warp_specialize")["threads"] == 384
    # 96 columns: no wgmma shape covers them, nothing is decided for the tensor cores
    odd = scheduled((4096, 4096, 4096), block_N=96)
    assert decision(odd, "tile.gemm", "tile.mma") is None
    ampere = scheduled((4096, 4096, 4096), "sm_80")
    assert decision(ampere, "tile.gemm", "tile.mma")["warps"] == (2, 2)
    assert decision(ampere, "tile.pipelined", "tile.pipeline")["stages"] == 3
    fp8 = scheduled((4096, 4096, 4096), kernel=matmul_typed, element=T.float8_e4m3, layout="nt",
                    in_dtype=T.float8_e4m3, out_dtype=T.bfloat16, block_N=256, **NT_TILE,
                    num_stages=4)
    assert decision(fp8, "tile.pipelined", "tile.pipeline")["k_tile"] == 128  # one 128-byte row
    tf32 = scheduled((4096, 4096, 4096), kernel=matmul_typed, element=T.float32, layout="nt",
                     in_dtype=T.float32, out_dtype=T.float32, **NT_TILE)
    pipeline = decision(tf32, "tile.pipelined", "tile.pipeline")
    assert pipeline["k_tile"] == 32 and pipeline["stages"] >= 2  # fewer when 6 do not fit


def test_pass_lowers_the_quickstart_on_sm90a():
    module = tile_module(matmul, (4096, 4096, 4096), M=4096, N=4096, K=4096)
    launch = run_pass(module, "sm_90a")
    assert launch is not None
    assert launch["abi"] == [["tma", 0, "A"], ["tma", 1, "B"], ["tma", 2, "C"]]
    assert launch["threads"] == [256, 1, 1] and launch["grid"] == [132, 1, 1]
    assert launch["tma"]["A"] == {"box": [64, 128], "swizzle": 128}
    text = str(module)
    assert "tile.kernel" not in text and "gpu.module @kernels" in text
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in text


def test_pass_lowers_ragged_bf16_on_sm80():
    module = tile_module(matmul, (1000, 1016, 1000), T.bfloat16, dtype=T.bfloat16,
                         block_N=256, threads=256, block_K=64, num_stages=4)
    launch = run_pass(module, "sm_80")
    assert launch is not None and launch["abi"] == [["ptr", 0], ["ptr", 1], ["ptr", 2]]
    assert launch["grid"] == [8 * 4, 1, 1]
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in str(module)


def test_pass_takes_the_raster_panel_from_use_swizzle():
    module = tile_module(matmul_swizzled, (2048, 2048, 512), M=2048, N=2048, K=512)
    launch = run_pass(module, "sm_90a")
    assert launch["config"]["group_m"] == 4 and launch["config"]["consumers"] == 2


def test_pass_lowers_fp8_with_b_given_n_by_k():
    module = tile_module(matmul_typed, (512, 384, 1024), T.float8_e4m3, layout="nt",
                         in_dtype=T.float8_e4m3, out_dtype=T.bfloat16, **NT_TILE)
    launch = run_pass(module, "sm_90a")
    assert launch is not None
    assert launch["tma"]["A"] == {"box": [128, 128], "swizzle": 128}
    assert launch["tma"]["B"] == {"box": [128, 128], "swizzle": 128}
    assert launch["config"]["out_dtype"] == "bf16" and launch["config"]["trans_b"]
    assert "m64n128k32.f32.e4m3.e4m3" in str(module)


def test_pass_lowers_int8_on_sm80_and_tf32_on_sm90a():
    module = tile_module(matmul_typed, (256, 256, 512), T.int8, layout="nt", in_dtype=T.int8,
                         out_dtype=T.int32, accum_dtype=T.int32, **NT_TILE)
    assert run_pass(module, "sm_80") is not None
    assert "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32" in str(module)
    module = tile_module(matmul_typed, (256, 256, 512), T.float32, layout="nt",
                         in_dtype=T.float32, out_dtype=T.float32, **NT_TILE)
    launch = run_pass(module, "sm_90a")
    assert launch["tma"]["C"] == {"box": [32, 64], "swizzle": 128}
    assert "m64n128k8.f32.tf32.tf32" in str(module)


def test_pass_lowers_transposed_a():
    module = tile_module(matmul_tn, (384, 256, 512), layout="tn")
    launch = run_pass(module, "sm_90a")
    assert launch["tma"]["A"] == {"box": [64, 64], "swizzle": 128}  # 64 M x 64 K boxes
    assert "m64n128k16.f32.f16.f16" in str(module)
    module = tile_module(matmul_tn, (384, 256, 512), layout="tn")
    assert run_pass(module, "sm_80") is not None
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in str(module)


def test_pass_leaves_other_kernels_alone():
    module = schedule(tile_module(matmul_relu, (256, 256, 256), M=256, N=256, K=256), "sm_90a")
    before = str(module)
    assert run_pass(module, "sm_90a") is None
    assert str(module) == before
    # fp8 with B given as K x N: wgmma reads 8-bit operands K-major only
    module = tile_module(matmul, (256, 256, 256), T.float8_e4m3, dtype=T.float8_e4m3)
    assert run_pass(module, "sm_90a") is None
    # fp8 has no mma.sync on sm_80
    module = tile_module(matmul_typed, (256, 256, 512), T.float8_e4m3, layout="nt",
                         in_dtype=T.float8_e4m3, out_dtype=T.bfloat16, **NT_TILE)
    assert run_pass(module, "sm_80") is None


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize(
    "arch, config",
    [
        ("sm_90a", "HopperGemmConfig()"),
        ("sm_90a", "HopperGemmConfig(dtype='bf16', block_m=256, block_n=128, epilogue_n=64)"),
        ("sm_90a", "HopperGemmConfig(block_n=128, block_k=32, consumers=1, stages=3)"),
        ("sm_90a", "HopperGemmConfig(persistent=False, setmaxnreg=True)"),
        ("sm_80", "AmpereGemmConfig()"),
        ("sm_80", "AmpereGemmConfig(dtype='bf16', block_n=256, block_k=64, warps_n=4)"),
        ("sm_90a", "HopperGemmConfig(trans_b=True)"),
        ("sm_90a", "HopperGemmConfig(trans_a=True, dtype='bf16', out_dtype='f32', stages=3)"),
        ("sm_90a", "HopperGemmConfig(trans_a=True, trans_b=True, block_m=256, block_n=128,"
                   " epilogue_n=64)"),
        ("sm_90a", "HopperGemmConfig(dtype='e4m3', block_k=128, trans_b=True)"),
        ("sm_90a", "HopperGemmConfig(dtype='e5m2', block_k=128, trans_b=True, out_dtype='f16')"),
        ("sm_90a", "HopperGemmConfig(dtype='e4m3', block_k=128, trans_b=True, out_dtype='f32',"
                   " stages=3, block_n=128, consumers=1)"),
        ("sm_90a", "HopperGemmConfig(dtype='s8', block_k=128, trans_b=True, stages=3)"),
        ("sm_90a", "HopperGemmConfig(dtype='tf32', block_k=32, trans_b=True, stages=3)"),
        ("sm_80", "AmpereGemmConfig(trans_b=True)"),
        ("sm_80", "AmpereGemmConfig(trans_a=True, dtype='bf16')"),
        ("sm_80", "AmpereGemmConfig(trans_a=True, trans_b=True, out_dtype='f32')"),
        ("sm_80", "AmpereGemmConfig(dtype='s8', block_k=64, trans_b=True)"),
        ("sm_80", "AmpereGemmConfig(dtype='tf32', block_k=16, trans_b=True)"),
    ],
)
def test_generated_kernels_assemble(arch, config):
    script = (
        "from tilec.compiler.tensorcore.hopper import HopperGemmConfig\n"
        "from tilec.compiler.tensorcore.ampere import AmpereGemmConfig\n"
        "from tilec.compiler.tensorcore import build_kernel\n"
        f"kernel = build_kernel({config}, {arch!r})\n"
        "print(kernel.registers, kernel.spill_bytes)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    registers, spills = map(int, result.stdout.split())
    assert spills == 0 and 0 < registers <= 255


def test_tma_runtime_needs_no_mlir():
    script = "import sys; sys.modules['mlir'] = None; import tilec.runtime.tma as t; print('ok')"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stdout.strip() == "ok", result.stderr
