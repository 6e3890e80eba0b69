"""tilec GEMM against cuBLAS (torch.matmul) and an autotuned Triton tl.dot kernel on the H200.

The tilec kernels are compiled the way the compiler does it: the TileLang-style kernel below goes
through the frontend (tile IR), the CUDA target's scheduling passes, the `lower-gemm-to-tensorcore`
pass (which builds the kernel from their decisions) and the CUDA target's NVVM
pipeline to PTX. The GPU machine has no MLIR, so this runs in two halves:

  python benchmarks/gemm.py build DIR [--suite S]               (compiler machine)
  python benchmarks/gemm_device.py run DIR --out results.json  (GPU machine, carry DIR)

Suites: "f16" (the fp16/bf16 shapes and configs below), "types" (every operand type and layout
of issue 4 checked on ragged shapes, fp8 e4m3 timed at 4096^3 and 8192^3 against
torch._scaled_mm, int8 / tf32 / transposed fp16 at 4096^3 against torch), "all" (both).

Configurations (the user's knobs): "tuned" = TileLang's tuned 128x256x64 / 256 threads / 4
stages, "quickstart" = DESIGN.md's 128x128x32 / 128 threads / 3 stages, and for shapes with few
output tiles "mid" (128x128x64 / 256 / 4), "narrow" (128x64x64 / 256 / 4) and "small" (64x128x64 /
128 / 4: one consumer warpgroup, the deepest ring): the per-shape best of tuned/mid/narrow/small
is what an autotuner over these configs keeps.
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
    "small": {"block_M": 64, "block_N": 128, "block_K": 64, "threads": 128, "num_stages": 4},
}
CHECK_SHAPES = [(1000, 1016, 1000), (257, 136, 72)]
# ragged, with rows of every stored operand 16-byte aligned for every type (K-major 8-bit A and
# B rows are K bytes, a transposed A's rows M elements) and with at least two K tiles of 128 8-bit
# elements, since a single-k-tile problem stays on the SIMT path
TYPE_CHECK_SHAPES = [(1000, 1016, 1008), (264, 136, 272), (2048, 2048, 2048)]
FP8_PERF_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)]


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


@tilec.jit
def matmul_typed(
    A,
    B,
    block_M=128,
    block_N=128,
    block_K=32,
    threads=128,
    num_stages=3,
    in_dtype=T.float16,
    out_dtype=T.float16,
    accum_dtype=T.float32,
    b_k_major=True,
):
    """B given as N x K (transpose_B): the layout fp8 / int8 / tf32 tensor cores read; with
    `b_k_major` False as K x N (on wgmma through transpose-mn-major-operands' K-major copy)."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), in_dtype)
    B: T.Tensor((N, K) if b_k_major else (K, N), in_dtype)
    C = T.empty((M, N), out_dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), in_dtype)
        B_shared = T.alloc_shared((block_N, block_K) if b_k_major else (block_K, block_N),
                                  in_dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            if b_k_major:
                T.copy(B[bx * block_N, k * block_K], B_shared)
            else:
                T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local, transpose_B=b_k_major)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


