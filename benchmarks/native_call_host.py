"""Host time of tilec's native kernel call without the launch, on a machine with no GPU: what
the call adds to the driver's launch (benchmarks/launch_overhead.py measures both on the GPU).

    python benchmarks/native_call_host.py [--out results.json]

The kernel is a CPU-target C = A + B over 1024 float32 elements (three tensors, C allocated
by the call, one shape symbol), its launcher replaced by a Python function that does nothing:
so each figure is the call's checks, allocation, wrapping and the crossings, never the sum.
The native call here runs as the CPU target's (torch_call.cpp's `launch` branch: the launch
is that Python function, given a list of the arguments and a dict of the symbols), where the
CUDA call packs its slots and calls cuLaunchKernel; its allocation is torch's CPU allocator,
where the CUDA call's is the caching allocator. Rows:

  python_noop_us         calling a Python function of two arguments that returns None
  native_no_output_us    the native call with C passed in: the plan's checks, the launch list
  native_call_us         the native call as a kernel call runs it: checks, C allocated, returned
  kernel_call_us         the same through the kernel object (`kernel(a, b)`)
  eager_call_us          the same kernel's call through its `@tilec.jit` function (`add(a, b)`,
                         the quickstart's way): the function's lookup of its kernel, then the call
  python_call_us         the Python call (TILEC_NATIVE_CALL=0) with the same launcher
  torch_empty_us         torch.empty(1024) from Python

Each figure is the median over PASSES passes (all rows in turn) of the median over ROUNDS of
the mean CPU time of the calling thread over CALLS calls, after warm-up; before the timings
each call's result is checked against a + b with the real launcher.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import torch

import tilec
import tilec.language as T
from tilec.errors import LaunchError
from tilec.jit import JITKernel, stored_shape, torch_dtype
from tilec.runtime.fastcall import native_call

CALLS = 2000
ROUNDS = 31
PASSES = 5  # over all rows in turn
ELEMENTS = 1024


def per_call_us(call: Callable[[], object]) -> float:
    """Median over rounds of the mean microseconds of the thread's CPU time per call (not wall
    time: on a shared machine that counts the time other processes held the core)."""
    for _ in range(CALLS):
        call()
    rounds = []
    for _ in range(ROUNDS):
        began = time.thread_time()
        for _ in range(CALLS):
            call()
        rounds.append((time.thread_time() - began) / CALLS * 1e6)
    return statistics.median(rounds)


def add_kernel() -> JITKernel:
    N = T.dynamic("N")

    @T.prim_func
    def add(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
            C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 256), threads=256) as bx:
            for i in T.Parallel(256):
                if bx * 256 + i < N:
                    C[bx * 256 + i] = A[bx * 256 + i] + B[bx * 256 + i]

    compiled = tilec.compile(add, out_idx=[-1], target="cpu")
    return JITKernel(compiled.artifact, compiled.location)


@tilec.jit(target="cpu")
def eager_add(A, B, block: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    B: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
        for i in T.Parallel(block):
            if bx * block + i < N:
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return C


def noop_launch(args: list, symbols: dict) -> None:
    """Stands in for the launch: the figures are the call's own cost."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path)
    options = parser.parse_args()
    generator = torch.Generator().manual_seed(5)
    a, b = (torch.randn(ELEMENTS, generator=generator) for _ in range(2))
    expected = a + b
    paths: dict[str, str] = {}

    os.environ["TILEC_NATIVE_CALL"] = "1"
    kernel = add_kernel()
    kernel(a, b)
    paths["native_call_us"] = kernel.call_path
    assert kernel.call_path == "native call", kernel.call_path
    assert torch.equal(kernel(a, b), expected), "the native call computed a wrong sum"
    real_launch = kernel.launcher
    plans = [(n, stored_shape(p), torch_dtype(p.dtype), True)
             for n, p in enumerate(kernel.artifact.params)]
    checked = native_call(kernel.artifact, real_launch, plans, [], a.device, kernel._python_call,
                          LaunchError)
    assert not isinstance(checked, str), checked
    c = torch.full_like(a, float("nan"))
    checked(a, b, c)
    assert torch.equal(c, expected), "the native call with C passed in computed a wrong sum"

    def python_noop(x: torch.Tensor, y: torch.Tensor) -> None:
        return None

    stubbed = native_call(kernel.artifact, noop_launch, plans, [], a.device,
                          kernel._python_call, LaunchError)
    kernel._launcher = noop_launch  # the kernel's own native call was built with the real one
    kernel._call = kernel._first_call
    kernel(a, b)
    direct = kernel._call
    assert torch.equal(eager_add(a, b), expected), "the eager call computed a wrong sum"
    eager_kernel, _ = next(iter(eager_add._kernels.values()))
    eager_kernel._launcher = noop_launch
    eager_kernel._call = eager_kernel._first_call
    eager_add(a, b)
    paths["eager_call_us"] = eager_kernel.call_path

    os.environ["TILEC_NATIVE_CALL"] = "0"
    python_kernel = add_kernel()
    assert torch.equal(python_kernel(a, b), expected), "the Python call computed a wrong sum"
    python_kernel._launcher = noop_launch
    python_kernel(a, b)
    paths["python_call_us"] = python_kernel.call_path
    os.environ.pop("TILEC_NATIVE_CALL")
    calls = {"python_noop_us": lambda: python_noop(a, b),
             "native_no_output_us": lambda: stubbed(a, b, c),
             "native_call_us": lambda: direct(a, b),
             "kernel_call_us": lambda: kernel(a, b),
             "eager_call_us": lambda: eager_add(a, b),
             "python_call_us": lambda: python_kernel(a, b),
             "torch_empty_us": lambda: torch.empty(ELEMENTS)}
    passes: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(PASSES):  # interleaved, so a busy spell of the machine touches every row
        for name, call in calls.items():
            passes[name].append(per_call_us(call))
    results = {name: statistics.median(figures) for name, figures in passes.items()}

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=Path(__file__).parent).stdout.strip()
    report = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "cpu": platform.processor() or platform.machine(), "torch": torch.__version__,
              "python": platform.python_version(), "commit": commit, "elements": ELEMENTS,
              "calls_per_round": CALLS, "rounds": ROUNDS,
              "method": "CPU-target kernel, launcher replaced by a no-op: median of rounds of "
                        "the mean CPU time of the calling thread per call, median of 5 "
                        "interleaved passes",
              "passes_us": passes,
              "paths": paths, "results": results}
    for key, value in results.items():
        print(f"{key:24s} {value:7.3f} us")
    if options.out:
        options.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
