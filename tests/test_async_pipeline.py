"""cp.async pipelines of T.Pipelined on the SIMT path, on a machine without a GPU: the kernels
of the GPU suite whose loops are marked (tests/gpu/kernels.py cp_async_kernels) compile for
sm_80 and sm_90a, ptxas assembles them, and their PTX holds the pipeline (cp.async with a
src-size operand, commit/wait groups, S slots of shared memory). The numerics run on the GPU
(tests/gpu/test_cuda_suite.py -k cp_async)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from kernels import cp_async_kernels  # noqa: E402

from tilec.compiler.targets.cuda import ptxas_path  # noqa: E402

ARCHES = ["sm_80", "sm_90a"]


def compile_spec(spec, arch: str):
    from build_artifacts import compile_spec as build

    return build(spec, f"cuda:{arch}")


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("spec", cp_async_kernels(), ids=lambda spec: spec.name)
def test_pipelined_kernel_assembles_with_cp_async(spec, arch: str) -> None:
    artifact = compile_spec(spec, arch)
    assert artifact.binary_kind == "cubin" and artifact.binary.startswith(b"\x7fELF")
    ptx = artifact.asm["ptx"]
    stages = int(spec.name.rsplit("cp_async", 1)[1])
    # 16-byte copies bypass L1; the src-size register zero-fills what lies outside the tensor
    assert re.search(r"cp\.async\.cg\.shared\.global \[%rd\d+(\+\d+)?\], \[%rd\d+\], 16, %r\d+;",
                     ptx)
    assert "cp.async.commit_group;" in ptx
    assert re.search(rf"cp\.async\.wait_group\s+{stages - 2};", ptx)
    assert re.search(r"cp\.async\.wait_group\s+0;", ptx)
    gpu = artifact.asm["gpu"]
    assert gpu.count("nvvm.cp.async.wait.group 0") == gpu.count(f"nvvm.cp.async.wait.group "
                                                                f"{stages - 2}") or stages == 2
    assert "tile.tensorcore" not in artifact.asm["tile-cuda"]


def test_slots_multiply_shared_memory() -> None:
    """Each pipelined tile takes S slots: the row sum's one 16x64 f32 tile 3 times; the
    softmax's three tiles (one per loop, never alive at once: plan-shared-memory gives them
    the same bytes) twice."""
    specs = {spec.name: spec for spec in cp_async_kernels()}
    row_sum = compile_spec(specs["row_sum_float32_cp_async3"], "sm_90a")
    assert row_sum.launch["shared_bytes"] == 3 * 16 * 64 * 4
    softmax = compile_spec(specs["softmax_long_float32_cp_async2"], "sm_90a")
    assert softmax.launch["shared_bytes"] == 2 * 16 * 64 * 4


def test_unmarked_loop_is_unchanged() -> None:
    """Without the marks the same kernel is the plain synchronous loop (one tile)."""
    spec = next(s for s in cp_async_kernels() if s.name == "row_sum_float32_cp_async3")
    spec.tile_ir = re.sub(r'attributes \{tile\.pipeline = \{[^}]*\}\}', "", spec.tile_ir)
    spec.tile_ir = spec.tile_ir.replace('{tile.async = "cp.async"}', "")
    artifact = compile_spec(spec, "sm_90a")
    assert artifact.launch["shared_bytes"] == 16 * 64 * 4
    assert "cp.async" not in artifact.asm["ptx"]


def _two_loops_one_tile(rows: int = 256, cols: int = 64, block: int = 64):
    """Two T.Pipelined loops filling the same shared tile (as TileLang's linear attention
    backward does with its k/v tiles): the tile is used outside each loop, so neither loop may
    ring it; finding that walks up from the other loop's uses to the module."""
    import tilec.language as T

    @T.prim_func
    def two_loops_one_tile(A: T.Tensor((rows, cols), "float32"),
                           B: T.Tensor((block, cols), "float32")):
        with T.Kernel(1, threads=128):
            tile = T.alloc_shared((block, cols), "float32")
            acc = T.alloc_fragment((block, cols), "float32")
            T.clear(acc)
            for i in T.Pipelined(rows // block, num_stages=2):
                T.copy(A[i * block:(i + 1) * block, 0:cols], tile)
                for r, c in T.Parallel(block, cols):
                    acc[r, c] += tile[r, c]
            for i in T.Pipelined(rows // block, num_stages=2):
                T.copy(A[i * block:(i + 1) * block, 0:cols], tile)
                for r, c in T.Parallel(block, cols):
                    acc[r, c] += tile[r, c] * 2.0
            T.copy(acc, B)

    return two_loops_one_tile


def test_tile_shared_by_two_pipelined_loops_on_cpu() -> None:
    import torch

    import tilec

    kernel = tilec.compile(_two_loops_one_tile(), out_idx=[1], target="cpu")
    a = torch.randn(256, 64)
    expected = 3 * a.double().view(4, 64, 64).sum(0)
    torch.testing.assert_close(kernel(a).double(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("arch", ARCHES)
def test_tile_shared_by_two_pipelined_loops_compiles(arch: str) -> None:
    """Neither loop rings the shared tile: it keeps one slot and is copied synchronously."""
    import tilec

    kernel = tilec.compile(_two_loops_one_tile(), out_idx=[1], target=f"cuda:{arch}")
    assert kernel.artifact.binary.startswith(b"\x7fELF")
    assert kernel.artifact.launch["shared_bytes"] == 64 * 64 * 4
