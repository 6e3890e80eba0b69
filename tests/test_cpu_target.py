"""The CPU target against torch: tile IR written by hand, compiled by the driver, run by the loader.

Every kernel takes fresh random inputs; outputs are poisoned with NaN (or a sentinel for
integers) first, so an element the kernel forgot to write fails the comparison.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest
import torch
from mlir import ir

import tilec.dialect as tile_dialect
from tilec.compiler.driver import compile_module
from tilec.errors import CompileError, LaunchError
from tilec.runtime import cpu
from tilec.runtime.artifact import Artifact, Param

# MLIR type, tilec dtype name, torch dtype, comparison tolerance (relative to the result scale)
FLOATS = {
    "f32": ("float32", torch.float32, 1e-5),
    "f16": ("float16", torch.float16, 2e-3),
    "bf16": ("bfloat16", torch.bfloat16, 1.6e-2),
}


def compile_text(text: str, params: list[Param], **options) -> Artifact:
    with tile_dialect.new_context():
        module = ir.Module.parse(text)
        return compile_module(module, params, "cpu", **options)


_LAUNCHERS: dict[tuple[str, str], cpu.Launcher] = {}


def launcher_for(text: str, params: tuple[Param, ...]) -> cpu.Launcher:
    """Compiles a kernel once per test session (several tests run it on other shapes)."""
    key = (text, repr(params))
    if key not in _LAUNCHERS:
        _LAUNCHERS[key] = cpu.load(compile_text(text, list(params)))
    return _LAUNCHERS[key]


def tensor(name: str, dtype: str, shape: list, output: bool = False) -> Param:
    return Param(name, "tensor", dtype, shape, output)


def poisoned(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.full(shape, float("nan"), dtype=dtype)
    return torch.full(shape, -12345, dtype=dtype)


def assert_close(actual: torch.Tensor, expected: torch.Tensor, rtol: float) -> None:
    """Compares in float64 with a tolerance scaled by the reference's magnitude."""
    actual, expected = actual.double(), expected.double()
    assert not torch.isnan(actual).any(), "an output element was not written"
    scale = max(expected.abs().max().item(), 1.0)
    error = (actual - expected).abs().max().item()
    assert error <= rtol * scale, f"max error {error} > {rtol} * {scale}"


# ---------------------------------------------------------------- GEMM (the quickstart's shape)

GEMM = """
func.func @matmul(%A: memref<?x?xT>, %B: memref<?x?xT>, %C: memref<?x?xT>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %M = memref.dim %A, %c0 : memref<?x?xT>
  %K = memref.dim %A, %c1 : memref<?x?xT>
  %N = memref.dim %B, %c1 : memref<?x?xT>
  %bm = arith.constant 64 : index
  %bk = arith.constant 32 : index
  %gx = arith.ceildivsi %N, %bm : index
  %gy = arith.ceildivsi %M, %bm : index
  %kt = arith.ceildivsi %K, %bk : index
  tile.kernel grid(%gx, %gy) threads [128] {
  ^bb0(%bx: index, %by: index):
    %as = tile.alloc : memref<64x32xT, "shared">
    %bs = tile.alloc : memref<32x64xT, "shared">
    %acc = tile.alloc : memref<64x64xf32, "fragment">
    %zero = arith.constant 0.0 : f32
    tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
    %row = arith.muli %by, %bm : index
    %col = arith.muli %bx, %bm : index
    tile.pipelined %c0 to %kt step %c1 stages 3 {
    ^bb1(%k: index):
      %kk = arith.muli %k, %bk : index
      tile.copy %A[%row, %kk] [64, 32] to %as[%c0, %c0] [64, 32] : memref<?x?xT> to memref<64x32xT, "shared">
      tile.copy %B[%kk, %col] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<?x?xT> to memref<32x64xT, "shared">
      tile.gemm %as, %bs, %acc : memref<64x32xT, "shared">, memref<32x64xT, "shared">, memref<64x64xf32, "fragment">
    }
    %out = tile.alloc : memref<64x64xT, "fragment">
    tile.parallel [64, 64] {
    ^bb2(%i: index, %j: index):
      %v = memref.load %acc[%i, %j] : memref<64x64xf32, "fragment">
      CONVERT
      memref.store %h, %out[%i, %j] : memref<64x64xT, "fragment">
    }
    tile.copy %out[%c0, %c0] [64, 64] to %C[%row, %col] [64, 64] : memref<64x64xT, "fragment"> to memref<?x?xT>
  }
  return
}
"""  # noqa: E501 - IR lines read best unwrapped


