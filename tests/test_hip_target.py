"""CI for the HIP target on a machine without an AMD GPU: every test kernel compiles to an HSACO
for gfx942 (and a set of them for gfx90a), and the code object's kernel descriptor
(`llvm-readelf --notes`) and disassembly (`llvm-objdump -d`) say what the kernel must be:
64-lane waves, the launch's block size, LDS and registers within the chip's limits, no stack
(fragments in VGPRs), no calls left, reductions as cross-lane moves, barriers where LDS is
shared.

The HSACO stages need Debian's llvm-22, lld-22 and rocm-device-libs. Without them these tests
skip, unless TILEC_REQUIRE_HIP_TOOLS=1 (CI sets it after installing them: there a missing tool
is a failure, not a skip). The stages up to LLVM IR need nothing but MLIR and always run.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from kernels import KernelSpec, all_kernels  # noqa: E402

import tilec  # noqa: E402
import tilec.language as T  # noqa: E402
from tilec.compiler.targets.description import describe  # noqa: E402
from tilec.compiler.targets.hip import (  # noqa: E402
    disassemble,
    kernel_descriptors,
    toolchain_missing,
)
from tilec.errors import CompileError, LaunchError  # noqa: E402

ELF_MAGIC = b"\x7fELF"
# the CUDA suite's cp.async kernels carry pipeline-async-copies' NVIDIA decision written out;
# on AMD their T.Pipelined loops run as plain loops
NVIDIA_DECISIONS = re.compile(
    r'attributes \{tile\.pipeline = \{[^}]*\}\}|\{tile\.async = "cp\.async"\}')
# two 128 KiB shared tiles, one after the other: fits an H200's 227 KiB, not 64 KiB of LDS
NEEDS_MORE_LDS = ("reused_shared_tiles_100x1024", "gemm_on_column_parts_64x200x(256+64)",
                  "loop_local_tiles_128x256x4")
GFX90A_KERNELS = ("vector_add_float16", "softmax_float32_512", "column_sum_float32",
                  "reduce_max_float32", "gemm_bfloat16_128x128x32", "gemm_float16_64x128x32")
# the MFMA a test GEMM's operand type runs on, as each chip's disassembly spells it (every test
# GEMM tile splits into 32 x 32 blocks)
GEMM_MFMA = {
    "gfx942": {"f16": "v_mfma_f32_32x32x8_f16", "bf16": "v_mfma_f32_32x32x8_bf16",
               "f32": "v_mfma_f32_32x32x2_f32"},
    "gfx90a": {"f16": "v_mfma_f32_32x32x8f16", "bf16": "v_mfma_f32_32x32x8bf16_1k",
               "f32": "v_mfma_f32_32x32x2f32"},
}
GEMM_OPERAND = re.compile(r"tile\.gemm [^:]*: memref<\d+x\d+x(\w+), ")


def require_toolchain() -> None:
    why = toolchain_missing()
    if why is None:
        return
    if os.environ.get("TILEC_REQUIRE_HIP_TOOLS") == "1":
        pytest.fail(f"TILEC_REQUIRE_HIP_TOOLS=1 but {why}")
    pytest.skip(why)


def compile_spec(spec: KernelSpec, target: str, stop_after: str | None = None):
    from mlir import ir

    import tilec.dialect
    from tilec.compiler.driver import compile_module

    with tilec.dialect.new_context(), ir.Location.unknown():
        module = ir.Module.parse(NVIDIA_DECISIONS.sub("", spec.tile_ir))
        return compile_module(module, spec.params, target, launch=spec.launch,
                              stop_after=stop_after)


def instructions(disassembly: str) -> list[str]:
    """The mnemonics of a disassembly, in order."""
    return re.findall(r"^\s+([a-z][a-z0-9_]*)\b", disassembly, re.MULTILINE)


def check_code_object(artifact, chip: str) -> list[str]:
    """The checks every HIP kernel passes; returns its instructions for kernel-specific ones."""
    target = describe(chip)
    assert artifact.binary_kind == "hsaco"
    assert artifact.binary.startswith(ELF_MAGIC)
    (descriptor,) = kernel_descriptors(artifact.binary)
    entry = artifact.launch["entry"]
    assert descriptor["name"] == entry
    assert int(descriptor["wavefront_size"]) == target.warp_size == 64
    threads = 1
    for size in artifact.launch["threads"]:
        threads *= size
    assert int(descriptor["max_flat_workgroup_size"]) == threads
    assert int(descriptor["vgpr_count"]) + int(descriptor["agpr_count"]) <= target.max_vgprs
    assert int(descriptor["sgpr_count"]) <= 104
    assert descriptor["vgpr_spill_count"] == descriptor["sgpr_spill_count"] == "0"
    # per-thread arrays promoted to registers: no scratch memory
    assert descriptor["private_segment_fixed_size"] == "0"
    assert descriptor["uses_dynamic_stack"] == "false"
    assert int(descriptor["group_segment_fixed_size"]) + artifact.launch["shared_bytes"] <= \
        target.max_shared_bytes
    disassembly = disassemble(artifact.binary, chip)
    assert f"<{entry}>:" in disassembly
    found = instructions(disassembly)
    assert "s_endpgm" in found
    assert "s_swappc_b64" not in found and "s_setpc_b64" not in found  # every call inlined
    planned = re.findall(r'instruction = "(v_mfma\w+)"', artifact.asm.get("tile-hip", ""))
    for name in planned:  # each gemm plan-mfma-gemms took runs on its MFMA
        assert name in found, name
    if not planned:
        assert not any(op.startswith("v_mfma") for op in found)
    return found


def check_gemm_mfma(spec: KernelSpec, artifact, found: list[str], chip: str) -> None:
    """A test kernel's gemms run on the MFMA of their operand type, nowhere else."""
    operands = set(GEMM_OPERAND.findall(spec.tile_ir))
    assert {op for op in found if op.startswith("v_mfma")} == {
        GEMM_MFMA[chip][operand] for operand in operands}, spec.name
    if operands:
        assert artifact.asm["tile-hip"].count("tile.mfma = {") == \
            spec.tile_ir.count("tile.gemm ")


