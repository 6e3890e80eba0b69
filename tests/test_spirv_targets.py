"""The SPIR-V family on a machine without a GPU: the CUDA suite's kernels (tests/gpu/kernels.py)
compiled for the vulkan target, validated by spirv-val and run through wgpu on Mesa's lavapipe
against torch (random inputs, outputs poisoned with NaN first); for the webgpu target, naga's
WGSL of them run the same way; for the metal target, their MSL parsed by clang against the
shim headers, made from the very SPIR-V that ran (but for float atomic adds, a loop of
atomic exchanges there as on webgpu). Then the TileLang-syntax kernels of the GPU suite,
float atomics, and what each target cannot run (an error naming the kernel).

The SPIR-V stages need Debian's spirv-tools (and spirv-cross, clang-22 for MSL; node with npm's
naga-wasm for WGSL); running needs wgpu and a Vulkan driver (mesa-vulkan-drivers). Without them
these tests skip, unless TILEC_REQUIRE_SPIRV_TOOLS=1 (CI sets it after installing them: there
a missing tool is a failure, not a skip).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from kernels import KernelSpec, all_kernels  # noqa: E402

import tilec  # noqa: E402
from tilec.compiler.targets import metal  # noqa: E402
from tilec.errors import CompileError, LaunchError  # noqa: E402

torch = pytest.importorskip("torch")

# the CUDA suite's cp.async kernels carry pipeline-async-copies' NVIDIA decision written out;
# on SPIR-V their T.Pipelined loops run as plain loops
NVIDIA_DECISIONS = re.compile(
    r'attributes \{tile\.pipeline = \{[^}]*\}\}|\{tile\.async = "cp\.async"\}')
TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
TOLERANCE = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 2e-5}  # ||out - ref|| / ||ref||
# what a SPIR-V device cannot hold, each an error at the kernel's line
NOT_ON_SPIRV = {
    "gemm_float32_128x128x64": "bytes of workgroup memory",
}
# WebGPU's default 16 KiB of workgroup memory holds less
NOT_ON_WEBGPU = {**NOT_ON_SPIRV, "gemm_float32_128x128x32": "bytes of workgroup memory"}


def require(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if not missing:
        return
    why = f"{', '.join(missing)} not found (apt-get install spirv-tools spirv-cross clang-22)"
    if os.environ.get("TILEC_REQUIRE_SPIRV_TOOLS") == "1":
        pytest.fail(f"TILEC_REQUIRE_SPIRV_TOOLS=1 but {why}")
    pytest.skip(why)


def require_device() -> None:
    from tilec.errors import LaunchError
    from tilec.runtime import vulkan

    try:
        vulkan.device()
    except LaunchError as error:
        if os.environ.get("TILEC_REQUIRE_SPIRV_TOOLS") == "1":
            pytest.fail(f"TILEC_REQUIRE_SPIRV_TOOLS=1 but {error}")
        pytest.skip(str(error))


@functools.cache
def compiled(name: str, target: str):
    """The suite's kernel `name` for `target`, compiled once for all the tests here."""
    return compile_spec(next(spec for spec in all_kernels() if spec.name == name), target)


def compile_spec(spec: KernelSpec, target: str, stop_after: str | None = None):
    from mlir import ir

    import tilec.dialect
    from tilec.compiler.driver import compile_module

    with tilec.dialect.new_context(), ir.Location.unknown():
        module = ir.Module.parse(NVIDIA_DECISIONS.sub("", spec.tile_ir))
        return compile_module(module, spec.params, target, launch=spec.launch,
                              stop_after=stop_after)


def run_on_device(spec: KernelSpec, artifact, shape: dict, seed: int) -> None:
    """The kernel on random inputs against its float64 reference."""
    from tilec.runtime import load

    generator = torch.Generator().manual_seed(seed)
    args, outputs = [], []
    for param in spec.params:
        size = [shape[d] if isinstance(d, str) else d for d in param.shape]
        if param.is_output:
            fill = 0.0 if spec.zero_outputs else float("nan")
            outputs.append(torch.full(size, fill, dtype=TORCH_DTYPES[param.dtype]))
            args.append(outputs[-1])
        else:
            args.append(torch.randn(size, generator=generator).to(TORCH_DTYPES[param.dtype]))
    load(artifact)(args, dict(shape))
    inputs = [a for a, p in zip(args, spec.params, strict=True) if not p.is_output]
    expected = spec.reference(*inputs)
    produced = outputs[0].double()
    assert int(produced.isnan().sum()) == 0, "output elements were never written"
    error = ((produced - expected).norm() / expected.norm().clamp_min(1e-30)).item()
    assert error <= TOLERANCE[spec.params[-1].dtype], f"{shape}: relative error {error:.3g}"


