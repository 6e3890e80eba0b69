"""The CUDA suite under compute-sanitizer: memcheck, racecheck, synccheck and initcheck.

    python3 tests/gpu/run_sanitizer.py OUT_DIR --artifacts DIR --cache DIR \
        [--plan memcheck:all:40 racecheck:smallest:25 ...] [-k PYTEST_KEYWORDS]

Runs on the GPU machine with tilec's runtime only (the artifacts of tests/gpu/build_artifacts.py,
the cache of tests/gpu/precompile_frontend.py). Each step of the plan is TOOL:SELECTION:SECONDS:
the suite's tests (`pytest -m gpu tests/gpu`; SELECTION `all`; `smallest`: per kernel only
its smallest problem; `paths`: the PATHS below, one small problem per lowering path, most
important first) run in one process under `compute-sanitizer --tool TOOL`, stopped after
SECONDS. The default plan (`paths` under memcheck, racecheck and synccheck) takes two minutes
on an H200; `all` under memcheck and racecheck about ten. Tests whose kernel stops on purpose
(STOPS_ON_PURPOSE) never run under a tool. The tests check their numerics as usual; a marker
line before and after each test ties every report of the tool to the test that launched the
kernel. OUT_DIR gets sanitizer.log (each tool's and the tests' output, one after the other) and
sanitizer.json (per tool: the tests run and their outcomes, a failure's last lines with it,
every report parsed into test, kernel, kind and text, the tool's summary, and whether it ran
to its end; the tests that failed under a tool run again without one, torch's caching
allocator off and on, so a failure of the tool's making is told from the test's own; and a
verdict: clean, or the errors, failed tests and tools stopped at their time limit), the JSON
benchmarks/results/ keeps as <date>-h200_sanitizer-<commit>.json.

PyTorch's caching allocator is off in the tests' process (PYTORCH_NO_CUDA_MEMORY_CACHING=1):
with it, tensors share one cudaMalloc block and memcheck cannot see a read past a tensor's end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

SUITE = Path(__file__).resolve().parent
BEGIN, END = "@@sanitize-begin ", "@@sanitize-end "
FAILURE = "@@sanitize-failure"  # a failed test's last lines follow, up to FAILURE_END
FAILURE_END, FAILURE_LINES = "@@sanitize-failure-end", 30
PREFIX = "========= "
TOOL_OPTIONS = {
    "memcheck": ["--leak-check", "no", "--report-api-errors", "no"],
    "racecheck": ["--racecheck-report", "analysis"],
    "synccheck": [],
    "initcheck": ["--track-unused-memory", "no"],
}
LOG_LIMIT = 4 << 20  # bytes of each tool's log kept
RERUN_SECONDS = 30  # each plain rerun of the tests that failed under a tool
CONTEXT_LOST = 86  # the tests' exit status when a kernel left CUDA unusable
PYTEST_ENDS = (0, 1, 5)  # pytest ran every selected test (all passed, some failed, none chosen)
CONTEXT_LOST_LINE = "@@sanitize-context-lost"
# tests whose kernel stops on purpose (a trap, __assertfail), which every tool reports
STOPS_ON_PURPOSE = ("test_checked_mode_reports_a_bad_index_and_stops_the_kernel",
                    "test_device_assert_that_fails_reports_its_message_and_fails_the_launch")

# The `paths` selection: a small, ragged problem for each way the compiler lowers a kernel, in
# the order a tool stopped at its time limit should have covered them (node ids under tests/gpu).
_SUITE, _FRONTEND = "test_cuda_suite.py::test_kernel_matches_torch", "test_frontend_kernels.py::"
_MMA_SYNC = "test_mma_sync_kernels.py::test_mma_sync_kernel"
PATHS = (
    # sm_90a wgmma fed by TMA: per-op plan, whole-kernel matcher, T.Parallel epilogue, A from
    # registers (one and two consumer warpgroups)
    f"{_FRONTEND}test_quickstart[200x136x100-float16]",
    f"{_SUITE}[gemm_float16_128x128x32-M77xN45xK33]",
    f"{_FRONTEND}test_frontend_kernel[gemm_bias_relu_float16_77x45x33]",
    f"{_FRONTEND}test_register_a_gemm[1000x1016x1000-float16-quickstart]",
    f"{_FRONTEND}test_register_a_gemm[1000x1016x1000-bfloat16-wide]",
    # warp specialization: T.ws producer / consumer warpgroups, mbarrier rings
    f"{_FRONTEND}test_gemm_in_warpgroup_blocks[200x136x100-producer_consumer]",
    f"{_FRONTEND}test_gemm_in_warpgroup_blocks[200x136x100-split_warpgroups]",
    f"{_FRONTEND}test_warp_specialized_tma_ring[shape1]",
    # sm_80 ldmatrix + mma.sync per op, cp.async rings (sm_80 PTX on the H200)
    f"{_MMA_SYNC}[sm80_bias_relu_200x136x90]",
    f"{_MMA_SYNC}[sm80_register_a_200x136x96]",
    f"{_MMA_SYNC}[sm80_attention_1x2x150x64]",
    f"{_MMA_SYNC}[sm80_transposed_136x200x96]",
    f"{_MMA_SYNC}[sm80_batched_int8_2x136x72x128]",
    f"{_MMA_SYNC}[sm80_bias_relu_misaligned_200x136x96]",
    f"{_SUITE}[gemm_float16_64x128x32_cp_async3-M77xN45xK33]",
    f"{_SUITE}[row_sum_float32_cp_async3-M50xK130]",
    f"{_SUITE}[softmax_long_float16_cp_async3-M64xK64]",
    # T.Parallel over fewer points than threads: one replica updates shared and global memory
    f"{_FRONTEND}test_frontend_kernel[replicated_updates_1000]",
    # reductions: warp shuffles, shared-memory trees, all-reduce across threads
    f"{_SUITE}[softmax_float32_512-M37]",
    f"{_FRONTEND}test_frontend_kernel[row_softmax_float16_37x512]",
    f"{_SUITE}[reduce_sum_float32-M50]",
    f"{_FRONTEND}test_frontend_kernel[splitk_gemv_allreduce_sum_256x2048]",
    f"{_FRONTEND}test_frontend_kernel[reduce_into_shared_100x64]",
    f"{_FRONTEND}test_frontend_kernel[row_reduce_max]",
    f"{_FRONTEND}test_frontend_kernel[gemv_by_reducer_200x512]",
    # atomics
    f"{_SUITE}[column_sum_float32-M1000xN300]",
    f"{_FRONTEND}test_stream_k_gemm[96x192x200x10]",
    f"{_FRONTEND}test_frontend_kernel[column_sum_1000x300]",
    # SIMT gemm (64 KB of shared memory), T.print and a T.device_assert that holds
    f"{_SUITE}[gemm_float32_128x128x64-M77xN45xK33]",
    "test_debug_features.py::test_print_lines_come_from_the_device",
    "test_debug_features.py::test_device_assert_that_holds_changes_nothing",
    # the rest of the frontend's shapes: masks, extern calls, sub-byte types, run-time grids
    f"{_SUITE}[vector_add_float16-N1000]",
    f"{_SUITE}[broadcast_float16-M100xN77]",
    f"{_FRONTEND}test_frontend_kernel[block_masked_row_sum_100x300]",
    f"{_FRONTEND}test_frontend_kernel[extern_affine_128x8]",
    f"{_FRONTEND}test_frontend_kernel[int4_round_trip_100x192]",
    f"{_FRONTEND}test_frontend_kernel[uniform_draws_1000]",
    f"{_FRONTEND}test_frontend_kernel[reused_shared_tiles_100x1024]",
    f"{_FRONTEND}test_frontend_kernel[mix_rows_3x256]",
    f"{_FRONTEND}test_frontend_kernel[strided_partial_sums_100x64]",
    f"{_FRONTEND}test_frontend_kernel[placed_round_trip_2x64x3x64]",
    f"{_FRONTEND}test_frontend_kernel[head_weighted_logits_200x64x64]",
    f"{_FRONTEND}test_frontend_kernel[gemm_on_column_parts_64x200x(256+64)]",
    f"{_FRONTEND}test_varlen_rows_grid_from_a_scalar_argument",
    f"{_FRONTEND}test_kernel_blocks_launch_in_order",
    f"{_FRONTEND}test_scalar_parameters_and_a_dynamic_size[1000]",
)
DEFAULT_PLAN = ["memcheck:paths:50", "racecheck:paths:45", "synccheck:paths:20"]


@dataclass
class Report:
    """One finding of the tool: its first line, the lines under it, where it happened."""

    test: str | None
    headline: str
    details: list[str] = field(default_factory=list)
    kernel: str | None = None
    severity: str = "error"


@dataclass
class ToolRun:
    tool: str
    selection: str
    command: list[str]
    seconds_allowed: float
    wall_s: float = 0.0
    returncode: int | None = None
    restarts: int = 0  # tests' processes started again after CUDA stopped working
    finished: bool = False  # every selected test ran (not stopped at the time limit)
    summary: list[str] = field(default_factory=list)
    tests: list[dict] = field(default_factory=list)
    reports: list[Report] = field(default_factory=list)
    unsupported: str | None = None  # the tool refused the device or could not start

    @property
    def errors(self) -> int:
        return sum(r.severity == "error" for r in self.reports)

    @property
    def warnings(self) -> int:
        return sum(r.severity == "warning" for r in self.reports)


_META = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY",
         "Target application returned", "This tool", "Default timeout")
_REFUSED = ("Device not supported", "No attachable process", "Unable to",
            "Target application terminated before first instrumented API call")
_KERNEL_AT = re.compile(r"\bat (?:0x[0-9a-f]+ in )?([A-Za-z_$][\w$]*)")
_KERNEL_IN = re.compile(r"\bin ([A-Za-z_$][\w$]*)")


def _kernel_of(report: Report) -> str | None:
    """The kernel a report names: memcheck says `at NAME+0x..` on a detail line, racecheck
    `... at 0x.. in NAME` on its first."""
    for line in [report.headline, *report.details]:
        if "Host Frame" in line or "Saved host backtrace" in line:
            continue
        match = _KERNEL_AT.search(line) or _KERNEL_IN.search(line)
        if match and not match.group(1).startswith("0x"):
            return match.group(1)
    return None


def parse_output(text: str, run: ToolRun) -> None:
    """Fills run's tests, reports and summary from the tool's and the tests' output."""
    current: Report | None = None
    test: str | None = None
    failure: list[str] | None = None  # the lines of the failure being read
    for line in text.splitlines():
        if line.startswith(BEGIN):
            if test is not None:  # no end marker: the process ended inside the test
                run.tests.append({"test": test, "outcome": "unfinished", "seconds": None})
            test = line[len(BEGIN):].strip()
            current = None
            continue
        if line.startswith(END):
            fields = line[len(END):].split()
            if len(fields) >= 3:
                run.tests.append({"test": fields[0], "outcome": fields[1],
                                  "seconds": float(fields[2])})
            test = None
            current = None
            continue
        if line.startswith(FAILURE_END):
            failure = None
            continue
        if line.startswith(FAILURE):
            failure = []
            if run.tests:
                run.tests[-1]["failure"] = failure
            continue
        if failure is not None:
            failure.append(line)
            continue
        if not line.startswith(PREFIX.rstrip()):
            continue
        body = line[len(PREFIX):] if line.startswith(PREFIX) else ""
        if not body.strip():
            current = None
            continue
        if body[0].isspace():
            if current is not None:
                current.details.append(body.strip())
            continue
        if body.startswith(_META):
            if body.startswith(("ERROR SUMMARY", "RACECHECK SUMMARY")):
                run.summary.append(body.strip())
            continue
        if any(body.startswith(refusal) or refusal in body for refusal in _REFUSED):
            run.unsupported = body.strip()
            continue
        severity = "warning" if body.startswith("Warning") else "error"
        current = Report(test=test, headline=body.strip(), severity=severity)
        run.reports.append(current)
    if test is not None:
        run.tests.append({"test": test, "outcome": "unfinished", "seconds": None})
    for report in run.reports:
        report.kernel = _kernel_of(report)


