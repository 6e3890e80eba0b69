"""Host time per kernel launch: tilec (native launcher, cuda-bindings fallback, the full kernel
call) beside Triton's launch and a torch op, in one process, on a tiny 3-tensor kernel.

    python benchmarks/launch_overhead.py --artifacts DIR [--out results.json]

DIR holds `vector_add_float32` as tests/gpu/build_artifacts.py writes it (C = A + B, three
tensor arguments). Each figure is the median over 21 rounds of the mean host time of 400
back-to-back launches, the GPU drained between rounds: fewer launches than the driver's queue
holds, so the host's cost is timed, not the GPU's rate of running tiny kernels.
"""

from __future__ import annotations

import argparse
import json
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
    try:
        bindings = cuda.load(artifact, native=False)
        results["tilec_cuda_bindings_launcher_us"] = per_call_us(
            lambda: bindings([a, b, c], symbols))
    except Exception as error:  # noqa: BLE001 - report the missing path, keep measuring
        results["tilec_cuda_bindings_error"] = str(error)
    kernel = JITKernel(artifact, (__file__, 0))
    results["tilec_kernel_call_us"] = per_call_us(lambda: kernel(a, b))
    triton_version = None
    try:
        launch, triton_version = triton_launch(a, b, c)
        results["triton_launch_us"] = per_call_us(launch)
    except Exception as error:  # noqa: BLE001
        results["triton_error"] = str(error)
    results["torch_add_out_us"] = per_call_us(lambda: torch.add(a, b, out=c))

    report = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton_version,
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
