"""tests/gpu/run_sanitizer.py's reading of compute-sanitizer's output and its test selection
(the GPU machine runs the tool; this checks the parts that decide what its run means)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from run_sanitizer import (  # noqa: E402
    BEGIN,
    END,
    FAILURE,
    FAILURE_END,
    PATHS,
    STOPS_ON_PURPOSE,
    ToolRun,
    parse_output,
    run_tool,
    selected,
    smallest_per_kernel,
    verdict,
)

GEMM = "tests/gpu/test_cuda_suite.py::test_kernel_matches_torch[gemm_float16_128x128x32-{}]"
ADD = "tests/gpu/test_cuda_suite.py::test_kernel_matches_torch[vector_add_float32-N1000]"

MEMCHECK = f"""========= COMPUTE-SANITIZER
{BEGIN}{ADD}
{END}{ADD} passed 0.120
{BEGIN}{GEMM.format("M77xN45xK33")}
========= Invalid __global__ read of size 2 bytes
=========     at gemm_float16_128x128x32+0x1c40
=========     by thread (5,0,0) in block (0,0,0)
=========     Address 0x7f0000012a is out of bounds
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2e0a4f] in libcuda.so.1
=========
{END}{GEMM.format("M77xN45xK33")} failed 0.800
{FAILURE}
E   AssertionError: relative error 0.31 > 0.002
{FAILURE_END}
{BEGIN}{GEMM.format("M256xN256xK256")}
========= ERROR SUMMARY: 1 error
"""

RACECHECK = f"""========= COMPUTE-SANITIZER
{BEGIN}{ADD}
========= Error: Race reported between Write access at 0x3a0 in softmax_float32_512
=========     and Read access at 0x410 in softmax_float32_512 [32 hazards]
=========
========= Warning: Race reported between Read access at 0x90 in softmax_float32_512
=========     and Write access at 0xa0 in softmax_float32_512 [4 hazards]
=========
{END}{ADD} passed 2.500
========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)
"""


def _parsed(text: str, tool: str) -> ToolRun:
    run = ToolRun(tool, "all", [], 10.0)
    parse_output(text, run)
    return run


def test_memcheck_reports_belong_to_the_test_and_kernel_that_made_them() -> None:
    run = _parsed(MEMCHECK, "memcheck")
    assert run.errors == 1 and run.warnings == 0
    (report,) = run.reports
    assert report.test == GEMM.format("M77xN45xK33")
    assert report.kernel == "gemm_float16_128x128x32"
    assert report.headline == "Invalid __global__ read of size 2 bytes"
    assert "Address 0x7f0000012a is out of bounds" in report.details
    assert run.summary == ["ERROR SUMMARY: 1 error"]
    outcomes = [(t["test"], t["outcome"]) for t in run.tests]
    # the last test began and never ended: the process died inside it
    assert outcomes == [(ADD, "passed"), (GEMM.format("M77xN45xK33"), "failed"),
                        (GEMM.format("M256xN256xK256"), "unfinished")]
    assert run.tests[1]["failure"] == ["E   AssertionError: relative error 0.31 > 0.002"]
    assert "failure" not in run.tests[0]


def test_racecheck_errors_and_warnings_are_told_apart() -> None:
    run = _parsed(RACECHECK, "racecheck")
    assert (run.errors, run.warnings) == (1, 1)
    assert {r.kernel for r in run.reports} == {"softmax_float32_512"}
    assert run.reports[0].details == ["and Read access at 0x410 in softmax_float32_512 "
                                      "[32 hazards]"]
    assert run.summary == ["RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)"]


def test_a_refused_device_is_not_a_clean_run() -> None:
    run = _parsed("========= COMPUTE-SANITIZER\n========= Error: Device not supported\n",
                  "memcheck")
    assert run.unsupported == "Error: Device not supported"
    assert run.errors == 0 and not run.tests


def test_smallest_problem_of_each_kernel() -> None:
    frontend = "tests/gpu/test_frontend_kernels.py::"
    node_ids = [GEMM.format("M256xN256xK256"), GEMM.format("M77xN45xK33"),
                GEMM.replace("128x128x32", "64x128x32").format("M1024xN512xK384"),
                f"{frontend}test_frontend_kernel[row_softmax_float32_1000x256]",
                f"{frontend}test_frontend_kernel[row_softmax_float32_37x512]",
                f"{frontend}test_quickstart[1024x1024x1024-float16]",
                f"{frontend}test_quickstart[77x45x33-float16]",
                f"{frontend}test_quickstart[77x45x33-float32]",
                f"{frontend}test_kernel_blocks_launch_in_order"]
    assert smallest_per_kernel(node_ids) == {
        GEMM.format("M77xN45xK33"),
        GEMM.replace("128x128x32", "64x128x32").format("M1024xN512xK384"),  # other tiles
        f"{frontend}test_frontend_kernel[row_softmax_float32_37x512]",
        f"{frontend}test_quickstart[77x45x33-float16]",
        f"{frontend}test_quickstart[77x45x33-float32]",
        f"{frontend}test_kernel_blocks_launch_in_order"}


def test_every_lowering_path_names_a_test_of_the_suite() -> None:
    """The `paths` selection runs tests that exist (a renamed test would leave its lowering
    path unchecked without a word), in PATHS' order, whatever folder pytest's ids start at."""
    suite = Path(__file__).resolve().parent / "gpu"
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "gpu", str(suite),
         "-p", "no:cacheprovider", "--noconftest", "-o", "addopts="],
        capture_output=True, text=True, cwd=suite.parent.parent, timeout=120)
    node_ids = [line for line in collected.stdout.splitlines() if "::" in line]
    assert len(node_ids) > 200, collected.stdout + collected.stderr
    chosen = selected(node_ids, "paths")
    assert [node_id.rsplit("/", 1)[-1] for node_id in chosen] == list(PATHS)
    for stops in STOPS_ON_PURPOSE:
        assert any(node_id.endswith(f"::{stops}") for node_id in node_ids), stops
    from_gpu_folder = selected([n.split("tests/gpu/", 1)[-1] for n in node_ids], "paths")
    assert from_gpu_folder == [node_id.split("tests/gpu/", 1)[-1] for node_id in chosen]


def _entry(tool: str, errors: int = 0, failed: tuple[str, ...] = (), finished: bool = True,
           unsupported: str | None = None) -> dict:
    return {"tool": tool, "errors": errors, "tests_failed": list(failed), "finished": finished,
            "unsupported": unsupported, "tests_run": 30}


def test_the_verdict_is_clean_only_when_every_tool_ran_to_its_end_without_a_finding() -> None:
    clean = {"runs": [_entry("memcheck"), _entry("racecheck")]}
    assert verdict(clean)["clean"]
    assert not verdict({"runs": []})["clean"]
    for spoiled in (_entry("racecheck", errors=1), _entry("racecheck", failed=(ADD,)),
                    _entry("racecheck", finished=False),
                    _entry("racecheck", unsupported="Device not supported")):
        found = verdict({"runs": [_entry("memcheck"), spoiled]})
        assert not found["clean"], spoiled
    found = verdict({"runs": [_entry("memcheck", failed=(ADD,)),
                              _entry("racecheck", failed=(ADD,), finished=False)]})
    assert found["tests_failed"] == [ADD]
    assert found["tools_stopped_at_limit"] == ["racecheck"]


# Stands in for compute-sanitizer and the tests' process under it: runs the tests a, b, c not yet
# in the done file, as run_sanitizer's pytest plugin would, and aborts the process in test b.
FAKE_TOOL = f"""#!{sys.executable}
import os
from pathlib import Path
done = Path(os.environ["TILEC_SANITIZE_DONE"])
for test in ("a", "b", "c"):
    if test in done.read_text().split():
        continue
    with done.open("a") as record:
        record.write(test + "\\n")
    print("{BEGIN}" + test, flush=True)
    if test == "b":
        os.abort()
    print("{END}" + test + " passed 0.1", flush=True)
"""


def test_a_process_the_tool_aborts_in_one_test_goes_on_with_the_next(tmp_path: Path) -> None:
    """synccheck aborted the tests' process in one sm_90a gemm and so checked none of the
    tests after it; now that test is unfinished and a new process runs the rest."""
    tool = tmp_path / "fake-sanitizer"
    tool.write_text(FAKE_TOOL)
    tool.chmod(0o755)
    run = run_tool(str(tool), "synccheck", "paths", 60, tmp_path, dict(os.environ))
    assert [(t["test"], t["outcome"]) for t in run.tests] == [
        ("a", "passed"), ("b", "unfinished"), ("c", "passed")]
    assert run.restarts == 1 and run.finished
