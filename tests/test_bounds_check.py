"""The checked mode (pass config tilec.bounds_check): a shared, fragment or local buffer read or
written at a run-time index outside it is reported (the kernel's file:line, block, thread,
index, shape) and stops the kernel before the access; the default leaves it unchecked."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path

CHECKED = {tilec.PassConfigKey.TILEC_BOUNDS_CHECK: True}
MESSAGE = "tilec bounds check"


def gather(n: int = 8, m: int = 16):
    @T.prim_func
    def main(A: T.Tensor((n,), T.float32), Index: T.Tensor((m,), T.int32),
             B: T.Tensor((m,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            table = T.alloc_shared((n,), T.float32)
            T.copy(A, table)
            for i in T.Parallel(m):
                B[i] = table[Index[i]]

    return main


def test_indices_inside_compute_as_unchecked() -> None:
    a = torch.randn(8)
    index = torch.randint(0, 8, (16,), dtype=torch.int32)
    for configs in (CHECKED, None):
        b = torch.full((16,), float("nan"))
        tilec.compile(gather(), target="cpu", pass_configs=configs)(a, index, b)
        assert torch.equal(b, a[index.long()])


def test_only_unproven_indices_are_checked() -> None:
    checked = tilec.compile(gather(), target="cpu", pass_configs=CHECKED).asm["loops"]
    # the copy into the table and the loop over B index by loop variables inside their
    # extents: only the table's read at Index[i] is tested
    assert checked.count(MESSAGE) == 1
    assert "read of a shared buffer of shape (8,) at index (%ld)" in checked
    assert MESSAGE not in tilec.compile(gather(), target="cpu").asm["loops"]


def test_an_index_outside_reports_its_line_and_stops(tmp_path: Path) -> None:
    script = tmp_path / "outside.py"
    script.write_text(textwrap.dedent(f"""
        import sys, torch, tilec
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_bounds_check import CHECKED, gather
        kernel = tilec.compile(gather(), target="cpu", pass_configs=CHECKED)
        index = torch.arange(16, dtype=torch.int32) % 8
        index[5] = -3
        kernel(torch.randn(8), index, torch.zeros(16))
        print("after the kernel")
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == -signal.SIGILL, done.stderr
    line = next(n for n, text in enumerate(Path(__file__).read_text().splitlines(), 1)
                if "B[i] = table[Index[i]]" in text)
    assert done.stdout.splitlines() == [
        f"{MESSAGE}: {Path(__file__).resolve()}:{line}: BlockIdx=(0, 0, 0), ThreadIdx=(0, 0, 0): "
        "read of a shared buffer of shape (8,) at index (-3)"]


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_cuda_prints_and_traps() -> None:
    ptx = tilec.compile(gather(), target="cuda:sm_90a", pass_configs=CHECKED).get_kernel_source()
    assert "trap;" in ptx and "vprintf" in ptx
    ptx = tilec.compile(gather(), target="cuda:sm_90a").get_kernel_source()
    assert "trap;" not in ptx and "vprintf" not in ptx


def test_a_target_without_the_checked_mode_says_so() -> None:
    with pytest.raises(tilec.TilecError, match="checked mode .* not ascend"):
        tilec.compile(gather(), target="ascend", pass_configs=CHECKED)