def gemm_text(mlir_type: str) -> str:
    """The GEMM for one input/output type (f32 accumulator; f32 needs no conversion)."""
    if mlir_type == "f32":
        convert = "%h = arith.maximumf %v, %v : f32"
    else:
        convert = f"%h = arith.truncf %v : f32 to {mlir_type}"
    return GEMM.replace("CONVERT", convert).replace("xT", "x" + mlir_type)


@pytest.mark.parametrize("mlir_type", list(FLOATS))
@pytest.mark.parametrize("shape", [(128, 128, 64), (200, 130, 70), (1, 1, 1), (65, 63, 33)])
def test_gemm_matches_torch(mlir_type: str, shape: tuple[int, int, int]) -> None:
    dtype_name, dtype, rtol = FLOATS[mlir_type]
    text = gemm_text(mlir_type)
    params = (
        tensor("A", dtype_name, ["M", "K"]),
        tensor("B", dtype_name, ["K", "N"]),
        tensor("C", dtype_name, ["M", "N"], output=True),
    )
    run = launcher_for(text, params)
    m, n, k = shape
    a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
    c = poisoned((m, n), dtype)
    run([a, b, c], {"M": m, "N": n, "K": k})
    assert_close(c, a.double() @ b.double(), rtol * max(1.0, k**0.5))


GEMM_TRANSPOSED = """
func.func @gemm_t(%A: memref<AxA_SHAPExf32>, %B: memref<B_SHAPExf32>, %C: memref<24x40xf32>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<A_SHAPExf32, "shared">
    %bs = tile.alloc : memref<B_SHAPExf32, "shared">
    %acc = tile.alloc : memref<24x40xf32, "fragment">
    tile.copy %A[%c0, %c0] [A_BOX] to %as[%c0, %c0] [A_BOX] : memref<AxA_SHAPExf32> to memref<A_SHAPExf32, "shared">
    tile.copy %B[%c0, %c0] [B_BOX] to %bs[%c0, %c0] [B_BOX] : memref<B_SHAPExf32> to memref<B_SHAPExf32, "shared">
    tile.copy %C[%c0, %c0] [24, 40] to %acc[%c0, %c0] [24, 40] : memref<24x40xf32> to memref<24x40xf32, "fragment">
    tile.gemm %as, %bs, %acc {transpose_a = TA, transpose_b = TB, clear_accum = CLEAR} : memref<A_SHAPExf32, "shared">, memref<B_SHAPExf32, "shared">, memref<24x40xf32, "fragment">
    tile.copy %acc[%c0, %c0] [24, 40] to %C[%c0, %c0] [24, 40] : memref<24x40xf32, "fragment"> to memref<24x40xf32>
  }
  return
}
"""  # noqa: E501 - IR lines read best unwrapped


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("clear", [False, True])
def test_gemm_transposes_and_clear(transpose_a: bool, transpose_b: bool, clear: bool) -> None:
    m, n, k = 24, 40, 16
    a_shape = (k, m) if transpose_a else (m, k)
    b_shape = (n, k) if transpose_b else (k, n)
    text = (
        GEMM_TRANSPOSED.replace("AxA_SHAPE", "x".join(map(str, a_shape)))
        .replace("A_SHAPE", "x".join(map(str, a_shape)))
        .replace("B_SHAPE", "x".join(map(str, b_shape)))
        .replace("A_BOX", ", ".join(map(str, a_shape)))
        .replace("B_BOX", ", ".join(map(str, b_shape)))
        .replace("TA", str(transpose_a).lower())
        .replace("TB", str(transpose_b).lower())
        .replace("CLEAR", str(clear).lower())
    )
    params = [tensor("A", "float32", list(a_shape)), tensor("B", "float32", list(b_shape))]
    params.append(tensor("C", "float32", [m, n], output=True))
    run = cpu.load(compile_text(text, params))
    a, b, c = torch.randn(a_shape), torch.randn(b_shape), torch.randn(m, n)
    expected = (a.T if transpose_a else a).double() @ (b.T if transpose_b else b).double()
    if not clear:
        expected += c.double()
    run([a, b, c], {})
    assert_close(c, expected, 1e-5)


