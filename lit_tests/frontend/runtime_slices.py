# RUN: tilec --emit=tile %s | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# Slices with run-time bounds: a length that is the same constant whatever the values folds
# (s : s + 16 with s a tensor element, i * 16 : (i + 1) * 16 with i loaded); one known only at
# run time takes the tile's extent from the run-time start; a gemm on a column part of a
# shared tile reads a copy of it.
import tilec.language as T


@T.prim_func
def slices(A: T.Tensor((64, 32), "float16"), Starts: T.Tensor((4,), "int32"),
           Ends: T.Tensor((4,), "int32"), C: T.Tensor((16, 16), "float32")):
    with T.Kernel(4, threads=128) as bx:
        tile = T.alloc_shared((16, 32), "float16")
        s = Starts[bx]
        T.copy(A[s:s + 16, :], tile)
        T.copy(A[s * 16:(s + 1) * 16, :], tile)
        T.copy(A[s:Ends[bx], :], tile)
        acc = T.alloc_fragment((16, 16), "float32")
        T.gemm(tile[:, 0:16], tile[:, 16:32], acc, transpose_B=True)
        T.copy(acc, C)

# CHECK-LABEL: func.func @slices
# CHECK: %[[S:.*]] = memref.load %arg1[%{{.*}}] : memref<4xi32>
# CHECK: %[[SI:.*]] = arith.index_cast %[[S]] : i32 to index
# CHECK: tile.copy %arg0[%[[SI]], %{{.*}}] [16, 32] to %[[TILE:.*]][%{{.*}}, %{{.*}}] [16, 32]
# CHECK: %[[SCALED:.*]] = arith.muli %[[S]], %{{.*}} : i32
# CHECK: %[[SCALEDI:.*]] = arith.index_cast %[[SCALED]] : i32 to index
# CHECK: tile.copy %arg0[%[[SCALEDI]], %{{.*}}] [16, 32] to %[[TILE]]
# CHECK: memref.load %arg2
# CHECK: %[[AGAIN:.*]] = arith.index_cast %[[S]] : i32 to index
# CHECK: tile.copy %arg0[%[[AGAIN]], %{{.*}}] [16, 32] to %[[TILE]]
# CHECK: %[[PART_A:.*]] = tile.alloc : memref<16x16xf16, "shared">
# CHECK: tile.copy %[[TILE]][%{{.*}}, %{{.*}}] [16, 16] to %[[PART_A]]
# CHECK: %[[PART_B:.*]] = tile.alloc : memref<16x16xf16, "shared">
# CHECK: tile.copy %[[TILE]][%{{.*}}, %{{.*}}] [16, 16] to %[[PART_B]]
# CHECK: tile.gemm %[[PART_A]], %[[PART_B]], %{{.*}} {transpose_b = true}
