"""The native call's one-node CUDA graph launch (launcher/graph_launch.h; on unless
TILEC_GRAPH_LAUNCH=0) on this machine without a GPU: its header compiled into a small driver program
(tests/graph_launch/harness.cpp) over a stand-in libcuda.so.1 that prints each driver call
(tests/graph_launch/fake_libcuda.c), so each test reads which entry points one launch reaches
and with which grid, stream and arguments. tests/gpu/test_graph_launch_gpu.py runs it on a GPU.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "tests" / "graph_launch"
LAUNCHER = ROOT / "python" / "tilec" / "runtime" / "launcher"
A, B = "a000", "b000"  # two streams
GRAPH_CALLS = ("cuGraph", "cuStreamIsCapturing")


def build(folder: Path, graphs: bool) -> Path:
    """The harness over a stand-in driver, with or without the graph entry points."""
    cc, cxx = shutil.which("cc"), shutil.which("c++")
    if cc is None or cxx is None:
        pytest.skip("no C/C++ compiler")
    folder.mkdir()
    driver = folder / "libcuda.so.1"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-Wl,-soname,libcuda.so.1",
                    *([] if graphs else ["-DFAKE_NO_GRAPHS"]),
                    "-o", str(driver), str(HERE / "fake_libcuda.c")], check=True, timeout=120)
    harness = folder / "harness"
    subprocess.run([cxx, "-std=c++17", "-O1", "-Wall", "-Werror", f"-I{LAUNCHER}", "-o",
                    str(harness), str(HERE / "harness.cpp"), str(driver), "-ldl",
                    f"-Wl,-rpath,{folder}"], check=True, timeout=240)
    return harness


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("graphs") / "with", graphs=True)


def run(harness: Path, *commands: str) -> list[str]:
    """The transcript of `commands`: the driver's calls and the harness's answers, a line each."""
    env = dict(os.environ, LD_LIBRARY_PATH=str(harness.parent))
    done = subprocess.run([str(harness)], input="\n".join(commands) + "\n", text=True,
                          capture_output=True, check=True, timeout=60, env=env)
    return done.stdout.splitlines()


def calls(lines: list[str]) -> list[str]:
    """The entry points named, in order."""
    return [line.split()[0] for line in lines]


def test_first_launch_makes_the_streams_graph_later_ones_replay_it(harness: Path) -> None:
    lines = run(harness, "make 1", f"launch {A} 4 10 20 30", "reason",
                f"launch {A} 4 10 20 30", f"launch {A} 7 10 21 30", f"launch {A} 4 10 20 30",
                "reason")
    assert calls(lines) == [
        "cuStreamIsCapturing", "cuGraphCreate", "cuGraphAddKernelNode_v2",
        "cuGraphInstantiateWithFlags", "cuGraphLaunch", "result", "reason",
        # the same grid and arguments: the executable graph already holds them
        "cuStreamIsCapturing", "cuGraphLaunch", "result",
        # a new output and a new grid (dynamic shapes): a second graph of the stream
        "cuStreamIsCapturing", "cuGraphCreate", "cuGraphAddKernelNode_v2",
        "cuGraphInstantiateWithFlags", "cuGraphLaunch", "result",
        # the first arguments again: the first graph, as it is
        "cuStreamIsCapturing", "cuGraphLaunch", "result", "reason"]
    assert "grid=4,1,1" in lines[2] and "args=10,20,30" in lines[2]
    assert "block=256,1,1" in lines[2]
    assert f"stream=0x{A}" in lines[4]
    assert "grid=7,1,1" in lines[12] and "args=10,21,30" in lines[12]
    first = lines[3].split("-> ")[1]
    assert lines[8] == lines[17] == f"cuGraphLaunch exec={first} stream=0x{A}"
    assert lines[6] == lines[-1] == "reason on"
    assert all(line == "result 0" for line in lines if line.startswith("result"))


def test_past_four_argument_sets_the_least_recently_used_graph_is_updated(harness: Path) -> None:
    sets = [f"launch {A} {n + 1} {n} 2 3" for n in range(4)]
    lines = run(harness, "make 1", *sets, sets[0], f"launch {A} 9 9 9 9", sets[0], sets[2])
    execs = [line.split("-> ")[1] for line in lines if line.startswith("cuGraphInstantiate")]
    assert len(execs) == 4
    update = lines.index(next(line for line in lines if line.startswith("cuGraphExecKernel")))
    # the second set's graph is the least recently used (the first was replayed since)
    assert lines[update] == f"cuGraphExecKernelNodeSetParams_v2 exec={execs[1]} " \
                            "node grid=9,1,1 stream=(nil) args=9,9,9"
    assert lines[update + 1] == f"cuGraphLaunch exec={execs[1]} stream=0x{A}"
    # the others still hold their arguments: replayed as they are
    assert calls(lines[update + 3:]) == ["cuStreamIsCapturing", "cuGraphLaunch", "result"] * 2
    assert lines[update + 4] == f"cuGraphLaunch exec={execs[0]} stream=0x{A}"
    assert lines[update + 7] == f"cuGraphLaunch exec={execs[2]} stream=0x{A}"


def test_each_stream_has_its_own_graph(harness: Path) -> None:
    lines = run(harness, "make 1", f"launch {A} 4 1 2 3", f"launch {B} 4 1 2 3",
                f"launch {A} 4 1 2 3", "destroy")
    launches = [line for line in lines if line.startswith("cuGraphLaunch")]
    execs = [line.split("-> ")[1] for line in lines if line.startswith("cuGraphInstantiate")]
    assert len(execs) == 2 and execs[0] != execs[1]
    assert launches == [f"cuGraphLaunch exec={execs[0]} stream=0x{A}",
                        f"cuGraphLaunch exec={execs[1]} stream=0x{B}",
                        f"cuGraphLaunch exec={execs[0]} stream=0x{A}"]
    # destroyed with the call: both executable graphs and both graphs
    assert calls(lines).count("cuGraphExecDestroy") == 2
    assert calls(lines).count("cuGraphDestroy") == 2


def test_a_capturing_stream_gets_a_kernel_node(harness: Path) -> None:
    """torch.cuda.graph must record the kernel itself: cuLaunchKernel while capturing."""
    lines = run(harness, "make 1", f"capture {A}", f"launch {A} 3 1 2 3", f"launch {B} 3 1 2 3",
                "reason")
    assert calls(lines) == ["cuStreamIsCapturing", "cuLaunchKernel", "result",
                            "cuStreamIsCapturing", "cuGraphCreate", "cuGraphAddKernelNode_v2",
                            "cuGraphInstantiateWithFlags", "cuGraphLaunch", "result",
                            "reason"]
    assert lines[1] == f"cuLaunchKernel grid=3,1,1 stream=0x{A} args=1,2,3"
    assert lines[-1] == "reason on"


def test_a_failed_capture_query_launches_plainly(harness: Path) -> None:
    """The legacy stream while another captures: cuLaunchKernel gives the driver's answer."""
    lines = run(harness, "make 1", "fail cuStreamIsCapturing 906", "launch 0 1 1 2 3", "reason")
    assert calls(lines) == ["cuStreamIsCapturing", "cuLaunchKernel", "result", "reason"]
    assert lines[-1] == "reason on"


