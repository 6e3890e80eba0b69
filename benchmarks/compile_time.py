"""How long tilec takes before a kernel runs: `import tilec`, a cold compile of the quickstart,
and compiles of bigger kernels with where their time goes.

    python benchmarks/compile_time.py [--repeats N] [--targets cpu,cuda:sm_90a,cuda:sm_80]
        [--tilelang-examples DIR] [--out JSON]

Three parts, each in fresh Python processes with the cache disabled, so nothing is reused:
  import_s    `import tilec`
  compile_s   the quickstart (examples/quickstart.py, 1024^3) compiled cold, imports of the
              compiler included, per target (wall seconds)
  kernels     kernels past the quickstart, for sm_90a, after one warm-up compile in the same
              process (what an autotuner or a second kernel pays): benchmarks/fused_gemm.py's
              kernels at its H200 tile (the per-op tensor-core path: plan-wgmma-gemms and
              lower-tile-to-gpu), and with --tilelang-examples the kernels of TileLang's kda/
              examples at the configuration their main() runs (each file's imports rewritten as
              benchmarks/tilelang_examples.py does, the import of its Triton reference
              dropped). Per kernel: CPU and wall seconds of each repeat (CPU: this process and
              ptxas; it does not grow when other work shares the machine, wall time does), and
              the wall seconds of every stage and pass of one more compile that observes them
              (a PassObserver, as `tilec trace` does: upstream pipelines then run one pass at a
              time), or the error that stopped the compile.
Writes a JSON record to benchmarks/results/ (or --out).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

IMPORT_PROBE = """
import time
start = time.perf_counter()
import tilec
print(time.perf_counter() - start)
"""

COMPILE_PROBE = """
import sys, time
sys.path.insert(0, {examples!r})
import torch
import tilec
tilec.disable_cache()
from quickstart import matmul
a = torch.randn({m}, {k}, dtype=torch.float16)
b = torch.randn({k}, {n}, dtype=torch.float16)
start = time.perf_counter()
matmul.compile(a, b, target={target!r})
print(time.perf_counter() - start)
"""

KERNEL_TARGET = "cuda:sm_90a"

# TileLang's kda/ examples: the kernel function and the arguments their main() compiles it with
KDA_KERNELS: dict[str, tuple[str, dict[str, Any]]] = {
    "kda/chunk_bwd_dqkwg.py": ("chunk_bwd_dqkwg", dict(
        B=1, S=8192, H=64, DK=128, DV=128, scale=1.0, input_dtype="float32",
        gate_dtype="float32", chunk_size=64, block_DK=32, block_DV=32, threads=128,
        num_stages=2)),
    "kda/chunk_bwd_dv.py": ("tilelang_chunk_bwd_kernel_dv_local", dict(
        B=1, S=8192, H=64, DV=128, input_dtype="bfloat16", do_dtype="float32",
        output_dtype="bfloat16", chunk_size=64)),
    "kda/chunk_bwd_gla_dA.py": ("tilelang_chunk_bwd_kernel_dv_local", dict(
        B=1, S=8192, H=64, DV=128, scale=1.0, input_dtype="bfloat16", do_dtype="bfloat16",
        da_dtype="float32", chunk_size=64)),
    "kda/chunk_bwd_intra.py": ("tilelang_chunk_bwd_intra", dict(
        B=1, S=8192, H=8, DK=128, input_dtype="float32", output_dtype="float32",
        accum_dtype="float32", gate_dtype="float32", state_dtype="float32", chunk_size=64,
        block_DK=64, threads=128, num_stages=0)),
    "kda/chunk_delta_bwd.py": ("tilelang_chunk_gated_delta_rule_bwd_dhu", dict(
        B=1, S=8192, H=64, DK=128, DV=128, input_dtype="bfloat16", output_dtype="bfloat16",
        accum_dtype="float32", gate_dtype="float32", state_dtype="float32", chunk_size=64,
        scale=128**-0.5, use_gk=True, use_initial_state=True, use_final_state_gradient=True,
        block_DV=32, threads=128, num_stages=1)),
    "kda/chunk_delta_h_fwd.py": ("tilelang_chunk_gated_delta_rule_fwd_h", dict(
        B=1, S=8192, H=64, DK=128, DV=128, input_dtype="float16", output_dtype="float16",
        accum_dtype="float32", gate_dtype="float32", state_dtype="float32", chunk_size=64,
        use_gk=True, use_initial_state=True, store_final_state=True, save_new_value=True,
        block_DK=32, block_DV=32, threads=128, num_stages=2)),
    "kda/chunk_inter_solve_fused.py": ("tilelang_chunk_kda_fwd_inter_fused", dict(
        B=1, S=8192, H=64, DK=128, scale=1.0, input_dtype="bfloat16", output_dtype="bfloat16",
        accum_dtype="float32", gate_dtype="float32", chunk_size=64, sub_chunk_size=16)),
    "kda/chunk_intra_token_parallel.py": ("tilelang_chunk_kda_fwd_intra_token_parallel", dict(
        B=1, S=8192, H=64, DK=128, input_dtype="bfloat16", output_dtype="bfloat16",
        accum_dtype="float32", gate_dtype="float32", chunk_size=64, sub_chunk_size=16)),
    "kda/chunk_o.py": ("tilelang_chunk_fwd_o", dict(
        B=1, S=8192, H=64, DK=128, DV=128, chunk_size=64, input_dtype="bfloat16",
        output_dtype="bfloat16", accum_dtype="float32", gate_dtype="float32", scale=128**-0.5,
        block_DK=32, block_DV=32, threads=128, num_stages=1)),
    "kda/wy_fast.py": ("tilelang_recompute_w_u_fwd", dict(
        B=1, S=8192, H=64, DK=128, DV=128, chunk_size=64, input_dtype="bfloat16",
        output_dtype="bfloat16", gate_dtype="float32", accum_dtype="float32", use_qg=False,
        use_kg=True, block_DK=64, block_DV=32, threads=128, num_stages=3)),
    "kda/wy_fast_bwd.py": ("tilelang_wy_fast_bwd", dict(
        B=1, S=32768, H=8, DK=128, DV=128, input_dtype="float32", output_dtype="float32",
        accum_dtype="float32", gate_dtype="float32", state_dtype="float32", chunk_size=64,
        block_DK=32, block_DV=32, threads=128, num_stages=0)),
}


def time_in_fresh_process(code: str, repeats: int) -> list[float]:
    """Seconds reported by `code` (its last printed line), once per fresh interpreter."""
    times = []
    for _ in range(repeats):
        output = subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True
        ).stdout
        times.append(float(output.strip().splitlines()[-1]))
    return times


# ----- kernels (run in a child: python compile_time.py --child GROUP [DIR]) -----------------


def _per_op_kernels() -> dict[str, Any]:
    """name -> a function compiling that fused_gemm kernel, given a timings dict."""
    import fused_gemm

    def compiler(case: Any) -> Any:
        shape = fused_gemm.SHAPES.get(case.name, fused_gemm.DEFAULT_SHAPE)
        return lambda: (case.kernel, fused_gemm._meta(case, shape),
                        {**fused_gemm.TILE, **({"per_op": True} if case.per_op else {})})

    return {f"per-op/{case.name}": compiler(case) for case in fused_gemm.CASES}


def _kda_module(examples: Path, relative: str, scratch: Path) -> Any:
    """The example imported from a rewritten copy of its folder (see the module docstring)."""
    import importlib.util

    from tilelang_examples import rewrite_imports

    folder = scratch / Path(relative).parent
    if not folder.exists():
        folder.mkdir(parents=True)
        for source in (examples / Path(relative).parent).glob("*.py"):
            text = rewrite_imports(source.read_text())
            kept = [line for line in text.splitlines() if "FLA_KDA" not in line]
            (folder / source.name).write_text("\n".join(kept) + "\n")
        sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(Path(relative).stem, folder / Path(relative).name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _kda_kernels(examples: Path, scratch: Path) -> dict[str, Any]:
    def compiler(relative: str) -> Any:
        name, arguments = KDA_KERNELS[relative]

        def make() -> Any:
            from tilec.autotuner import AutotunedFunction

            function = getattr(_kda_module(examples, relative, scratch), name)
            if isinstance(function, AutotunedFunction):  # the @jit function under @autotune
                function = function.fn
            return function, (), arguments

        return make

    return {relative: compiler(relative) for relative in KDA_KERNELS}


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (ptxas): unlike wall time it does
    not grow when other work shares the machine."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


class Breakdown:
    """A PassObserver (tilec.compiler.pipeline) adding up the seconds of each pass and stage."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def _add(self, key: str, seconds: float) -> None:
        self.seconds[key] = round(self.seconds.get(key, 0.0) + seconds, 4)

    def after_pass(self, name: str, module: Any, seconds: float) -> None:
        self._add(f"pass {name}", seconds)

    def after_stage(self, name: str, product: Any, seconds: float) -> None:
        self._add(f"stage {name}", seconds)


