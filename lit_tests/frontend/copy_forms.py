# RUN: tilec --emit=tile %s | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# T.copy regions: slices, corner indices (extents from the other side), a whole buffer,
# leading unit dims, and a copy that converts the dtype in registers.
import tilec.language as T


@T.prim_func
def copies(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float32")):
    with T.Kernel(4, threads=128) as bx:
        tile_a = T.alloc_shared((16, 64), "float16")
        row = T.alloc_fragment((64,), "float16")
        T.copy(A[bx * 16:(bx + 1) * 16, 0:64], tile_a)
        T.copy(A[bx * 16, 0], tile_a)
        T.copy(A[bx], row)
        T.copy(tile_a, B[bx * 16, 0])

# CHECK-LABEL: func.func @copies
# CHECK: ^bb0(%[[BX:.*]]: index):
# CHECK: %[[LO:.*]] = arith.muli %[[BX]], %{{.*}} : index
# CHECK: tile.copy %arg0[%[[LO]], %{{.*}}] [16, 64] to %{{.*}}[%{{.*}}, %{{.*}}] [16, 64] : memref<64x64xf16> to memref<16x64xf16, "shared">
# CHECK: tile.copy %arg0[%{{.*}}, %{{.*}}] [16, 64] to
# CHECK: tile.copy %arg0[%[[BX]], %{{.*}}] [1, 64] to %{{.*}}[%{{.*}}] [64] : memref<64x64xf16> to memref<64xf16, "fragment">
# CHECK: %[[F32:.*]] = tile.alloc : memref<16x64xf32, "fragment">
# CHECK: tile.parallel [16, 64]
# CHECK:   arith.extf %{{.*}} : f16 to f32
# CHECK: tile.copy %[[F32]][%{{.*}}, %{{.*}}] [16, 64] to %arg1[%{{.*}}, %{{.*}}] [16, 64]