SPECS = [spec for spec in all_kernels() if spec.name not in NOT_ON_SPIRV]
WEBGPU_SPECS = [spec for spec in all_kernels() if spec.name not in NOT_ON_WEBGPU]


def require_naga() -> None:
    from tilec.compiler.targets.webgpu import toolchain_missing

    why = toolchain_missing()
    if why is not None:
        if os.environ.get("TILEC_REQUIRE_SPIRV_TOOLS") == "1":
            pytest.fail(f"TILEC_REQUIRE_SPIRV_TOOLS=1 but {why}")
        pytest.skip(why)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
def test_kernel_runs_on_lavapipe(spec: KernelSpec) -> None:
    require("spirv-val")
    require_device()
    artifact = compiled(spec.name, "vulkan")
    assert artifact.binary_kind == "spirv"
    assert artifact.binary[:4] == b"\x03\x02\x23\x07"  # SPIR-V's magic number, little-endian
    assert "spirv.module" in artifact.asm["spirv"]
    # the smallest and the most ragged shape of the suite
    for seed, shape in enumerate(sorted(spec.shapes, key=lambda s: sum(s.values()))[:2]):
        run_on_device(spec, artifact, shape, seed)


@pytest.mark.parametrize("spec", WEBGPU_SPECS, ids=lambda spec: spec.name)
def test_kernel_runs_as_wgsl_on_lavapipe(spec: KernelSpec) -> None:
    """naga's WGSL of the webgpu SPIR-V (no subgroup operations), validated again by wgpu's
    WGSL front end and run."""
    require("spirv-val")
    require_naga()
    require_device()
    artifact = compiled(spec.name, "webgpu")
    assert artifact.binary_kind == "wgsl"
    wgsl = artifact.binary.decode()
    assert f"fn {artifact.launch['entry']}(" in wgsl and "@compute @workgroup_size(" in wgsl
    assert artifact.launch["entry"].startswith(spec.name)
    assert "subgroup" not in wgsl.lower()
    for seed, shape in enumerate(sorted(spec.shapes, key=lambda s: sum(s.values()))[:2]):
        run_on_device(spec, artifact, shape, seed)


@pytest.mark.parametrize(("name", "target"), [(name, "vulkan") for name in NOT_ON_SPIRV] + [
    (name, "webgpu") for name in NOT_ON_WEBGPU])
def test_what_spirv_cannot_hold_is_an_error(name: str, target: str) -> None:
    spec = next(spec for spec in all_kernels() if spec.name == name)
    with pytest.raises(CompileError, match=NOT_ON_WEBGPU[name]) as caught:
        compile_spec(spec, target, stop_after="gpu")
    assert caught.value.lineno is not None


def test_jit_runs_on_vulkan_with_torch_and_numpy() -> None:
    """`@tilec.jit(target="vulkan")` end to end: torch CPU tensors in, a torch tensor out;
    numpy arrays in, a numpy array out."""
    require("spirv-val")
    require_device()
    import numpy as np

    import tilec.language as T

    @tilec.jit(target="vulkan")
    def scaled_sum(A, B, block=128):
        N = T.const("N")
        C = T.empty((N,), T.float32)
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] * 2.0 + B[bx * block + i]
        return C

    generator = torch.Generator().manual_seed(3)
    a, b = (torch.randn(1000, generator=generator) for _ in range(2))
    torch.testing.assert_close(scaled_sum(a, b), a * 2 + b)
    c = scaled_sum(a.numpy(), b.numpy())
    assert isinstance(c, np.ndarray)
    np.testing.assert_allclose(c, (a * 2 + b).numpy(), rtol=1e-6)


