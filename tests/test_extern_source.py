"""T.import_source / T.call_extern / T.access_ptr: CUDA C device functions compiled with nvcc,
linked with the kernel's PTX (ptxas -c + nvlink) into the artifact's cubin; the PTX calls, the
shims' C++, and what is rejected (at the kernel's line). Numerics run on the GPU
(tests/gpu/frontend_kernels.py: extern_affine)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda_extern import ExternFunction, ExternUnit, cuda_tool, shim
from tilec.errors import CompileError, TilecError

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from frontend_kernels import extern_affine  # noqa: E402

needs_toolkit = pytest.mark.skipif(
    any(cuda_tool(name) is None for name in ("nvcc", "ptxas", "nvlink")),
    reason="needs the CUDA toolkit (nvcc, ptxas, nvlink)")

DEQUANT_SOURCE = """
template <typename T1, typename T2>
__device__ void widen(T1 *packed, T2 *out, const int n) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<T2>(static_cast<float>(packed[i]) * 0.5f);
}
"""


@needs_toolkit
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_kernel_ptx_calls_the_shims_and_the_cubin_links_them(arch: str) -> None:
    kernel = tilec.compile(extern_affine(300, 64), out_idx=[-1], target=f"cuda:{arch}")
    ptx = kernel.asm["ptx"]
    # the template takes two generic pointers and the count; by value: f32 and a half's bits
    assert re.search(r"\.extern \.func tilec_extern_0_affine_run\s*\(\s*\.param \.b64 \w+,\s*"
                     r"\.param \.b64 \w+,\s*\.param \.b32 \w+\s*\)", ptx)
    assert re.search(r"\.extern \.func\s+\(\.param \.b32 func_retval0\) tilec_extern_2_negate",
                     ptx)
    assert "call.uni tilec_extern_0_affine_run, (param0, param1, param2);" in ptx
    assert "cvta.local.u64" in ptx  # the per-thread buffers are passed by generic address
    artifact = kernel.artifact
    assert artifact.binary_kind == "cubin" and artifact.binary[:4] == b"\x7fELF"
    # linked: the shims (the user's functions inlined into them) are in the kernel's cubin
    for shim_name in (b"tilec_extern_0_affine_run", b"tilec_extern_1_quarter",
                      b"tilec_extern_2_negate"):
        assert shim_name in artifact.binary


def _dequant(storage: str = "int8", dtype_keyword: bool = True):
    @T.prim_func
    def kernel(B: T.Tensor((128, 4), storage), C: T.Tensor((128, 4), "float16")):
        with T.Kernel(1, threads=128):
            packed = T.alloc_local((4,), storage)
            out = T.alloc_local((4,), "float16")
            tx = T.get_thread_binding(0)
            T.import_source(DEQUANT_SOURCE)
            for i in T.serial(4):
                packed[i] = B[tx, i]
            if dtype_keyword:  # as TileLang's examples write it: the name first, dtype= last
                T.call_extern("widen", T.access_ptr(packed, "r"), T.access_ptr(out[1], "w"), 3,
                              dtype=T.float16)
            else:
                T.call_extern("handle", "widen", T.access_ptr(packed, "r"),
                              T.access_ptr(out, "w"), 4)
            for i in T.serial(4):
                C[tx, i] = out[i]

    return kernel


@needs_toolkit
def test_call_extern_takes_dtype_first_or_as_keyword_and_points_at_elements() -> None:
    keyword = tilec.compile(_dequant(), out_idx=[1], target="cuda:sm_90a")
    tile_ir = keyword.asm["tile"]
    assert ('tile.extern = {args = ["int8*", "float16*", "int32"], name = "widen", '
            'result = "void"}') in tile_ir
    assert "arith.constant 2 : i64" in tile_ir  # &out[1]: 2 bytes past the buffer's start
    first = tilec.compile(_dequant(dtype_keyword=False), out_idx=[1], target="cuda:sm_80")
    assert first.artifact.binary_kind == "cubin"


def test_shims_convert_words_to_the_callees_types() -> None:
    pointers = ExternFunction("tilec_extern_0_widen", "widen", ("uint8*", "bfloat16*", "int8"),
                              "void", None, None)
    assert shim(pointers) == (
        'extern "C" __device__ void tilec_extern_0_widen(void *a0, void *a1, int32_t a2) {\n'
        "  widen(static_cast<uint8_t *>(a0), static_cast<__nv_bfloat16 *>(a1), "
        "static_cast<int8_t>(a2));\n}\n")
    by_value = ExternFunction("tilec_extern_1_neg", "neg", ("float16", "float64"), "float16",
                              None, None)
    assert shim(by_value) == (
        'extern "C" __device__ uint32_t tilec_extern_1_neg(uint32_t a0, double a1) {\n'
        "  return tilec_to_bits<half>(static_cast<half>(neg(tilec_from_bits<half>(a0), "
        "static_cast<double>(a1))));\n}\n")
    assert ExternUnit(("src",), (pointers,)).error("x").filename is None


def _kernel_calling(body: str, folder: Path):
    """A kernel factory (taking the source SRC) whose one statement, on line 8, is `body`."""
    import importlib.util

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "extern_case.py"
    path.write_text("import tilec.language as T\n"
                    "def make(SRC):\n"
                    "    @T.prim_func\n"
                    "    def kernel(A: T.Tensor((128,), 'float32')):\n"
                    "        with T.Kernel(1, threads=128):\n"
                    "            loc = T.alloc_local((4,), 'float32')\n"
                    "            sh = T.alloc_shared((128,), 'float32')\n"
                    f"            {body}\n"
                    "    return kernel\n")
    spec = importlib.util.spec_from_file_location("extern_case", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make


@pytest.mark.parametrize(("body", "message"), [
    ("T.call_extern('handle', 'f', T.access_ptr(sh, 'r'))",
     "T.access_ptr of shared buffer 'sh': tilec passes pointers to per-thread buffers only"),
    ("A[0] = T.call_extern('handle', 'f', T.access_ptr(loc, 'r'))",
     "the value of T.call_extern is used, so its dtype must be a scalar dtype"),
    ("T.call_extern('handle', 'not a name', 1)", "func_name is the name of a device function"),
    ("T.call_extern('handle', 'f', loc)", "takes buffer 'loc' by address"),
    ("T.import_source(3)", "T.import_source takes CUDA C/C++ source text, got int"),
    ("T.access_ptr(loc, 'x')", "access_type is 'r', 'w' or 'rw'"),
])
def test_bad_extern_calls_are_errors_at_their_line(body: str, message: str,
                                                   tmp_path: Path) -> None:
    make = _kernel_calling(body, tmp_path)
    with pytest.raises(TilecError, match=re.escape(message)) as raised:
        tilec.compile(make("src"), target="cuda:sm_90a")
    assert raised.value.lineno == 8


def test_extern_calls_need_an_imported_source_and_a_cuda_target(tmp_path: Path) -> None:
    no_source = _kernel_calling("A[0] = T.call_extern(T.float32, 'f', loc[0])", tmp_path)
    with pytest.raises(CompileError, match=r"calls f\(\), but the kernel imports no source") as \
            raised:
        tilec.compile(no_source("src"), target="cuda:sm_90a")
    assert raised.value.lineno == 8
    on_cpu = _kernel_calling("T.import_source(SRC); A[0] = T.call_extern(T.float32, 'f', 1.0)",
                             tmp_path / "cpu")
    with pytest.raises(CompileError, match="a call of CUDA C code .* has no meaning on the CPU"):
        tilec.compile(on_cpu("__device__ float f(float x) { return x; }"), target="cpu")


@needs_toolkit
def test_a_source_nvcc_rejects_is_an_error_at_the_call(tmp_path: Path) -> None:
    broken = _kernel_calling("T.import_source(SRC); A[0] = T.call_extern(T.float32, 'f', 1.0)",
                             tmp_path)
    with pytest.raises(CompileError, match=r"compiling the T.import_source code failed \(nvcc\)"
                                           r"(.|\n)*undefined_thing") as raised:
        tilec.compile(broken("__device__ float f(float x) { return undefined_thing(x); }"),
                      target="cuda:sm_90a")
    assert raised.value.lineno == 8
