"""The frontend's tile IR for each construct of the T language and of Python (contract 1)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch

import tilec
import tilec.language as T
from tilec.frontend.builder import build_prim_func
from tilec.frontend.signature import analyze_eager, bind_symbols
from tilec.frontend.source import parse_kernel
from tilec.runtime import launch_grid
from tilec.runtime.artifact import Artifact

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import quickstart  # noqa: E402


def tile_ir(prim: T.PrimFunc, out_idx: list[int] | None = None, debug: bool = False) -> str:
    result = build_prim_func(prim, out_idx)
    return result.module.operation.get_asm(enable_debug_info=debug)


def quickstart_ir(M: int = 256, N: int = 128, K: int = 96) -> tuple[str, object]:
    spec = quickstart.matmul.specialize((T.Tensor((M, K), T.float16),
                                         T.Tensor((K, N), T.float16)), {}, "cpu")
    result = spec.build()
    return str(result.module), result


def test_quickstart_eager_signature_and_kernel() -> None:
    text, result = quickstart_ir()
    assert re.search(r"func\.func @matmul\(%arg0: memref<256x96xf16>, %arg1: memref<96x128xf16>, "
                     r"%arg2: memref<256x128xf16>\) attributes \{tile\.entry\}", text)
    assert "tile.kernel grid(%c1, %c2) threads [128]" in text
    assert text.count("tile.alloc : memref<128x32xf16, \"shared\">") == 1
    assert "tile.alloc : memref<128x128xf32, \"fragment\">" in text
    assert "tile.fill" in text and "stages 3" in text
    assert re.search(r"tile\.copy %arg0\[%\d+, %\d+\] \[128, 32\] to %0\[%c0\S*, %c0\S*\] "
                     r"\[128, 32\]", text)
    assert "tile.gemm %0, %1, %2 :" in text
    assert "arith.truncf" in text  # the f32 -> f16 store converts in registers
    assert [(p.name, p.shape, p.is_output) for p in result.params] == [
        ("A", [256, 96], False), ("B", [96, 128], False), ("C", [256, 128], True)]
    assert result.launch == {"grid": [1, 2], "threads": [128]}


def test_every_op_carries_a_python_location() -> None:
    _, result = quickstart_ir()
    text = result.module.operation.get_asm(enable_debug_info=True)
    assert "loc(unknown)" not in text
    assert re.search(r'loc\(".*quickstart\.py":2[0-9]:\d+\)', text)  # the copies in the loop
    ops = [line for line in text.splitlines()
           if re.search(r"^\s+(%\S+ = )?tile\.", line) and not line.endswith("{")]
    assert ops and all("loc(" in line for line in ops)


def test_eager_signature_binds_symbols_from_indexing() -> None:
    source = parse_kernel(quickstart.matmul.fn)
    analysis = analyze_eager(source.tree, ["A", "B"])
    assert analysis.dims == {"A": {0: "M", 1: "K"}, "B": {0: "K", 1: "N"}}
    assert bind_symbols(analysis, {"A": (10, 20), "B": (20, 30)}, "f.py") == {
        "M": 10, "K": 20, "N": 30}
    with pytest.raises(tilec.TilecError, match="size 'K' is 20 in 'A' but 21"):
        bind_symbols(analysis, {"A": (10, 20), "B": (21, 30)}, source.filename)


@tilec.jit(target="cpu")
def annotated(A, B):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    B: T.Tensor((N,), T.float32)
    C = T.empty((M, N), T.float32)
    with T.Kernel(M, threads=32) as row:
        for j in T.serial(N):
            C[row, j] = A[row, j] * B[j]
    return C


def test_annotations_in_the_body_bind_symbols() -> None:
    kernel = annotated.compile(M=3, N=5)
    assert [p.shape for p in kernel.params] == [[3, 5], [5], [3, 5]]


def test_dynamic_dims_are_question_marks_measured_by_memref_dim() -> None:
    M = T.dynamic("M")

    @T.prim_func
    def main(A: T.Tensor((M, 64), "float16"), B: T.Tensor((M, 64), "float16")):
        with T.Kernel(T.ceildiv(M, 32), threads=128) as bx:
            T.copy(A[bx * 32, 0], B[bx * 32:bx * 32 + 32, 0:64])

    result = build_prim_func(main, [1])
    text = str(result.module)
    assert "memref<?x64xf16>" in text
    assert text.count("memref.dim %arg0") == 1
    assert "arith.ceildivsi" in text
    assert result.launch["grid"] == ["((M + 32 - 1) // 32)"]
    artifact = Artifact("main", "cpu", "so", result.params, result.launch)
    assert launch_grid(artifact, {"M": 100}) == [4]


def test_python_if_elif_else_becomes_nested_scf_if() -> None:
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(64):
                if A[i] > 1.0:
                    A[i] = 1.0
                elif A[i] < -1.0:
                    A[i] = -1.0
                else:
                    A[i] = A[i] * 0.5

    text = tile_ir(main)
    assert text.count("scf.if") == 2
    assert "arith.cmpf ogt" in text and "arith.cmpf olt" in text


def test_constant_conditions_are_folded() -> None:
    use_relu = False

    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(64):
                if use_relu:
                    A[i] = T.max(A[i], 0.0)
                else:
                    A[i] = A[i] + 1.0

    text = tile_ir(main)
    assert "scf.if" not in text and "maximumf" not in text and "arith.addf" in text


def test_while_over_a_var_becomes_scf_while() -> None:
    @T.prim_func
    def main(A: T.Tensor((64,), "int32")):
        with T.Kernel(1, threads=64) as _:
            n = T.alloc_var(T.int32, init=A[0])
            while n > 1:
                n = n // 2
            A[1] = n

    text = tile_ir(main)
    assert 'tile.alloc : memref<1xi32, "var">' in text
    assert "scf.while" in text and "scf.condition" in text
    assert "arith.floordivsi" in text


def test_loops_serial_range_unroll_pipelined() -> None:
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.serial(2, 10, 2):
                A[i] = 1.0
            for i in range(4):
                A[i] = 2.0
            for i in T.unroll(4):
                A[i] = 3.0
            for k in T.Pipelined(8, num_stages=2, order=[0, 1], stage=[0, 1], group=[[0], [1]]):
                A[k] = 4.0
                A[k + 8] = 5.0

    text = tile_ir(main)
    assert text.count("tile.for") == 3
    assert "attributes {unroll}" in text
    assert re.search(r"tile\.pipelined %c0\S* to %c8\S* step %c1\S* stages 2 attributes "
                     r"\{group = \[array<i64: 0>, array<i64: 1>\], order = array<i64: 0, 1>, "
                     r"stage = array<i64: 0, 1>\}", text)


def test_parallel_2d_and_augmented_assignment() -> None:
    @T.prim_func
    def main(A: T.Tensor((16, 8), "float32")):
        with T.Kernel(1, threads=64) as _:
            for i, j in T.Parallel(16, 8):
                A[i, j] += 1.0

    text = tile_ir(main)
    assert "tile.parallel [16, 8]" in text
    assert re.search(r"memref\.load %arg0\[%arg\d+, %arg\d+\].*\n.*\n.*arith\.addf", text)


def test_allocation_scopes() -> None:
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            s = T.alloc_shared((4, 8), T.float16)
            f = T.alloc_fragment((4, 8), "float")
            loc = T.alloc_local((2,), T.int8)
            v = T.alloc_var(T.bool)
            T.clear(s)
            T.fill(f, 2.5)
            T.clear(loc)
            T.clear(v)

    text = tile_ir(main)
    for expected in ('memref<4x8xf16, "shared">', 'memref<4x8xf32, "fragment">',
                     'memref<2xi8, "local">', 'memref<1xi8, "var">'):
        assert f"tile.alloc : {expected}" in text
    assert "arith.constant 2.500000e+00 : f32" in text


@pytest.mark.parametrize("name, mlir", [
    ("float16", "f16"), ("bfloat16", "bf16"), ("float32", "f32"), ("float", "f32"),
    ("float64", "f64"), ("int8", "i8"), ("int16", "i16"), ("int32", "i32"), ("int64", "i64"),
    ("uint8", "i8"), ("bool", "i8"), ("float8_e4m3", "f8E4M3FN"), ("float8_e5m2", "f8E5M2"),
])
def test_dtypes(name: str, mlir: str) -> None:
    @T.prim_func
    def main(A: T.Tensor((8,), name)):
        with T.Kernel(1, threads=8) as _:
            x = T.alloc_fragment((8,), name)
            T.copy(A, x)

    assert f"memref<8x{mlir}>" in tile_ir(main)


def test_tensor_annotation_spellings() -> None:
    @T.prim_func
    def main(A: T.Tensor[(4, 8), T.float16], B: T.Buffer((4, 8), "float16"), n: T.int32):
        with T.Kernel(1, threads=8) as _:
            T.copy(A, B)

    text = tile_ir(main)
    assert "(%arg0: memref<4x8xf16>, %arg1: memref<4x8xf16>, %arg2: i32)" in text


def test_reductions() -> None:
    @T.prim_func
    def main(A: T.Tensor((4, 8), "float32")):
        with T.Kernel(1, threads=64) as _:
            x = T.alloc_fragment((4, 8), "float32")
            y = T.alloc_fragment((4,), "float32")
            z = T.alloc_fragment((8,), "float32")
            T.copy(A, x)
            T.reduce_max(x, y, dim=1)
            T.reduce_min(x, y, dim=-1, clear=False)
            T.reduce_sum(x, z, dim=0)
            T.reduce_abssum(x, y, 1)
            T.reduce_absmax(x, z, dim=0)

    text = tile_ir(main)
    for kind, dim in (("max", 1), ("min", 1), ("sum", 0), ("abssum", 1), ("absmax", 0)):
        assert re.search(rf"tile\.reduce \"{kind}\" %\d+ to %\d+ dim {dim}", text), kind
    assert "clear = false" in text


def test_atomic_add_scalar_and_region_forms() -> None:
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            part = T.alloc_fragment((16,), "float32")
            T.fill(part, 1.0)
            T.atomic_add(A[3], 2.0)
            T.atomic_add(A[16:32], part)

    text = tile_ir(main)
    assert text.count("tile.atomic_add") == 2
    assert "tile.parallel [16]" in text


def test_gemm_options() -> None:
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            a = T.alloc_shared((32, 16), T.float16)
            b = T.alloc_shared((32, 16), T.float16)
            c = T.alloc_fragment((32, 32), T.float32)
            T.gemm(a, b, c, transpose_B=True, policy=T.GemmWarpPolicy.FullRow, clear_accum=True)

    text = tile_ir(main)
    assert re.search(r"tile\.gemm %0, %1, %2 \{clear_accum = true, policy = \"full_row\", "
                     r"transpose_b = true\}", text)


def test_scalar_math_casts_and_promotion() -> None:
    @T.prim_func
    def main(A: T.Tensor((64,), "float16")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(64):
                x = A[i]
                y = x * 2.0  # the literal takes float16
                z = T.cast(y, "float32") + T.exp(T.cast(x, T.float32))
                w = T.sigmoid(z) + T.tanh(z) + T.sqrt(T.abs(z)) + T.rsqrt(z) + T.log2(z)
                A[i] = T.if_then_else(w > 0, w, -T.infinity(T.float32)).astype(T.float16)

    text = tile_ir(main)
    assert "arith.constant 2.000000e+00 : f16" in text
    assert "arith.mulf" in text and "arith.extf" in text and "arith.truncf" in text
    for op in ("math.exp", "math.tanh", "math.sqrt", "math.absf", "math.rsqrt", "math.log2",
               "arith.select"):
        assert op in text, op
    assert "0x7F800000" in text


def test_indices_promote_to_index_and_unsigned_ops() -> None:
    @T.prim_func
    def main(A: T.Tensor((64,), "uint8"), idx: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=4) as _:
            for i in T.Parallel(4):
                A[idx[i]] = A[idx[i]] // 3 + 1

    text = tile_ir(main)
    assert "arith.index_cast" in text and "arith.divui" in text


def test_conditional_expression_and_tuple_unpacking() -> None:
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(32):
                lo, hi = A[i], A[i + 32]
                A[i] = lo if lo > hi else hi

    text = tile_ir(main)
    assert "arith.select" in text and "scf.if" not in text


def test_closure_constants_are_folded() -> None:
    block = 16
    scale = block * 2

    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(block):
                A[i] = A[i] * scale

    text = tile_ir(main)
    assert "tile.parallel [16]" in text
    assert "arith.constant 3.200000e+01 : f32" in text


def test_corner_form_with_leading_unit_dims() -> None:
    @T.prim_func
    def main(A: T.Tensor((4, 64), "float32")):
        with T.Kernel(4, threads=64) as bx:
            row = T.alloc_fragment((64,), "float32")
            T.copy(A[bx, 0], row)
            T.copy(row, A[bx, 0])

    text = tile_ir(main)
    assert re.search(r"tile\.copy %arg0\[%arg1, %c0\] \[1, 64\] to %0\[%c0_?\d*\] \[64\]", text)


def test_import_tilec_as_tilelang_exposes_the_tilelang_api() -> None:
    import tilec as tilelang

    for name in ("jit", "compile", "language", "disable_cache", "TilecError"):
        assert hasattr(tilelang, name), name
    assert tilelang.language is T
    with pytest.raises(tilec.TilecError, match="T.gemm can only be used inside"):
        T.gemm(None, None, None)
    assert T.ceildiv(10, 3) == 4
    assert T.dtype("float") is T.float32 and T.dtype(torch.bfloat16) is T.bfloat16


def test_use_swizzle_is_a_kernel_attribute() -> None:
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(4, 4, threads=64) as (bx, by):
            T.use_swizzle(panel_size=8)
            A[bx] = 1.0

    text = tile_ir(main)
    assert 'threads [64] attributes {tile.swizzle_order = "row", tile.swizzle_panel = 8 : i64}' \
        in text


def test_eager_tensors_passed_by_keyword_keep_parameter_order() -> None:
    a, b = torch.randn(2, 3), torch.randn(3)
    by_keyword = annotated(B=b, A=a)
    torch.testing.assert_close(by_keyword, a * b)


@T.macro
def scaled_copy(src, dst, factor):
    for i in T.Parallel(16):
        dst[i] = src[i] * factor
    return factor * 2


def test_macro_is_inlined_with_its_arguments() -> None:
    @T.prim_func
    def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=16) as _:
            doubled = scaled_copy(A, B, 3.0)
            B[0] = doubled

    text = tile_ir(main)
    assert text.count("tile.parallel [16]") == 1
    assert "arith.constant 3.000000e+00 : f32" in text
    assert "arith.constant 6.000000e+00 : f32" in text
    with pytest.raises(tilec.TilecError, match="can only be called inside a tilec kernel"):
        scaled_copy(None, None, 1.0)


def test_eager_compile_from_sizes_or_specs() -> None:
    from_sizes = quickstart.matmul.compile(M=64, N=48, K=32, target="cpu")
    from_specs = quickstart.matmul.compile(T.Tensor((64, 32), T.float16),
                                           T.Tensor((32, 48), "float16"), target="cpu")
    assert from_sizes.artifact is from_specs.artifact
    assert [p.shape for p in from_specs.params] == [[64, 32], [32, 48], [64, 48]]


@tilec.jit
def scaled_by_mode(A, mode: str = "double"):
    N = T.const("N")
    A: T.Tensor[[N], T.float32]
    B = T.empty((N,), T.float32)
    with T.Kernel(1, threads=32):
        for i in T.Parallel(N):
            if mode in ("double", "twice"):
                B[i] = A[i] * 2.0
            elif mode not in ("half",):
                B[i] = A[i] * 3.0
            else:
                B[i] = A[i] * 0.5
    return B


@pytest.mark.parametrize(("mode", "factor"), [("double", 2.0), ("twice", 2.0), ("other", 3.0),
                                              ("half", 0.5)])
def test_membership_of_python_values_is_decided_when_built(mode: str, factor: float) -> None:
    """`x in (...)` / `not in` on Python values picks the branch when the kernel is built."""
    a = torch.randn(64)
    kernel = scaled_by_mode.compile(N=64, mode=mode, target="cpu")
    assert kernel.asm["tile"].count("tile.parallel") == 1
    assert kernel.asm["tile"].count("scf.if") == 0
    torch.testing.assert_close(kernel(a), a * factor)