GEMM_INT8 = """
func.func @gemm_i8(%A: memref<32x48xi8>, %B: memref<48x16xi8>, %C: memref<32x16xi32>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<32x48xi8, "shared">
    %bs = tile.alloc : memref<48x16xi8, "shared">
    %acc = tile.alloc : memref<32x16xi32, "fragment">
    tile.copy %A[%c0, %c0] [32, 48] to %as[%c0, %c0] [32, 48] : memref<32x48xi8> to memref<32x48xi8, "shared">
    tile.copy %B[%c0, %c0] [48, 16] to %bs[%c0, %c0] [48, 16] : memref<48x16xi8> to memref<48x16xi8, "shared">
    tile.gemm %as, %bs, %acc {clear_accum = true} : memref<32x48xi8, "shared">, memref<48x16xi8, "shared">, memref<32x16xi32, "fragment">
    tile.copy %acc[%c0, %c0] [32, 16] to %C[%c0, %c0] [32, 16] : memref<32x16xi32, "fragment"> to memref<32x16xi32>
  }
  return
}
"""  # noqa: E501 - IR lines read best unwrapped


def test_int8_gemm_accumulates_in_int32() -> None:
    params = [tensor("A", "int8", [32, 48]), tensor("B", "int8", [48, 16])]
    params.append(tensor("C", "int32", [32, 16], output=True))
    run = cpu.load(compile_text(GEMM_INT8, params))
    a = torch.randint(-128, 128, (32, 48), dtype=torch.int8)
    b = torch.randint(-128, 128, (48, 16), dtype=torch.int8)
    c = poisoned((32, 16), torch.int32)
    run([a, b, c], {})
    assert torch.equal(c, a.int() @ b.int())


# ---------------------------------------------------------------- copies with ragged bounds

RAGGED_COPY = """
func.func @ragged(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %g = arith.ceildivsi %n, %c16 : index
  tile.kernel grid(%g) threads [16] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<16xf32, "fragment">
    %o = arith.muli %bx, %c16 : index
    tile.copy %x[%o] [16] to %f[%c0] [16] : memref<?xf32> to memref<16xf32, "fragment">
    tile.copy %f[%c0] [16] to %y[%o] [16] : memref<16xf32, "fragment"> to memref<?xf32>
    tile.copy %f[%c0] [16] to %z[%o] [16] : memref<16xf32, "fragment"> to memref<?xf32>
  }
  return
}
"""  # noqa: E501 - IR lines read best unwrapped


RAGGED_PARAMS = (
    tensor("x", "float32", ["n"]),
    tensor("y", "float32", ["n"], output=True),
    tensor("z", "float32", ["m"], output=True),
)