TARGET_ENVIRONMENT = re.compile(r"#spirv\.target_env<.*?subgroup_size = \d+>>")


def as_vulkan(text: str) -> str:
    """A stage's text without its target's name and environment (the metal one has no
    float atomic add)."""
    return TARGET_ENVIRONMENT.sub("", text.replace('tile.arch = "metal"', 'tile.arch = "vulkan"'))


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
def test_kernel_makes_metal_shading_language(spec: KernelSpec) -> None:
    """Every kernel's MSL comes from the SPIR-V the vulkan target runs on lavapipe (but for
    float atomic adds: a loop of atomic exchanges, as on webgpu, where vulkan has the float
    add),
    parses against the shim headers, and binds each ABI slot to the [[buffer(i)]] of its
    number."""
    require("spirv-val", "spirv-cross", "clang-22")
    artifact = compiled(spec.name, "metal")
    assert artifact.binary_kind == "msl"
    msl = artifact.binary.decode()
    assert artifact.asm["msl"] == msl
    assert f"kernel void {spec.name}(" in msl
    vulkan = compiled(spec.name, "vulkan")
    if "spirv.EXT.AtomicFAdd" in vulkan.asm["spirv"]:
        assert "spirv.AtomicExchange" in artifact.asm["spirv"]
        assert "AtomicFAdd" not in artifact.asm["spirv"]
        assert "atomic_exchange_explicit" in msl
    else:
        assert as_vulkan(artifact.asm["spirv"]) == as_vulkan(vulkan.asm["spirv"])
    table = artifact.launch["arguments"]
    assert [entry["buffer"] for entry in table] == list(range(len(vulkan.launch["abi"])))
    assert [entry["slot"] for entry in table] == vulkan.launch["abi"]
    if artifact.launch["shared_bytes"]:
        assert "threadgroup_barrier(mem_flags::mem_threadgroup)" in msl
    metal.smoke_check(msl)


def test_msl_smoke_check_catches_address_space_errors() -> None:
    """The shim's address spaces are OpenCL's: device memory bound as a thread reference, an
    undeclared name and a type error each fail."""
    require("spirv-val", "spirv-cross", "clang-22")
    msl = compiled("vector_add_float32", "metal").binary.decode()
    metal.smoke_check(msl)
    body = msl.index("{", msl.index("kernel void"))
    argument = re.search(r"device (\w+)& (\w+) \[\[buffer\(0\)\]\]", msl)
    broken = [
        f"thread {argument.group(1)}& alias = {argument.group(2)};",
        "float undeclared_value = missing_name;",
        "threadgroup_barrier(17);",
    ]
    for line in broken:
        with pytest.raises(CompileError, match="does not parse"):
            metal.smoke_check(msl[:body + 1] + "\n    " + line + msl[body + 1:])


def test_metal_artifacts_do_not_run_here() -> None:
    require("spirv-val", "spirv-cross")
    from tilec.runtime import load

    with pytest.raises(LaunchError, match="no Metal runtime"):
        load(compiled("vector_add_float32", "metal"))


# TileLang-syntax kernels of the GPU suite (tests/gpu/frontend_kernels.py) through the jit's
# path (tilec.compile, run_poisoned) on lavapipe: every case but those SPIR-V cannot hold, each
# an error at its line
FRONTEND_ERRORS = {
    "extern_affine_128x8": "extern CUDA code",
    "extern_affine_300x64": "extern CUDA code",
    "head_weighted_logits_200x64x64": "33024 bytes of workgroup memory",
    "reused_shared_tiles_100x1024": "262144 bytes of workgroup memory",
    "loop_local_tiles_128x256x4": "262144 bytes of workgroup memory",
    "gemm_on_column_parts_64x200x(256+64)": "122880 bytes of workgroup memory",
}
# and those past WebGPU's default 16 KiB of workgroup memory: the copies of Q's two column parts
# (12288 bytes read in place, TILEC_SIMT_SLICES_IN_PLACE=1)
FRONTEND_ERRORS_ON_WEBGPU = {
    "gemm_on_column_parts_32x64x(64+32)": "18432 bytes of workgroup memory",
}


def frontend_case(name: str):
    from frontend_kernels import cases

    return next(case for case in cases() if case.name == name)