def sanitizer_binary() -> str | None:
    """compute-sanitizer on PATH or in the CUDA toolkit's usual places."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for root in ["/usr/local/cuda", *sorted(Path("/usr/local").glob("cuda-*"), reverse=True)]:
        for candidate in (Path(root) / "bin/compute-sanitizer",
                          Path(root) / "compute-sanitizer/compute-sanitizer"):
            if candidate.exists():
                return str(candidate)
    return None


def run_tool(binary: str, tool: str, selection: str, seconds: float, out: Path,
             environment: dict[str, str]) -> ToolRun:
    """One tool over the selected tests, stopped (its whole process group) after `seconds`. A
    kernel the tool stops (an invalid access under memcheck) leaves the CUDA context unusable,
    and a tool may abort the tests' process inside a test (synccheck on some sm_90a kernels):
    either way the process ends and a new one goes on with the tests not yet run (the test it
    ended in counts as unfinished)."""
    command = [binary, "--tool", tool, *TOOL_OPTIONS[tool], "--print-limit", "200",
               sys.executable, "-u", str(Path(__file__).resolve()), "--inner", selection]
    run = ToolRun(tool, selection, command, seconds)
    log = Path(tempfile.mkdtemp()) / f"{tool}.log"
    done = log.with_suffix(".done")  # node ids run so far, one a line: the next process skips them
    done.write_text("")
    began = time.perf_counter()
    with log.open("wb") as sink:
        while True:
            left = seconds - (time.perf_counter() - began)
            if left < 5:
                break
            started = len(done.read_text().split())
            process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT,
                                       env=dict(environment, TILEC_SANITIZE_DONE=str(done)),
                                       start_new_session=True)
            try:
                run.returncode = process.wait(timeout=left)
            except subprocess.TimeoutExpired:
                _stop(process)
                run.returncode = None
                break
            if run.returncode in PYTEST_ENDS:
                run.finished = True
                break
            if len(done.read_text().split()) == started:  # no test began: nothing to go on with
                break
            run.restarts += 1
    run.wall_s = round(time.perf_counter() - began, 2)
    text = log.read_bytes()
    shutil.rmtree(log.parent)
    if len(text) > LOG_LIMIT:
        text = text[:LOG_LIMIT // 2] + b"\n[... cut ...]\n" + text[-LOG_LIMIT // 2:]
    with (out / "sanitizer.log").open("ab") as combined:
        combined.write(f"\n##### {tool} ({selection}): {' '.join(command)}\n".encode() + text)
    parse_output(text.decode(errors="replace"), run)
    return run


def _stop(process: subprocess.Popen) -> None:
    """Ends the tool and the tests' process under it."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=3)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