@pytest.mark.parametrize("failing", ["cuGraphCreate", "cuGraphAddKernelNode_v2",
                                     "cuGraphInstantiateWithFlags", "cuGraphLaunch"])
def test_a_failed_graph_call_falls_back_once_with_its_reason(harness: Path, failing: str) -> None:
    lines = run(harness, "make 1", f"fail {failing} 801", f"launch {A} 5 1 2 3", "reason",
                f"launch {A} 6 1 2 3", f"launch {B} 6 1 2 3")
    first = lines.index("result 0")
    made = calls(lines[:first])
    assert made[-1] == "cuLaunchKernel" and made.count(failing) == 1
    assert made[made.index(failing) + 1:-1] in ([], ["cuGraphDestroy"])
    assert lines[first - 1] == f"cuLaunchKernel grid=5,1,1 stream=0x{A} args=1,2,3"
    short = failing.removesuffix("_v2").removesuffix("WithFlags")
    assert lines[first + 1] == (f"reason off: {short} failed: fake error 801 (CUresult 801); "
                                "cuLaunchKernel from then on")
    # from then on no graph entry point is reached
    assert calls(lines[first + 2:]) == ["cuLaunchKernel", "result", "cuLaunchKernel", "result"]
    if failing in ("cuGraphAddKernelNode_v2", "cuGraphInstantiateWithFlags"):
        assert "cuGraphDestroy" in calls(lines[:first])  # the half-made graph is freed


