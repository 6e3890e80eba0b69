# RUN: tilec --emit=tile %s | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# dtype names (T.* and strings such as "float") map to MLIR element types (a bool tensor holds
# a byte per element, as torch's); scalars are args.
import tilec.language as T


@T.prim_func
def dtypes(a: T.Tensor((2,), "float16"), b: T.Tensor((2,), T.bfloat16),
           c: T.Tensor((2,), "float"), d: T.Tensor((2,), T.float64), e: T.Tensor((2,), "int8"),
           f: T.Tensor((2,), T.int16), g: T.Tensor((2,), "int64"), h: T.Tensor((2,), T.uint8),
           i: T.Tensor((2,), "bool"), j: T.Tensor((2,), T.float8_e4m3),
           k: T.Tensor((2,), "float8_e5m2"), u: T.Tensor((2,), T.uint16),
           v: T.Tensor((2,), "uint32"), w: T.Tensor((2,), T.uint64),
           y: T.Tensor((2,), T.float8_e4m3fn), z: T.Tensor((2,), T.float), n: T.int32,
           x: T.float32):
    with T.Kernel(1, threads=1) as _:
        c[0] = x * n

# CHECK-LABEL: func.func @dtypes(
# CHECK-SAME: memref<2xf16>, %arg1: memref<2xbf16>, %arg2: memref<2xf32>, %arg3: memref<2xf64>
# CHECK-SAME: memref<2xi8>, %arg5: memref<2xi16>, %arg6: memref<2xi64>, %arg7: memref<2xi8>
# CHECK-SAME: memref<2xi8>, %arg9: memref<2xf8E4M3FN>, %arg10: memref<2xf8E5M2>, %arg11: memref<2xi16>
# CHECK-SAME: %arg12: memref<2xi32>, %arg13: memref<2xi64>, %arg14: memref<2xf8E4M3FN>, %arg15: memref<2xf32>
# CHECK-SAME: %arg16: i32, %arg17: f32)
# CHECK: %[[N:.*]] = arith.sitofp %arg16 : i32 to f32
# CHECK: arith.mulf %arg17, %[[N]] : f32
