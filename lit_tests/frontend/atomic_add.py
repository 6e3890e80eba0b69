# RUN: tilec --emit=tile %s | FileCheck %s
# T.atomic_add: the scalar element form, and the region form expanded into a tile.parallel.
import tilec.language as T


@T.prim_func
def accumulate(Out: T.Tensor((64,), "float32")):
    with T.Kernel(4, threads=16) as bx:
        part = T.alloc_fragment((16,), "float32")
        T.fill(part, 1.0)
        T.atomic_add(Out[bx], 2)
        T.atomic_add(Out[bx * 16:(bx + 1) * 16], part)

# CHECK-LABEL: func.func @accumulate
# CHECK:      ^bb0(%[[BX:.*]]: index):
# CHECK:      %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
# CHECK-NEXT: tile.atomic_add %arg0[%[[BX]]], %[[TWO]] : memref<64xf32>, f32
# CHECK:      tile.parallel [16] {
# CHECK-NEXT: ^bb0(%[[J:.*]]: index):
# CHECK-NEXT:   %[[V:.*]] = memref.load %{{.*}}[%[[J]]] : memref<16xf32, "fragment">
# CHECK-NEXT:   %[[AT:.*]] = arith.addi %{{.*}}, %[[J]] : index
# CHECK-NEXT:   tile.atomic_add %arg0[%[[AT]]], %[[V]] : memref<64xf32>, f32
