# RUN: tilec --emit=tile %s | FileCheck %s
# T.alloc_shared / alloc_fragment / alloc_local / alloc_var, T.clear and T.fill.
import tilec.language as T


@T.prim_func
def scopes(A: T.Tensor((16, 16), "float16")):
    with T.Kernel(1, threads=32) as _:
        shared = T.alloc_shared((16, 16), T.float16)
        fragment = T.alloc_fragment((16, 16), "float")
        local = T.alloc_local((4,), T.int32)
        counter = T.alloc_var(T.int32, init=7)
        T.clear(shared)
        T.fill(fragment, 1.5)
        T.fill(local, counter)
        T.copy(shared, A)

# CHECK-LABEL: func.func @scopes
# CHECK: %[[S:.*]] = tile.alloc : memref<16x16xf16, "shared">
# CHECK: %[[F:.*]] = tile.alloc : memref<16x16xf32, "fragment">
# CHECK: %[[L:.*]] = tile.alloc : memref<4xi32, "local">
# CHECK: %[[V:.*]] = tile.alloc : memref<1xi32, "var">
# CHECK: %[[SEVEN:.*]] = arith.constant 7 : i32
# CHECK: memref.store %[[SEVEN]], %[[V]][%{{.*}}] : memref<1xi32, "var">
# CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f16
# CHECK: tile.fill %[[S]], %[[Z]] : memref<16x16xf16, "shared">, f16
# CHECK: %[[X:.*]] = arith.constant 1.500000e+00 : f32
# CHECK: tile.fill %[[F]], %[[X]] : memref<16x16xf32, "fragment">, f32
# CHECK: %[[C:.*]] = memref.load %[[V]][%{{.*}}] : memref<1xi32, "var">
# CHECK: tile.fill %[[L]], %[[C]] : memref<4xi32, "local">, i32
