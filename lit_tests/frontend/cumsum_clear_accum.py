# RUN: tilec --emit=tile %s | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# T.cumsum: each line along dim summed in order by one point of a T.Parallel over the other
# dims (a fragment through a shared copy); T.gemm(clear_accum=<run-time condition>) zeroes C
# under an scf.if; a scalar T.copy is a load and a store.
import tilec.language as T


@T.prim_func
def scans(A: T.Tensor((4, 8), T.float32), B: T.Tensor((4, 8), T.float32)):
    with T.Kernel(1, threads=32) as _:
        f = T.alloc_fragment((4, 8), T.float32)
        T.copy(A, f)
        T.cumsum(f, dim=1, reverse=True)
        T.copy(f, B)

# CHECK-LABEL: func.func @scans
# CHECK: %[[F:.*]] = tile.alloc : memref<4x8xf32, "fragment">
# CHECK: %[[S:.*]] = tile.alloc : memref<4x8xf32, "shared">
# CHECK: tile.copy %[[F]]{{.*}} to %[[S]]
# CHECK: %[[SUM:.*]] = tile.alloc : memref<1xf32, "var">
# CHECK: tile.parallel [4] {
# CHECK-NEXT: ^bb0(%[[ROW:.*]]: index):
# CHECK: tile.for
# CHECK-NEXT: ^bb0(%[[K:.*]]: index):
# CHECK: %[[LAST:.*]] = arith.constant 7 : index
# CHECK: %[[AT:.*]] = arith.subi %[[LAST]], %[[K]] : index
# CHECK: %[[X:.*]] = memref.load %[[S]][%[[ROW]], %[[AT]]]
# CHECK: %[[NEW:.*]] = arith.addf %{{.*}}, %[[X]] : f32
# CHECK: memref.store %[[NEW]], %[[SUM]]
# CHECK: memref.store %[[NEW]], %[[S]][%[[ROW]], %[[AT]]]
# CHECK: tile.parallel [4, 8] {
# CHECK: memref.load %[[S]]
# CHECK: memref.store %{{.*}}, %[[F]]


@T.prim_func
def cleared(A: T.Tensor((32, 64), T.float16), B: T.Tensor((64, 32), T.float16),
            C: T.Tensor((32, 32), T.float32), D: T.Tensor((2,), T.float32)):
    with T.Kernel(1, threads=128) as _:
        a = T.alloc_shared((32, 32), T.float16, "shared.dyn")
        b = T.alloc_shared((32, 32), T.float16)
        c = T.alloc_fragment((32, 32), T.float32, "local.fragment")
        for ko in T.serial(2):
            T.copy(A[0, ko * 32], a)
            T.copy(B[ko * 32, 0], b)
            T.gemm(a, b, c, clear_accum=(ko == 0))
        T.copy(c, C)
        T.copy(C[1, 2], D[0])

# CHECK-LABEL: func.func @cleared
# CHECK: %[[C:.*]] = tile.alloc : memref<32x32xf32, "fragment">
# CHECK: tile.for
# CHECK-NEXT: ^bb0(%[[KO:.*]]: index):
# CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[KO]], %{{.*}} : index
# CHECK-NEXT: scf.if %[[FIRST]] {
# CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
# CHECK-NEXT: tile.fill %[[C]], %[[ZERO]]
# CHECK-NEXT: }
# CHECK-NEXT: tile.gemm %{{.*}}, %{{.*}}, %[[C]] :
# CHECK: %[[ELEMENT:.*]] = memref.load %arg2[%{{.*}}, %{{.*}}] : memref<32x32xf32>
# CHECK: memref.store %[[ELEMENT]], %arg3[%{{.*}}] : memref<2xf32>