_SHAPE = r"(?:[A-Z]?\d+x)*[A-Z]?\d+"


def _shape_size(parameter_id: str) -> tuple[str, int]:
    """A test's parameter id without its problem sizes, and the product of those sizes:
    `gemm_float16_128x128x32-M77xN45xK33` -> (`gemm_float16_128x128x32`, 77 * 45 * 33) (a part
    that is all sizes is the problem), `row_softmax_float32_37x512` -> (`row_softmax_float32`,
    37 * 512) (else the sizes ending the id)."""
    parts = parameter_id.split("-")
    sizes = [p for p in parts if re.fullmatch(_SHAPE, p)]
    if sizes:
        kept = [p for p in parts if p not in sizes]
    else:
        match = re.fullmatch(rf"(.*)_({_SHAPE})", parameter_id)
        if not match:
            return parameter_id, 1
        kept, sizes = [match.group(1)], [match.group(2)]
    size = 1
    for number in re.findall(r"\d+", "x".join(sizes)):
        size *= int(number)
    return "-".join(kept), size


def path_rank(node_id: str) -> int | None:
    """The node id's place in PATHS, None where it is not there (pytest's ids begin at its
    root folder, which differs between the repository and the GPU machine's copy)."""
    file, separator, test = node_id.partition("::")
    return _PATH_RANKS.get(file.rsplit("/", 1)[-1] + separator + test)


