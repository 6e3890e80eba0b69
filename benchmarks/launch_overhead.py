"""Host time per kernel call: tilec's full kernel call (shape/dtype checks, output allocation,
launch: the native call, and the Python call it falls back to), its launchers alone (native,
cuda-bindings), beside Triton's launch, TileLang's compiled kernel call where TileLang is
installed (in this process) or staged (--tilelang-site: in a process of its own, as TileLang's
LLVM and the one tilec's eager call loads do not share one), and torch ops, on a tiny 3-tensor
kernel.

    python benchmarks/launch_overhead.py --artifacts DIR [--out results.json] [--no-floor]
        [--tilelang-site DIR] [--compare-call OTHER_BUILD/_launcher_torch*.so]

DIR holds `vector_add_float32` as tests/gpu/build_artifacts.py writes it (C = A + B, three
tensor arguments; the kernel call allocates C, as `torch.add(a, b)` does).

Host time is what the calling thread spends per call, not the GPU's rate of running tiny
kernels: a loop of back-to-back calls measures the latter as soon as the kernel runs longer
on the GPU than a launch takes on the host (the launch queue fills and each launch waits for a
free slot). So each round first holds the GPU with a sleep kernel (`torch.cuda._sleep`, long
enough for the whole round), then issues 64 calls behind it, far fewer than the driver's launch
queue holds: every call only enqueues, and nothing it times waits for the GPU. A pass times
each figure as the median over 31 rounds of the mean per call, all figures in turn; a figure is
the median of 3 passes: wall time (`*_us`) and the thread's CPU time (`cpu_us`,
time.thread_time). `host_cpu` names the host's processor. `tilec_launch_only_us` is the
driver's own floor on this host (cuLaunchKernel with its arguments packed beforehand). For
comparison, `back_to_back_us` holds the old figure of a few paths: 400 calls in a row on an idle
GPU, drained between rounds. The native call is the default on CUDA; the Python call is timed
with TILEC_NATIVE_CALL=0.

Where the native call's time goes: `tilec_launch_only_us` is cuLaunchKernel through the
nanobind launcher with its arguments packed beforehand, `tilec_native_call_no_output_us` the
native call's checks and launch with C passed in (no allocation), `tilec_native_call_direct_us`
the whole native call (allocation included) without the kernel object's `__call__`,
`tilec_eager_call_us` the call through a `@tilec.jit` function (`add(a, b)`, the quickstart's
way: its lookup of the kernel, then the kernel call; compiled in process), and
`torch_empty_us` torch's allocation from Python. The `*_graph_*` entries are the same calls
launching through one-node CUDA graphs (TILEC_GRAPH_LAUNCH=1: replayed as they are where the
arguments repeat, as an output freed before the next call gives; `*_new_outputs*` keep each
call's output alive for 8 calls, so every launch has a new pointer, which a graph launch sets in
a node first; `*_alternating_outputs*` keep the last one, as `x = kernel(a, b)` in a loop does:
two blocks in turn, two graphs replayed as they are); `paths["graph_launch"]` says after the
timings whether each kept launching through graphs ("on") or why it stopped. The
`*_side_stream_us` entries launch on a created stream instead of the legacy default stream
torch starts on. With --compare-call, `tilec_kernel_call_compared_us` and
`tilec_native_call_direct_compared_us` are the default kernel call (graph launch on) and its
native call alone through another build of the native call module (main's, say), beside
`tilec_kernel_call_graph_us` and `tilec_native_call_direct_graph_us`. `paths` says what each
tilec figure ran: the tilec package imported, the launcher (native, or cuda-bindings and the
native module's import error), and per kernel call `JITKernel.call_path` ("native call", or
"Python call: " and why), so a fallback shows in the JSON (the H100 run of 769d0c5 timed the
Python call as the native one: the script put the source tree's python/, without the launcher
modules the job had built into its staged tilec, first on sys.path).

Whether a call can cost 3 µs on this host at all: `launch_floor` holds what
benchmarks/launch_floor.cu (compiled here by nvcc for this GPU, run in its own process after the
figures above) measures for an empty kernel of vector_add's arguments with nothing but CUDA
around it: cuLaunchKernel with its arguments packed once, cudaLaunchKernel, and the replay of a
CUDA graph of that launch (cudaGraphLaunch; and with its kernel node's arguments set before each
replay, as a call whose output is new each time would replay it), each on the legacy default
stream and on a created one (the graphs on the created one), median per call of FLOOR_CALLS
after warm-up, timed one call at a time behind a spinning kernel.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent

CALLS = 64  # per round: far below the launch queue's depth
ROUNDS = 31
ELEMENTS = 1024
SLEEP_CYCLES_PER_CALL = 100_000  # about 50 µs of GPU sleep per call: the round never drains it
BACK_TO_BACK_CALLS = 400
FLOOR_CALLS = 10_000  # per path of launch_floor.cu
FLOOR_TIMEOUT_S = 60  # for nvcc, then for the run
TILELANG_TIMEOUT_S = 120  # TileLang's process: its import, compile and timings

PASSES = 3  # over all figures in turn


def per_call_us(launch) -> tuple[float, float]:
    """Median over rounds of the mean host microseconds per call, the GPU held busy by a sleep
    kernel queued before each round: wall time and the thread's CPU time."""
    for _ in range(100):
        launch()
    torch.cuda.synchronize()
    walls, cpus = [], []
    for _ in range(ROUNDS):
        torch.cuda._sleep(SLEEP_CYCLES_PER_CALL * CALLS)
        began, began_cpu = time.perf_counter(), time.thread_time()
        for _ in range(CALLS):
            launch()
        cpus.append((time.thread_time() - began_cpu) / CALLS * 1e6)
        walls.append((time.perf_counter() - began) / CALLS * 1e6)
        torch.cuda.synchronize()
    return statistics.median(walls), statistics.median(cpus)


