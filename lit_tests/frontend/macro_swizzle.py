# RUN: tilec --emit=tile %s | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# T.macro bodies are inlined where called; T.use_swizzle is a kernel attribute;
# conditional expressions select, tuple unpacking binds several names.
import tilec.language as T


@T.macro
def clamp_into(src, dst, bound):
    for i in T.Parallel(32):
        low, high = -bound, bound
        dst[i] = low if src[i] < low else (high if src[i] > high else src[i])


@T.prim_func
def clamped(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
    with T.Kernel(4, 4, threads=32) as (bx, by):
        T.use_swizzle(panel_size=4, order="col")
        clamp_into(A, B, 2.0)

# CHECK-LABEL: func.func @clamped
# CHECK:      tile.kernel grid({{.*}}) threads [32] attributes {tile.swizzle_order = "col", tile.swizzle_panel = 4 : i64} {
# CHECK:        tile.parallel [32] {
# CHECK:          %[[X:.*]] = memref.load %arg0
# CHECK:          %[[LOW:.*]] = arith.constant -2.000000e+00 : f32
# CHECK:          arith.cmpf olt, %[[X]], %[[LOW]] : f32
# CHECK:          arith.select
# CHECK:          arith.select
# CHECK:          memref.store %{{.*}}, %arg1
# CHECK-NOT:  scf.if
