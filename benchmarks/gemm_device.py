"""Tensor-core GEMM kernels against cuBLAS (torch.matmul) on one GPU, in one process.

Two halves, because the GPU machine has no MLIR:
  python benchmarks/gemm_device.py build DIR      (here: MLIR -> PTX for every variant + manifest)
  python benchmarks/gemm_device.py run DIR --out results.json   (GPU machine: torch + cuda-bindings)

`run` loads each PTX with the driver (JIT), builds TMA maps with tilec/runtime/tma.py (loaded by
path: no tilec install needed there), checks every kernel against a float32 reference on fresh
random inputs with the output poisoned (NaN), including ragged shapes, then times kernel and
cuBLAS in alternating rounds (CUDA events, median after warm-up; the H200's clock wanders).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PERF_SHAPES = [
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (16384, 16384, 16384),
    (4096, 28672, 8192),
    (4096, 8192, 28672),
    (8192, 8192, 1024),
    (128, 8192, 8192),
    (1024, 1024, 1024),
]
RAGGED_SHAPES = [(1000, 1016, 1000), (257, 136, 72), (129, 264, 4104), (4095, 4088, 4104)]


def variants() -> list[tuple[str, object]]:
    """(arch, config) of every kernel the benchmark builds."""
    from tilec.compiler.tensorcore.ampere import AmpereGemmConfig
    from tilec.compiler.tensorcore.hopper import HopperGemmConfig as H

    out: list[tuple[str, object]] = []
    for dtype in ("f16", "bf16"):
        out += [
            ("sm_90a", H(dtype=dtype)),
            ("sm_90a", H(dtype=dtype, persistent=False)),
            ("sm_90a", H(dtype=dtype, stages=3, epilogue_n=256)),
            ("sm_90a", H(dtype=dtype, block_m=256, block_n=128, epilogue_n=64)),
            ("sm_90a", H(dtype=dtype, setmaxnreg=True)),
            ("sm_90a", H(dtype=dtype, block_m=128, block_n=128, consumers=1, stages=4)),
            ("sm_90a", H(dtype=dtype, block_m=128, block_n=128, block_k=32, consumers=1, stages=3)),
            ("sm_80", AmpereGemmConfig(dtype=dtype)),
        ]
    return out


def build(directory: Path, only: str | None) -> None:
    from tilec.compiler.tensorcore import build_kernel

    directory.mkdir(parents=True, exist_ok=True)
    manifest = []
    for arch, cfg in variants():
        if only and only not in cfg.name:
            continue
        start = time.time()
        kernel = build_kernel(cfg, arch)
        (directory / f"{cfg.name}.ptx").write_text(kernel.ptx)
        manifest.append({"name": cfg.name, "arch": arch, "dtype": cfg.dtype, **kernel.launch})
        print(
            f"{cfg.name:50s} {arch:7s} regs={kernel.registers:4d} spills={kernel.spill_bytes} "
            f"smem={kernel.launch['shared_bytes']} ({time.time() - start:.1f}s)"
        )
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=1))


def _load_tma_module():
    spec = importlib.util.spec_from_file_location("tilec_tma", ROOT / "python/tilec/runtime/tma.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["tilec_tma"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class Kernel:
    """One PTX kernel loaded into torch's context, launched on torch's stream."""

    def __init__(self, directory: Path, meta: dict, tma) -> None:
        import numpy as np
        import torch

        self.meta, self.tma, self.np, self.torch = meta, tma, np, torch
        cu = tma._driver()
        self.cu = cu
        data = (directory / f"{meta['name']}.ptx").read_bytes() + b"\0"
        self.image = np.frombuffer(data, dtype=np.uint8).copy()
        self.module = tma.check(cu.cuModuleLoadData(self.image.ctypes.data))
        self.function = tma.check(cu.cuModuleGetFunction(self.module, meta["name"].encode()))
        attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        tma.check(cu.cuFuncSetAttribute(self.function, attr, meta["shared_bytes"]))
        self.sms = torch.cuda.get_device_properties(0).multi_processor_count
        self.prepared: dict = {}

    def prepare(self, a, b, c):
        """Argument block for (a, b, c); TMA maps are built once per buffer triple."""
        np = self.np
        key = (a.data_ptr(), b.data_ptr(), c.data_ptr(), a.shape, b.shape)
        if key in self.prepared:
            return self.prepared[key]
        m, k = a.shape
        n = b.shape[1]
        bm, bn, _ = self.meta["block"]
        tiles = -(-m // bm) * -(-n // bn)
        grid = min(tiles, self.sms) if self.meta.get("persistent") else tiles
        if "tma" in self.meta:
            maps = self.tma.gemm_tensor_maps(a, b, c, self.meta["tma"])
            pointers, keep = maps.pointers, maps
        else:
            pointers, keep = (a.data_ptr(), b.data_ptr(), c.data_ptr()), None
        values = [np.array([p], dtype=np.uint64) for p in pointers]
        values += [np.array([v], dtype=np.int32) for v in (m, n, k)]
        params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
        self.prepared[key] = (grid, values, params, keep)
        return self.prepared[key]

    def __call__(self, a, b, c) -> None:
        grid, _, params, _ = self.prepare(a, b, c)
        stream = self.cu.CUstream(self.torch.cuda.current_stream().cuda_stream)
        threads = self.meta["threads"]
        self.tma.check(
            self.cu.cuLaunchKernel(
                self.function,
                grid,
                1,
                1,
                *threads,
                self.meta["shared_bytes"],
                stream,
                params.ctypes.data,
                0,
            )
        )


def wait_or_die(torch, what: str, seconds: float = 5.0) -> None:
    """Synchronize, but end the process if the GPU is still busy after `seconds` (a deadlock)."""
    done = torch.cuda.Event()
    done.record()
    deadline = time.time() + seconds
    while not done.query():
        if time.time() > deadline:
            print(f"HANG {what}", flush=True)
            os._exit(3)
        time.sleep(0.001)
    torch.cuda.synchronize()


def child(directory: Path, names: list[str], jobs: list[list]) -> None:
    """Checks and times `names` on `shapes`; prints one JSON line per result."""
    import torch

    tma = _load_tma_module()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    torch.zeros(1, device="cuda")
    cu = tma._driver()
    tma.check(cu.cuInit(0))
    context = tma.check(cu.cuDevicePrimaryCtxRetain(tma.check(cu.cuDeviceGet(0))))
    tma.check(cu.cuCtxSetCurrent(context))
    manifest = {m["name"]: m for m in json.loads((directory / "manifest.json").read_text())}
    torch_dtype = {"f16": torch.float16, "bf16": torch.bfloat16}

    def emit(**row) -> None:
        print("RESULT " + json.dumps(row), flush=True)

    def bench(fn, n: int, warm: int = 2) -> float:
        for _ in range(warm):
            fn()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        torch.cuda.synchronize()
        torch.cuda._sleep(20_000_000)  # keep the GPU busy while the queue fills: no launch gaps
        for i in range(n):
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends, strict=True))
        return times[len(times) // 2] * 1e-3

    for name in names:
        meta = manifest[name]
        kernel = Kernel(directory, meta, tma)
        dtype = torch_dtype[meta["dtype"]]
        for m, n, k, quick in jobs:
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(k, n, device="cuda", dtype=dtype)
            c = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
            ref = a.float() @ b.float()
            torch.cuda.synchronize()
            kernel(a, b, c)
            wait_or_die(torch, f"{name} {m}x{n}x{k}")
            err = ((c.float() - ref).norm() / ref.norm()).item()
            nan = int(torch.isnan(c).sum().item())
            ok = nan == 0 and err < 1e-2
            row = {
                "kernel": name,
                "arch": meta["arch"],
                "dtype": meta["dtype"],
                "M": m,
                "N": n,
                "K": k,
                "rel_err": err,
                "nan": nan,
                "correct": ok,
            }
            if ok and not quick:
                flop = 2.0 * m * n * k
                reps = max(5, min(50, int(2e-2 / max(flop / 7e14, 1e-6))))
                ks, cs, ratios = [], [], []
                for _ in range(5):
                    tc = bench(functools.partial(torch.matmul, a, b), reps)
                    tk = bench(functools.partial(kernel, a, b, c), reps)
                    ks.append(flop / tk / 1e12)
                    cs.append(flop / tc / 1e12)
                    ratios.append(tc / tk)
                med = sorted(ratios)[len(ratios) // 2]
                row.update(tflops=sorted(ks)[2], cublas_tflops=sorted(cs)[2], ratio=med)
                # re-check after timing: a race shows up as a changed result
                c.fill_(float("nan"))
                kernel(a, b, c)
                torch.cuda.synchronize()
                row["rel_err_after"] = ((c.float() - ref).norm() / ref.norm()).item()
            emit(**row)


def run(directory: Path, out: Path, only: str | None, full: bool, budget_s: float) -> None:
    manifest = json.loads((directory / "manifest.json").read_text())
    names = [m["name"] for m in manifest if not only or only in m["name"]]
    rows: list[dict] = []
    plan: list[tuple[str, list]] = []

    def priority(name: str) -> int:
        return 0 if name.endswith("_s4_c2_p_e128") else 1 if "sm80" in name else 2

    for name in sorted(names, key=priority):
        best = name.startswith(
            ("gemm_sm90_f16_128x256x64_s4_c2_p_e128", "gemm_sm90_bf16_128x256x64_s4_c2_p_e128")
        )
        perf = PERF_SHAPES if (best and full) else PERF_SHAPES[:2]
        plan.append((name, [[*s, True] for s in RAGGED_SHAPES] + [[*s, False] for s in perf]))
    started = time.time()
    for name, jobs in plan:
        if time.time() - started > budget_s:
            rows.append({"kernel": name, "shape": None, "error": "skipped: time budget"})
            continue
        cmd = [sys.executable, __file__, "child", str(directory), name, json.dumps(jobs)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            output = proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as error:
            partial = error.stdout or ""
            partial = partial.decode() if isinstance(partial, bytes) else partial
            output = partial + "\nTIMEOUT (hang)"
        lines = [ln[7:] for ln in output.splitlines() if ln.startswith("RESULT ")]
        rows += [json.loads(ln) for ln in lines]
        if len(lines) < len(jobs):
            tail = output.strip().splitlines()[-3:]
            rows.append({"kernel": name, "shape": jobs[len(lines)], "error": " | ".join(tail)})
        print_table(rows[-len(jobs) :])
    import torch

    info = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "driver": subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        ).stdout.strip(),
        "method": "median of 5 alternating rounds (cuBLAS, kernel) of event-timed launches, "
        "random normal inputs, no L2 flush; correctness vs float32 reference, NaN-poisoned output",
    }
    out.write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    print_table(rows)


def print_table(rows: list[dict]) -> None:
    for r in rows:
        if "error" in r:
            print(f"ERROR {r['kernel']} {r['shape']}: {r['error'][:150]}")
        elif "tflops" in r:
            print(
                f"{r['kernel']:48s} {r['M']}x{r['N']}x{r['K']:<6d} {r['tflops']:6.0f} TF/s "
                f"cuBLAS {r['cublas_tflops']:6.0f} ratio {r['ratio']:.3f} err {r['rel_err']:.1e}"
            )
        elif not r["correct"]:
            print(
                f"WRONG {r['kernel']} {r['M']}x{r['N']}x{r['K']} "
                f"err {r['rel_err']:.2e} nan {r['nan']}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=["build", "run", "child"])
    parser.add_argument("directory", type=Path)
    parser.add_argument("rest", nargs="*")
    parser.add_argument("--only")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")) / "gemm.json")
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--budget", type=float, default=300.0, help="seconds for all children")
    args = parser.parse_args()
    if args.mode == "build":
        build(args.directory, args.only)
    elif args.mode == "run":
        run(args.directory, args.out, args.only, args.full, args.budget)
    else:
        child(args.directory, [args.rest[0]], json.loads(args.rest[1]))


if __name__ == "__main__":
    main()