def frontend_on_spirv() -> list[str]:
    """The frontend cases that run on the SPIR-V targets: all but FRONTEND_ERRORS."""
    from frontend_kernels import cases

    return [case.name for case in cases() if case.name not in FRONTEND_ERRORS]


@pytest.mark.parametrize(("name", "target"), [
    (name, target) for name in frontend_on_spirv() for target in ("vulkan", "webgpu")
    if target == "vulkan" or name not in FRONTEND_ERRORS_ON_WEBGPU])
def test_frontend_kernel_on_lavapipe(name: str, target: str) -> None:
    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    case = frontend_case(name)
    kernel = tilec.compile(case.factory(), out_idx=case.out_idx, target=target)
    generator = torch.Generator().manual_seed(11)
    dtype = getattr(torch, case.dtype)
    inputs = [torch.randn(shape, generator=generator).to(dtype) for shape in case.input_shapes]
    if case.zero_outputs:  # float atomic adds accumulate into them
        outputs = [torch.zeros(shape) for shape in case.zero_outputs]
        kernel(*inputs, *outputs)
        produced = outputs[0].double()
    else:
        produced = kernel.get_profiler().run_poisoned(*inputs).double()
    expected = case.reference(*[x.double() for x in inputs])
    assert int(produced.isnan().sum()) == 0, "output elements were never written"
    error = ((produced - expected).norm() / expected.norm()).item()
    assert error <= TOLERANCE[case.dtype], f"relative error {error:.3g}"


@pytest.mark.parametrize("name", frontend_on_spirv())
def test_frontend_kernel_makes_metal_shading_language(name: str) -> None:
    """Each frontend case's MSL parses against the shim headers; its kernel function is the one
    the launch metadata names (spirv-cross calls TileLang's `main` `main0`), every ABI slot
    bound to the [[buffer(i)]] of its number."""
    require("spirv-val", "spirv-cross", "clang-22")
    case = frontend_case(name)
    artifact = tilec.compile(case.factory(), out_idx=case.out_idx, target="metal").artifact
    for part in artifact.kernels or [artifact]:
        msl = part.binary.decode()
        assert f"kernel void {part.launch['entry']}(" in msl
        assert [entry["buffer"] for entry in part.launch["arguments"]] == list(
            range(len(part.launch["abi"])))
        metal.smoke_check(msl)


def test_simt_slices_in_place_on_lavapipe(monkeypatch: pytest.MonkeyPatch) -> None:
    """TILEC_SIMT_SLICES_IN_PLACE=1: lower-gemm-simt reads Q_shared's two column parts in place,
    against torch as without it; the larger case then holds no copies of them."""
    monkeypatch.setenv("TILEC_SIMT_SLICES_IN_PLACE", "1")
    test_frontend_kernel_on_lavapipe("gemm_on_column_parts_32x64x(64+32)", "vulkan")
    test_frontend_kernel_on_lavapipe("gemm_on_column_parts_32x64x(64+32)", "webgpu")
    with pytest.raises(CompileError, match="81920 bytes of workgroup memory"):
        tilec.compile(frontend_case("gemm_on_column_parts_64x200x(256+64)").factory(),
                      out_idx=[-1], target="vulkan")


@pytest.mark.parametrize("name", sorted(FRONTEND_ERRORS_ON_WEBGPU))
def test_frontend_kernel_webgpu_cannot_hold_is_an_error_at_its_line(name: str) -> None:
    case = frontend_case(name)
    with pytest.raises(CompileError, match=FRONTEND_ERRORS_ON_WEBGPU[name]) as caught:
        tilec.compile(case.factory(), out_idx=case.out_idx, target="webgpu")
    assert caught.value.filename.endswith("frontend_kernels.py")


@pytest.mark.parametrize("name", sorted(FRONTEND_ERRORS))
def test_frontend_kernel_spirv_cannot_run_is_an_error_at_its_line(name: str) -> None:
    case = frontend_case(name)
    with pytest.raises(CompileError, match=FRONTEND_ERRORS[name]) as caught:
        tilec.compile(case.factory(), out_idx=case.out_idx, target="vulkan")
    assert caught.value.filename.endswith("frontend_kernels.py")