class Figures:
    """The timed figures: set up as the run goes (compiled, checked), timed at its end in PASSES
    passes over all of them in turn, each figure the median of its passes. Timed one after
    another, two figures of the same call differed by more than a microsecond on one host (the
    H100 run of 878d7b7: 4.26 and 5.62 us for the graph call with and without the kernel
    object's frame), which is the host's drift, not the call; in turn, a slow spell touches
    every figure."""

    def __init__(self) -> None:
        self.launches: dict[str, tuple] = {}
        self.walls: dict[str, list[float]] = {}
        self.cpus: dict[str, list[float]] = {}

    def add(self, key: str, launch, stream: torch.cuda.Stream | None = None) -> None:
        """Times `launch` as figure `key`, on `stream` (the current stream if None)."""
        self.launches[key] = (launch, stream)

    def time(self) -> dict[str, str]:
        """Times every figure; one whose call raises is dropped from then on and its error
        returned as `<key>_error`, the others still timed."""
        errors = {}
        for _ in range(PASSES):
            for key, (launch, stream) in list(self.launches.items()):
                try:
                    with torch.cuda.stream(stream) if stream is not None else \
                            contextlib.nullcontext():
                        wall, cpu = per_call_us(launch)
                except Exception as error:  # noqa: BLE001 - reported, the others timed
                    errors[f"{key}_error"] = repr(error)[:600]
                    del self.launches[key]
                    continue
                self.walls.setdefault(key, []).append(wall)
                self.cpus.setdefault(key, []).append(cpu)
        return errors

    def medians(self) -> tuple[dict[str, float], dict[str, float]]:
        """Per figure timed so far: the median wall and CPU microseconds per call."""
        return ({key: statistics.median(v) for key, v in self.walls.items()},
                {key: statistics.median(v) for key, v in self.cpus.items()})


class Stopped(BaseException):
    """SIGTERM during the timings (not an Exception: the comparators' handlers let it by)."""


def stop(signum: int, frame) -> None:
    raise Stopped("stopped by SIGTERM (a time limit): the figures measured before it")


def keeping_outputs(call, count: int):
    """`call` with its last `count` outputs kept alive, so each call's output is a block none of
    the last `count` calls got: with 8, a new pointer for each launch beyond what a graph launch
    keeps graphs of (it updates a node each call); with 1, `x = kernel(a, b)` in a loop, two
    blocks in turn (a graph launch replays its two graphs as they are)."""
    kept = [None] * count
    turn = itertools.count()

    def keep() -> None:
        kept[next(turn) % count] = call()

    return keep


def back_to_back_us(launch) -> float:
    """The old figure: median over rounds of the mean time of 400 calls in a row on an idle
    GPU (bounded by the GPU's rate when the kernel outlasts the launch)."""
    torch.cuda.synchronize()
    rounds = []
    for _ in range(11):
        began = time.perf_counter()
        for _ in range(BACK_TO_BACK_CALLS):
            launch()
        rounds.append((time.perf_counter() - began) / BACK_TO_BACK_CALLS * 1e6)
        torch.cuda.synchronize()
    return statistics.median(rounds)