@pytest.mark.parametrize("n", [1, 15, 16, 17, 100])
def test_copy_guards_ragged_edges(n: int) -> None:
    """Reads past the end give 0; writes past the end are skipped (the guard cells stay NaN)."""
    run = launcher_for(RAGGED_COPY, RAGGED_PARAMS)
    x = torch.randn(n)
    storage = poisoned((n + 8,), torch.float32)
    y = storage[:n]  # the kernel sees n elements; the 8 after them must stay untouched
    padded = -(-n // 16) * 16
    z = poisoned((padded,), torch.float32)
    run([x, y, z], {"n": n})
    assert torch.equal(y, x)
    assert torch.isnan(storage[n:]).all()
    assert torch.equal(z[:n], x) and torch.equal(z[n:], torch.zeros(padded - n))


ROW_COPY = """
func.func @rows(%x: memref<?x?xf16>, %y: memref<?x?xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf16>
  tile.kernel grid(%rows) threads [32] {
  ^bb0(%r: index):
    %f = tile.alloc : memref<32xf16, "fragment">
    %s = tile.alloc : memref<4x32xf16, "shared">
    tile.copy %x[%r, %c0] [1, 32] to %f[%c0] [32] : memref<?x?xf16> to memref<32xf16, "fragment">
    tile.copy %f[%c0] [32] to %s[%c1, %c0] [1, 32] : memref<32xf16, "fragment"> to memref<4x32xf16, "shared">
    tile.copy %s[%c1, %c0] [1, 32] to %y[%r, %c0] [1, 32] : memref<4x32xf16, "shared"> to memref<?x?xf16>
  }
  return
}
"""  # noqa: E501 - IR lines read best unwrapped


def test_copy_with_unit_extents_and_ragged_columns() -> None:
    params = [tensor("x", "float16", ["r", "c"]), tensor("y", "float16", ["r", "c"], True)]
    run = cpu.load(compile_text(ROW_COPY, params))
    x = torch.randn(5, 20).half()
    y = poisoned((5, 20), torch.float16)
    run([x, y], {})
    assert torch.equal(y, x)


# ---------------------------------------------------------------- reductions

REDUCE = """
func.func @reduce(%x: memref<16x24xT>, %init0: memref<24xT>, %init1: memref<16xT>, OUTPUTS) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [64] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<16x24xT, "fragment">
    %d0 = tile.alloc : memref<24xT, "fragment">
    %d1 = tile.alloc : memref<16x1xT, "fragment">
    tile.copy %x[%c0, %c0] [16, 24] to %f[%c0, %c0] [16, 24] : memref<16x24xT> to memref<16x24xT, "fragment">
BODY
  }
  return
}
"""  # noqa: E501 - IR lines read best unwrapped

REDUCE_STEP = """
    tile.copy %init0[%c0] [24] to %d0[%c0] [24] : memref<24xT> to memref<24xT, "fragment">
    tile.copy %init1[%c0] [16] to %d1[%c0, %c0] [16, 1] : memref<16xT> to memref<16x1xT, "fragment">
    tile.reduce "KIND" %f to %d0 dim 0 {clear = CLEAR} : memref<16x24xT, "fragment"> to memref<24xT, "fragment">
    tile.reduce "KIND" %f to %d1 dim 1 {clear = CLEAR} : memref<16x24xT, "fragment"> to memref<16x1xT, "fragment">
    tile.copy %d0[%c0] [24] to %KIND_0[%c0] [24] : memref<24xT, "fragment"> to memref<24xT>
    tile.copy %d1[%c0, %c0] [16, 1] to %KIND_1[%c0] [16] : memref<16x1xT, "fragment"> to memref<16xT>
"""  # noqa: E501 - IR lines read best unwrapped

KINDS = ("max", "min", "sum", "abssum", "absmax")


def reference_reduce(kind: str, x: torch.Tensor, dim: int) -> torch.Tensor:
    if kind.startswith("abs"):
        x = x.abs()
    if kind in ("max", "absmax"):
        return x.amax(dim)
    if kind == "min":
        return x.amin(dim)
    return x.sum(dim)


def combine(kind: str, old: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
    if kind in ("max", "absmax"):
        return torch.maximum(old, new)
    if kind == "min":
        return torch.minimum(old, new)
    return old + new


@pytest.mark.parametrize(
    "mlir_type,dtype,rtol",
    [("f32", torch.float32, 1e-5), ("f16", torch.float16, 4e-3), ("i32", torch.int32, 0)],
)
@pytest.mark.parametrize("clear", [True, False])
def test_reduce_every_kind_along_both_dims(
    mlir_type: str, dtype: torch.dtype, rtol: float, clear: bool
) -> None:
    body = "".join(REDUCE_STEP.replace("KIND", kind) for kind in KINDS)
    outputs = ", ".join(f"%{kind}_0: memref<24xT>, %{kind}_1: memref<16xT>" for kind in KINDS)
    text = REDUCE.replace("OUTPUTS", outputs).replace("BODY", body)
    text = text.replace("CLEAR", str(clear).lower()).replace("xT", "x" + mlir_type)
    name = {torch.float32: "float32", torch.float16: "float16", torch.int32: "int32"}[dtype]
    params = [tensor("x", name, [16, 24]), tensor("init0", name, [24]), tensor("init1", name, [16])]
    for kind in KINDS:
        params += [tensor(f"{kind}_0", name, [24], True), tensor(f"{kind}_1", name, [16], True)]
    run = cpu.load(compile_text(text, params))
    if dtype.is_floating_point:
        x, init0, init1 = torch.randn(16, 24), torch.randn(24), torch.randn(16)
        x, init0, init1 = x.to(dtype), init0.to(dtype), init1.to(dtype)
    else:
        x, init0, init1 = (
            torch.randint(-50, 50, shape, dtype=dtype) for shape in ((16, 24), (24,), (16,))
        )
    outputs = {
        f"{kind}_{dim}": poisoned((24 if dim == 0 else 16,), dtype)
        for kind in KINDS
        for dim in (0, 1)
    }
    run([x, init0, init1, *outputs.values()], {})
    for kind in KINDS:
        for dim, init in ((0, init0), (1, init1)):
            expected = reference_reduce(kind, x.double(), dim)
            if not clear:
                expected = combine(kind, init.double(), expected)
            actual = outputs[f"{kind}_{dim}"]
            if rtol:
                assert_close(actual, expected, rtol * 24)
            else:
                assert torch.equal(actual.double(), expected), kind


# ---------------------------------------------------------------- atomics, elementwise math

COLUMN_SUM = """
func.func @colsum(%x: memref<?x32xf32>, %out: memref<32xf32>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %rows = memref.dim %x, %c0 : memref<?x32xf32>
  %g = arith.ceildivsi %rows, %c8 : index
  tile.kernel grid(%g) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<8x32xf32, "fragment">
    %s = tile.alloc : memref<32xf32, "fragment">
    %r = arith.muli %bx, %c8 : index
    tile.copy %x[%r, %c0] [8, 32] to %f[%c0, %c0] [8, 32] : memref<?x32xf32> to memref<8x32xf32, "fragment">
    tile.reduce "sum" %f to %s dim 0 : memref<8x32xf32, "fragment"> to memref<32xf32, "fragment">
    tile.parallel [32] {
    ^bb1(%j: index):
      %v = memref.load %s[%j] : memref<32xf32, "fragment">
      tile.atomic_add %out[%j], %v : memref<32xf32>, f32
    }
  }
  return
}
"""  # noqa: E501 - IR lines read best unwrapped


def test_column_sum_with_atomic_add() -> None:
    params = [tensor("x", "float32", ["rows", 32]), tensor("out", "float32", [32], True)]
    run = cpu.load(compile_text(COLUMN_SUM, params))
    x = torch.randn(45, 32)
    out = torch.zeros(32)  # atomics accumulate: the caller zeroes, as with TileLang
    run([x, out], {"rows": 45})
    assert_close(out, x.double().sum(0), 1e-5)


ELEMENTWISE = """
func.func @ew(%x: memref<?xT>, %y: memref<?xT>, %scale: T) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = memref.dim %x, %c0 : memref<?xT>
  %g = arith.ceildivsi %n, %c64 : index
  tile.kernel grid(%g) threads [64] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<64xT, "fragment">
    %o = arith.muli %bx, %c64 : index
    tile.copy %x[%o] [64] to %f[%c0] [64] : memref<?xT> to memref<64xT, "fragment">
    tile.parallel [64] {
    ^bb1(%i: index):
      %v = memref.load %f[%i] : memref<64xT, "fragment">
      %a = math.absf %v : T
      %e = math.exp %v : T
      %t = math.tanh %v : T
      %s = math.sqrt %a : T
      %sum = arith.addf %e, %t : T
      %sum2 = arith.addf %sum, %s : T
      %r = arith.mulf %sum2, %scale : T
      memref.store %r, %f[%i] : memref<64xT, "fragment">
    }
    tile.copy %f[%c0] [64] to %y[%o] [64] : memref<64xT, "fragment"> to memref<?xT>
  }
  return
}
"""  # noqa: E501 - IR lines read best unwrapped


@pytest.mark.parametrize("mlir_type", list(FLOATS))
def test_elementwise_math_and_half_scalars(mlir_type: str) -> None:
    """exp/tanh/sqrt in every float type; a half-precision scalar travels as float."""
    dtype_name, dtype, rtol = FLOATS[mlir_type]
    text = ELEMENTWISE.replace("xT", "x" + mlir_type).replace(": T", ": " + mlir_type)
    params = [tensor("x", dtype_name, ["n"]), tensor("y", dtype_name, ["n"], True)]
    params.append(Param("scale", "scalar", dtype_name))
    run = cpu.load(compile_text(text, params))
    x = torch.randn(300).to(dtype)
    y = poisoned((300,), dtype)
    run([x, y, 1.5], {"n": 300})
    xd = x.double()
    expected = (xd.exp() + xd.tanh() + xd.abs().sqrt()) * 1.5
    assert_close(y, expected, 4 * rtol)


# ---------------------------------------------------------------- loops, control flow, grid

LOOPS = """
func.func @loops(%x: memref<4x8xi32>, %y: memref<4x8xi32>, %limit: i32) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  tile.kernel grid(%c4) threads [1] {
  ^bb0(%row: index):
    %acc = tile.alloc : memref<1xi32, "var">
    %zero = arith.constant 0 : i32
    tile.fill %acc, %zero : memref<1xi32, "var">, i32
    tile.for %c0 to %c8 step %c2 attributes {unroll} {
    ^bb1(%j: index):
      tile.pipelined %c0 to %c2 step %c1 stages 2 {
      ^bb2(%d: index):
        %col = arith.addi %j, %d : index
        %v = memref.load %x[%row, %col] : memref<4x8xi32>
        %old = memref.load %acc[%c0] : memref<1xi32, "var">
        %big = arith.cmpi sgt, %v, %limit : i32
        %new = scf.if %big -> (i32) {
          scf.yield %old : i32
        } else {
          %s = arith.addi %old, %v : i32
          scf.yield %s : i32
        }
        memref.store %new, %acc[%c0] : memref<1xi32, "var">
        memref.store %new, %y[%row, %col] : memref<4x8xi32>
      }
    }
  }
  return
}
"""  # noqa: E501 - IR lines read best unwrapped


def test_serial_unrolled_pipelined_loops_and_scf_if() -> None:
    """A running sum per row that skips values above a scalar limit."""
    params = [tensor("x", "int32", [4, 8]), tensor("y", "int32", [4, 8], True)]
    params.append(Param("limit", "scalar", "int32"))
    run = cpu.load(compile_text(LOOPS, params))
    x = torch.randint(-20, 20, (4, 8), dtype=torch.int32)
    y = poisoned((4, 8), torch.int32)
    run([x, y, 10], {})
    assert torch.equal(y, torch.where(x > 10, 0, x).cumsum(1).int())


GRID_3D = """
func.func @ids(%out: memref<2x3x4xi64>) attributes {tile.entry} {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c100 = arith.constant 100 : index
  %c10 = arith.constant 10 : index
  tile.kernel grid(%c4, %c3, %c2) threads [1, 1, 1] {
  ^bb0(%bx: index, %by: index, %bz: index):
    %z = arith.muli %bz, %c100 : index
    %y = arith.muli %by, %c10 : index
    %zy = arith.addi %z, %y : index
    %id = arith.addi %zy, %bx : index
    %v = arith.index_cast %id : index to i64
    memref.store %v, %out[%bz, %by, %bx] : memref<2x3x4xi64>
  }
  return
}
"""  # noqa: E501 - IR lines read best unwrapped


def test_three_dimensional_grid_binds_block_indices_in_order() -> None:
    run = cpu.load(compile_text(GRID_3D, [tensor("out", "int64", [2, 3, 4], True)]))
    out = poisoned((2, 3, 4), torch.int64)
    run([out], {})
    z, y, x = torch.meshgrid(torch.arange(2), torch.arange(3), torch.arange(4), indexing="ij")
    assert torch.equal(out, z * 100 + y * 10 + x)


def test_numpy_arrays_run_too() -> None:
    run = launcher_for(RAGGED_COPY, RAGGED_PARAMS)
    x = np.random.default_rng(0).standard_normal(40).astype(np.float32)
    y, z = np.full(40, np.nan, np.float32), np.full(48, np.nan, np.float32)
    run([x, y, z], {"n": 40})
    assert np.array_equal(y, x) and np.array_equal(z[:40], x) and not z[40:].any()


# ---------------------------------------------------------------- the driver's contract

QUICKSTART_PARAMS = [
    tensor("A", "float16", ["M", "K"]),
    tensor("B", "float16", ["K", "N"]),
    tensor("C", "float16", ["M", "N"], True),
]


def quickstart_text() -> str:
    return gemm_text("f16")


def test_every_stage_is_kept_and_the_binary_is_a_shared_library() -> None:
    artifact = compile_text(quickstart_text(), QUICKSTART_PARAMS, launch={"grid": ["N/64"]})
    assert list(artifact.asm) == ["tile", "loops", "llvm", "llvmir", "asm"]
    assert "tile.kernel" in artifact.asm["tile"] and "tile." not in artifact.asm["loops"]
    assert "define void @tilec_matmul(" in artifact.asm["llvmir"]
    assert artifact.binary_kind == "so" and artifact.binary.startswith(b"\x7fELF")
    assert artifact.launch["entry"] == "tilec_matmul" and artifact.launch["grid"] == ["N/64"]


def test_stop_after_keeps_the_stages_so_far() -> None:
    artifact = compile_text(quickstart_text(), QUICKSTART_PARAMS, stop_after="llvm")
    assert list(artifact.asm) == ["tile", "loops", "llvm"]
    assert artifact.binary == b"" and artifact.binary_kind == "none"
    assert "llvm.func @tilec_matmul" in artifact.asm["llvm"]
    with pytest.raises(CompileError, match="unknown stage 'ptx'"):
        compile_text(quickstart_text(), QUICKSTART_PARAMS, stop_after="ptx")


def test_unknown_target_is_a_compile_error() -> None:
    with tile_dialect.new_context():
        module = ir.Module.parse(quickstart_text())
        with pytest.raises(CompileError, match="unknown target 'tpu'"):
            compile_module(module, QUICKSTART_PARAMS, "tpu")


def test_compile_time_of_the_quickstart_is_well_under_two_seconds() -> None:
    compile_text(quickstart_text(), QUICKSTART_PARAMS)  # warm: imports, target machine
    start = time.perf_counter()
    compile_text(quickstart_text(), QUICKSTART_PARAMS)
    elapsed = time.perf_counter() - start
    print(f"quickstart CPU compile: {elapsed * 1e3:.0f} ms")
    assert elapsed < 2.0


def test_loader_rejects_a_foreign_abi_and_a_broken_library() -> None:
    artifact = compile_text(quickstart_text(), QUICKSTART_PARAMS)
    foreign = Artifact(**{**artifact.__dict__, "launch": {**artifact.launch, "abi": "other"}})
    with pytest.raises(LaunchError, match="ABI"):
        cpu.load(foreign)
    broken = Artifact(**{**artifact.__dict__, "binary": b"not a shared library"})
    with pytest.raises(LaunchError, match="cannot load the CPU kernel"):
        cpu.load(broken)


def test_artifact_round_trips_through_a_directory(tmp_path) -> None:
    artifact = compile_text(quickstart_text(), QUICKSTART_PARAMS)
    artifact.save(tmp_path / "matmul")
    run = cpu.load(Artifact.load(tmp_path / "matmul"))
    a, b = torch.randn(70, 40).half(), torch.randn(40, 50).half()
    c = poisoned((70, 50), torch.float16)
    run([a, b, c], {})
    assert_close(c, a.double() @ b.double(), 2e-3 * 40**0.5)


# ---------------------------------------------------------------- float8

FLOAT8 = {
    "f8E4M3FN": ("float8_e4m3", torch.float8_e4m3fn),
    "f8E5M2": ("float8_e5m2", torch.float8_e5m2),
}

FLOAT8_KERNEL = """
func.func @f8(%x: memref<?xf32>, %q: memref<?xTY>, %back: memref<?xf32>, %sum: memref<?xTY>, %s: TY) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %c64 = arith.constant 64 : index
  %g = arith.ceildivsi %n, %c64 : index
  tile.kernel grid(%g) threads [64] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<64xTY, "fragment">
    %o = arith.muli %bx, %c64 : index
    tile.parallel [64] {
    ^bb0(%i: index):
      %j = arith.addi %o, %i : index
      %in = arith.cmpi ult, %j, %n : index
      scf.if %in {
        %v = memref.load %x[%j] : memref<?xf32>
        %t = arith.truncf %v : f32 to TY
        memref.store %t, %q[%j] : memref<?xTY>
        %e = arith.extf %t : TY to f32
        memref.store %e, %back[%j] : memref<?xf32>
      }
    }
    tile.copy %q[%o] [64] to %f[%c0] [64] : memref<?xTY> to memref<64xTY, "fragment">
    tile.parallel [64] {
    ^bb0(%i: index):
      %v = memref.load %f[%i] : memref<64xTY, "fragment">
      %r = arith.addf %v, %s : TY
      memref.store %r, %f[%i] : memref<64xTY, "fragment">
    }
    tile.copy %f[%c0] [64] to %sum[%o] [64] : memref<64xTY, "fragment"> to memref<?xTY>
  }
  return
}
"""  # noqa: E501 - IR lines read best unwrapped


def same_bits(actual: torch.Tensor, expected: torch.Tensor) -> bool:
    """Bitwise equal float8 tensors, any NaN matching any NaN."""
    equal = actual.view(torch.uint8) == expected.view(torch.uint8)
    both_nan = torch.isnan(actual.float()) & torch.isnan(expected.float())
    return bool((equal | both_nan).all())


@pytest.mark.parametrize("mlir_type", list(FLOAT8))
def test_float8_conversions_and_arithmetic_match_torch(mlir_type: str) -> None:
    """f32 -> float8 rounding (saturating E4M3FN, inf-making E5M2), float8 -> f32, and
    float8 arithmetic (done in f32) on values across the whole range, specials included."""
    dtype_name, dtype = FLOAT8[mlir_type]
    params = [tensor("x", "float32", ["n"]), tensor("q", dtype_name, ["n"], True)]
    params += [tensor("back", "float32", ["n"], True), tensor("sum", dtype_name, ["n"], True)]
    params.append(Param("s", "scalar", dtype_name))
    run = cpu.load(compile_text(FLOAT8_KERNEL.replace("TY", mlir_type), params))
    n = 3000
    magnitudes = torch.logspace(-12, 18, n, base=2)
    x = torch.randn(n) * magnitudes
    x[:4] = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0])
    q, total = torch.zeros(n, dtype=dtype), torch.zeros(n, dtype=dtype)
    back = poisoned((n,), torch.float32)
    run([x, q, back, total, 0.5], {"n": n})
    expected = x.to(dtype)
    assert same_bits(q, expected)
    assert torch.equal(back.nan_to_num(7.0), expected.float().nan_to_num(7.0))
    half = torch.tensor(0.5).to(dtype).float()
    assert same_bits(total, (expected.float() + half).to(dtype))