_PATH_RANKS = {path: rank for rank, path in enumerate(PATHS)}


def selected(node_ids: list[str], selection: str) -> list[str]:
    """The node ids a selection runs, in the order it runs them."""
    if selection == "paths":
        return sorted((n for n in node_ids if path_rank(n) is not None), key=path_rank)
    smallest = smallest_per_kernel(node_ids)
    if selection == "smallest":
        return [node_id for node_id in node_ids if node_id in smallest]
    if selection != "all":
        raise ValueError(f"unknown selection {selection!r} (all, smallest or paths)")
    return sorted(node_ids, key=lambda node_id: node_id not in smallest)


def smallest_per_kernel(node_ids: list[str]) -> set[str]:
    """For each test function and kernel, the node id of its smallest problem."""
    best: dict[str, tuple[int, str]] = {}
    for node_id in node_ids:
        function, _, parameter = node_id.partition("[")
        key, size = _shape_size(parameter.rstrip("]"))
        group = f"{function}[{key}]"
        if group not in best or size < best[group][0]:
            best[group] = (size, node_id)
    return {node_id for _, node_id in best.values()}


class _Markers:
    """pytest plugin: the selection (the smallest problems first, tests run before left out),
    a marker line around each test, and the end of the process when CUDA stops working."""

    def __init__(self, selection: str, done: Path | None) -> None:
        self.selection = selection
        self.done = done
        self.began = 0.0

    def pytest_collection_modifyitems(self, config, items) -> None:
        already = set(self.done.read_text().split()) if self.done else set()
        by_id = {item.nodeid: item for item in items
                 if not item.name.startswith(STOPS_ON_PURPOSE) and item.nodeid not in already}
        keep = [by_id[node_id] for node_id in selected(list(by_id), self.selection)]
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        self.began = time.perf_counter()
        if self.done:
            with self.done.open("a") as done:
                done.write(nodeid + "\n")
        print(f"\n{BEGIN}{nodeid}", flush=True)

    def pytest_runtest_logreport(self, report) -> None:
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            elapsed = time.perf_counter() - self.began
            print(f"\n{END}{report.nodeid} {report.outcome} {elapsed:.3f}", flush=True)
            if report.failed:  # now: a tool stopped at its time limit prints no summary
                lines = report.longreprtext.splitlines()[-FAILURE_LINES:]
                print("\n".join([FAILURE, *lines, FAILURE_END]), flush=True)
        if report.failed and not _cuda_works():
            print(f"\n{CONTEXT_LOST_LINE}", flush=True)
            os._exit(CONTEXT_LOST)


