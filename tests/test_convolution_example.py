"""examples/convolution/conv2d.py, the NHWC implicit GEMM: numerics on the CPU target against
torch's float32 conv2d (random inputs, poisoned output, output pixels that fill no tile,
padding, stride 2, a 1x1 filter), and on sm_90a its gemm on wgmma with the patch rows read
and stored as 16-byte vectors when synchronous (TILEC_ASYNC_GATHERS=0), and by default through
the loop's cp.async pipeline (speed: benchmarks/convolution.py on the GPU).
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "convolution"))

import conv2d  # noqa: E402

from tilec.compiler.tensorcore.ptx import ptxas_check  # noqa: E402
from tilec.errors import TilecError  # noqa: E402

SMALL = {"block_M": 64, "block_N": 64, "block_K": 32, "num_stages": 2, "threads": 128}


@pytest.mark.parametrize("n, h, w, c, f, kernel, stride, pad", [
    (2, 9, 7, 64, 64, 3, 1, 1),  # 126 pixels: the second tile ragged
    (1, 10, 10, 32, 96, 3, 2, 1),  # stride 2; F ragged in the second column of tiles
    (2, 5, 6, 64, 64, 1, 1, 0),  # a 1x1 filter
])
def test_conv2d_matches_torch_on_cpu(n, h, w, c, f, kernel, stride, pad) -> None:
    torch.manual_seed(0)
    data = torch.randn(n, h, w, c).half()
    weight = (torch.randn(kernel, kernel, c, f) * 0.1).half()
    compiled = conv2d.conv2d_nhwc.compile(data, weight, stride=stride, pad=pad, target="cpu",
                                          **SMALL)
    result = compiled.get_profiler().run_poisoned(data, weight)
    expected = conv2d.reference(data, weight, stride, pad, 1)
    assert not result.float().isnan().any(), "an output pixel was never written"
    torch.testing.assert_close(result.float(), expected, atol=2e-2, rtol=1e-2)


def test_conv2d_runs_on_wgmma_with_vector_patch_reads_and_stores(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_ASYNC_GATHERS", "0")  # the synchronous gather
    data = torch.empty(64, 28, 28, 128, dtype=torch.float16, device="meta")
    weight = torch.empty(3, 3, 128, 128, dtype=torch.float16, device="meta")
    ptx = conv2d.conv2d_nhwc.compile(data, weight, target="cuda:sm_90a").get_kernel_source()
    assert "wgmma.mma_async" in ptx and "ld.global.v4" in ptx and "cp.async" in ptx
    # each 16-byte patch read goes to the swizzled tile as one 16-byte store
    lines = [line.strip() for line in ptx.splitlines()]
    reads = [at for at, line in enumerate(lines) if line.startswith("ld.global.v4")]
    for at in reads:
        store = next(line for line in lines[at:] if line.startswith("st.shared"))
        assert store.startswith("st.shared.v4"), store


@pytest.mark.parametrize("arch, instruction, barriers", [
    ("sm_90a", "wgmma.mma_async", 2),
    ("sm_80", "mma.sync", 3),  # the loop twice: aligned sources or not, one drain each
])
def test_conv2d_gather_joins_the_cp_async_pipeline(
        arch: str, instruction: str, barriers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """By default (TILEC_ASYNC_GATHERS=0 turns it off) the patch gather is issued ahead by the
    loop's cp.async pipeline with the filter tile: 3 issues (two in the prologue, one per
    iteration) of 4 patch and 4 filter chunks per thread at 128 x 64 / 64 x 128 tiles over 256
    threads, each patch chunk's src-size a register (0 where the tap falls into the padding:
    zero-filled), and one barrier per iteration plus the drain's (the synchronous gather needed
    its own)."""
    monkeypatch.delenv("TILEC_ASYNC_GATHERS", raising=False)
    data = torch.empty(64, 28, 28, 128, dtype=torch.float16, device="meta")
    weight = torch.empty(3, 3, 128, 128, dtype=torch.float16, device="meta")
    ptx = conv2d.conv2d_nhwc.compile(data, weight, target=f"cuda:{arch}").get_kernel_source()
    assert instruction in ptx
    copies = re.findall(r"cp\.async\.cg\.shared\.global \[[^]]+\], \[[^]]+\], (\S+), (\S+);",
                        ptx)
    assert len(copies) == 3 * (4 + 4)
    # each patch chunk's src-size a register; the filter's too, or 16 where the launch grid
    # (known_grid_size) proves its rows in bounds
    assert all(size == "16" for size, _ in copies)
    assert sum(fill.startswith("%r") for _, fill in copies) >= 3 * 4
    assert all(fill.startswith("%r") or fill == "16" for _, fill in copies)
    assert ptx.count("bar.sync") == barriers


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on this machine")
@pytest.mark.parametrize("shape, config", [
    ((64, 28, 28, 128, 128), {}),
    ((64, 56, 56, 64, 64), {"block_N": 64, "threads": 128}),
])
def test_conv2d_wgmmas_are_not_serialized(shape: tuple, config: dict,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """ptxas issues the cp.async pipeline's wgmmas back to back: the epilogue's alignment
    check is tested after the loop's drain (lower-tile-to-gpu), where LLVM had tested it ahead
    of wgmma.wait_group 0 and ptxas serialized every wgmma (C7514), at ResNet-50's conv3_x
    and conv2_x configs of benchmarks/convolution.py."""
    monkeypatch.delenv("TILEC_ASYNC_GATHERS", raising=False)
    monkeypatch.delenv("TILEC_DRAINED_CHECKS", raising=False)
    n, h, w, c, f = shape
    data = torch.empty(n, h, w, c, dtype=torch.float16, device="meta")
    weight = torch.empty(3, 3, c, f, dtype=torch.float16, device="meta")
    ptx = conv2d.conv2d_nhwc.compile(data, weight, target="cuda:sm_90a",
                                     **config).get_kernel_source()
    report = ptxas_check(ptx, "sm_90a")
    assert report.ok and report.spill_bytes == 0
    assert "C7514" not in report.log and "are serialized" not in report.log
    monkeypatch.setenv("TILEC_DRAINED_CHECKS", "0")  # as before: serialized
    before = conv2d.conv2d_nhwc.compile(data, weight, target="cuda:sm_90a",
                                        **config).get_kernel_source()
    assert "C7514" in ptxas_check(before, "sm_90a").log


def test_conv2d_rejects_channels_past_its_blocks() -> None:
    data = torch.empty(1, 8, 8, 48, dtype=torch.float16, device="meta")
    weight = torch.empty(3, 3, 48, 64, dtype=torch.float16, device="meta")
    with pytest.raises(TilecError, match=r"conv2d\.py:\d+: ValueError: .*must divide C = 48"):
        conv2d.conv2d_nhwc.compile(data, weight, target="cpu")