@pytest.mark.parametrize("spec", all_kernels(), ids=lambda spec: spec.name)
def test_tile_ir_kernel_makes_a_gfx942_code_object(spec: KernelSpec) -> None:
    require_toolchain()
    artifact = compile_spec(spec, "hip:gfx942")
    found = check_code_object(artifact, "gfx942")
    assert artifact.launch["arch"] == "gfx942"
    tensors = sum(p.kind == "tensor" for p in spec.params)
    assert [slot[0] for slot in artifact.launch["abi"][:tensors]] == ["ptr"] * tensors
    assert artifact.launch["threads"] == spec.threads
    check_gemm_mfma(spec, artifact, found, "gfx942")
    if spec.name.startswith(("reduce_", "softmax", "column_sum", "row_sum")):
        # lanes combine through cross-lane moves (ds_swizzle / ds_bpermute / DPP), not memory
        assert any(op.startswith(("ds_swizzle", "ds_bpermute")) or "_dpp" in op
                   for op in found), spec.name
    if artifact.launch["shared_bytes"]:
        assert "s_barrier" in found and any(op.startswith("ds_read") for op in found)


@pytest.mark.parametrize("name", GFX90A_KERNELS)
def test_gfx90a_code_objects(name: str) -> None:
    require_toolchain()
    spec = next(spec for spec in all_kernels() if spec.name == name)
    artifact = compile_spec(spec, "hip:gfx90a")
    check_gemm_mfma(spec, artifact, check_code_object(artifact, "gfx90a"), "gfx90a")
    assert "amdhsa.target:   amdgcn-amd-amdhsa--gfx90a" in _notes(artifact.binary)


def _notes(hsaco: bytes) -> str:
    from tilec.compiler.targets.hip import _inspect

    return _inspect(hsaco, ["llvm-readelf", "--notes"])


def test_stages_up_to_llvm_ir_need_no_toolchain() -> None:
    """The MLIR half of the target: ROCDL ops and private allocas in the rocdl stage, an
    amdgpu_kernel for amdgcn-amd-amdhsa in the LLVM IR."""
    spec = next(spec for spec in all_kernels() if spec.name == "softmax_float32_512")
    artifact = compile_spec(spec, "hip:gfx942", stop_after="llvmir")
    assert artifact.binary_kind == "none"
    rocdl = artifact.asm["rocdl"]
    assert 'chip = "gfx942"' in rocdl and "rocdl.kernel" in rocdl
    assert "rocdl.workitem.id.x" in rocdl
    assert "!llvm.ptr<5>" in rocdl  # fragments in the private address space
    assert "#gpu.address_space<private>" in artifact.asm["gpu"]
    llvm_ir = artifact.asm["llvmir"]
    assert 'target triple = "amdgcn-amd-amdhsa"' in llvm_ir
    assert "define amdgpu_kernel void @softmax_float32_512(" in llvm_ir
    allocas = re.findall(r"= alloca .*", llvm_ir)
    assert allocas and all(line.endswith("addrspace(5)") for line in allocas)