def _cuda_works() -> bool:
    import torch

    try:
        torch.ones(1, device="cuda").sum().item()
        torch.cuda.synchronize()
        return True
    except Exception:  # noqa: BLE001 (torch raises several kinds once a kernel has faulted)
        return False


def inner(selection: str) -> int:
    """The tests' process (under the tool)."""
    import pytest

    done = os.environ.get("TILEC_SANITIZE_DONE")
    keyword = os.environ.get("TILEC_SANITIZE_KEYWORD")
    return pytest.main(["-m", "gpu", str(SUITE), "-q", "-p", "no:cacheprovider",
                        "--noconftest", "-o", "addopts=", "-rf",
                        *(["-k", keyword] if keyword else [])],
                       plugins=[_Markers(selection, Path(done) if done else None)])


def environment_facts(binary: str | None) -> dict:
    def output(command: list[str]) -> str:
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=20)
            return (done.stdout + done.stderr).strip()
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"not run: {error}"

    return {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "kernel": os.uname().release,
            "gpu": output(["nvidia-smi", "--query-gpu=name,driver_version",
                           "--format=csv,noheader"]),
            "compute_sanitizer": output([binary, "--version"]).splitlines()[-1:]
            if binary else None}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--inner":
        sys.exit(inner(sys.argv[2]))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--artifacts", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--plan", nargs="+", default=DEFAULT_PLAN)
    parser.add_argument("-k", dest="keyword", help="only the tests pytest -k selects")
    parser.add_argument("--commit", default="", help="the tilec commit the suite was built at")
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "sanitizer.log").write_text("")
    binary = sanitizer_binary()
    environment = dict(os.environ, PYTHONUNBUFFERED="1", PYTORCH_NO_CUDA_MEMORY_CACHING="1",
                       TILEC_GPU_ARTIFACTS=str(options.artifacts.resolve()),
                       TILEC_CACHE_DIR=str(options.cache.resolve()),
                       TILEC_SANITIZE_KEYWORD=options.keyword or "")
    results = {"environment": dict(environment_facts(binary), commit=options.commit),
               "runs": []}
    for step in options.plan:
        tool, selection, seconds = step.split(":")
        if binary is None:
            break
        run = run_tool(binary, tool, selection, float(seconds), options.out, environment)
        entry = asdict(run)
        entry.update(errors=run.errors, warnings=run.warnings,
                     tests_run=len(run.tests),
                     tests_failed=[t["test"] for t in run.tests if t["outcome"] != "passed"],
                     kernels_reported=sorted({r.kernel or "?" for r in run.reports}))
        results["runs"].append(entry)
        print(f"{tool} ({selection}): {len(run.tests)} tests in {run.wall_s} s, "
              f"{run.errors} errors, {run.warnings} warnings, "
              f"{'finished' if run.finished else 'stopped at its time limit'}"
              f"{', ' + run.unsupported if run.unsupported else ''}; {' | '.join(run.summary)}",
              flush=True)
        (options.out / "sanitizer.json").write_text(json.dumps(results, indent=1))
    if binary is None:
        print("compute-sanitizer not found")
    failed = sorted({test for entry in results["runs"] for test in entry["tests_failed"]})
    results["plain_reruns"] = [rerun_plainly(failed, environment, caching)
                               for caching in (False, True)] if failed else []
    results["verdict"] = verdict(results)
    print(f"verdict: {results['verdict']}", flush=True)
    (options.out / "sanitizer.json").write_text(json.dumps(results, indent=1))