def triton_launch(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor):
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask)
                 + tl.load(b_ptr + offsets, mask=mask), mask=mask)

    n = a.numel()
    grid = (triton.cdiv(n, 1024),)

    def launch() -> None:
        add_kernel[grid](a, b, c, n, BLOCK=1024)

    launch()
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)
    return launch, triton.__version__


def eager_call(a: torch.Tensor, b: torch.Tensor, paths: dict[str, str]):
    """tilec's call through a `@tilec.jit` function (`add(a, b)`, as the quickstart calls its
    kernel and as Triton's launch is timed): the function's lookup of its kernel for these
    arguments, then the kernel call, to time. Compiled here on first use."""
    import tilec
    import tilec.language as T

    @tilec.jit
    def add(A, B, block: int = 1024):
        N = T.const("N")
        A: T.Tensor((N,), T.float32)
        B: T.Tensor((N,), T.float32)
        C = T.empty((N,), T.float32)
        with T.Kernel(T.ceildiv(N, block), threads=256) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
        return C

    assert torch.equal(add(a, b), a + b), "tilec's eager call computed a wrong sum"
    add(a, b)
    kernel, _ = next(iter(add._kernels.values()))
    paths["tilec_eager_call_us"] = kernel.call_path
    return lambda: add(a, b)


def tilelang_call(a: torch.Tensor, b: torch.Tensor):
    """TileLang's compiled kernel call on the same sum, to time, and TileLang's version
    (ImportError without TileLang)."""
    import tilelang
    import tilelang.language as TL

    @tilelang.jit(out_idx=[-1])
    def add(n: int, block: int = 1024):
        @TL.prim_func
        def kernel(A: TL.Tensor((n,), "float32"), B: TL.Tensor((n,), "float32"),
                   C: TL.Tensor((n,), "float32")):
            with TL.Kernel(TL.ceildiv(n, block), threads=256) as bx:
                for i in TL.Parallel(block):
                    C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

        return kernel

    kernel = add(a.numel())
    assert torch.equal(kernel(a, b), a + b), "TileLang's kernel computed a wrong sum"
    return (lambda: kernel(a, b)), tilelang.__version__