@pytest.mark.parametrize("mlir_type", list(FLOAT8))
def test_float8_gemm_accumulates_in_f32(mlir_type: str) -> None:
    dtype_name, dtype = FLOAT8[mlir_type]
    params = [tensor("A", dtype_name, ["M", "K"]), tensor("B", dtype_name, ["K", "N"])]
    params.append(tensor("C", dtype_name, ["M", "N"], True))
    run = cpu.load(compile_text(gemm_text(mlir_type), params))
    a, b = torch.randn(70, 40).to(dtype), torch.randn(40, 50).to(dtype)
    c = torch.zeros(70, 50, dtype=dtype)
    run([a, b, c], {})
    # one float8 step of the largest result: rounding of an f32 sum may differ from f64's
    step = 2.0**-3 if mlir_type == "f8E4M3FN" else 2.0**-2
    assert_close(c.float(), (a.double() @ b.double()).to(dtype).double(), step)


def test_print_ir_after_all_dumps_every_pass(capfd) -> None:
    compile_text(quickstart_text(), QUICKSTART_PARAMS, stop_after="llvm", print_ir_after_all=True)
    dumps = capfd.readouterr().err
    for name in ("lower-tile-ops-to-loops", "prepare-cpu-entry", "expand-narrow-float-conversions"):
        assert f"IR Dump After {name}" in dumps
    assert "IR Dump After convert-func-to-llvm //" in dumps