def rerun_plainly(node_ids: list[str], environment: dict[str, str], caching: bool) -> dict:
    """The tests that failed under a tool, run again without it (torch's caching allocator
    off, as under the tools, or on, as in the plain GPU suite): a test that fails here too
    fails for a reason of its own, one that passes failed under the tool only."""
    targets = [str(SUITE / node_id.split("::", 1)[0].rsplit("/", 1)[-1]) + "::" +
               node_id.split("::", 1)[1] for node_id in node_ids if "::" in node_id]
    command = [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider",
               "--noconftest", "-o", "addopts=", "-rf", *targets]
    environment = dict(environment)
    if caching:
        environment.pop("PYTORCH_NO_CUDA_MEMORY_CACHING", None)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RERUN_SECONDS,
                              env=environment)
        returncode, text = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        returncode, text = None, f"stopped after {RERUN_SECONDS} s"
    return {"caching_allocator": caching, "tests": targets, "returncode": returncode,
            "tail": text.splitlines()[-FAILURE_LINES:]}


def verdict(results: dict) -> dict:
    """What a reader needs first: whether every tool ran its tests to the end with no error
    report and no failed test."""
    runs = results["runs"]
    errors = sum(entry["errors"] for entry in runs)
    failed = sorted({test for entry in runs for test in entry["tests_failed"]})
    unfinished = [entry["tool"] for entry in runs if not entry["finished"]]
    unsupported = [entry["tool"] for entry in runs if entry["unsupported"]]
    return {"clean": bool(runs) and not (errors or failed or unfinished or unsupported),
            "errors": errors, "tests_failed": failed, "tools_stopped_at_limit": unfinished,
            "tools_unsupported": unsupported,
            "tests_run": {entry["tool"]: entry["tests_run"] for entry in runs}}


if __name__ == "__main__":
    main()