def compared_call(module_file: Path, artifact, a: torch.Tensor, b: torch.Tensor):
    """A kernel object whose native call is another build of tilec.runtime._launcher_torch
    (`module_file`: e.g. the base commit's torch_call.cpp), checked on a + b, so a change to
    the native call is timed against its base in the same process and passes. The other
    build is loaded under the module's own name (its init function's) and stands in for it
    only while the kernel makes its native call."""
    import importlib.util

    import tilec.runtime
    from tilec.jit import JITKernel
    from tilec.runtime import _launcher_torch as own

    spec = importlib.util.spec_from_file_location("tilec.runtime._launcher_torch", module_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tilec.runtime._launcher_torch = module
    try:
        kernel = JITKernel(artifact, (__file__, 0))
        assert torch.equal(kernel(a, b), a + b), "the compared call's first sum is wrong"
        assert torch.equal(kernel(a, b), a + b), "the compared native call's sum is wrong"
    finally:
        tilec.runtime._launcher_torch = own
    if type(kernel._call) is not module.Call or kernel.call_path != "native call":
        raise RuntimeError(f"the compared call did not take {module_file}: {kernel.call_path}")
    return kernel


def tilelang_process(site: Path, results: dict, cpu_us: dict, paths: dict) -> str | None:
    """TileLang's call timed by this script in a process of its own with `site` (a staged
    TileLang, ../shared/device/make-tilelang-bundle.sh) first on its path: TileLang's LLVM and
    tilec's do not share a process. Its figures go to `results` and `cpu_us`; TileLang's
    version, or None where it did not run (the reason in results)."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(site), os.environ.get("PYTHONPATH", "")])}
    try:
        run = subprocess.run([sys.executable, __file__, "--tilelang-only"], env=environment,
                             capture_output=True, text=True, timeout=TILELANG_TIMEOUT_S)
        report = json.loads(next(line for line in reversed(run.stdout.splitlines())
                                 if line.startswith("{")))
    except (OSError, subprocess.TimeoutExpired, StopIteration, json.JSONDecodeError) as error:
        results["tilelang_error"] = repr(error)[:300]
        return None
    if "error" in report:
        results["tilelang_error"] = report["error"]
        return None
    key = "tilelang_kernel_call_us"
    results[key], cpu_us[key] = report["wall_us"], report["cpu_us"]
    paths[key] = f"TileLang's own process, same run and GPU ({site})"
    return report["tilelang"]


def tilelang_only() -> None:
    """The child of tilelang_process: TileLang's call, timed in PASSES passes, as one JSON
    line (or {"error": ...})."""
    try:
        a, b = (torch.randn(ELEMENTS, device="cuda") for _ in range(2))
        launch, version = tilelang_call(a, b)
    except Exception as error:  # noqa: BLE001 - reported by the parent
        print(json.dumps({"error": repr(error)[:300]}))
        return
    figures = Figures()
    figures.add("tilelang", launch)
    errors = figures.time()
    walls, cpus = figures.medians()
    print(json.dumps({"error": errors["tilelang_error"]} if errors else
                     {"tilelang": version, "wall_us": walls["tilelang"],
                      "cpu_us": cpus["tilelang"]}))


def host_cpu() -> str:
    """The host's processor model (host times differ by 1.5x between machines of one kind)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def launch_floor() -> dict:
    """benchmarks/launch_floor.cu built by nvcc for this GPU and run: its JSON (per launch path,
    the median, 10th and 90th percentile µs per call), or {"error": why it did not run}."""
    nvcc = shutil.which("nvcc") or str(Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
                                       / "bin" / "nvcc")
    major, minor = torch.cuda.get_device_capability()
    with tempfile.TemporaryDirectory() as folder:
        binary = Path(folder) / "launch_floor"
        try:
            subprocess.run([nvcc, "-O2", f"-arch=sm_{major}{minor}",
                            str(ROOT / "benchmarks" / "launch_floor.cu"), "-o", str(binary)],
                           check=True, capture_output=True, text=True, timeout=FLOOR_TIMEOUT_S)
            run = subprocess.run([str(binary), str(FLOOR_CALLS)], capture_output=True, text=True,
                                 timeout=FLOOR_TIMEOUT_S)
        except subprocess.CalledProcessError as error:
            return {"error": f"nvcc failed: {error.stderr[-600:]}"}
        except (OSError, subprocess.TimeoutExpired) as error:
            return {"error": repr(error)[-600:]}
    try:
        return json.loads(run.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"error": f"exit {run.returncode}: {run.stdout[-300:]} {run.stderr[-300:]}"}


def checked_launch(artifact, launcher, device):
    """The native call with C an argument too: its checks and launch without the output
    allocation; or why there is none (fastcall.native_call's reason)."""
    from tilec.errors import LaunchError
    from tilec.jit import stored_shape, torch_dtype
    from tilec.runtime.fastcall import native_call

    def refuse(*args):
        raise LaunchError("the checked launch declined its arguments")

    plans = [(n, stored_shape(p), torch_dtype(p.dtype), True)
             for n, p in enumerate(artifact.params)]
    return native_call(artifact, launcher, plans, [], device, refuse, LaunchError)


def main() -> None:
    import tilec
    from tilec.jit import JITKernel
    from tilec.runtime import cuda
    from tilec.runtime.artifact import Artifact

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--artifacts", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--no-floor", action="store_true",
                        help="skip launch_floor.cu (nvcc's build and its run: about 10 s)")
    parser.add_argument("--tilelang-site", type=Path,
                        help="time TileLang's call in its own process with this folder (a "
                             "staged TileLang) on its path, not in this one")
    parser.add_argument("--compare-call", type=Path,
                        help="another build of tilec.runtime._launcher_torch (a .so): its "
                             "kernel call timed beside this tilec's (*_compared_us)")
    parser.add_argument("--tilelang-only", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.tilelang_only:
        tilelang_only()
        return
    if options.artifacts is None:
        parser.error("--artifacts is required")
    artifact = Artifact.load(options.artifacts / "vector_add_float32")
    a, b = (torch.randn(ELEMENTS, device="cuda") for _ in range(2))
    c = torch.full_like(a, float("nan"))
    symbols = {"N": ELEMENTS}
    results: dict[str, float] = {}
    figures = Figures()
    # per path: what ran ("native ..." or "Python call: why"), so a fallback is never silent
    paths: dict[str, str] = {"tilec": tilec.__file__}

    back_to_back: dict[str, float] = {}
    triton_version = tilelang_version = None
    kernels = {}  # per launch of the native call ("", "_graph"): its kernel object
    signal.signal(signal.SIGTERM, stop)  # `timeout` ends a run: the report keeps its figures
    try:
        if not cuda.native_available():
            paths["launcher"] = f"cuda-bindings: tilec.runtime._launcher does not import " \
                                f"({cuda.launcher_import_error()})"
        else:
            from tilec.runtime import _launcher

            paths["launcher"] = f"native ({_launcher.__file__})"
            native = cuda.load(artifact, native=True)
            native([a, b, c], symbols)
            torch.cuda.synchronize()
            assert torch.equal(c, a + b), "tilec's kernel computed a wrong sum"
            figures.add("tilec_native_launcher_us", lambda: native([a, b, c], symbols))
            values, grid = cuda.build_packer(artifact)([a, b, c], symbols)
            loaded = native.kernel_for(a.get_device())
            stream = torch.cuda.current_stream().cuda_stream
            figures.add("tilec_launch_only_us", lambda: loaded.launch(values, *grid, stream))
        try:
            bindings = cuda.load(artifact, native=False)
            figures.add("tilec_cuda_bindings_launcher_us", lambda: bindings([a, b, c], symbols))
        except Exception as error:  # noqa: BLE001 - report the missing path, keep measuring
            results["tilec_cuda_bindings_error"] = str(error)
        for setting, graphs, key in (("1", "0", "tilec_kernel_call_us"),
                                     ("1", "1", "tilec_kernel_call_graph_us"),
                                     ("0", "0", "tilec_python_call_us")):
            try:
                os.environ["TILEC_NATIVE_CALL"] = setting
                os.environ["TILEC_GRAPH_LAUNCH"] = graphs  # read when the native call is made
                kernel = JITKernel(artifact, (__file__, 0))
                assert torch.equal(kernel(a, b), a + b), "tilec's kernel call computed a wrong sum"
                figures.add(key, lambda kernel=kernel: kernel(a, b))
                paths[key] = kernel.call_path
                if setting == "1":
                    suffix = "_graph" if graphs == "1" else ""
                    kernels[suffix] = kernel
                    figures.add(f"tilec_kernel_call_new_outputs{suffix}_us",
                                keeping_outputs(lambda kernel=kernel: kernel(a, b), 8))
                    figures.add(f"tilec_kernel_call_alternating_outputs{suffix}_us",
                                keeping_outputs(lambda kernel=kernel: kernel(a, b), 1))
                    if kernel.call_path == "native call":
                        native_call = kernel._call  # the call without the kernel object's frame
                        figures.add(f"tilec_native_call_direct{suffix}_us",
                                    lambda call=native_call: call(a, b))
                    no_output = checked_launch(artifact, kernel.launcher, a.device)
                    if isinstance(no_output, str):
                        paths[f"tilec_native_call_no_output{suffix}_us"] = f"not timed: {no_output}"
                    else:
                        c.fill_(float("nan"))
                        no_output(a, b, c)
                        torch.cuda.synchronize()
                        assert torch.equal(c, a + b), "the native call with C passed in is wrong"
                        figures.add(f"tilec_native_call_no_output{suffix}_us",
                                    lambda call=no_output: call(a, b, c))
                        kernels[f"no_output{suffix}"] = no_output
            except Exception as error:  # noqa: BLE001 - one path's failure, the others timed
                results[f"{key}_error"] = repr(error)[:600]
        os.environ.pop("TILEC_NATIVE_CALL")
        os.environ.pop("TILEC_GRAPH_LAUNCH")
        native_kernel, graph_kernel = kernels[""], kernels.get("_graph", kernels[""])
        default = JITKernel(artifact, (__file__, 0))
        default(a, b)
        paths["default"] = default.call_path
        if paths["tilec_kernel_call_us"] != "native call":
            print(f"tilec's kernel call is not the native call: {paths['tilec_kernel_call_us']}",
                  file=sys.stderr)
        if options.compare_call is not None:
            try:
                compared = compared_call(options.compare_call, artifact, a, b)
                kernels["compared"] = compared
                figures.add("tilec_kernel_call_compared_us", lambda: compared(a, b))
                figures.add("tilec_native_call_direct_compared_us",
                            lambda call=compared._call: call(a, b))
                paths["tilec_kernel_call_compared_us"] = \
                    f"{compared.call_path} of {options.compare_call}"
            except Exception as error:  # noqa: BLE001 - the run's own figures still count
                results["tilec_kernel_call_compared_error"] = repr(error)[:600]
        back_to_back = {"tilec_kernel_call_us": back_to_back_us(lambda: native_kernel(a, b)),
                        "torch_add_us": back_to_back_us(lambda: torch.add(a, b))}
        if "_graph" in kernels:
            back_to_back["tilec_kernel_call_graph_us"] = back_to_back_us(
                lambda: graph_kernel(a, b))
        if cuda.native_available():
            back_to_back["tilec_launch_only_us"] = back_to_back_us(
                lambda: loaded.launch(values, *grid, stream))
        figures.add("torch_add_out_us", lambda: torch.add(a, b, out=c))
        figures.add("torch_add_us", lambda: torch.add(a, b))
        figures.add("torch_empty_us", lambda: torch.empty(ELEMENTS, device="cuda"))
        side = torch.cuda.Stream()  # a created stream: not the legacy default stream
        try:
            with torch.cuda.stream(side):
                assert torch.equal(native_kernel(a, b), a + b), "the call on a side stream is wrong"
                figures.add("tilec_kernel_call_side_stream_us", lambda: native_kernel(a, b), side)
                if "_graph" in kernels:
                    assert torch.equal(graph_kernel(a, b), a + b), "graph launch, side stream"
                    figures.add("tilec_kernel_call_graph_side_stream_us",
                                lambda: graph_kernel(a, b), side)
                if cuda.native_available():
                    figures.add("tilec_launch_only_side_stream_us",
                                lambda: loaded.launch(values, *grid, side.cuda_stream), side)
                figures.add("torch_add_side_stream_us", lambda: torch.add(a, b), side)
        except Exception as error:  # noqa: BLE001 - report it, keep the other figures
            results["side_stream_error"] = repr(error)
        # the comparators that compile first (Triton, tilec's eager call, TileLang) last
        try:
            launch, triton_version = triton_launch(a, b, c)
            figures.add("triton_launch_us", launch)
            back_to_back["triton_launch_us"] = back_to_back_us(launch)
        except Exception as error:  # noqa: BLE001
            results["triton_error"] = str(error)
        try:
            figures.add("tilec_eager_call_us", eager_call(a, b, paths))
        except Exception as error:  # noqa: BLE001 - e.g. no compiler on this machine
            paths["tilec_eager_call_us"] = f"not timed: {error!r}"[:600]
        if options.tilelang_site is None:
            try:
                launch, tilelang_version = tilelang_call(a, b)
                figures.add("tilelang_kernel_call_us", launch)
            except ImportError:
                tilelang_version = None
        results.update(figures.time())

    except Stopped as stopped:
        results["stopped"] = str(stopped)
    timed, cpu_us = figures.medians()
    results.update(timed)
    if options.tilelang_site is not None and "stopped" not in results:
        try:
            tilelang_version = tilelang_process(options.tilelang_site, results, cpu_us, paths)
        except Stopped as stopped:
            results["stopped"] = str(stopped)
    # after the timings: "on", or why a graph call failed on the way (cuLaunchKernel since)
    paths["graph_launch"] = {name: getattr(getattr(kernel, "_call", kernel), "graph_launch",
                                           "not a native call")
                             for name, kernel in kernels.items()}
    floor = {"error": "not run (--no-floor)"} if options.no_floor or "stopped" in results \
        else launch_floor()
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton_version,
        "tilelang": tilelang_version,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "calls_per_round": CALLS,
        "rounds": ROUNDS,
        "elements": ELEMENTS,
        "method": "host time per call: calls queued behind a GPU sleep kernel (wall and the "
                  "thread's CPU time), median of rounds, median of the passes over all figures "
                  "in turn",
        "driver_floor_us": results.get("tilec_launch_only_us"),
        "paths": paths,
        "results": results,
        "passes": PASSES,
        "host_cpu": host_cpu(),
        "cpu_us": cpu_us,
        "back_to_back_us": back_to_back,
        "launch_floor": floor,
    }
    print(json.dumps(report, indent=1))
    print(f"{'path':36s} {'wall us':>8s} {'cpu us':>8s} {'back-to-back':>13s}")
    for key, value in results.items():
        if isinstance(value, float):
            old = back_to_back.get(key)
            print(f"{key:36s} {value:8.2f} {cpu_us.get(key, float('nan')):8.2f} "
                  f"{'' if old is None else f'{old:13.2f}'}")
    for path, floor_us in floor.get("paths", {}).items():
        print(f"{'floor: ' + path:36s} {floor_us['median_us']:8.2f} (p10 {floor_us['p10_us']:.2f}, "
              f"p90 {floor_us['p90_us']:.2f}, round mean {floor_us['round_mean_median_us']:.2f})")
    if "error" in floor:
        print(f"floor: {floor['error']}")
    if options.out:
        options.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