def _compile_timed(make: Any, observer: Breakdown | None = None) -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, PTX) of one compile, the example's import excluded."""
    from tilec.compiler.driver import compile_module
    from tilec.transform import codegen_settings

    function, args, kwargs = make()
    start_cpu, start_wall = cpu_seconds(), time.perf_counter()
    spec = function.specialize(tuple(args), dict(kwargs), KERNEL_TARGET)
    result = spec.build()
    if observer is not None:
        observer.after_stage("frontend", result.module, time.perf_counter() - start_wall)
    settings = codegen_settings(spec.pass_configs)
    artifact = compile_module(result.module, result.params, spec.target, launch=result.launch,
                              fast_math=settings.fast_math, disable_tma=settings.disable_tma,
                              observer=observer)
    ptx = "\n".join(kernel.asm.get("ptx", "") for kernel in (artifact.kernels or [artifact]))
    return cpu_seconds() - start_cpu, time.perf_counter() - start_wall, ptx


def child(group: str, repeats: int, examples: Path | None) -> None:
    """Compile every kernel of `group` `repeats` times; print one JSON object."""
    import tempfile

    import torch

    import tilec

    tilec.disable_cache()
    sys.path.insert(0, str(ROOT / "examples"))
    from quickstart import matmul

    a, b = torch.randn(256, 256, dtype=torch.float16), torch.randn(256, 256, dtype=torch.float16)
    matmul.compile(a, b, target=KERNEL_TARGET)  # warm-up: the compiler's modules are imported
    with tempfile.TemporaryDirectory(prefix="tilec-compile-time-") as scratch:
        kernels = (_per_op_kernels() if group == "per-op"
                   else _kda_kernels(examples, Path(scratch)))
        record: dict[str, Any] = {}
        for name, make in kernels.items():
            runs = []
            try:
                for _ in range(repeats):
                    runs.append(_compile_timed(make))
            except Exception as error:
                message = str(error).splitlines()[0] if str(error) else type(error).__name__
                record[name] = {"error": f"{type(error).__name__}: {message}"}
                continue
            breakdown = Breakdown()
            _compile_timed(make, breakdown)
            record[name] = {
                "cpu_s": [round(run[0], 3) for run in runs],
                "wall_s": [round(run[1], 3) for run in runs],
                "wgmma": "wgmma.mma_async" in runs[0][2],
                "breakdown_wall_s": breakdown.seconds,
            }
    print(json.dumps(record))


