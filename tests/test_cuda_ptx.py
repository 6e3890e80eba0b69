"""CI for the CUDA target on a machine without a GPU: every CUDA test kernel compiles to PTX for
sm_80 and sm_90a, and ptxas assembles it (the cubin stage runs ptxas).

The kernels are those of the GPU suite: tile IR written out (tests/gpu/kernels.py) and
TileLang-style Python kernels through the frontend (tests/gpu/frontend_kernels.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from kernels import KernelSpec, all_kernels  # noqa: E402

from tilec.compiler.targets.cuda import ptxas_path  # noqa: E402

ARCHES = ["sm_80", "sm_90a"]
CUBIN_MAGIC = b"\x7fELF"

pytestmark = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")


def compile_spec(spec: KernelSpec, arch: str):
    from build_artifacts import compile_spec as build

    return build(spec, f"cuda:{arch}")


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("spec", all_kernels(), ids=lambda spec: spec.name)
def test_tile_ir_kernel_assembles(spec: KernelSpec, arch: str) -> None:
    artifact = compile_spec(spec, arch)
    assert artifact.binary_kind == "cubin"
    assert artifact.binary.startswith(CUBIN_MAGIC)
    ptx = artifact.asm["ptx"]
    assert f".target {arch}" in ptx
    assert f".entry {spec.name}(" in ptx
    tensors = sum(p.kind == "tensor" for p in spec.params)
    # dynamic row lengths keep these GEMMs off the whole-kernel tensor-core path (16-byte rows
    # unknown); on sm_90a their gemms run per op on wgmma
    assert "tile.tensorcore" not in artifact.asm["tile-cuda"]
    assert [slot[0] for slot in artifact.launch["abi"][:tensors]] == ["ptr"] * tensors
    assert artifact.launch["threads"] == spec.threads


@pytest.mark.parametrize("arch", ARCHES)
def test_frontend_kernels_assemble(arch: str, tmp_path: Path, monkeypatch) -> None:
    from frontend_kernels import cases, matmul

    import tilec

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    for case in cases():
        kernel = tilec.compile(case.factory(), out_idx=case.out_idx, target=f"cuda:{arch}")
        assert kernel.artifact.binary_kind == "cubin", case.name
        assert kernel.get_kernel_source().startswith("//"), case.name
    import torch

    a = torch.empty(77, 33, dtype=torch.float16)
    b = torch.empty(33, 45, dtype=torch.float16)
    kernel = matmul.compile(a, b, target=f"cuda:{arch}")
    assert kernel.artifact.binary_kind == "cubin"
    assert "gpu" in kernel.asm and "nvvm" in kernel.asm and "ptx" in kernel.asm


def test_shared_memory_and_launch_metadata() -> None:
    spec = next(s for s in all_kernels() if s.name.startswith("gemm_float16_128x128"))
    artifact = compile_spec(spec, "sm_90a")
    # two 128x32 / 32x128 f16 wgmma operand tiles on 1 KiB boundaries, after the 1 KiB that
    # finds the first boundary in the dynamic window
    assert artifact.launch["shared_bytes"] == 1024 + 2 * 128 * 32 * 2
    assert artifact.launch["grid"] == spec.grid
    assert artifact.launch["abi"][-3:] == [["dim", 1, 1], ["dim", 2, 0], ["dim", 2, 1]]


def test_unknown_arch_is_a_compile_error() -> None:
    from tilec.errors import CompileError

    spec = all_kernels()[0]
    with pytest.raises(CompileError, match="unsupported CUDA arch 'sm_75'"):
        compile_spec(spec, "sm_75")


@pytest.mark.parametrize("arch", ARCHES)
def test_flash_attention_assembles(arch: str, tmp_path: Path, monkeypatch) -> None:
    """TileLang's flash-attention forward: a fragment -> fragment cast copy (acc_s to
    acc_s_cast, converted through shared memory), row reductions of a gemm accumulator
    (shuffles) and T.Parallel row rescales whose row vectors are converted to the other
    accumulator's rows; it compiles to a cubin on the CUDA target."""
    from test_numerics_cpu import flash_attention

    import tilec

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    kernel = tilec.compile(flash_attention(1, 2, 128, 64, True, block_M=64, block_N=64),
                           out_idx=[3], target=f"cuda:{arch}")
    assert kernel.artifact.binary_kind == "cubin"
    assert "shfl.sync.bfly" in kernel.get_kernel_source()


def row_layernorm(M: int, N: int, block_M: int = 4):
    """Row LayerNorm as TileLang writes it: a shared -> fragment copy, reduce_sum twice."""
    import tilec.language as T

    @T.prim_func
    def kernel(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            staged = T.alloc_shared((block_M, N), "float32")
            x = T.alloc_fragment((block_M, N), "float32")
            squares = T.alloc_fragment((block_M, N), "float32")
            mean = T.alloc_fragment((block_M,), "float32")
            variance = T.alloc_fragment((block_M,), "float32")
            T.copy(X[bx * block_M, 0], staged)
            T.copy(staged, x)
            T.reduce_sum(x, mean, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] - mean[i] / N
                squares[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(squares, variance, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] * T.rsqrt(variance[i] / N + 1e-5)
            T.copy(x, Y[bx * block_M, 0])

    return kernel


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("n", [256, 384])  # 384: a ragged row, padded layout, masked registers
def test_row_layernorm_assembles(arch: str, n: int, tmp_path: Path, monkeypatch) -> None:
    import tilec

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    kernel = tilec.compile(row_layernorm(1000, n), out_idx=[1], target=f"cuda:{arch}")
    assert kernel.artifact.binary_kind == "cubin"
    assert "shfl.sync.bfly" in kernel.get_kernel_source()


def test_code_for_device_picks_cubin_ptx_or_a_clear_error() -> None:
    """What the runtime loads where the GPU is not the target's chip: an sm_80 cubin on 8.x,
    its PTX on sm_90 (the driver compiles it; the cubin would be 'no kernel image is
    available'), and a LaunchError naming both chips where no code of the kernel runs."""
    from tilec.errors import LaunchError
    from tilec.runtime.cuda import code_for_device

    spec = next(s for s in all_kernels() if s.name.startswith("gemm_float16_128x128"))
    sm80 = compile_spec(spec, "sm_80")
    assert sm80.binary_kind == "cubin" and sm80.launch["arch"] == "sm_80"
    assert ".target sm_80" in sm80.asm["ptx"]
    for capability in ((8, 0), (8, 6), (8, 9)):
        assert code_for_device(sm80, capability) == sm80.binary
    for capability in ((9, 0), (10, 0), (12, 0)):
        assert code_for_device(sm80, capability) == sm80.asm["ptx"].encode()
    with pytest.raises(LaunchError, match=r"compiled for sm_80, which runs on compute "
                       r"capability 8\.0 and later; this GPU is sm_75.*\"cuda:sm_75\""):
        code_for_device(sm80, (7, 5))
    sm90a = compile_spec(spec, "sm_90a")
    assert code_for_device(sm90a, (9, 0)) == sm90a.binary
    for capability, suggested in (((10, 0), "sm_100a"), ((8, 9), "sm_89")):
        with pytest.raises(LaunchError, match=rf"compiled for sm_90a, which runs on compute "
                           rf"capability 9\.0 only; this GPU is .*\"cuda:{suggested}\""):
            code_for_device(sm90a, capability)
    sm80.asm.pop("ptx")
    with pytest.raises(LaunchError, match="holds a cubin for sm_80, which runs on 8.x GPUs "
                       "only, and no PTX"):
        code_for_device(sm80, (9, 0))