def test_what_the_device_rejects_is_a_clear_error() -> None:
    """A pipeline wgpu cannot create (here: an entry point the module does not have) is a
    LaunchError naming the kernel and wgpu's reason, never a crash."""
    import dataclasses

    from tilec.runtime import load

    require("spirv-val")
    require_device()
    artifact = compiled("vector_add_float32", "vulkan")
    renamed = dataclasses.replace(artifact, launch={**artifact.launch, "entry": "missing"})
    with pytest.raises(LaunchError, match="the device rejected kernel 'vector_add_float32'"):
        load(renamed)


@pytest.mark.parametrize("target", ["vulkan", "webgpu"])
def test_integer_atomics_on_lavapipe(target: str) -> None:
    """T.atomic_add into an int32 histogram (OpAtomicIAdd), bins by Python's floor modulo of
    negative values: exact against torch."""
    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    import tilec.language as T

    def histogram(N: int, bins: int = 16, block: int = 256):
        @T.prim_func
        def main(X: T.Tensor((N,), "int32"), H: T.Tensor((bins,), "int32")):
            with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
                for i in T.Parallel(block):
                    if bx * block + i < N:
                        T.atomic_add(H[X[bx * block + i] % bins], 1)

        return main

    values = torch.randint(-1000, 1000, (5000,), generator=torch.Generator().manual_seed(5),
                           dtype=torch.int32)
    counts = torch.zeros(16, dtype=torch.int32)
    tilec.compile(histogram(5000), target=target)(values, counts)
    assert counts.tolist() == torch.bincount(values % 16, minlength=16).tolist()


@pytest.mark.parametrize("target", ["vulkan", "metal", "webgpu"])
def test_the_checked_mode_is_an_error_on_spirv(target: str) -> None:
    """tilec.bounds_check asks for run-time checks these targets do not insert: an error, not
    a kernel without them."""
    spec = next(spec for spec in SPECS if spec.name == "vector_add_float32")
    from mlir import ir

    import tilec.dialect
    from tilec.compiler.driver import compile_module

    with tilec.dialect.new_context(), ir.Location.unknown():
        module = ir.Module.parse(spec.tile_ir)
        with pytest.raises(CompileError, match=f"checked mode .* not {target}"):
            compile_module(module, spec.params, target, launch=spec.launch, bounds_check=True)