def test_runtime_runs_an_artifact_without_importing_mlir(tmp_path) -> None:
    """A machine without the compiler loads the cached .so: the loader imports no MLIR."""
    compile_text(RAGGED_COPY, list(RAGGED_PARAMS)).save(tmp_path / "ragged")
    script = f"""
import sys
import numpy as np
from tilec.runtime import cpu
from tilec.runtime.artifact import Artifact
run = cpu.load(Artifact.load(__import__("pathlib").Path({str(tmp_path / "ragged")!r})))
x = np.arange(20, dtype=np.float32)
y, z = np.full(20, np.nan, np.float32), np.full(32, np.nan, np.float32)
run([x, y, z], {{"n": 20}})
assert np.array_equal(y, x) and not z[20:].any()
assert not any(name == "mlir" or name.startswith("mlir.") for name in sys.modules)
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


SCALARS = """
func.func @scalars(%out: memref<6xf64>, %flag: i1, %small: i8, %wide: i64, %d: f64, %h: f16, %b: bf16) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  tile.kernel grid(%c1) threads [1] {
  ^bb0(%bx: index):
    %f = arith.uitofp %flag : i1 to f64
    %s = arith.sitofp %small : i8 to f64
    %w = arith.sitofp %wide : i64 to f64
    %hh = arith.extf %h : f16 to f64
    %bb = arith.extf %b : bf16 to f64
    memref.store %f, %out[%c0] : memref<6xf64>
    memref.store %s, %out[%c1] : memref<6xf64>
    memref.store %w, %out[%c2] : memref<6xf64>
    memref.store %d, %out[%c3] : memref<6xf64>
    memref.store %hh, %out[%c4] : memref<6xf64>
    memref.store %bb, %out[%c5] : memref<6xf64>
  }
  return
}
"""  # noqa: E501 - IR lines read best unwrapped


def test_scalar_parameters_of_every_kind_arrive_intact() -> None:
    params = [tensor("out", "float64", [6], True), Param("flag", "scalar", "bool")]
    for name, dtype in (("small", "int8"), ("wide", "int64"), ("d", "float64")):
        params.append(Param(name, "scalar", dtype))
    params += [Param("h", "scalar", "float16"), Param("b", "scalar", "bfloat16")]
    run = cpu.load(compile_text(SCALARS, params))
    out = poisoned((6,), torch.float64)
    run([out, True, -7, 2**40 + 3, 0.1, 1.5, -2.25], {})
    assert out.tolist() == [1.0, -7.0, float(2**40 + 3), 0.1, 1.5, -2.25]