@tilec.jit
def matmul_register_a(
    A,
    B,
    block_M=128,
    block_N=128,
    block_K=64,
    threads=128,
    num_stages=3,
    in_dtype=T.float8_e4m3,
    out_dtype=T.bfloat16,
    accum_dtype=T.float32,
):
    """matmul_typed with A read from registers: each K tile copied from shared memory into a
    fragment, then T.gemm(A_fragment, B_shared) (the form of attention's second gemm)."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), in_dtype)
    B: T.Tensor((N, K), in_dtype)
    C = T.empty((M, N), out_dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), in_dtype)
        A_local = T.alloc_fragment((block_M, block_K), in_dtype)
        B_shared = T.alloc_shared((block_N, block_K), in_dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[bx * block_N, k * block_K], B_shared)
            T.copy(A_shared, A_local)
            T.gemm(A_local, B_shared, C_local, transpose_B=True)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


@tilec.jit
def matmul_tn(
    A,
    B,
    block_M=128,
    block_N=128,
    block_K=32,
    threads=128,
    num_stages=3,
    dtype=T.float16,
    out_dtype=T.float16,
):
    """A given as K x M (transpose_A), B as K x N; 16-bit operands."""
    M, N, K = T.const("M, N, K")
    C = T.empty((M, N), out_dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_K, block_M), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[k * block_K, by * block_M], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local, transpose_A=True)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


@tilec.jit
def matmul_tt(
    A,
    B,
    block_M=128,
    block_N=128,
    block_K=32,
    threads=128,
    num_stages=3,
    dtype=T.float16,
    out_dtype=T.float16,
):
    """A given as K x M, B as N x K (transpose_A and transpose_B); 16-bit operands."""
    M, N, K = T.const("M, N, K")
    C = T.empty((M, N), out_dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_K, block_M), dtype)
        B_shared = T.alloc_shared((block_N, block_K), dtype)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[k * block_K, by * block_M], A_shared)
            T.copy(B[bx * block_N, k * block_K], B_shared)
            T.gemm(A_shared, B_shared, C_local, transpose_A=True, transpose_B=True)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


ELEMENTS = {
    "f16": T.float16,
    "bf16": T.bfloat16,
    "e4m3": T.float8_e4m3,
    "e5m2": T.float8_e5m2,
    "s8": T.int8,
    "tf32": T.float32,
    "f32": T.float32,
    "s32": T.int32,
}


def specialize(shape: tuple[int, int, int], variant: dict, knobs: dict, arch: str):
    """The frontend's kernel for one (types, layout) variant at a static shape."""
    m, n, k = shape
    element = ELEMENTS[variant["dtype"]]
    out = ELEMENTS[variant.get("out", variant["dtype"])]
    layout = variant.get("layout", "nn")
    a = T.Tensor((k, m) if layout[0] == "t" else (m, k), element)
    b = T.Tensor((n, k) if layout[1] == "t" else (k, n), element)
    if layout == "nn":
        return matmul.specialize((a, b), {"dtype": element, **knobs}, f"cuda:{arch}")
    if layout == "nt":
        accum = T.int32 if variant["dtype"] == "s8" else T.float32
        types = {"in_dtype": element, "out_dtype": out, "accum_dtype": accum}
        return matmul_typed.specialize((a, b), {**types, **knobs}, f"cuda:{arch}")
    kernel = {"tn": matmul_tn, "tt": matmul_tt}[layout]
    return kernel.specialize((a, b), {"dtype": element, "out_dtype": out, **knobs}, f"cuda:{arch}")


def compile_ptx(
    shape: tuple[int, int, int], variant: dict, knobs: dict, arch: str
) -> tuple[str, dict]:
    """Frontend -> tile IR -> scheduling passes -> lower-gemm-to-tensorcore -> NVVM pipeline ->
    PTX, and the launch."""
    from mlir import ir

    from tilec.compiler.passes import get_pass
    from tilec.compiler.passes._scheduling import ARCH_ATTR
    from tilec.compiler.passes.lower_gemm_to_tensorcore import LAUNCH_ATTR, LowerGemmToTensorcore
    from tilec.compiler.pipeline import CompileOptions, run_pass_pipeline
    from tilec.compiler.targets import cuda
    from tilec.compiler.targets.description import describe
    from tilec.compiler.tensorcore.ptx import ptxas_check

    spec = specialize(shape, variant, knobs, arch)
    module = spec.build().module
    with module.context:
        # the chip as the CUDA target states it: passes read the module's tile.arch
        module.operation.attributes[ARCH_ATTR] = ir.StringAttr.get(arch)
        for name in cuda.SCHEDULE_PASSES:
            get_pass(name)().run(module)
        LowerGemmToTensorcore(arch=arch).run(module)
        attributes = module.operation.attributes
        if LAUNCH_ATTR not in attributes:
            raise RuntimeError(f"the pass did not take {shape} {variant} {knobs}")
        launch = json.loads(ir.StringAttr(attributes[LAUNCH_ATTR]).value)
        for op in list(module.body.operations):
            if op.operation.name == "func.func":
                op.operation.erase()
        options = CompileOptions(target=f"cuda:{arch}")
        run_pass_pipeline(module, cuda.nvvm_pipeline(describe(arch)), options)
        ptx = cuda._emit_ptx(module, options)
    report = ptxas_check(ptx, arch)
    if not report.ok:
        raise RuntimeError(report.log)
    launch["registers"] = report.registers
    return ptx, launch


