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


# A copy between global tensors that converts the dtype runs element by element (no fragment
# holding the box); one from a global box with a unit dimension into a shared tile stages
# through a fragment of the box's squeezed shape, which the converting T.Parallel indexes by
# all its variables.
@T.prim_func
def casts(X: T.Tensor((64, 2, 96), "float32"), Y: T.Tensor((64, 2, 96), "bfloat16")):
    with T.Kernel(4, 2, threads=128) as (bx, by):
        tile_y = T.alloc_shared((16, 96), "bfloat16")
        T.copy(X[bx * 16:(bx + 1) * 16, by, :], Y[bx * 16:(bx + 1) * 16, by, :])
        T.copy(X[bx * 16:(bx + 1) * 16, by, :], tile_y)

# CHECK-LABEL: func.func @casts
# CHECK-NOT: tile.alloc : memref<{{.*}}"fragment">
# CHECK: tile.parallel [16, 96]
# CHECK: memref.load %arg0[%{{.*}}, %{{.*}}, %{{.*}}] : memref<64x2x96xf32>
# CHECK: arith.truncf %{{.*}} : f32 to bf16
# CHECK-NEXT: memref.store %{{.*}}, %arg1[%{{.*}}, %{{.*}}, %{{.*}}] : memref<64x2x96xbf16>
# CHECK: %[[STAGE:.*]] = tile.alloc : memref<16x96xf32, "fragment">
# CHECK: tile.copy %arg0[%{{.*}}, %{{.*}}, %{{.*}}] [16, 1, 96] to %[[STAGE]][%{{.*}}, %{{.*}}] [16, 96]
# CHECK: tile.parallel [16, 96]
# CHECK: memref.load %[[STAGE]][%{{.*}}, %{{.*}}] : memref<16x96xf32, "fragment">
