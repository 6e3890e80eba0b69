"""tilec GEMM against cuBLAS (torch.matmul) and an autotuned Triton tl.dot kernel on the H200.

The tilec kernels are compiled the way the compiler does it: the TileLang-style kernel below goes
through the frontend (tile IR), the `lower-gemm-to-tensorcore` pass and the CUDA target's NVVM
pipeline to PTX. The GPU machine has no MLIR, so this runs in two halves:

  python benchmarks/gemm.py build DIR                          (compiler machine)
  python benchmarks/gemm_device.py run DIR --out results.json  (GPU machine, carry DIR)

Configurations (the user's knobs): "tuned" = TileLang's tuned 128x256x64 / 256 threads / 4
stages, "quickstart" = DESIGN.md's 128x128x32 / 128 threads / 3 stages, and for shapes with few
output tiles "mid" (128x128x64 / 256 / 4) and "narrow" (128x64x64 / 256 / 4): the per-shape
best of tuned/mid/narrow is what an autotuner over these configs would keep.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import tilec
import tilec.language as T

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm_device import PERF_SHAPES  # noqa: E402

CONFIGS = {
    "tuned": {"block_M": 128, "block_N": 256, "block_K": 64, "threads": 256, "num_stages": 4},
    "quickstart": {"block_M": 128, "block_N": 128, "block_K": 32, "threads": 128, "num_stages": 3},
    "mid": {"block_M": 128, "block_N": 128, "block_K": 64, "threads": 256, "num_stages": 4},
    "narrow": {"block_M": 128, "block_N": 64, "block_K": 64, "threads": 256, "num_stages": 4},
}
CHECK_SHAPES = [(1000, 1016, 1000), (257, 136, 72)]


@tilec.jit
def matmul(A, B, block_M=128, block_N=128, block_K=32, threads=128, num_stages=3, dtype=T.float16):
    M, N, K = T.const("M, N, K")
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


def compile_ptx(
    shape: tuple[int, int, int], dtype: str, knobs: dict, arch: str
) -> tuple[str, dict]:
    """Frontend -> tile IR -> lower-gemm-to-tensorcore -> NVVM pipeline -> PTX, and the launch."""
    from mlir import ir
    from tilec.compiler.passes.lower_gemm_to_tensorcore import LAUNCH_ATTR, LowerGemmToTensorcore
    from tilec.compiler.pipeline import CompileOptions, run_pass_pipeline
    from tilec.compiler.targets import cuda
    from tilec.compiler.tensorcore.ptx import ptxas_check

    m, n, k = shape
    element = {"f16": T.float16, "bf16": T.bfloat16}[dtype]
    spec = matmul.specialize(
        (T.Tensor((m, k), element), T.Tensor((k, n), element)),
        {"dtype": element, **knobs},
        f"cuda:{arch}",
    )
    module = spec.build().module
    with module.context:
        LowerGemmToTensorcore(arch=arch).run(module)
        attributes = module.operation.attributes
        if LAUNCH_ATTR not in attributes:
            raise RuntimeError(f"the pass did not take {shape} {dtype} {knobs}")
        launch = json.loads(ir.StringAttr(attributes[LAUNCH_ATTR]).value)
        for op in list(module.body.operations):
            if op.operation.name == "func.func":
                op.operation.erase()
        options = CompileOptions(target=f"cuda:{arch}")
        run_pass_pipeline(module, cuda.nvvm_pipeline(arch), options)
        ptx = cuda._emit_ptx(module, options)
    report = ptxas_check(ptx, arch)
    if not report.ok:
        raise RuntimeError(report.log)
    launch["registers"] = report.registers
    return ptx, launch


def build(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    manifest, plan = [], []
    for dtype in ("f16", "bf16"):
        for config, knobs in CONFIGS.items():
            for shape in CHECK_SHAPES + PERF_SHAPES:
                perf = shape in PERF_SHAPES
                few_tiles = math.ceil(shape[0] / 128) * math.ceil(shape[1] / 256) < 99
                if config in ("mid", "narrow") and not (perf and few_tiles):
                    continue
                start = time.time()
                ptx, launch = compile_ptx(shape, dtype, knobs, "sm_90a")
                name = f"{config}_{dtype}_{shape[0]}x{shape[1]}x{shape[2]}"
                (directory / f"{name}.ptx").write_text(ptx)
                manifest.append(
                    {
                        "name": name,
                        "file": f"{name}.ptx",
                        "entry": "matmul",
                        "dtype": dtype,
                        "label": config,
                        "knobs": knobs,
                        **launch,
                    }
                )
                m, n, k = shape
                job = {"kernel": name, "M": m, "N": n, "K": k}
                if not perf:
                    job["quick"] = True
                if perf and config == "tuned":
                    job["triton"] = True
                plan.append(job)
                print(
                    f"{name:40s} regs={launch['registers']} smem={launch['shared_bytes']} "
                    f"threads={launch['threads'][0]} ({time.time() - start:.1f}s)",
                    flush=True,
                )
    for dtype in ("f16", "bf16"):  # the sm_80 kernel (mma.sync) runs on the H200 too
        for shape in CHECK_SHAPES + PERF_SHAPES[:1]:
            ptx, launch = compile_ptx(shape, dtype, CONFIGS["quickstart"], "sm_80")
            name = f"sm80_quickstart_{dtype}_{shape[0]}x{shape[1]}x{shape[2]}"
            (directory / f"{name}.ptx").write_text(ptx)
            manifest.append(
                {
                    "name": name,
                    "file": f"{name}.ptx",
                    "entry": "matmul",
                    "dtype": dtype,
                    "label": "sm80-quickstart",
                    **launch,
                }
            )
            m, n, k = shape
            plan.append({"kernel": name, "M": m, "N": n, "K": k, "quick": shape != PERF_SHAPES[0]})
    import mlir

    (directory / "manifest.json").write_text(json.dumps(manifest, indent=1))
    (directory / "plan.json").write_text(json.dumps(plan, indent=1))
    info = {"mlir": getattr(mlir, "__version__", "22.1.8 wheels"), "compiled": time.ctime()}
    (directory / "build_info.json").write_text(json.dumps(info))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=["build"])
    parser.add_argument("directory", type=Path)
    args = parser.parse_args()
    build(args.directory)


if __name__ == "__main__":
    main()
