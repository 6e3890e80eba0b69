"""Host time per kernel call: tilec's full kernel call (shape/dtype checks, output allocation,
launch: the native call, and the Python call it falls back to), its launchers alone (native,
cuda-bindings), beside Triton's launch, TileLang's compiled kernel call where TileLang is
installed, and torch ops, in one process, on a tiny 3-tensor kernel.

    python benchmarks/launch_overhead.py --artifacts DIR [--out results.json]

DIR holds `vector_add_float32` as tests/gpu/build_artifacts.py writes it (C = A + B, three
tensor arguments; the kernel call allocates C, as `torch.add(a, b)` does). Each figure is the
median over 21 rounds of the mean host time of 400 back-to-back launches, the GPU drained
between rounds: fewer launches than the driver's queue holds, so the host's cost is timed, not
the GPU's rate of running tiny kernels. The native call is timed with TILEC_NATIVE_CALL=1 (on
CUDA it is an opt-in), the Python call with TILEC_NATIVE_CALL=0.

Where the native call's time goes: `tilec_launch_only_us` is cuLaunchKernel through the
nanobind launcher with its arguments packed beforehand, `tilec_native_call_no_output_us` the
native call's checks and launch with C passed in (no allocation), `tilec_native_call_direct_us`
the whole native call (allocation included) without the kernel object's `__call__`, and
`torch_empty_us` torch's allocation from Python. The `*_side_stream_us` entries launch on a
created stream instead of the legacy default stream torch starts on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

CALLS = 400
ROUNDS = 21
ELEMENTS = 1024


def per_call_us(launch) -> float:
    """Median over rounds of the mean host microseconds per launch."""
    for _ in range(200):
        launch()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(ROUNDS):
        began = time.perf_counter()
        for _ in range(CALLS):
            launch()
        rounds.append((time.perf_counter() - began) / CALLS * 1e6)
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


def tilelang_call(a: torch.Tensor, b: torch.Tensor) -> tuple[float, str]:
    """TileLang's compiled kernel call on the same sum (ImportError without TileLang)."""
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
    return per_call_us(lambda: kernel(a, b)), tilelang.__version__


def checked_launch(artifact, launcher, device):
    """The native call with C an argument too: its checks and launch without the output
    allocation."""
    from tilec.errors import LaunchError
    from tilec.jit import stored_shape, torch_dtype
    from tilec.runtime.fastcall import native_call

    def refuse(*args):
        raise LaunchError("the checked launch declined its arguments")

    plans = [(n, stored_shape(p), torch_dtype(p.dtype), True)
             for n, p in enumerate(artifact.params)]
    return native_call(artifact, launcher, plans, [], device, refuse, LaunchError)


def main() -> None:
    from tilec.jit import JITKernel
    from tilec.runtime import cuda
    from tilec.runtime.artifact import Artifact

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--artifacts", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    options = parser.parse_args()
    artifact = Artifact.load(options.artifacts / "vector_add_float32")
    a, b = (torch.randn(ELEMENTS, device="cuda") for _ in range(2))
    c = torch.full_like(a, float("nan"))
    symbols = {"N": ELEMENTS}
    results: dict[str, float] = {}

    if cuda.native_available():
        native = cuda.load(artifact, native=True)
        native([a, b, c], symbols)
        torch.cuda.synchronize()
        assert torch.equal(c, a + b), "tilec's kernel computed a wrong sum"
        results["tilec_native_launcher_us"] = per_call_us(lambda: native([a, b, c], symbols))
        values, grid = cuda.build_packer(artifact)([a, b, c], symbols)
        loaded, stream = native.kernel_for(a.get_device()), torch.cuda.current_stream().cuda_stream
        results["tilec_launch_only_us"] = per_call_us(
            lambda: loaded.launch(values, *grid, stream))
    try:
        bindings = cuda.load(artifact, native=False)
        results["tilec_cuda_bindings_launcher_us"] = per_call_us(
            lambda: bindings([a, b, c], symbols))
    except Exception as error:  # noqa: BLE001 - report the missing path, keep measuring
        results["tilec_cuda_bindings_error"] = str(error)
    for setting, key in (("1", "tilec_kernel_call_us"), ("0", "tilec_python_call_us")):
        os.environ["TILEC_NATIVE_CALL"] = setting
        kernel = JITKernel(artifact, (__file__, 0))
        assert torch.equal(kernel(a, b), a + b), "tilec's kernel call computed a wrong sum"
        results[key] = per_call_us(lambda kernel=kernel: kernel(a, b))
        if setting == "1":
            native_kernel = kernel
            results["tilec_kernel_call_native"] = type(kernel._call).__name__ == "Call"
            native_call = kernel._call  # the same call without the kernel object's frame
            results["tilec_native_call_direct_us"] = per_call_us(
                lambda call=native_call: call(a, b))
            no_output = checked_launch(artifact, kernel.launcher, a.device)
            try:
                no_output(a, b, c)
                results["tilec_native_call_no_output_us"] = per_call_us(
                    lambda call=no_output: call(a, b, c))
            except Exception as error:  # noqa: BLE001 - report it, keep measuring
                results["tilec_native_call_no_output_error"] = repr(error)
    os.environ.pop("TILEC_NATIVE_CALL")
    triton_version = None
    try:
        launch, triton_version = triton_launch(a, b, c)
        results["triton_launch_us"] = per_call_us(launch)
    except Exception as error:  # noqa: BLE001
        results["triton_error"] = str(error)
    try:
        results["tilelang_kernel_call_us"], tilelang_version = tilelang_call(a, b)
    except ImportError:
        tilelang_version = None
    results["torch_add_out_us"] = per_call_us(lambda: torch.add(a, b, out=c))
    results["torch_add_us"] = per_call_us(lambda: torch.add(a, b))
    results["torch_empty_us"] = per_call_us(lambda: torch.empty(ELEMENTS, device="cuda"))
    side = torch.cuda.Stream()  # a created stream: not the legacy default stream
    try:
        with torch.cuda.stream(side):
            assert torch.equal(native_kernel(a, b), a + b), "the call on a side stream is wrong"
            results["tilec_kernel_call_side_stream_us"] = per_call_us(
                lambda: native_kernel(a, b))
            if cuda.native_available():
                results["tilec_launch_only_side_stream_us"] = per_call_us(
                    lambda: loaded.launch(values, *grid, side.cuda_stream))
            results["torch_add_side_stream_us"] = per_call_us(lambda: torch.add(a, b))
    except Exception as error:  # noqa: BLE001 - report it, keep the other figures
        results["side_stream_error"] = repr(error)

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
        "results": results,
    }
    print(json.dumps(report, indent=1))
    print(f"{'path':36s} {'us/launch':>10s}")
    for key, value in results.items():
        if isinstance(value, float):
            print(f"{key:36s} {value:10.2f}")
    if options.out:
        options.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