def test_a_failed_update_falls_back(harness: Path) -> None:
    lines = run(harness, "make 1", *(f"launch {A} 5 1 2 {n}" for n in range(4)),
                "fail cuGraphExecKernelNodeSetParams_v2 1", f"launch {A} 5 1 2 4", "reason")
    assert calls(lines)[-4:] == ["cuGraphExecKernelNodeSetParams_v2", "cuLaunchKernel", "result",
                                 "reason"]
    assert lines[-3] == f"cuLaunchKernel grid=5,1,1 stream=0x{A} args=1,2,4"
    assert lines[-2] == "result 0"
    assert lines[-1].startswith("reason off: cuGraphExecKernelNodeSetParams failed")


def test_the_plain_launchs_error_is_the_one_returned(harness: Path) -> None:
    lines = run(harness, "make 1", "fail cuGraphLaunch 700", f"launch {A} 5 1 2 3")
    assert calls(lines)[-3:] == ["cuGraphLaunch", "cuLaunchKernel", "result"]
    assert lines[-1] == "result 0"  # the plain launch worked: no error for the caller
    lines = run(harness, "make 1", "fail cuLaunchKernel 700", f"launch {A} 5 1 2 3",
                f"capture {A}", f"launch {A} 5 1 2 3")
    assert lines[5] == "result 0"  # the graph launch: cuLaunchKernel's failure not reached
    assert lines[-1] == "result 700"  # captured: cuLaunchKernel's own error


def test_streams_past_the_table_launch_plainly(harness: Path) -> None:
    streams = [f"{0x100 * (n + 1):x}" for n in range(17)]
    lines = run(harness, "make 1", *(f"launch {s} 1 1 2 3" for s in streams),
                f"launch {streams[0]} 1 1 2 3", "reason")
    assert calls(lines).count("cuGraphInstantiateWithFlags") == 16
    last = lines.index(f"cuStreamIsCapturing stream=0x{streams[16]} -> 0")
    assert calls(lines[last:last + 3]) == ["cuStreamIsCapturing", "cuLaunchKernel", "result"]
    assert calls(lines)[-3:] == ["cuGraphLaunch", "result", "reason"]  # the first stream's
    assert lines[-1] == "reason on"


def test_too_many_arguments_launch_nothing(harness: Path) -> None:
    assert run(harness, "make 1", "overflow") == ["result 1"]  # CUDA_ERROR_INVALID_VALUE


def test_off_is_cuLaunchKernel_only(harness: Path) -> None:
    lines = run(harness, "make 0", f"launch {A} 2 1 2 3", "reason", "destroy")
    assert calls(lines) == ["cuLaunchKernel", "result", "reason"]
    assert lines[-1] == "reason off"


def test_a_driver_without_graphs_launches_plainly(tmp_path: Path) -> None:
    old = build(tmp_path / "old", graphs=False)
    lines = run(old, "make 1", f"launch {A} 2 1 2 3", "reason")
    assert calls(lines) == ["cuLaunchKernel", "result", "reason"]
    assert lines[-1] == "reason off: the driver lacks cuStreamIsCapturing"


def test_the_native_call_says_how_it_launches() -> None:
    """`graph_launch` of the module built from these sources: None where no CUDA function is
    launched (a CPU call); a CUDA call's "on" / "off" is checked on the GPU."""
    torch = pytest.importorskip("torch")
    try:
        from tilec.runtime import _launcher_torch
    except ImportError as error:
        pytest.skip(f"the native call is not built here ({error})")
    call = _launcher_torch.Call(
        params=2, inputs=[(0, torch.float32, [-1])], outputs=[(1, torch.float32, [-1])],
        symbols=("N",), slots=[], grid=[[0, 1], [0, 1], [0, 1]], device_type="cpu",
        device_index=-1, fallback=print, error=RuntimeError, name="k",
        launch=lambda arguments, symbols: None, graph=True)
    assert call.graph_launch is None
    assert call(torch.ones(3)).shape == (3,)
