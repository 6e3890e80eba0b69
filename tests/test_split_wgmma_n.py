"""A 64-row gemm on all of a block's warpgroups, N split between them (the opt-in
TILEC_SPLIT_WGMMA_N=1: infer-mma-layout's `split = "n"`, plan-wgmma-gemms' split_n).

The layouts are checked against wgmma's register contract per warpgroup;
tests/gpu/split_n_kernels.py's scores + row softmax compiles to m64n(N / warpgroups) wgmma PTX
that ptxas assembles without spills, declines to the CUDA cores where B's tile cannot be split,
and keeps its CPU numerics. Its GPU numerics: tests/gpu/test_split_wgmma_n_gpu.py (not yet run
on a GPU)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import randn
from test_attention_kernels import _ptxas_spill_bytes
from test_wgmma_per_op import element_indices

from tilec.compiler.layouts.nvidia import wgmma_operand_a
from tilec.compiler.passes._wgmma import (
    SharedOperandLayout,
    accumulator_layout,
    accumulator_register,
    operand_a_layout,
)
from tilec.compiler.targets.cuda import ptxas_path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from split_n_kernels import (  # noqa: E402
    decode_reference,
    decode_step,
    reference,
    scores_softmax,
)

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")


@pytest.mark.parametrize("warpgroups,n", [(2, 32), (2, 256), (4, 8), (4, 64)])
def test_split_accumulator_is_each_warpgroups_wgmma_fragment(warpgroups: int, n: int) -> None:
    """Thread t's fragment register r holds the element wgmma's m64nN writes to t's register
    r in its warpgroup g = t / 128: row 16 w + 8 h + l / 4, column g N + 8 j + 2 (l % 4) + c
    for r = 4 j + 2 h + c."""
    layout = accumulator_layout(64, warpgroups * n, warpgroups, False, True)
    assert layout.threads == 128 * warpgroups and layout.num_registers == n // 2
    for tid in range(layout.threads):
        lane, warp, group = tid % 32, (tid // 32) % 4, tid // 128
        for register in range(n // 2):
            flat = accumulator_register(0, register, n, False)
            row, column = layout.apply(flat, lane, tid // 32)
            half, step = (register // 2) % 2, register // 4
            assert row == 16 * warp + 8 * half + lane // 4
            assert column == group * n + 8 * step + 2 * (lane % 4) + register % 2


@pytest.mark.parametrize("warpgroups,k,element_bytes", [(2, 64, 2), (4, 32, 2), (2, 64, 1)])
def test_split_register_a_is_whole_in_every_warpgroup(warpgroups: int, k: int,
                                                      element_bytes: int) -> None:
    """Every warpgroup holds the whole A, each thread the registers of its place in one
    warpgroup's wgmma A fragment."""
    layout = operand_a_layout(64, k, warpgroups, element_bytes, False, True)
    single = wgmma_operand_a(64, k, 8 * element_bytes)
    assert layout.num_registers == single.num_registers
    for tid in range(layout.threads):
        for register in range(layout.num_registers):
            assert layout.apply(register, tid % 32, tid // 32) == \
                single.apply(register, tid % 32, (tid % 128) // 32)


@pytest.mark.parametrize("shape,k_major,span,split", [
    ((64, 64), True, 128, 32), ((128, 64), True, 128, 64), ((64, 32), True, 64, 8),
    ((64, 128), False, 128, 64), ((64, 256), False, 128, 128),
])
def test_warpgroup_share_of_b_starts_at_its_first_element(shape: tuple[int, int],
                                                          k_major: bool, span: int,
                                                          split: int) -> None:
    """A warpgroup's descriptors start `mn_offset(g N)` bytes into B's tile: where the layout
    puts its first N element (a row of a K-major N x K tile, a column of a K x N one), on a
    swizzle pattern's first row or a column box (`splits_at`)."""
    layout = SharedOperandLayout(shape, 2, k_major, span)
    assert layout.splits_at(split)
    point = (split, 0) if k_major else (0, split)
    assert element_indices(layout, [point])[0] * 2 == layout.mn_offset(split)
    assert not SharedOperandLayout((64, 64), 2, False, 128).splits_at(32)
    assert not SharedOperandLayout((64, 64), 2, True, 128).splits_at(4)


def _compiled(monkeypatch, tmp_path, opted_in: bool, **config):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    if opted_in:
        monkeypatch.setenv("TILEC_SPLIT_WGMMA_N", "1")
    else:
        monkeypatch.delenv("TILEC_SPLIT_WGMMA_N", raising=False)
    return scores_softmax.compile(M=200, N=300, target="cuda:sm_90a", **config)


@needs_ptxas
@pytest.mark.parametrize("config,instruction,per_step", [
    ({"block_N": 64}, "m64n32k16", 1),
    ({"block_N": 128, "transpose_K": False}, "m64n64k16", 1),
    ({"block_N": 128, "threads": 512}, "m64n32k16", 1),
    ({"block_N": 64, "threads": 384}, "m64n32k16", 1),  # the third warpgroup a copy
], ids=["k_major_b", "mn_major_b", "four_warpgroups", "384_threads"])
def test_split_n_runs_each_warpgroups_share_on_wgmma(monkeypatch, tmp_path, config: dict,
                                                     instruction: str, per_step: int) -> None:
    """With the opt-in every wgmma is m64n(block_N / warpgroups), 4 per 64-column K tile (once
    more where LLVM peels the loop), assembled without spills; without it the same kernel
    runs on the CUDA cores (a 64-row tile gave one warpgroup of a larger block)."""
    kernel = _compiled(monkeypatch, tmp_path, True, **config)
    assert kernel.artifact.binary_kind == "cubin"
    ptx = kernel.asm["ptx"]
    issued = re.findall(r"wgmma\.mma_async\.sync\.aligned\.(\w+)\.f32\.f16\.f16", ptx)
    assert set(issued) == {instruction}
    assert len(issued) in (4 * per_step, 8 * per_step)
    assert 'split = "n"' in kernel.asm["tile-cuda"] and "split_n = true" in \
        kernel.asm["tile-cuda"]
    assert _ptxas_spill_bytes(ptx) == 0
    plain = _compiled(monkeypatch, tmp_path, False, **config)
    assert "wgmma.mma_async" not in plain.asm["ptx"]


@needs_ptxas
def test_split_n_declined_where_b_cannot_split(monkeypatch, tmp_path) -> None:
    """B as K x N with N = 64: a warpgroup's 32 columns start inside a 64-column box, where no
    descriptor starts: the gemm stays on the CUDA cores, as without the opt-in."""
    kernel = _compiled(monkeypatch, tmp_path, True, block_N=64, transpose_K=False)
    assert kernel.artifact.binary_kind == "cubin"
    assert "wgmma.mma_async" not in kernel.asm["ptx"]
    assert "tile.wgmma" not in kernel.asm["tile-cuda"]


@needs_ptxas
def test_register_a_p_v_runs_on_both_warpgroups(monkeypatch, tmp_path) -> None:
    """MLA decode's block: the scores (64 x 64, m64n32 per warpgroup, 16 K steps over d 256),
    their softmax, then P V with P cast from them into registers, each warpgroup holding P
    whole and computing 128 of the 256 value columns (m64n128, 4 K steps over the 64 keys);
    without the opt-in neither gemm runs on wgmma."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_SPLIT_WGMMA_N", "1")
    ptx = decode_step.compile(N=300, target="cuda:sm_90a").asm["ptx"]
    issued = re.findall(r"wgmma\.mma_async\.sync\.aligned\.(\w+)\.f32\.f16\.f16", ptx)
    assert sorted(set(issued)) == ["m64n128k16", "m64n32k16"]
    assert issued.count("m64n32k16") == 16 and issued.count("m64n128k16") == 4
    assert re.search(r"wgmma\.mma_async\S*\s*\{[^}]*\},\s*\{", ptx), "P not from registers"
    assert _ptxas_spill_bytes(ptx) == 0
    monkeypatch.delenv("TILEC_SPLIT_WGMMA_N")
    assert "wgmma.mma_async" not in decode_step.compile(N=300, target="cuda:sm_90a").asm["ptx"]


def test_decode_step_cpu_numerics(rng: torch.Generator) -> None:
    """decode_step on the CPU target against float64, its output NaN-poisoned first."""
    q, kv = randn((64, 256), torch.float16, rng), randn((300, 256), torch.float16, rng)
    o = decode_step.compile(N=300, target="cpu").get_profiler().run_poisoned(q, kv)
    assert not o.isnan().any()
    torch.testing.assert_close(o.double(), decode_reference(q, kv), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("config", [{"block_N": 64}, {"block_N": 128, "transpose_K": False}])
def test_scores_softmax_cpu_numerics(monkeypatch, rng: torch.Generator, config: dict) -> None:
    """The kernel the GPU test runs, on the CPU target against float64 (outputs NaN-poisoned
    first): ragged M and N, the last key block partly past N."""
    monkeypatch.setenv("TILEC_SPLIT_WGMMA_N", "1")
    transpose_k = config.get("transpose_K", True)
    q = randn((200, 128), torch.float16, rng)
    k = randn((300, 128) if transpose_k else (128, 300), torch.float16, rng)
    kernel = scores_softmax.compile(M=200, N=300, target="cpu", **config)
    p, maxima = kernel.get_profiler().run_poisoned(q, k)
    expected_p, expected_max = reference(q, k, config["block_N"], transpose_k)
    assert not p.isnan().any() and not maxima.isnan().any()
    torch.testing.assert_close(maxima.double(), expected_max, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(p.double(), expected_p, rtol=1e-4, atol=1e-5)
