"""T.print, the checked mode and T.device_assert on the GPU: the lines vprintf prints, a bad
index reported and trapped, a failed assert's message and the launch's error. The kernels
(tests/gpu/debug_kernels.py) come from the cache; each runs in a process of its own, whose
stdout gets the device's lines when it synchronizes (and whose CUDA context a trap ends)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from debug_kernels import (  # noqa: E402
    ASSERT_BLOCKS,
    ASSERT_LIMIT,
    LOOKUPS,
    PRINT_BLOCKS,
    PRINT_COLUMNS,
    PRINT_ROWS,
    PRINT_THREADS,
    TABLE,
)


def _run(code: str) -> subprocess.CompletedProcess:
    script = f"import sys\nsys.path.insert(0, {str(HERE)!r})\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)


def test_print_lines_come_from_the_device() -> None:
    done = _run("""
        import torch, tilec
        from debug_kernels import printing
        a = torch.arange(6, dtype=torch.float32).reshape(2, 3).cuda()
        b = tilec.compile(printing(), out_idx=[1], target="cuda")(a)
        torch.cuda.synchronize()
        print("B", b.cpu().flatten().tolist(), flush=True)
    """)
    assert done.returncode == 0, done.stderr
    elements = PRINT_ROWS * PRINT_COLUMNS
    expected = []
    for block in range(PRINT_BLOCKS):
        where = f"BlockIdx=({block}, 0, 0)"
        for thread in range(PRINT_THREADS):
            expected.append(f"msg='expr<bx * 10 + 1>' {where}, ThreadIdx=({thread}, 0, 0): "
                            f"dtype=int value={block * 10 + 1}")
            expected.append(f"msg='hello' {where}, ThreadIdx=({thread}, 0, 0)")
        expected += [f"msg='tile' {where}, ThreadIdx=(0, 0, 0): buffer=tile, index={n}, "
                     f"dtype=float value={n:f}" for n in range(elements)]
        expected += [f"msg='buffer<acc, float32>' {where}, ThreadIdx=(32, 0, 0): buffer=acc, "
                     f"index={n}, dtype=float value={2 * n + block:f}" for n in range(elements)]
    lines = done.stdout.splitlines()
    # every line once; the order between threads and blocks is the GPU's
    assert sorted(line for line in lines if line.startswith("msg=")) == sorted(expected)
    assert lines[-1] == "B " + str([2.0 * n + block for block in range(PRINT_BLOCKS)
                                    for n in range(elements)])


def test_checked_mode_reports_a_bad_index_and_stops_the_kernel() -> None:
    done = _run(f"""
        import torch, tilec
        from debug_kernels import CHECKED, gather
        kernel = tilec.compile(gather(), target="cuda", pass_configs=CHECKED)
        index = torch.arange({LOOKUPS}, dtype=torch.int32) % {TABLE}
        index[5] = 11
        try:
            kernel(torch.randn({TABLE}).cuda(), index.cuda(), torch.zeros({LOOKUPS}).cuda())
            torch.cuda.synchronize()
            print("no error", flush=True)
        except Exception as error:
            print("raised:", error, flush=True)
    """)
    reports = [line for line in done.stdout.splitlines() if "tilec bounds check" in line]
    assert reports, done.stdout + done.stderr
    # 16 lookups over 32 threads: thread 5 and its replica 21 may both read the bad index
    for report in reports:
        match = re.fullmatch(r"tilec bounds check: .*debug_kernels\.py:\d+: BlockIdx=\(0, 0, 0\), "
                             r"ThreadIdx=\((\d+), 0, 0\): read of a shared buffer of shape "
                             r"\(8,\) at index \(11\)", report)
        assert match and int(match.group(1)) % LOOKUPS == 5, report
    # the trap: "illegal instruction", or "unspecified launch failure" on newer drivers (580)
    assert "raised:" in done.stdout and re.search(
        r"illegal instruction|unspecified launch failure", done.stdout), done.stdout


def test_device_assert_that_holds_changes_nothing() -> None:
    done = _run(f"""
        import torch, tilec
        from debug_kernels import bounded
        a = torch.randn({ASSERT_BLOCKS * 64}, generator=torch.Generator().manual_seed(3))
        b = tilec.compile(bounded(), out_idx=[1], target="cuda")(a.cuda())
        torch.cuda.synchronize()
        print("max error", (b.cpu() - 2 * a).abs().max().item(), flush=True)
    """)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "max error 0.0" in done.stdout, done.stdout


def test_device_assert_that_fails_reports_its_message_and_fails_the_launch() -> None:
    done = _run(f"""
        import torch, tilec
        from debug_kernels import bounded
        a = torch.zeros({ASSERT_BLOCKS * 64})
        a[70] = {ASSERT_LIMIT * 2}
        try:
            tilec.compile(bounded(), out_idx=[1], target="cuda")(a.cuda())
            torch.cuda.synchronize()
            print("no error", flush=True)
        except Exception as error:
            print("raised:", error, flush=True)
    """)
    line = next(n for n, text in enumerate(open(HERE / "debug_kernels.py"), 1)
                if "# the-assert" in text)
    output = done.stdout + done.stderr
    assert "no error" not in done.stdout and "raised:" in done.stdout, output
    assert re.search(r"device-side assert|CUDA_ERROR_ASSERT", done.stdout, re.IGNORECASE), output
    # one failing thread (block 1, thread 6): the device prints its message once
    assert output.count(f"debug_kernels.py:{line}: A past the limit") == 1, output