def kernel_times(group: str, repeats: int, examples: Path | None) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", group, "--repeats", str(repeats)]
    if examples is not None:
        command += ["--tilelang-examples", str(examples)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def _summary(name: str, entry: dict[str, Any]) -> str:
    if "error" in entry:
        return f"{name:36} {entry['error'][:100]}"
    stages = {key[len("stage "):]: value for key, value in entry["breakdown_wall_s"].items()
              if key.startswith("stage ")}
    top = sorted(stages.items(), key=lambda item: -item[1])[:3]
    where = ", ".join(f"{stage} {seconds:.2f}" for stage, seconds in top)
    return (f"{name:36} min {min(entry['cpu_s']):5.2f} s CPU "
            f"(wgmma={entry['wgmma']}; wall s: {where})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--targets", default="cpu,cuda:sm_90a,cuda:sm_80")
    parser.add_argument("--tilelang-examples", type=Path, default=None,
                        help="TileLang's examples/ folder: also time its kda/ kernels")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.repeats, args.tilelang_examples)
        return

    record: dict = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "python": platform.python_version(),
        "import_s": time_in_fresh_process(IMPORT_PROBE, args.repeats),
        "compile_s": {},
    }
    examples = str(ROOT / "examples")
    for target in args.targets.split(","):
        code = COMPILE_PROBE.format(examples=examples, m=1024, n=1024, k=1024, target=target)
        try:
            record["compile_s"][target] = time_in_fresh_process(code, args.repeats)
        except subprocess.CalledProcessError as error:
            record["compile_s"][target] = f"failed: {error.stderr.strip().splitlines()[-1]}"
    record["kernels_target"] = KERNEL_TARGET
    record["kernels"] = kernel_times("per-op", args.repeats, None)
    if args.tilelang_examples is not None:
        record["kernels"].update(kernel_times("kda", args.repeats, args.tilelang_examples))

    print(f"import tilec: median {statistics.median(record['import_s']) * 1e3:.0f} ms")
    for target, times in record["compile_s"].items():
        if isinstance(times, list):
            print(f"quickstart cold compile to {target}: median {statistics.median(times):.2f} s")
        else:
            print(f"quickstart cold compile to {target}: {times}")
    for name, entry in record["kernels"].items():
        print(_summary(name, entry))
    out = args.out or ROOT / "benchmarks" / "results" / f"compile-time-{record['date'][:10]}.json"
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
