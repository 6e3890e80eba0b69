"""tilec kernel calls inside torch.cuda.graph: a captured sequence of calls (output allocation
included) replays with new inputs and computes what eager calls compute, on the native call
(launching through cuLaunchKernel, and through its one-node graphs: TILEC_GRAPH_LAUNCH=1) and
on the Python call.

Runs with tilec's runtime only, from the artifacts tests/gpu/build_artifacts.py writes
(TILEC_GPU_ARTIFACTS), as the rest of the CUDA suite does.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernels import all_kernels  # noqa: E402
from test_cuda_suite import artifact_of, native_call_module  # noqa: E402

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]


def vector_add(monkeypatch, native: bool, graphs: bool):
    """A fresh kernel object for C = A + B, on the native call or the Python one."""
    from tilec.jit import JITKernel

    monkeypatch.setenv("TILEC_NATIVE_CALL", "1" if native else "0")
    monkeypatch.setenv("TILEC_GRAPH_LAUNCH", "1" if graphs else "0")
    spec = next(s for s in all_kernels() if s.name == "vector_add_float32")
    return JITKernel(artifact_of(spec), (__file__, 1))


@pytest.mark.parametrize("native, graphs", [(True, False), (True, True), (False, False)],
                         ids=["native-call", "native-graph-launch", "python-call"])
def test_captured_calls_replay_with_new_inputs(monkeypatch, native: bool, graphs: bool) -> None:
    add = vector_add(monkeypatch, native, graphs)
    generator = torch.Generator().manual_seed(7)
    size = 3000  # not a multiple of the 1024-wide block: the tail is masked

    def fresh() -> torch.Tensor:
        return torch.randn(size, generator=generator).cuda()

    a, b = fresh(), fresh()
    torch.testing.assert_close(add(a, b), a + b, rtol=0, atol=0)  # eager first: loads it
    if native:
        assert isinstance(add._call, native_call_module().Call)
        assert add._call.graph_launch == ("on" if graphs else "off")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up on a side stream, as torch.cuda.graph advises
        add(add(a, b), b)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        c = add(a, b)          # allocated in the graph's pool
        d = add(c, a)          # reads the previous call's output
        e = add(d, d)
    for _ in range(3):
        x, y = fresh(), fresh()
        a.copy_(x)
        b.copy_(y)
        for out in (c, d, e):
            out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        x, y = x.cpu(), y.cpu()  # float32 sums on the CPU: IEEE, the same bits
        torch.testing.assert_close(c.cpu(), x + y, rtol=0, atol=0)
        torch.testing.assert_close(d.cpu(), (x + y) + x, rtol=0, atol=0)
        torch.testing.assert_close(e.cpu(), ((x + y) + x) * 2, rtol=0, atol=0)
