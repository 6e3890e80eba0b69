"""The opt-in NVIDIA code generation for memory-bound kernels on the int4 GEMV
(examples/quantized/gemv.py's gemv_uint_half2), in its sm_90a PTX, assembled by ptxas where it
is on the machine: the launch grid as known_grid_size (lower-tile-to-gpu: row bounds fold);
TILEC_UNSWITCH_INVARIANT_CONDITIONS=1 (unswitch-invariant-conditions) runs the step loop in a
version for aligned tensors without the copies' element-wise fallback; TILEC_FUSE_LOP3=1
(fuse-lop3) decodes each weight pair with one lop3.b32 instead of an and.b32
and an or.b32; TILEC_PACK_HALF_PAIRS=1 (pack-half-pairs) builds each activation pair with one
prmt.b32 of the loaded words, once per step, where ptxas rebuilt the packs for every row. The
passes' rewrites are pinned by lit_tests/passes/fuse-lop3.mlir, pack-half-pairs.mlir and
unswitch-invariant-conditions.mlir; GPU numerics and speed: benchmarks/quantized.py and
tests/gpu/test_unswitch_invariant_conditions_gpu.py (not yet run on the H200)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch

import tilec
import tilec.language as T

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "quantized"))

from gemv import gemv_uint, gemv_uint_half2, meta_weights  # noqa: E402

from tilec.compiler.tensorcore.ptx import ptxas_check  # noqa: E402

N, K = 256, 1024  # one step of 4 rows x 4 words a lane: 64 int4 pairs, 16 activation pairs


def _ptx(monkeypatch: pytest.MonkeyPatch, settings: dict[str, str], k: int = K, **config) -> str:
    for name in ("TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS", "TILEC_UNSWITCH_INVARIANT_CONDITIONS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    return gemv_uint_half2.compile(
        torch.empty(1, k, dtype=torch.float16, device="meta"),
        torch.empty(N, k // 8, dtype=torch.uint32, device="meta"),
        *meta_weights("uint4", N, k)[1:], target="cuda:sm_90a", **config).get_kernel_source()


def test_fuse_lop3_decodes_a_pair_with_one_lop3(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _ptx(monkeypatch, {})
    fused = _ptx(monkeypatch, {"TILEC_FUSE_LOP3": "1"})
    assert "lop3.b32" not in plain and plain.count("or.b32") >= 64
    # (word & mask) | 0x64006400 of every pair: a | (b & c) over (bias, word, mask)
    assert fused.count("lop3.b32") == 64 and fused.count(", 0xf8;") == 64
    assert fused.count("or.b32") == plain.count("or.b32") - 64
    assert "ld.local" not in fused and fused.count("fma.rn.f16x2") == plain.count("fma.rn.f16x2")


def test_pack_half_pairs_builds_activation_pairs_with_prmt(
        monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _ptx(monkeypatch, {})
    packed = _ptx(monkeypatch, {"TILEC_PACK_HALF_PAIRS": "1"})
    assert "prmt.b32" not in plain
    # pairs (j, j + 4) of a lane's 32 activations: the low halves of two words, then the high
    assert packed.count("prmt.b32") == 16
    assert packed.count("0x5410U;") == 8 and packed.count("0x7632U;") == 8
    assert "ld.local" not in packed and packed.count("ld.global.v4") == plain.count("ld.global.v4")


def test_both_with_integer_zeros_and_two_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    ptx = _ptx(monkeypatch, {"TILEC_FUSE_LOP3": "1", "TILEC_PACK_HALF_PAIRS": "1"},
               k=2 * K, integer_zeros=True, k_unroll=2)
    assert ptx.count("lop3.b32") == 2 * 64 and ptx.count("prmt.b32") == 2 * 16
    assert "ld.local" not in ptx


@pytest.mark.parametrize("bits", [4, 2])
def test_fuse_lop3_takes_sub_byte_fields_from_words(bits: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """gemv_uint's T.uint4 / T.uint2 weights (2 rows x 32 weights a lane and step), each
    converted to float32 by OR-ing its field into the bits of 2 ** 23: the byte taken out of
    its word (prmt) and its field shifted in 16 bits, masked and OR-ed were 3 to 5
    instructions; with fuse-lop3 a field is its word shifted in 32 bits (none for each word's
    first) and one lop3."""
    fmt = "uint4" if bits == 4 else "uint2"
    fields = 2 * 32

    def ptx(settings: dict[str, str]) -> str:
        monkeypatch.delenv("TILEC_FUSE_LOP3", raising=False)
        for name, value in settings.items():
            monkeypatch.setenv(name, value)
        return gemv_uint.compile(torch.empty(1, K, dtype=torch.float16, device="meta"),
                                 *meta_weights(fmt, N, K), target="cuda:sm_90a",
                                 bits=bits).get_kernel_source()

    plain, fused = ptx({}), ptx({"TILEC_FUSE_LOP3": "1"})
    assert plain.count("shr.u16") >= fields // 2 and "lop3.b32" not in plain
    assert fused.count("lop3.b32") == fields * 4 // bits and "shr.u16" not in fused
    assert fused.count("shr.u32") == fields * 4 // bits - 2 * 4
    assert plain.count("prmt.b32") - fused.count("prmt.b32") == 32
    assert "ld.local" not in fused


def _loads(ptx: str) -> dict[str, int]:
    return {kind: len(re.findall(rf"ld\.global\.{kind}\b", ptx))
            for kind in ("v4.b32", "b32", "b16")}


def test_unswitch_gives_the_step_loop_an_aligned_version(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two steps (one step's loop folds away): the loop where A's and B's bases are 16-byte
    aligned reads them by 16-byte loads only, its own 8 beside the loop as it was, which keeps
    the element-wise fallback (16 weight words, 32 activations); the scale and zero of each
    row (4 + 4 two-byte loads) are read in both."""
    plain = _loads(_ptx(monkeypatch, {}, k=2 * K))
    versioned = _loads(_ptx(monkeypatch, {"TILEC_UNSWITCH_INVARIANT_CONDITIONS": "1"}, k=2 * K))
    assert plain == {"v4.b32": 4 + 4, "b32": 16, "b16": 32 + 8}
    assert versioned == {"v4.b32": 2 * (4 + 4), "b32": 16, "b16": 32 + 2 * 8}
    both = _ptx(monkeypatch, {name: "1" for name in (
        "TILEC_UNSWITCH_INVARIANT_CONDITIONS", "TILEC_FUSE_LOP3", "TILEC_PACK_HALF_PAIRS")},
        k=2 * K, integer_zeros=True)
    assert both.count("lop3.b32") == 2 * 64 and "ld.local" not in both