def test_frontend_kernels_make_code_objects(tmp_path: Path, monkeypatch) -> None:
    """TileLang-style Python kernels through the frontend: elementwise, softmax, reductions,
    GEMMs with epilogues."""
    require_toolchain()
    from frontend_kernels import cases

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    for case in cases():
        if case.name.startswith("extern_"):
            continue  # T.call_extern compiles CUDA C with nvcc
        if case.name in NEEDS_MORE_LDS:
            with pytest.raises(CompileError, match="gfx942 has at most 65536"):
                tilec.compile(case.factory(), out_idx=case.out_idx, target="hip:gfx942")
            continue
        kernel = tilec.compile(case.factory(), out_idx=case.out_idx, target="hip:gfx942")
        parts = kernel.artifact.kernels or [kernel.artifact]
        for part in parts:
            check_code_object(part, "gfx942")
        assert kernel.get_kernel_source().lstrip().startswith(".amdgcn_target") or \
            "amdgcn" in kernel.get_kernel_source()[:400], case.name


def test_unknown_amd_arch_names_the_known_ones() -> None:
    spec = all_kernels()[0]
    with pytest.raises(CompileError, match=r"unsupported AMD arch 'gfx1100' \(supported: "
                                           r"gfx90a, gfx942\)"):
        compile_spec(spec, "hip:gfx1100")
    with pytest.raises(CompileError, match="the hip target compiles for AMD chips, not sm_90a"):
        compile_spec(spec, "hip:sm_90a")


def test_nvidia_only_decision_is_an_error_at_the_kernel() -> None:
    """A cp.async pipeline (an NVIDIA decision written into the IR) cannot lower for AMD."""
    from mlir import ir

    import tilec.dialect
    from tilec.compiler.driver import compile_module

    spec = next(spec for spec in all_kernels() if "cp_async" in spec.name)
    with tilec.dialect.new_context(), ir.Location.unknown():
        module = ir.Module.parse(spec.tile_ir)
        with pytest.raises(CompileError, match="nvgpu.device_async_copy, an NVIDIA instruction"):
            compile_module(module, spec.params, "hip:gfx942", launch=spec.launch,
                           stop_after="gpu")


def test_lds_limit_is_the_chips() -> None:
    """gfx942 has 64 KiB of LDS per workgroup: a kernel needing more is an error at its line."""
    import tilec.language as T

    @T.prim_func
    def too_big(A: T.Tensor((128, 256), "float32"), B: T.Tensor((128, 256), "float32")):
        with T.Kernel(1, threads=256):
            first = T.alloc_shared((128, 256), "float32")
            T.copy(A[0, 0], first)
            T.copy(first, B[0, 0])

    with pytest.raises(CompileError, match=r"131072 bytes of shared memory.*gfx942 has at most "
                                           r"65536") as error:
        tilec.compile(too_big, target="hip:gfx942")
    assert error.value.filename == __file__


def test_loading_without_rocm_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    """No AMD GPU here: the compiled kernel exists, loading it says why it cannot run."""
    require_toolchain()
    from tilec.runtime import hip

    monkeypatch.setenv("TILEC_HIP_LIBRARY", str(tmp_path / "missing-libamdhip64.so"))
    spec = next(spec for spec in all_kernels() if spec.name == "vector_add_float32")
    artifact = compile_spec(spec, "hip:gfx942")
    hip.hip_library.cache_clear()
    try:
        try:
            hip.hip_library()
        except LaunchError:
            pass
        else:
            pytest.skip("a HIP runtime is installed here")
        with pytest.raises(LaunchError, match="libamdhip64 was not found"):
            hip.load(artifact)
    finally:
        hip.hip_library.cache_clear()


def _gemm_kernel(m: int, n: int, k: int, block: tuple[int, int, int], threads: int,
                 dtype: str, accum: str, a_in_registers: bool = False, row_max: bool = False):
    """A TileLang GEMM (C = A @ B over K tiles), its A optionally copied into a fragment, its
    epilogue optionally a row max of the accumulator written beside C."""
    import tilec.language as T

    block_m, block_n, block_k = block

    @T.prim_func
    def gemm(A: T.Tensor((m, k), dtype), B: T.Tensor((k, n), dtype),
             C: T.Tensor((m, n), accum), R: T.Tensor((m,), accum)):
        with T.Kernel(T.ceildiv(n, block_n), T.ceildiv(m, block_m), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_m, block_k), dtype)
            B_shared = T.alloc_shared((block_k, block_n), dtype)
            C_local = T.alloc_fragment((block_m, block_n), accum)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(k, block_k), num_stages=1):
                T.copy(A[by * block_m, ko * block_k], A_shared)
                T.copy(B[ko * block_k, bx * block_n], B_shared)
                if a_in_registers:
                    A_local = T.alloc_fragment((block_m, block_k), dtype)
                    T.copy(A_shared, A_local)
                    T.gemm(A_local, B_shared, C_local)
                else:
                    T.gemm(A_shared, B_shared, C_local)
            if row_max:
                R_local = T.alloc_fragment((block_m,), accum)
                T.reduce_max(C_local, R_local, dim=1)
                T.copy(R_local, R[by * block_m])
            T.copy(C_local, C[by * block_m, bx * block_n])

    return gemm


