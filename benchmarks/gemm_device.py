"""Tensor-core GEMM kernels against cuBLAS (torch.matmul) on one GPU, in one process.

Two halves, because the GPU machine has no MLIR:
  python benchmarks/gemm_device.py build DIR   (here: generator variants -> PTX, manifest, plan)
  python benchmarks/gemm_device.py run DIR --out results.json   (GPU machine: torch + cuda-bindings)
  python benchmarks/gemm_device.py summary results.json        (anywhere: the issue's table)
benchmarks/gemm.py builds DIR through the tilec frontend and pass instead and reuses `run`.

`run` loads each kernel with the driver (its sm_90a cubin when the build left one, else the PTX
through the JIT), builds TMA maps with tilec/runtime/tma.py (loaded by path: no tilec install
needed there), checks every kernel against a float64 reference on fresh random inputs with the
output poisoned (NaN; INT32_MIN for int32), including ragged shapes, then times kernel and the
library peer in alternating rounds (CUDA events, median after warm-up; the H200's clock
wanders). Peers: cuBLAS (torch.matmul, on transposed views for transposed layouts; tf32
allowed for tf32 kernels), torch._scaled_mm with unit scales for fp8, torch._int_mm for int8.
Manifest entries may carry "out_dtype" and "layout" (two letters, t = transpose_A/_B).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import math
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
            # A from registers (ldmatrix -> wgmma's RS form), as attention's P @ V needs
            ("sm_90a", H(dtype=dtype, a_registers=True)),
            ("sm_90a", H(dtype=dtype, block_n=128, consumers=1, a_registers=True)),
            ("sm_90a", H(dtype=dtype, block_n=128, block_k=32, consumers=1, stages=3,
                         a_registers=True)),
        ]
    # 8-bit and tf32 fragments of A in registers: same bytes per lane as 16-bit ones
    for dtype, block_k in (("e4m3", 128), ("s8", 128), ("tf32", 32)):
        out.append(("sm_90a", H(dtype=dtype, block_n=128, block_k=block_k, trans_b=True,
                                a_registers=True)))
    return out


def build(directory: Path, only: str | None) -> None:
    from tilec.compiler.tensorcore import build_kernel
    from tilec.compiler.tensorcore.dtypes import OPERAND_BYTES

    directory.mkdir(parents=True, exist_ok=True)
    manifest = []
    for arch, cfg in variants():
        if only and only not in cfg.name:
            continue
        start = time.time()
        kernel = build_kernel(cfg, arch)
        (directory / f"{cfg.name}.ptx").write_text(kernel.ptx)
        manifest.append(
            {
                "name": cfg.name,
                "file": f"{cfg.name}.ptx",
                "dtype": cfg.dtype,
                "out_dtype": cfg.out,
                "layout": cfg.layout,
                "label": "generator",
                **kernel.launch,
            }
        )
        print(
            f"{cfg.name:50s} {arch:7s} regs={kernel.registers:4d} spills={kernel.spill_bytes} "
            f"smem={kernel.launch['shared_bytes']} ({time.time() - start:.1f}s)"
        )
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=1))
    plan = []
    for entry in manifest:
        # TMA needs 16-byte rows: K rounded up to 16 bytes for 8-bit (and tf32) operands
        k_unit = 16 // OPERAND_BYTES[entry["dtype"]]
        plan += [
            {"kernel": entry["name"], "M": m, "N": n, "K": -(-k // k_unit) * k_unit, "quick": True}
            for m, n, k in RAGGED_SHAPES
        ]
        plan += [{"kernel": entry["name"], "M": m, "N": n, "K": k} for m, n, k in PERF_SHAPES[:2]]
    (directory / "plan.json").write_text(json.dumps(plan, indent=1))


def _load_tma_module():
    spec = importlib.util.spec_from_file_location("tilec_tma", ROOT / "python/tilec/runtime/tma.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["tilec_tma"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class Kernel:
    """One PTX kernel loaded into torch's context, launched on torch's stream.

    Arguments follow meta["abi"] when present (the lower-gemm-to-tensorcore pass: one slot per
    tensor parameter, ["tma", p, role] or ["ptr", p]; sizes are compiled in), else the
    generator's default: (A, B, C) as TMA maps or pointers, then M, N, K as i32.
    """

    def __init__(self, directory: Path, meta: dict, tma) -> None:
        import numpy as np
        import torch

        self.meta, self.tma, self.np, self.torch = meta, tma, np, torch
        cu = tma._driver()
        self.cu = cu
        cubin = directory / (Path(meta["file"]).stem + ".cubin")
        data = cubin.read_bytes() if cubin.exists() else (directory / meta["file"]).read_bytes()
        data += b"\0"
        self.image = np.frombuffer(data, dtype=np.uint8).copy()
        self.module = tma.check(cu.cuModuleLoadData(self.image.ctypes.data))
        self.function = tma.check(cu.cuModuleGetFunction(self.module, meta["entry"].encode()))
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
        layout = self.meta.get("layout", "nn")
        m, k = reversed(a.shape) if layout[0] == "t" else a.shape
        n = b.shape[0] if layout[1] == "t" else b.shape[1]
        bm, bn, _ = self.meta["block"]
        tiles = -(-m // bm) * -(-n // bn)
        grid = min(tiles, self.sms) if self.meta.get("persistent") else tiles
        if "grid" in self.meta:
            grid = self.meta["grid"][0]
        keep = None
        if "tma" in self.meta:
            keep = self.tma.gemm_tensor_maps(a, b, c, self.meta["tma"])
            pointers = dict(zip("ABC", keep.pointers, strict=True))
        else:
            pointers = {"A": a.data_ptr(), "B": b.data_ptr(), "C": c.data_ptr()}
        if "abi" in self.meta:
            tensors = [a, b, c]
            words = [
                pointers[slot[2]] if slot[0] == "tma" else tensors[slot[1]].data_ptr()
                for slot in self.meta["abi"]
            ]
            values = [np.array([w], dtype=np.uint64) for w in words]
        else:
            values = [np.array([pointers[r]], dtype=np.uint64) for r in "ABC"]
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


def child(directory: Path, plan: list[dict], first: int) -> None:
    """Runs jobs first.. of the plan; prints one RESULT line (with the job number) per job."""
    import torch

    tma = _load_tma_module()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(first)
    torch.zeros(1, device="cuda")
    cu = tma._driver()
    tma.check(cu.cuInit(0))
    context = tma.check(cu.cuDevicePrimaryCtxRetain(tma.check(cu.cuDeviceGet(0))))
    tma.check(cu.cuCtxSetCurrent(context))
    manifest = {m["name"]: m for m in json.loads((directory / "manifest.json").read_text())}
    torch_dtype = {
        "f16": torch.float16,
        "bf16": torch.bfloat16,
        "e4m3": torch.float8_e4m3fn,
        "e5m2": torch.float8_e5m2,
        "s8": torch.int8,
        "tf32": torch.float32,
        "f32": torch.float32,
        "s32": torch.int32,
    }
    poison = {torch.int32: -(2**31)}
    kernels: dict[str, Kernel] = {}
    triton_matmul = None
    triton_state: dict[str, bool] = {}

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

    for number in range(first, len(plan)):
        job = plan[number]
        meta = manifest[job["kernel"]]
        if job["kernel"] not in kernels:
            kernels[job["kernel"]] = Kernel(directory, meta, tma)
        kernel = kernels[job["kernel"]]
        kind = meta["dtype"]
        dtype = torch_dtype[kind]
        out_kind = meta.get("out_dtype", kind)
        out_dtype = torch_dtype[out_kind]
        layout = meta.get("layout", "nn")
        m, n, k = job["M"], job["N"], job["K"]
        a_shape = (k, m) if layout[0] == "t" else (m, k)
        b_shape = (n, k) if layout[1] == "t" else (k, n)
        if kind == "s8":
            a = torch.randint(-128, 128, a_shape, device="cuda", dtype=dtype)
            b = torch.randint(-128, 128, b_shape, device="cuda", dtype=dtype)
        else:
            a = torch.randn(a_shape, device="cuda").to(dtype)
            b = torch.randn(b_shape, device="cuda").to(dtype)
        a_op = a.t() if layout[0] == "t" else a
        b_op = b.t() if layout[1] == "t" else b
        c = torch.full((m, n), poison.get(out_dtype, float("nan")), device="cuda", dtype=out_dtype)
        ref = a_op.double() @ b_op.double()
        torch.cuda.synchronize()
        kernel(a, b, c)
        wait_or_die(torch, f"{job['kernel']} {m}x{n}x{k}")

        err, nan = compare(torch, c, ref, poison.get(out_dtype))
        # tolerances by what rounds: int8 exact; 16-bit output rounding ~2^-9 (f16) / 2^-8
        # (bf16); tf32 inputs (10-bit mantissa); fp32 accumulation of exact products otherwise
        tolerance = {"s32": 0.0, "f16": 1e-2, "bf16": 2e-2}.get(out_kind, 1e-3)
        if kind == "tf32":
            tolerance = 1e-2
        ok = nan == 0 and err <= tolerance
        row = {
            "job": number,
            "kernel": job["kernel"],
            "label": meta.get("label", ""),
            "arch": meta["arch"],
            "dtype": meta["dtype"],
            "out_dtype": out_kind,
            "layout": layout,
            "M": m,
            "N": n,
            "K": k,
            "rel_err": err,
            "tolerance": tolerance,
            "nan": nan,
            "correct": ok,
        }
        if ok and not job.get("quick"):
            flop = 2.0 * m * n * k
            reps = max(5, min(50, int(2e-2 / max(flop / 7e14, 1e-6))))
            peer_name, peer = library_peer(torch, kind, out_dtype, a_op, b_op)
            row["peer"] = peer_name
            contenders = {"cublas": peer, "tilec": functools.partial(kernel, a, b, c)}
            if kind in ("e4m3", "e5m2"):  # cuBLASLt's default, promoting partial sums
                one = torch.ones((), device="cuda", dtype=torch.float32)
                contenders["scaled_mm_precise"] = functools.partial(
                    torch._scaled_mm, a_op, b_op, one, one, out_dtype=out_dtype
                )
            if job.get("triton") and triton_state.get("ok", True):
                try:
                    if triton_matmul is None:
                        sys.path.insert(0, str(Path(__file__).parent))
                        from gemm_triton import matmul as triton_matmul
                    c_triton = torch.empty_like(c)
                    triton_matmul(a, b, c_triton)
                    torch.cuda.synchronize()
                    triton_error = (c_triton.float() - ref).norm() / ref.norm()
                    row["triton_rel_err"] = triton_error.item()
                    contenders["triton"] = functools.partial(triton_matmul, a, b, c_triton)
                except Exception as error:  # the peer failing must not stop tilec's numbers
                    triton_state["ok"] = False
                    row["triton_error"] = str(error)[-300:]
            times: dict[str, list[float]] = {key: [] for key in contenders}
            for _ in range(5):
                for key, fn in contenders.items():
                    times[key].append(bench(fn, reps))
            ratios = sorted(tc / tk for tc, tk in zip(times["cublas"], times["tilec"], strict=True))
            for key, values in times.items():
                row[f"{key}_tflops"] = flop / sorted(values)[2] / 1e12
            row["tflops"] = row.pop("tilec_tflops")
            row["ratio"] = ratios[2]
            if "triton" in times:
                triton_ratios = sorted(
                    tc / tt for tc, tt in zip(times["cublas"], times["triton"], strict=True)
                )
                row["triton_ratio"] = triton_ratios[2]
            # re-check after timing: a race shows up as a changed result
            c.fill_(poison.get(out_dtype, float("nan")))
            kernel(a, b, c)
            torch.cuda.synchronize()
            row["rel_err_after"], row["nan_after"] = compare(torch, c, ref, poison.get(out_dtype))
        print("RESULT " + json.dumps(row), flush=True)
        del a, b, c, ref
        torch.cuda.empty_cache()


def compare(torch, c, ref, poison_value: int | None) -> tuple[float, int]:
    """Relative (Frobenius) error against the reference, and poisoned outputs left."""
    left = c == poison_value if poison_value is not None else torch.isnan(c)
    return ((c.double() - ref).norm() / ref.norm()).item(), int(left.sum().item())


def library_peer(torch, kind: str, out_dtype, a_op, b_op) -> tuple[str, object]:
    """The vendor-library call computing the same product (the 'cublas' column)."""
    if kind in ("e4m3", "e5m2"):
        one = torch.ones((), device="cuda", dtype=torch.float32)
        # _scaled_mm wants B column-major: b_op is the N x K tensor's transposed view; fast
        # accumulation is what wgmma's fp32 accumulators do in our kernel (no promotion)
        return "torch._scaled_mm(use_fast_accum=True)", functools.partial(
            torch._scaled_mm, a_op, b_op, one, one, out_dtype=out_dtype, use_fast_accum=True
        )
    if kind == "s8":
        return "torch._int_mm", functools.partial(torch._int_mm, a_op, b_op)
    if kind == "tf32":

        def tf32_matmul():
            torch.backends.cuda.matmul.allow_tf32 = True
            try:
                return torch.matmul(a_op, b_op)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = False

        return "torch.matmul (tf32)", tf32_matmul
    return "torch.matmul", functools.partial(torch.matmul, a_op, b_op)


def run(directory: Path, out: Path, budget_s: float) -> None:
    """Runs the plan in a child process, restarting past a job that crashes or hangs."""
    plan = json.loads((directory / "plan.json").read_text())
    rows: list[dict] = []
    started = time.time()
    first = 0
    while first < len(plan) and time.time() - started < budget_s:
        cmd = [sys.executable, __file__, "child", str(directory), "--first", str(first)]
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=max(30.0, budget_s - (time.time() - started)),
            )
            output = proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as error:
            partial = error.stdout or ""
            output = (partial.decode() if isinstance(partial, bytes) else partial) + "\nTIMEOUT"
        found = [json.loads(ln[7:]) for ln in output.splitlines() if ln.startswith("RESULT ")]
        rows += found
        print_table(found)
        first = (found[-1]["job"] + 1) if found else first
        if first < len(plan):
            tail = " | ".join(output.strip().splitlines()[-3:])
            rows.append({**plan[first], "error": tail[-400:]})
            print_table(rows[-1:])
            first += 1
    for job in plan[first:]:
        rows.append({**job, "error": "skipped: time budget"})
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
        "method": "median of 5 alternating rounds (library peer, tilec[, Triton]) of "
        "event-timed launches, random normal inputs (uniform int8), no L2 flush; correctness "
        "vs float64 reference, output poisoned (NaN, INT32_MIN), checked again after timing",
    }
    try:
        import triton

        info["triton"] = triton.__version__
    except ImportError:
        pass
    build_info = directory / "build_info.json"
    if build_info.exists():
        info["build"] = json.loads(build_info.read_text())
    summary = summarize(rows)
    print_summary(summary)
    out.write_text(json.dumps({"info": info, "summary": summary, "rows": rows}, indent=1))


def print_table(rows: list[dict]) -> None:
    for r in rows:
        shape = f"{r['M']}x{r['N']}x{r['K']}"
        if "error" in r:
            print(f"ERROR {r['kernel']} {shape}: {r['error'][:200]}")
        elif "tflops" in r:
            triton = f" triton {r['triton_tflops']:4.0f}" if "triton_tflops" in r else ""
            print(
                f"{r['kernel']:44s} {shape:18s} {r['tflops']:4.0f} TF/s cuBLAS "
                f"{r['cublas_tflops']:4.0f} ratio {r['ratio']:.3f}{triton} err {r['rel_err']:.1e}"
            )
        elif not r["correct"]:
            print(f"WRONG {r['kernel']} {shape} err {r['rel_err']:.2e} nan {r['nan']}")


# the configs an autotuner over benchmarks/gemm.py tries
BEST_OF = ("tuned", "mid", "narrow", "small")


def summarize(rows: list[dict]) -> dict:
    """Per fp16/bf16 perf shape: cuBLAS, the best of BEST_OF (what the autotuner keeps), the
    quickstart config and Triton; then the geometric mean and the lowest of the best ratios."""
    table: dict[tuple, dict] = {}
    for r in rows:
        if "ratio" not in r or r["dtype"] not in ("f16", "bf16"):
            continue  # error rows carry no label
        shape = (r["M"], r["N"], r["K"])
        if r["kernel"] != f"{r['label']}_{r['dtype']}_{shape[0]}x{shape[1]}x{shape[2]}":
            continue
        entry = table.setdefault((r["dtype"], *shape), {"dtype": r["dtype"], "shape": shape})
        if r["label"] == "quickstart":
            entry["quickstart"] = r["ratio"]
        elif r["label"] in BEST_OF and r["ratio"] > entry.get("best", 0.0):
            entry.update(best=r["ratio"], config=r["label"], tflops=r["tflops"],
                         cublas_tflops=r["cublas_tflops"])
        if "triton_ratio" in r:
            entry["triton"] = r["triton_ratio"]
    entries = [e for e in table.values() if "best" in e]
    if not entries:
        return {"shapes": []}

    def geomean(values: list[float]) -> float:
        return math.exp(sum(math.log(v) for v in values) / len(values))

    best = [e["best"] for e in entries]
    triton = [e["triton"] for e in entries if "triton" in e]
    return {
        "shapes": entries,
        "geomean_best": geomean(best),
        "lowest_best": min(best),
        "geomean_quickstart": geomean([e["quickstart"] for e in entries if "quickstart" in e]),
        "geomean_triton": geomean(triton) if triton else None,
    }


def print_summary(summary: dict) -> None:
    print("| dtype | M×N×K | cuBLAS TF/s | tilec best TF/s (×, config) | quickstart cfg × "
          "| Triton × |")
    print("|---|---|---|---|---|---|")
    for e in summary["shapes"]:
        shape = "×".join(map(str, e["shape"]))
        triton = f"{e['triton']:.2f}" if "triton" in e else "-"
        quick = f"{e['quickstart']:.2f}" if "quickstart" in e else "-"
        print(f"| {e['dtype']} | {shape} | {e['cublas_tflops']:.0f} | {e['tflops']:.0f} "
              f"({e['best']:.3f}, {e['config']}) | {quick} | {triton} |")
    if summary["shapes"]:
        print(f"geomean best {summary['geomean_best']:.3f}x cuBLAS, lowest "
              f"{summary['lowest_best']:.3f}x; quickstart config "
              f"{summary['geomean_quickstart']:.3f}x;"
              f" Triton {summary['geomean_triton'] or float('nan'):.3f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=["build", "run", "child", "summary"])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--only")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")) / "gemm.json")
    parser.add_argument("--budget", type=float, default=300.0, help="seconds for all jobs")
    args = parser.parse_args()
    if args.mode == "build":
        build(args.directory, args.only)
    elif args.mode == "summary":
        print_summary(summarize(json.loads(args.directory.read_text())["rows"]))
    elif args.mode == "run":
        run(args.directory, args.out, args.budget)
    else:
        plan = json.loads((args.directory / "plan.json").read_text())
        child(args.directory, plan, args.first)


if __name__ == "__main__":
    main()
