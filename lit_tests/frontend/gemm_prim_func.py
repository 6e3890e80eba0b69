# RUN: tilec --emit=tile %s --const M=128 --const N=96 --const K=64 | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# TileLang's classic style: a factory returning a T.prim_func with T.Tensor annotations.
import tilec.language as T


def matmul_bias_relu(M, N, K, block_M=64, block_N=32, block_K=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), bias: T.Tensor((N,), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_N, block_K), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "float")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[bx * block_N, k * block_K], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=True)
            for i, j in T.Parallel(block_M, block_N):
                C_l[i, j] = T.max(C_l[i, j] + bias[bx * block_N + j], 0)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main

# CHECK-LABEL: func.func @main(%arg0: memref<128x64xf16>, %arg1: memref<96x64xf16>, %arg2: memref<96xf16>, %arg3: memref<128x96xf16>) attributes {tile.entry}
# CHECK:         tile.kernel grid(%{{.*}}, %{{.*}}) threads [128]
# CHECK:           tile.pipelined {{.*}} stages 2
# CHECK:             tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {transpose_b = true} : memref<64x32xf16, "shared">, memref<32x32xf16, "shared">, memref<64x32xf32, "fragment">
# CHECK:           tile.parallel [64, 32] {
# CHECK-NEXT:      ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
# CHECK:             %[[ACC:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<64x32xf32, "fragment">
# CHECK:             %[[COL:.*]] = arith.addi %{{.*}}, %[[J]] : index
# CHECK:             %[[B:.*]] = memref.load %arg2[%[[COL]]] : memref<96xf16>
# CHECK:             %[[BF:.*]] = arith.extf %[[B]] : f16 to f32
# CHECK:             %[[SUM:.*]] = arith.addf %[[ACC]], %[[BF]] : f32
# CHECK:             %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
# CHECK:             %[[RELU:.*]] = arith.maximumf %[[SUM]], %[[ZERO]] : f32
# CHECK:             memref.store %[[RELU]], %{{.*}}[%[[I]], %[[J]]] : memref<64x32xf32, "fragment">