def test_known_grid_folds_the_row_bounds() -> None:
    """The GEMV's grid (N / 16 blocks, constant) is the gpu.func's known_grid_size, so the row
    bounds of its loads (only a block past the grid fails them) fold away: the main loop has
    no branch left but its back edge, and nothing goes to local memory."""
    kernel = gemv_uint_half2.compile(
        torch.empty(1, K, dtype=torch.float16, device="meta"),
        torch.empty(N, K // 8, dtype=torch.uint32, device="meta"),
        *meta_weights("uint4", N, K)[1:], target="cuda:sm_90a")
    assert f"known_grid_size = array<i32: {N // 16}, 1, 1>" in kernel.asm["gpu"]
    ptx = kernel.get_kernel_source()
    # a step's loads stay 16-byte vectors: a row's 4 weight words and 4 x 8 activations a lane
    assert "ld.local" not in ptx and ptx.count("ld.global.v4") == 4 + 4


def test_known_grid_leaves_a_run_time_grid_alone() -> None:
    M = T.dynamic("M")

    @T.prim_func
    def double(X: T.Tensor((M,), "float32"), Y: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, 32), threads=32) as bx:
            for i in T.Parallel(32):
                if bx * 32 + i < M:
                    Y[bx * 32 + i] = X[bx * 32 + i] * 2.0

    kernel = tilec.compile(double, out_idx=[-1], target="cuda:sm_90a")
    assert "known_grid_size" not in kernel.asm["gpu"]


def test_prefetch_issues_the_next_steps_loads_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    """TILEC_PREFETCH_LOOP_LOADS=1 (prefetch-loop-loads) on the opted-in GEMV of three steps:
    the aligned step loop's 8 16-byte loads (4 weight words, 4 activation vectors) are issued
    once more, for the first step before the loop, each step's the next one's at min(i + 1, 2)
    (in both versions of the loop), the arithmetic unchanged, and the kernel capped at 128
    registers, at which ptxas keeps the loads at the step's start (126 registers, no spills);
    =96 caps it at 96."""
    opted_in = {"TILEC_FUSE_LOP3": "1", "TILEC_PACK_HALF_PAIRS": "1",
                "TILEC_UNSWITCH_INVARIANT_CONDITIONS": "1"}
    plain = _ptx(monkeypatch, opted_in, k=3 * K)
    prefetched = _ptx(monkeypatch, {**opted_in, "TILEC_PREFETCH_LOOP_LOADS": "1"}, k=3 * K)
    capped = _ptx(monkeypatch, {**opted_in, "TILEC_PREFETCH_LOOP_LOADS": "96"}, k=3 * K)
    monkeypatch.delenv("TILEC_PREFETCH_LOOP_LOADS")
    assert ".maxnreg" not in plain and ".maxnreg 128" in prefetched and ".maxnreg 96" in capped
    assert prefetched.count("ld.global.v4") == plain.count("ld.global.v4") + 8
    assert prefetched.count("min.u64") == 2 and "min.u64" not in plain
    assert prefetched.count("fma.rn.f16x2") == plain.count("fma.rn.f16x2")
    assert "ld.local" not in prefetched
    for ptx, most, least in ((plain, 80, 0), (prefetched, 128, 100), (capped, 96, 81)):
        report = ptxas_check(ptx, "sm_90a")
        assert report.ok, report.log
        if report.registers >= 0:  # ptxas on the machine
            assert least <= report.registers <= most and report.spill_bytes == 0, report.log
