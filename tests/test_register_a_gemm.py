"""T.gemm with A in registers, as TileLang writes it (T.copy(A_shared, A_frag) in the loop, then
T.gemm(A_frag, B_shared, C)), compiled through tilec.jit / tilec.compile (CPU only).

On sm_90a it becomes the whole kernel with HopperGemmConfig.a_registers (ldmatrix from the TMA
slot, RS wgmma); with TILEC_PER_OP_GEMMS=1 its gemm runs per op, the RS form of wgmma on A's
registers loaded from the TMA ring's slot; on sm_80 the gemm runs per op on mma.sync
(plan-mma-sync-gemms); tiles wgmma cannot cover stay on the SIMT path on sm_90a. The numbers
themselves are checked on the H200 by tests/gpu/test_frontend_kernels.py; here the chosen
config, the PTX's instructions, and the CPU target's result.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import randn
from mlir import ir

import tilec
import tilec.language as T
from tilec.compiler.passes.lower_gemm_to_tensorcore import LAUNCH_ATTR
from tilec.dialect import new_context
from tilec.jit import JITKernel

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from frontend_kernels import matmul_register_a  # noqa: E402

RS_WGMMA = re.compile(  # four A registers, B's descriptor, scale-d, scale-a/b, transpose-B
    r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.(\w+)\.\w+ \{[^}]*\}, "
    r"\{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, p, 1, 1, 1;"
)
LDMATRIX = "ldmatrix.sync.aligned.m8n8.x4.shared.b16"


def register_a_prim_func(M: int, N: int, K: int, dtype: str = "float16", block_M: int = 128,
                         block_N: int = 128, block_K: int = 32):
    """The same kernel as a classic TileLang prim_func (for tilec.compile)."""

    @T.prim_func
    def kernel(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
               C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            A_frag = T.alloc_fragment((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.copy(A_shared, A_frag)
                T.gemm(A_frag, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return kernel


def tensorcore_config(kernel: JITKernel) -> dict | None:
    """The generator config lower-gemm-to-tensorcore chose (its tile.tensorcore metadata), or
    None when the kernel went the SIMT way."""
    with new_context() as context:
        module = ir.Module.parse(kernel.artifact.asm["tile-cuda"], context)
        attributes = module.operation.attributes
        if LAUNCH_ATTR not in attributes:
            return None
        return json.loads(ir.StringAttr(attributes[LAUNCH_ATTR]).value)["config"]


def compile_jit(shape: tuple[int, int, int], torch_dtype: torch.dtype, target: str, **knobs):
    m, n, k = shape
    a, b = torch.empty(m, k, dtype=torch_dtype), torch.empty(k, n, dtype=torch_dtype)
    return matmul_register_a.compile(a, b, target=target, **knobs)


@pytest.fixture
def whole_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """TILEC_PER_OP_GEMMS=0 (the default): lower-gemm-to-tensorcore's whole kernel on sm_90a."""
    monkeypatch.setenv("TILEC_PER_OP_GEMMS", "0")


def test_register_a_runs_rs_wgmma_per_op_on_sm90a(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_PER_OP_GEMMS", "1")
    kernel = compile_jit((1024, 1024, 1024), torch.float16, "cuda:sm_90a")
    assert tensorcore_config(kernel) is None
    assert "a_registers = true" in kernel.artifact.asm["tile-cuda"]
    assert {match.groups() for match in RS_WGMMA.finditer(kernel.artifact.asm["ptx"])} == {
        ("128", "f16")}
    assert "cp.async.bulk.tensor" in kernel.artifact.asm["ptx"]  # the TMA ring feeds it


@pytest.mark.usefixtures("whole_kernel")
def test_quickstart_with_register_a_is_the_rs_wgmma_kernel_on_sm90a() -> None:
    kernel = compile_jit((1024, 1024, 1024), torch.float16, "cuda:sm_90a")
    config = tensorcore_config(kernel)
    assert config is not None
    assert config["a_registers"] and not config["trans_a"] and not config["trans_b"]
    # the quickstart's schedule: one 128B row of K per stage, a 6-deep ring, one consumer
    assert (config["block_m"], config["block_n"], config["block_k"]) == (128, 128, 64)
    assert (config["stages"], config["consumers"], config["dtype"]) == (6, 1, "f16")
    assert kernel.artifact.launch["threads"] == [256, 1, 1]
    assert kernel.artifact.launch["tma"]["A"] == {"box": [64, 128], "swizzle": 128}
    ptx = kernel.artifact.asm["ptx"]
    loads = re.findall(LDMATRIX + r" \{[^}]*\}, \[%r\d+\+(\d+)\];", ptx)
    assert set(loads) == {"0", "8192"}  # each warp's slice of both 64-row atoms of A
    assert {match.groups() for match in RS_WGMMA.finditer(ptx)} == {("128", "f16")}
    schedule = kernel.artifact.asm["tile-schedule"]
    assert 'tile.swizzle = "128B"} : memref<128x32xf16, "shared">' in schedule
    assert 'a_source = "registers"' in schedule


@pytest.mark.usefixtures("whole_kernel")
@pytest.mark.parametrize("torch_dtype, name", [(torch.float16, "f16"), (torch.bfloat16, "bf16")])
def test_ragged_two_consumer_register_a(torch_dtype: torch.dtype, name: str) -> None:
    dtype = T.float16 if name == "f16" else T.bfloat16
    kernel = compile_jit((1000, 1016, 1000), torch_dtype, "cuda:sm_90a", block_N=256,
                         threads=256, block_K=64, num_stages=4, dtype=dtype)
    config = tensorcore_config(kernel)
    assert config is not None and config["a_registers"]
    assert (config["block_n"], config["consumers"], config["dtype"]) == (256, 2, name)
    assert {match.groups() for match in RS_WGMMA.finditer(kernel.artifact.asm["ptx"])} == {
        ("256", name)
    }


@pytest.mark.usefixtures("whole_kernel")
def test_prim_func_through_tilec_compile() -> None:
    kernel = tilec.compile(register_a_prim_func(1000, 1016, 1000, "bfloat16"), out_idx=[2],
                           target="cuda:sm_90a")
    config = tensorcore_config(kernel)
    assert config is not None and config["a_registers"] and config["dtype"] == "bf16"
    assert LDMATRIX in kernel.artifact.asm["ptx"]


def test_sm80_register_a_runs_mma_sync_per_op() -> None:
    kernel = compile_jit((1024, 1024, 1024), torch.float16, "cuda:sm_80")
    assert tensorcore_config(kernel) is None  # not the whole-kernel generator
    ptx = kernel.artifact.asm["ptx"]
    assert "mma.sync.aligned.m16n8k16" in ptx and "wgmma" not in ptx
    assert "cp.async" in ptx  # the per-op path's pipelined loop


def test_tile_wgmma_cannot_cover_stays_simt_on_sm90a() -> None:
    kernel = compile_jit((1024, 1024, 1024), torch.float16, "cuda:sm_90a", block_N=32)
    assert tensorcore_config(kernel) is None
    assert "wgmma" not in kernel.artifact.asm["ptx"]


def test_register_a_on_the_cpu_target(rng: torch.Generator) -> None:
    a = randn((200, 100), torch.float16, rng)
    b = randn((100, 136), torch.float16, rng)
    kernel = compile_jit((200, 136, 100), torch.float16, "cpu", block_M=64, block_N=64)
    c = kernel.get_profiler().run_poisoned(a, b)
    expected = a.double() @ b.double()
    error = ((c.double() - expected).norm() / expected.norm()).item()
    assert not c.isnan().any() and error < 2e-3
