"""A sanity figure, not a speed claim: tilec's vulkan and webgpu kernels on Mesa's lavapipe (a
Vulkan driver running on the CPU) beside torch's own CPU ops on the same machine.

    python benchmarks/lavapipe.py [--repeats N] [--out JSON]

Each kernel is checked against torch first (random normal inputs, outputs poisoned), then
timed as the user calls it: the median of `--repeats` calls of the kernel object, which
include copying every tensor into and out of the device's buffers (tilec.runtime.vulkan).
lavapipe's timings say nothing about a GPU; they show the path works and what it costs here.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "gpu"))

from frontend_kernels import gemm_bias_relu, row_softmax  # noqa: E402

import tilec  # noqa: E402
from tilec.runtime import vulkan  # noqa: E402


def median_seconds(call, repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def problems() -> list[tuple[str, object, list[torch.Tensor], object]]:
    generator = torch.Generator().manual_seed(0)
    M, N, K = 512, 512, 512
    a = torch.randn(M, K, generator=generator).half()
    b = torch.randn(N, K, generator=generator).half()
    bias = torch.randn(N, generator=generator).half()
    x = torch.randn(4096, 512, generator=generator)
    return [
        (f"gemm_bias_relu fp16 {M}x{N}x{K}", gemm_bias_relu(M, N, K), [a, b, bias],
         lambda a, b, bias: (a.float() @ b.float().T + bias.float()).clamp_min(0).half()),
        ("row_softmax fp32 4096x512", row_softmax(4096, 512), [x], lambda x: x.softmax(dim=1)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = []
    for name, factory, inputs, reference in problems():
        expected = reference(*inputs).double()
        row = {"kernel": name,
               "torch_cpu_s": median_seconds(lambda r=reference, x=inputs: r(*x), args.repeats)}
        for target in ("vulkan", "webgpu"):
            kernel = tilec.compile(factory, out_idx=[-1], target=target)
            produced = kernel.get_profiler().run_poisoned(*inputs).double()
            error = ((produced - expected).norm() / expected.norm()).item()
            row[f"{target}_relative_error"] = error
            row[f"{target}_s"] = median_seconds(lambda k=kernel, x=inputs: k(*x), args.repeats)
        rows.append(row)
        print(f"{name}: torch {row['torch_cpu_s'] * 1e3:.2f} ms, vulkan "
              f"{row['vulkan_s'] * 1e3:.1f} ms (error {row['vulkan_relative_error']:.1e}), "
              f"webgpu {row['webgpu_s'] * 1e3:.1f} ms (error "
              f"{row['webgpu_relative_error']:.1e})")
    record = {"date": datetime.date.today().isoformat(), "device": vulkan.device_name(),
              "machine": platform.processor() or platform.machine(),
              "torch": torch.__version__, "repeats": args.repeats, "rows": rows}
    out = args.out or Path(__file__).parent / "results" / (
        f"{record['date']}-cpu_lavapipe.json")
    out.write_text(json.dumps(record, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