def scatter_add(N: int, bins: int = 16, block: int = 256):
    """H[Bins[n]] += X[n]: N float atomic adds into a few bins, many at once on each."""
    import tilec.language as T

    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Bins: T.Tensor((N,), "int32"),
             H: T.Tensor((bins,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    T.atomic_add(H[Bins[bx * block + i]], X[bx * block + i])

    return main


def shared_scatter_add(N: int, bins: int = 16, block: int = 128):
    """Each block's H[bx, Bins[n]] += X[n] summed by float atomic adds in shared memory."""
    import tilec.language as T

    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Bins: T.Tensor((N,), "int32"),
             H: T.Tensor((T.ceildiv(N, block), bins), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            S = T.alloc_shared((bins,), "float32")
            T.fill(S, 0)
            for i in T.Parallel(block):
                if bx * block + i < N:
                    T.atomic_add(S[Bins[bx * block + i]], X[bx * block + i])
            T.copy(S, H[bx, :])

    return main


@pytest.mark.parametrize("target", ["vulkan", "webgpu"])
def test_float_atomic_adds_on_lavapipe(target: str) -> None:
    """5000 float32 atomic adds into 16 bins that start from random values: OpAtomicFAddEXT
    on vulkan (lavapipe has it), a loop of atomic exchanges on the bits on webgpu."""
    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    generator = torch.Generator().manual_seed(17)
    x = torch.randn(5000, generator=generator)
    bins = torch.randint(0, 16, (5000,), generator=generator, dtype=torch.int32)
    start = torch.randn(16, generator=generator)
    kernel = tilec.compile(scatter_add(5000), target=target)
    if target == "vulkan":
        assert "spirv.EXT.AtomicFAdd <Device>" in kernel.artifact.asm["spirv"]
        assert kernel.artifact.launch["features"] == ["shader-float32-atomic"]
    else:
        assert "atomicExchange" in kernel.artifact.binary.decode()
    sums = start.clone()
    kernel(x, bins, sums)
    expected = start.double().index_add(0, bins.long(), x.double())
    torch.testing.assert_close(sums.double(), expected, rtol=0, atol=1e-4)


@pytest.mark.parametrize("target", ["vulkan", "webgpu"])
def test_shared_float_atomic_adds_on_lavapipe(target: str) -> None:
    """Float atomic adds in shared memory, a loop of atomic exchanges on every SPIR-V target
    (wgpu-native's naga misreads a compare-exchange's result: spirv-lower-float-atomics), with
    many threads on each of a block's 16 bins at once; outputs poisoned."""
    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    generator = torch.Generator().manual_seed(19)
    x = torch.randn(1000, generator=generator)
    bins = torch.randint(0, 16, (1000,), generator=generator, dtype=torch.int32)
    kernel = tilec.compile(shared_scatter_add(1000), target=target)
    assert "spirv.AtomicExchange <Workgroup>" in kernel.artifact.asm["spirv"]
    sums = torch.full((8, 16), float("nan"))
    kernel(x, bins, sums)
    flat = (torch.arange(1000) // 128 * 16 + bins).long()
    expected = torch.zeros(128, dtype=torch.float64).index_add(0, flat, x.double()).view(8, 16)
    torch.testing.assert_close(sums.double(), expected, rtol=0, atol=1e-5)


def test_a_kernel_needing_a_missing_device_feature_is_a_launch_error() -> None:
    require("spirv-val")
    require_device()
    import dataclasses

    from tilec.runtime import load

    artifact = compiled("column_sum_float32", "vulkan")
    assert artifact.launch["features"] == ["shader-float32-atomic"]
    lacking = dataclasses.replace(artifact, launch={**artifact.launch,
                                                   "features": ["no-such-feature"]})
    with pytest.raises(LaunchError, match="needs the device feature no-such-feature"):
        load(lacking)


def bfloat16_axpy(N: int, block: int = 128):
    """C = A * 2 + B in bf16, one element a thread: neighbours share a 32-bit word."""
    import tilec.language as T

    @T.prim_func
    def main(A: T.Tensor((N,), "bfloat16"), B: T.Tensor((N,), "bfloat16"),
             C: T.Tensor((N,), "bfloat16")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] * 2.0 + B[bx * block + i]

    return main


@pytest.mark.parametrize("target", ["vulkan", "webgpu"])
def test_bfloat16_storage_on_lavapipe(target: str) -> None:
    """bf16 tensors as i32 words, values as f32 rounded to bf16 at each op: torch's bf16
    result bit for bit, at an odd length (the last word half used), the output poisoned;
    the bytes around the output untouched."""
    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    generator = torch.Generator().manual_seed(23)
    a, b = (torch.randn(1001, generator=generator).bfloat16() for _ in range(2))
    kernel = tilec.compile(bfloat16_axpy(1001), out_idx=[-1], target=target)
    assert "bf16" not in kernel.artifact.asm["spirv"]
    produced = kernel.get_profiler().run_poisoned(a, b)
    assert produced.dtype == torch.bfloat16
    assert torch.equal(produced, a * 2.0 + b)
    whole = torch.full((1003,), float("nan"), dtype=torch.bfloat16)
    tilec.compile(bfloat16_axpy(1001), target=target)(a, b, whole[1:1002])
    assert torch.equal(whole[1:1002], a * 2.0 + b)
    assert whole[0].isnan() and whole[1002].isnan()


def erf_of(N: int, dtype: str, block: int = 128):
    import tilec.language as T

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    Y[bx * block + i] = T.erf(X[bx * block + i])

    return main


@pytest.mark.parametrize("target", ["vulkan", "webgpu"])
def test_erf_on_lavapipe(target: str) -> None:
    """T.erf (spirv-expand-erf: GLSL.std.450 has none) over [-6, 6], tiny, huge, negative
    zero-adjacent and random values: within 3e-7 of torch's float64 erf, and within 2e-6 of it
    relatively where |x| < 0.5 (erf(x) ~ 1.13 x there); NaN stays NaN. f16 rounds the same."""
    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    generator = torch.Generator().manual_seed(29)
    x = torch.cat([torch.linspace(-6, 6, 2001), torch.randn(997, generator=generator),
                   torch.tensor([1e-30, -1e-20, 1e-6, -0.4999, 0.5, 0.5001, 3e4, -3e38,
                                 float("nan")])])
    y = torch.full_like(x, float("nan"))
    tilec.compile(erf_of(x.numel(), "float32"), target=target)(x, y)
    expected = torch.erf(x.double())
    finite = ~x.isnan()
    assert y[~finite].isnan().all()
    error = (y[finite].double() - expected[finite]).abs()
    assert error.max().item() < 3e-7
    small = x[finite].abs() < 0.5
    relative = error[small] / expected[finite][small].abs().clamp_min(1e-38)
    assert relative.max().item() < 2e-6
    half = x[finite][:2001].half()
    y_half = torch.full_like(half, float("nan"))
    tilec.compile(erf_of(half.numel(), "float16"), target=target)(half, y_half)
    torch.testing.assert_close(y_half, torch.erf(half.double()).half(), rtol=0, atol=1e-3)


def signed_arithmetic(N: int, block: int = 128):
    """Every instruction that reads an int32 as signed, on negative and positive values."""
    import tilec.language as T

    @T.prim_func
    def main(X: T.Tensor((N,), "int32"), D: T.Tensor((N,), "int32"),
             F: T.Tensor((N,), "float32"), S: T.Tensor((N,), "int32"),
             Q: T.Tensor((N,), "int32"), R: T.Tensor((N,), "int32"),
             M: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                n = bx * block + i
                if n < N:
                    F[n] = T.Cast("float32", X[n])
                    S[n] = X[n] >> 3
                    Q[n] = X[n] // D[n]
                    R[n] = X[n] % D[n]
                    M[n] = T.max(T.min(X[n], 1000), -1000)
                    B[n] = T.Cast("int32", F[n] * 0.001)

    return main


@pytest.mark.parametrize("target", ["vulkan", "webgpu"])
def test_signed_integer_arithmetic_on_lavapipe(target: str) -> None:
    """int32 -> float32 -> int32 (truncated), >>, floor division and modulo by negative and
    positive divisors, min / max on random values of both signs: exactly torch's. naga reads
    the signedness of these instructions from their types (MLIR writes i32 as unsigned):
    before spirv-signed-operands, -32 converted to 4294967264.0, -32 >> 1 to 2147483632 and
    -3.5 to 0."""
    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    generator = torch.Generator().manual_seed(31)
    n = 1000
    x = torch.randint(-(2**31), 2**31 - 1, (n,), generator=generator, dtype=torch.int32)
    x[:64] = torch.arange(-32, 32, dtype=torch.int32)
    d = torch.randint(1, 50, (n,), generator=generator, dtype=torch.int32)
    d = torch.where(torch.rand(n, generator=generator) < 0.5, d, -d)
    outputs = [torch.full((n,), float("nan")) if k == 0 else
               torch.full((n,), -12345, dtype=torch.int32) for k in range(6)]
    tilec.compile(signed_arithmetic(n), target=target)(x, d, *outputs)
    converted, shifted, quotient, remainder, clamped, truncated = outputs
    assert torch.equal(converted, x.float())
    assert torch.equal(shifted, x >> 3)
    assert torch.equal(quotient, torch.div(x, d, rounding_mode="floor"))
    assert torch.equal(remainder, torch.remainder(x, d))
    assert torch.equal(clamped, x.clamp(-1000, 1000))
    assert torch.equal(truncated, (x.float() * 0.001).to(torch.int32))


def half_bits(N: int, block: int = 64):
    """Each word read as a float16 pair and back, each half alone as a float16 (its float32
    out), and pairs built from float16 values read as words."""
    import tilec.language as T

    @T.prim_func
    def main(W: T.Tensor((N,), "uint32"), H: T.Tensor((2 * N,), "float16"),
             back: T.Tensor((N,), "uint32"), low: T.Tensor((N,), "float32"),
             high: T.Tensor((N,), "float32"), words: T.Tensor((N,), "uint32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                n = bx * block + i
                back[n] = T.reinterpret(T.reinterpret(W[n], T.float16x2), T.uint32)
                low[n] = T.Cast(T.float32, T.reinterpret(T.Cast(T.uint16, W[n]), T.float16))
                high[n] = T.Cast(T.float32,
                                 T.reinterpret(T.Cast(T.uint16, W[n] >> 16), T.float16))
                words[n] = T.reinterpret(T.float16x2(H[2 * n], H[2 * n + 1]), T.uint32)

    return main


@pytest.mark.parametrize("target", ["vulkan", "webgpu"])
def test_float16_bits_on_lavapipe(target: str) -> None:
    """T.reinterpret between float16 (pairs) and their bits, for every one of the 65536 halves
    (naga has no 16-bit integers and cannot cast a word to a pair: spirv-split-half-pairs and
    spirv-widen-narrow-integers make it integer code on the float32 of each half): the value
    of each half exactly, the word of each pair exactly, but that a signaling NaN comes out
    quiet (the float16 -> float32 conversion quiets it), its sign and the rest of its payload
    kept."""
    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    halves = torch.arange(65536, dtype=torch.int64)
    words64 = halves | (((halves * 7919) % 65536) << 16)
    words = words64.to(torch.int32).view(torch.uint32)
    values = halves.to(torch.int16).view(torch.float16)
    outputs = [torch.zeros(65536, dtype=torch.uint32), torch.full((65536,), float("nan")),
               torch.full((65536,), float("nan")), torch.zeros(65536, dtype=torch.uint32)]
    tilec.compile(half_bits(65536), target=target)(words, values.repeat(2), *outputs)
    back, low, high, pairs = outputs
    assert torch.equal(back.view(torch.int32), words.view(torch.int32))
    nan = values.isnan()
    assert torch.equal(low[~nan], values[~nan].float()) and low[nan].isnan().all()
    high_values = (words64 >> 16).to(torch.int16).view(torch.float16)
    assert torch.equal(high[~high_values.isnan()], high_values[~high_values.isnan()].float())
    made = pairs[:32768].view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    made = torch.stack([made & 0xFFFF, made >> 16], -1).reshape(-1)
    assert torch.equal(made[~nan], halves[~nan])
    quieted = halves[nan] | 0x200
    assert torch.equal(made[nan], quieted)


def float8_round_trip(N: int, dtype: str, block: int = 128):
    """Every float8 code widened to float32, and float32 values narrowed to float8."""
    import tilec.language as T

    @T.prim_func
    def main(codes: T.Tensor((N,), dtype), wide: T.Tensor((N,), "float32"),
             X: T.Tensor((N,), "float32"), narrow: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                n = bx * block + i
                wide[n] = T.Cast("float32", codes[n])
                narrow[n] = T.Cast(dtype, X[n])

    return main


@pytest.mark.parametrize("target", ["vulkan", "webgpu"])
@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2"])
def test_float8_conversions_on_lavapipe(dtype: str, target: str) -> None:
    """float8 tensors as i32 words of four codes (naga has no 8-bit types): each of the 256
    codes widened to torch's float32 (NaN as NaN), and random float32 values of every scale,
    ties and overflow included, rounded to torch's float8 code; neighbours of one word written
    by different threads all land."""
    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    torch_dtype = getattr(torch, dtype)
    n = 1024
    codes = torch.arange(n, dtype=torch.int64).remainder(256).to(torch.uint8).view(torch_dtype)
    generator = torch.Generator().manual_seed(37)
    x = torch.randn(n, generator=generator) * torch.exp2(
        torch.randint(-12, 17, (n,), generator=generator).float())
    x[:256] = codes[:256].float() * 1.0625  # between neighbouring codes
    wide = torch.full((n,), float("nan"))
    narrow = torch.full((n,), 0x55, dtype=torch.uint8).view(torch_dtype)
    tilec.compile(float8_round_trip(n, dtype), target=target)(codes, wide, x, narrow)
    expected = codes.float()
    assert torch.equal(wide.isnan(), expected.isnan())
    assert torch.equal(wide[~expected.isnan()], expected[~expected.isnan()])
    rounded = x.to(torch_dtype)
    assert torch.equal(narrow.view(torch.uint8), rounded.view(torch.uint8))