def write_kernel(directory: Path, name: str, ptx: str) -> None:
    """The PTX, and a cubin for sm_90a (the GPU machine then skips the driver's JIT)."""
    import subprocess

    (directory / f"{name}.ptx").write_text(ptx)
    subprocess.run(
        [
            "ptxas",
            "-arch=sm_90a",
            str(directory / f"{name}.ptx"),
            "-o",
            str(directory / f"{name}.cubin"),
        ],
        check=True,
    )


# (label, arch, variant, knobs, perf shapes): every type and layout the pass lowers
TYPE_CONFIGS = {
    "tuned": CONFIGS["tuned"],
    "quickstart": CONFIGS["quickstart"],
    "wide": {"block_M": 256, "block_N": 128, "block_K": 128, "threads": 256, "num_stages": 4},
    "tf32": {"block_M": 128, "block_N": 128, "block_K": 32, "threads": 256, "num_stages": 3},
    "sm80_8bit": {"block_M": 128, "block_N": 128, "block_K": 64, "threads": 128, "num_stages": 3},
    "sm80_tf32": {"block_M": 128, "block_N": 128, "block_K": 16, "threads": 128, "num_stages": 3},
}
TYPE_VARIANTS = [
    ("sm_90a", {"dtype": "e4m3", "out": "bf16", "layout": "nt"}, "tuned", FP8_PERF_SHAPES),
    ("sm_90a", {"dtype": "e4m3", "out": "f16", "layout": "nt"}, "tuned", FP8_PERF_SHAPES),
    ("sm_90a", {"dtype": "e4m3", "out": "bf16", "layout": "nt"}, "wide", FP8_PERF_SHAPES),
    ("sm_90a", {"dtype": "e4m3", "out": "f32", "layout": "nt"}, "tuned", []),
    ("sm_90a", {"dtype": "e4m3", "out": "bf16", "layout": "nt"}, "quickstart", []),
    ("sm_90a", {"dtype": "e5m2", "out": "bf16", "layout": "nt"}, "tuned", []),
    ("sm_90a", {"dtype": "s8", "out": "s32", "layout": "nt"}, "tuned", FP8_PERF_SHAPES[:1]),
    ("sm_90a", {"dtype": "s8", "out": "s32", "layout": "nt"}, "quickstart", []),
    ("sm_90a", {"dtype": "tf32", "out": "f32", "layout": "nt"}, "tf32", FP8_PERF_SHAPES[:1]),
    ("sm_90a", {"dtype": "f16", "out": "f16", "layout": "nt"}, "tuned", FP8_PERF_SHAPES[:1]),
    ("sm_90a", {"dtype": "f16", "out": "f16", "layout": "tn"}, "tuned", FP8_PERF_SHAPES[:1]),
    ("sm_90a", {"dtype": "bf16", "out": "bf16", "layout": "tt"}, "tuned", FP8_PERF_SHAPES[:1]),
    ("sm_90a", {"dtype": "f16", "out": "f16", "layout": "tt"}, "quickstart", []),
    ("sm_90a", {"dtype": "bf16", "out": "f32", "layout": "tn"}, "quickstart", []),
    ("sm_90a", {"dtype": "f16", "out": "f16", "layout": "nn"}, "tuned", FP8_PERF_SHAPES[:1]),
    ("sm_80", {"dtype": "f16", "out": "f16", "layout": "nt"}, "quickstart", []),
    ("sm_80", {"dtype": "f16", "out": "f16", "layout": "tn"}, "quickstart", []),
    ("sm_80", {"dtype": "bf16", "out": "bf16", "layout": "tt"}, "quickstart", []),
    ("sm_80", {"dtype": "f16", "out": "f32", "layout": "tt"}, "quickstart", []),
    ("sm_80", {"dtype": "s8", "out": "s32", "layout": "nt"}, "sm80_8bit", []),
    ("sm_80", {"dtype": "tf32", "out": "f32", "layout": "nt"}, "sm80_tf32", []),
]


