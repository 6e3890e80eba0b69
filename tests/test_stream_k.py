"""Stream-K GEMM as TileLang's gemm_streamk example writes it: a `while` loop over runs of
k-steps, a T.Pipelined loop of run-time length in it, atomics for the tiles a run covers in part.

CPU target: numerics against float64 on fresh random inputs. CUDA target: the shared tiles the
loop inside the `while` fills and the gemm reads are separated by barriers (they had none there,
so the GPU read tiles other threads were still writing: a silent wrong result on the H200); the
kernel assembles for sm_90a. Its numerics on a GPU: tests/gpu/test_frontend_kernels.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from conftest import randn
from mlir import ir

import tilec.dialect as tile_dialect
from tilec.compiler.passes._ir_walk import walk
from tilec.compiler.targets.cuda import ptxas_path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from frontend_kernels import STREAM_K_PROBLEMS, matmul_stream_k  # noqa: E402


@pytest.mark.parametrize("problem", STREAM_K_PROBLEMS, ids=lambda p: "x".join(map(str, p)))
def test_stream_k_on_cpu(problem: tuple[int, int, int, int], rng: torch.Generator) -> None:
    M, N, K, programs = problem
    a, b = randn((M, K), torch.float16, rng), randn((N, K), torch.float16, rng)
    c = torch.zeros(M, N)  # partial tiles are added into it
    matmul_stream_k.compile(a, b, c, programs=programs, target="cpu")(a, b, c)
    expected = a.double() @ b.double().T
    error = ((c.double() - expected).norm() / expected.norm()).item()
    assert error < 1e-6, f"relative error {error:.3g}"


def _names(block: ir.Block) -> list[str]:
    return [op.operation.name for op in block.operations]


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_stream_k_loop_in_while_gets_its_barriers() -> None:
    M, N, K, programs = STREAM_K_PROBLEMS[0]
    kernel = matmul_stream_k.compile(M=M, N=N, K=K, programs=programs, target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    with tile_dialect.new_context():
        module = ir.Module.parse(kernel.asm["tile-cuda"])
        loops = [op for op in walk(module.operation) if op.name == "tile.pipelined"
                 and any(parent.name == "scf.while" for parent in _ancestors(op))]
        assert len(loops) == 1
        body = _names(loops[0].regions[0].blocks[0])
        copies = [n for n, name in enumerate(body) if name == "tile.copy"]
        assert len(copies) == 2
        # the previous k-step's gemm read the tiles: wait before overwriting them ...
        assert "gpu.barrier" in body[:copies[0]]
        # ... and for the copies before the gemm (here on CUDA cores: a tile.for) reads them
        assert body[copies[-1] + 1:].index("gpu.barrier") < body[copies[-1] + 1:].index(
            "tile.for")


def _ancestors(op: ir.Operation) -> list[ir.Operation]:
    found = []
    parent = op.parent
    while parent is not None and parent.name != "builtin.module":
        found.append(parent)
        parent = parent.parent
    return found
