"""The native call's one-node CUDA graph launch (TILEC_GRAPH_LAUNCH=1, launcher/graph_launch.h)
on the GPU: calls with fresh inputs, sizes that change the grid, outputs kept alive (new
arguments each call), dropped (the same ones) and alternating between two blocks, on the
current stream and on side streams, compute what torch computes, without the launch ever
falling back to cuLaunchKernel; and
torch.cuda.graph still captures such a kernel (cuLaunchKernel while the stream captures) and
replays it with new inputs. tests/test_graph_launch.py checks the launch's decisions on a
stand-in driver.
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

SIZES = [3000, 1, 1 << 20, 1000, 4097, 3000]  # grids 3, 1, 1024, 1, 5, 3 blocks


def graph_launched_add(monkeypatch):
    """A fresh kernel object for C = A + B whose native call launches through graphs, after
    its first (Python) call."""
    from tilec.jit import JITKernel

    monkeypatch.setenv("TILEC_NATIVE_CALL", "1")
    monkeypatch.setenv("TILEC_GRAPH_LAUNCH", "1")
    spec = next(s for s in all_kernels() if s.name == "vector_add_float32")
    add = JITKernel(artifact_of(spec), (__file__, 1))
    a = torch.randn(8, device="cuda")
    torch.testing.assert_close(add(a, a), a + a, rtol=0, atol=0)
    assert isinstance(add._call, native_call_module().Call), add.call_path
    assert add._call.graph_launch == "on"
    return add


def poison_cache(size: int) -> None:
    """NaN into a freed block of the caching allocator that the next output of `size` float32
    elements on this stream is likely to get, so an element the kernel skips shows."""
    torch.full((size,), float("nan"), device="cuda")


def test_changing_inputs_sizes_and_streams(monkeypatch) -> None:
    add = graph_launched_add(monkeypatch)
    generator = torch.Generator().manual_seed(23)
    sides = [torch.cuda.Stream(), torch.cuda.Stream()]
    kept = []  # outputs alive to the end: the next call's C is a new pointer for the node
    for round_ in range(3):
        for n, size in enumerate(SIZES):
            stream = [torch.cuda.current_stream(), *sides][(n + round_) % 3]
            x, y, z = (torch.randn(size, generator=generator) for _ in range(3))
            with torch.cuda.stream(stream):
                a, b, new_a = x.to("cuda"), y.to("cuda"), z.to("cuda")
                poison_cache(size)
                kept.append((add(a, b), x + y))
                poison_cache(size)
                add(a, b)  # dropped: the next call gets its C, so the same arguments,
                a.copy_(new_a)  # with which the replay must read A anew
                kept.append((add(a, b), z + y))
    torch.cuda.synchronize()
    for produced, expected in kept:  # float32 sums: IEEE on both sides, the same bits
        torch.testing.assert_close(produced.cpu(), expected, rtol=0, atol=0)
    assert add._call.graph_launch == "on"  # no graph call failed on the way


def test_outputs_dropped_or_alternating(monkeypatch) -> None:
    """The benchmark's loops: an output freed at once (its block, so the same arguments, for
    the next call), and `c = add(a, b)` in a loop (two blocks in turn: two graphs replayed)."""
    add = graph_launched_add(monkeypatch)
    generator = torch.Generator().manual_seed(31)
    a, b = torch.randn(5000, device="cuda"), torch.randn(5000, device="cuda")
    for _ in range(50):
        add(a, b)
    news = [torch.randn(5000, generator=generator).cuda() for _ in range(8)]
    c = None
    for new in news:
        a.copy_(new)
        c = add(a, b)  # the previous c is freed only after this call allocated its output
        torch.testing.assert_close(c, a + b, rtol=0, atol=0)
    for new in news:
        a.copy_(new)
        add(a, b)
        torch.testing.assert_close(add(a, b), a + b, rtol=0, atol=0)
    assert add._call.graph_launch == "on"


def test_graph_capture_records_the_kernel(monkeypatch) -> None:
    add = graph_launched_add(monkeypatch)
    generator = torch.Generator().manual_seed(5)
    size = 3000

    def fresh() -> torch.Tensor:
        return torch.randn(size, generator=generator).cuda()

    a, b = fresh(), fresh()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up on a side stream (a graph launch there)
        add(add(a, b), b)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        c = add(a, b)
        d = add(c, a)
    assert add._call.graph_launch == "on"  # the capture took cuLaunchKernel, nothing failed
    for _ in range(3):
        x, y = fresh(), fresh()
        a.copy_(x)
        b.copy_(y)
        c.fill_(float("nan"))
        d.fill_(float("nan"))
        graph.replay()
        eager = add(a, b)  # a graph launch again, between replays
        torch.cuda.synchronize()
        x, y = x.cpu(), y.cpu()
        torch.testing.assert_close(c.cpu(), x + y, rtol=0, atol=0)
        torch.testing.assert_close(d.cpu(), (x + y) + x, rtol=0, atol=0)
        torch.testing.assert_close(eager.cpu(), x + y, rtol=0, atol=0)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_another_device_takes_the_python_call(monkeypatch) -> None:
    """The call is its first device's; tensors on another device go to the Python call."""
    add = graph_launched_add(monkeypatch)
    with torch.cuda.device(1):
        a = torch.randn(3000, device="cuda:1")
        torch.testing.assert_close(add(a, a), a + a, rtol=0, atol=0)
    assert add._call.graph_launch == "on"
