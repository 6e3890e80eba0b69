# RUN: tilec --emit=tile %s | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# break and continue: int8 flags (0 until set); the loop body runs while the loop has not been
# broken, and what follows a statement that may leave runs only while neither flag is set.
import tilec.language as T


@T.prim_func
def exits(A: T.Tensor((16,), T.int32), B: T.Tensor((1,), T.int32)):
    with T.Kernel(1, threads=1) as _:
        total = T.alloc_var(T.int32, 0)
        for i in T.serial(16):
            if A[i] < 0:
                break
            if A[i] % 2 == 1:
                continue
            total += A[i]
        B[0] = total

# CHECK-LABEL: func.func @exits
# CHECK: %[[BROKE:.*]] = tile.alloc : memref<1xi8, "var">
# CHECK: %[[SKIPPED:.*]] = tile.alloc : memref<1xi8, "var">
# CHECK: tile.for
# CHECK: memref.store %{{.*}}, %[[SKIPPED]]
# CHECK: %[[B:.*]] = memref.load %[[BROKE]]
# CHECK: %[[GOING:.*]] = arith.cmpi eq, %[[B]]
# CHECK: scf.if %[[GOING]] {
# CHECK: arith.cmpi slt
# CHECK: scf.if
# CHECK: %[[ONE:.*]] = arith.constant 1 : i8
# CHECK: memref.store %[[ONE]], %[[BROKE]]
# CHECK: %[[NOT_BROKEN:.*]] = arith.cmpi eq
# CHECK: %[[NOT_SKIPPED:.*]] = arith.cmpi eq
# CHECK: %[[REST:.*]] = arith.andi %[[NOT_BROKEN]], %[[NOT_SKIPPED]] : i1
# CHECK: scf.if %[[REST]] {
# CHECK: memref.store %{{.*}}, %[[SKIPPED]]
# CHECK: scf.if
# CHECK: arith.addi


@T.prim_func
def until(A: T.Tensor((16,), T.int32), B: T.Tensor((1,), T.int32)):
    with T.Kernel(1, threads=1) as _:
        j = T.alloc_var(T.int32, 0)
        while j < 16:
            j += 1
            if A[j - 1] > 50:
                break
        B[0] = j

# CHECK-LABEL: func.func @until
# CHECK: %[[BROKE:.*]] = tile.alloc : memref<1xi8, "var">
# CHECK: scf.while
# CHECK: %[[TEST:.*]] = arith.cmpi slt
# CHECK: %[[FLAG:.*]] = memref.load %[[BROKE]]
# CHECK: %[[GOING:.*]] = arith.cmpi eq, %[[FLAG]]
# CHECK: %[[BOTH:.*]] = arith.andi %[[TEST]], %[[GOING]] : i1
# CHECK: scf.condition(%[[BOTH]])