def build_types(directory: Path, manifest: list, plan: list) -> None:
    """Every type/layout variant: correctness on ragged shapes, speed where a library peer is."""
    for arch, variant, config, perf_shapes in TYPE_VARIANTS:
        knobs = TYPE_CONFIGS[config]
        layout, dtype, out = variant["layout"], variant["dtype"], variant["out"]
        for shape in TYPE_CHECK_SHAPES + perf_shapes:
            start = time.time()
            ptx, launch = compile_ptx(shape, variant, knobs, arch)
            tag = "sm80_" if arch == "sm_80" and not config.startswith("sm80") else ""
            name = f"{tag}{config}_{dtype}_{out}_{layout}_{shape[0]}x{shape[1]}x{shape[2]}"
            write_kernel(directory, name, ptx)
            entry = {"name": name, "file": f"{name}.ptx", "entry": variant_entry(layout)}
            manifest.append(
                {**entry, "dtype": dtype, "out_dtype": out, "layout": layout, "label": config}
                | launch
            )
            m, n, k = shape
            plan.append({"kernel": name, "M": m, "N": n, "K": k, "quick": shape not in perf_shapes})
            print(f"{name:48s} regs={launch['registers']} ({time.time() - start:.1f}s)", flush=True)


def variant_entry(layout: str) -> str:
    """The entry (kernel) name the frontend gives each layout's function."""
    return {"nn": "matmul", "nt": "matmul_typed", "tn": "matmul_tn", "tt": "matmul_tt"}[layout]


def build(directory: Path, suite: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    manifest: list[dict] = []
    plan: list[dict] = []
    # the fp16/bf16 table first: a run cut short by its time budget keeps it
    if suite in ("f16", "all"):
        build_f16(directory, manifest, plan)
    if suite in ("types", "all"):
        build_types(directory, manifest, plan)
    import mlir

    (directory / "manifest.json").write_text(json.dumps(manifest, indent=1))
    (directory / "plan.json").write_text(json.dumps(plan, indent=1))
    info = {"mlir": getattr(mlir, "__version__", "22.1.8 wheels"), "compiled": time.ctime()}
    (directory / "build_info.json").write_text(json.dumps(info))


def build_f16(directory: Path, manifest: list, plan: list) -> None:
    """The fp16/bf16 suite: the issue's shapes, five configs, the sm_80 kernel too."""
    for dtype in ("f16", "bf16"):
        for config, knobs in CONFIGS.items():
            for shape in CHECK_SHAPES + PERF_SHAPES:
                perf = shape in PERF_SHAPES
                few_tiles = math.ceil(shape[0] / 128) * math.ceil(shape[1] / 256) < 99
                if config in ("mid", "narrow") and not (perf and few_tiles):
                    continue
                if config == "small" and perf and not few_tiles:
                    continue
                start = time.time()
                ptx, launch = compile_ptx(shape, {"dtype": dtype}, knobs, "sm_90a")
                name = f"{config}_{dtype}_{shape[0]}x{shape[1]}x{shape[2]}"
                write_kernel(directory, name, ptx)
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
            ptx, launch = compile_ptx(shape, {"dtype": dtype}, CONFIGS["quickstart"], "sm_80")
            name = f"sm80_quickstart_{dtype}_{shape[0]}x{shape[1]}x{shape[2]}"
            write_kernel(directory, name, ptx)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=["build"])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--suite", choices=["f16", "types", "all"], default="all")
    args = parser.parse_args()
    build(args.directory, args.suite)


if __name__ == "__main__":
    main()