@pytest.mark.parametrize(("chip", "shape", "block", "threads", "dtype", "accum", "variant",
                          "instruction"), [
    ("gfx942", (256, 256, 128), (64, 64, 64), 256, "int8", "int32", "", "v_mfma_i32_32x32x16_i8"),
    ("gfx90a", (256, 256, 128), (64, 64, 64), 256, "int8", "int32", "", "v_mfma_i32_32x32x8i8"),
    ("gfx942", (128, 128, 64), (16, 16, 32), 64, "float16", "float32", "",
     "v_mfma_f32_16x16x16_f16"),
    ("gfx942", (256, 256, 64), (128, 64, 32), 256, "bfloat16", "float32", "registers",
     "v_mfma_f32_32x32x8_bf16"),
    ("gfx942", (256, 256, 64), (64, 128, 32), 128, "float16", "float32", "row_max",
     "v_mfma_f32_32x32x8_f16"),
])
def test_tilelang_gemms_run_on_mfma(chip: str, shape, block, threads: int, dtype: str,
                                    accum: str, variant: str, instruction: str) -> None:
    """int8 per chip, the 16 x 16 block, A from registers, a reduction of the accumulator: each
    gemm on its MFMA (and no other), within the chip's registers and LDS, no scratch."""
    require_toolchain()
    kernel = tilec.compile(_gemm_kernel(*shape, block, threads, dtype, accum,
                                        a_in_registers=variant == "registers",
                                        row_max=variant == "row_max"), target=f"hip:{chip}")
    found = check_code_object(kernel.artifact, chip)
    assert {op for op in found if op.startswith("v_mfma")} == {instruction}
    assert f'instruction = "{instruction}"' in kernel.asm["tile-hip"]


def test_fnuz_float8_gemm_runs_on_mfma() -> None:
    """The FNUZ formats (IR only: tilec has no such dtype) take gfx942's fp8 / bf8 MFMAs."""
    require_toolchain()
    from mlir import ir

    import tilec.dialect
    from tilec.compiler.driver import compile_module

    source = (Path(__file__).resolve().parent.parent / "lit_tests" / "hip" /
              "gemm-mfma-rocdl.mlir").read_text()
    chunk = next(part for part in source.split("// -----") if "@fp8(" in part)
    for element, instruction in (("f8E4M3FNUZ", "v_mfma_f32_32x32x16_fp8_fp8"),
                                 ("f8E5M2FNUZ", "v_mfma_f32_32x32x16_bf8_bf8")):
        with tilec.dialect.new_context(), ir.Location.unknown():
            module = ir.Module.parse(chunk.replace("f8E4M3FNUZ", element))
            spec = next(spec for spec in all_kernels() if spec.name == "gemm_float16_64x128x32")
            artifact = compile_module(module, spec.params, "hip:gfx942")
        found = check_code_object(artifact, "gfx942")
        assert {op for op in found if op.startswith("v_mfma")} == {instruction}


@pytest.mark.parametrize("dtype", ["float8_e4m3", "float8_e5m2"])
def test_ocp_float8_casts_compile_for_gfx942(dtype: str) -> None:
    """Casts to and from the OCP float8 formats become integer code (gfx942's conversion
    instructions read FNUZ): they stopped at the LLVM translation, which crashed the process."""
    require_toolchain()

    @T.prim_func
    def round_trip(A: T.Tensor((256,), T.float32), B: T.Tensor((256,), dtype),
                   C: T.Tensor((256,), T.float32)):
        with T.Kernel(2, threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = T.cast(A[bx * 128 + i], dtype)
                C[bx * 128 + i] = T.cast(B[bx * 128 + i], T.float32) * 2.0

    kernel = tilec.compile(round_trip, target="hip:gfx942")
    check_code_object(kernel.artifact, "gfx942")
    assert "f8E" not in kernel.asm["llvmir"]
