# RUN: tilec --emit=tile %s | FileCheck %s
# ruff: noqa: E501 - CHECK lines match whole IR lines
# Per-thread intrinsics: thread/block indices, barriers, warp shuffles (CUDA's lane-group width in
# the c operand), warp reductions.
import tilec.language as T


@T.prim_func
def lanes(A: T.Tensor((4, 32), T.float16), B: T.Tensor((4, 32), T.float32)):
    with T.Kernel(2, threads=(32, 4)) as _:
        tx = T.get_thread_binding()
        ty = T.thread_binding(0, 4, thread="threadIdx.y")
        tz = T.get_thread_binding(2)
        s = T.alloc_shared((4, 32), T.float32)
        s[ty, tx] = T.shfl_xor(A[ty, tx], 3, width=8) + T.shfl_up(1.0, 2)
        T.sync_threads()
        total = T.warp_reduce_max(s[ty, 31 - tx])
        T.sync_threads(1, 64)
        if tx == tz:
            B[ty, T.get_block_binding()] = total

# CHECK-LABEL: func.func @lanes
# CHECK: tile.kernel grid(%{{.*}}) threads [32, 4] {
# CHECK-NEXT: ^bb0(%[[BX:.*]]: index):
# CHECK-NEXT: %[[TX:.*]] = gpu.thread_id x
# CHECK-NEXT: %[[TY:.*]] = gpu.thread_id y
# CHECK: %[[A:.*]] = memref.load %arg0[%[[TY]], %[[TX]]] : memref<4x32xf16>
# CHECK: %[[DELTA:.*]] = arith.constant 3 : i32
# CHECK: %[[GROUP:.*]] = arith.constant 6175 : i32
# CHECK: %[[ALL:.*]] = arith.constant -1 : i32
# CHECK: %[[WIDE:.*]] = arith.extf %[[A]] : f16 to f32
# CHECK: %[[X:.*]] = nvvm.shfl.sync bfly %[[ALL]], %[[WIDE]], %[[DELTA]], %[[GROUP]] : f32 -> f32
# CHECK: arith.truncf %[[X]] : f32 to f16
# CHECK: %[[UP:.*]] = arith.constant 0 : i32
# CHECK: nvvm.shfl.sync up %{{.*}}, %{{.*}}, %{{.*}}, %[[UP]] : f32 -> f32
# CHECK: gpu.barrier
# CHECK-COUNT-5: nvvm.shfl.sync bfly
# CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
# CHECK: %[[ZERO:.*]] = arith.constant 0 : index
# CHECK: arith.cmpi eq, %[[TX]], %[[ZERO]] : index
# CHECK: memref.store %{{.*}}, %arg1[%[[TY]], %[[BX]]]


@T.prim_func
def integer_math(A: T.Tensor((8,), T.int32), F: T.Tensor((8,), T.float32), B: T.Tensor((8,), T.uint32)):
    with T.Kernel(1, threads=8) as _:
        for i in T.Parallel(8):
            A[i] = T.floordiv(A[i], 3) + T.floormod(A[i], -3) + A[i] % 5
            B[i] = T.reinterpret(F[i], T.uint32) + T.reinterpret(T.uint32, T.Cast("int32", F[i]))

# CHECK-LABEL: func.func @integer_math
# CHECK: arith.floordivsi
# CHECK: %[[REM:.*]] = arith.remsi %[[X:.*]], %[[Y:.*]] : i32
# CHECK: %[[SIGNS:.*]] = arith.xori %[[REM]], %[[Y]] : i32
# CHECK: arith.cmpi slt, %[[SIGNS]]
# CHECK: arith.cmpi ne, %[[REM]]
# CHECK: arith.select %{{.*}}, %{{.*}}, %[[REM]] : i32
# CHECK: arith.remsi
# CHECK: arith.bitcast %{{.*}} : f32 to i32
# CHECK: arith.fptosi %{{.*}} : f32 to i32


@T.prim_func
def votes(A: T.Tensor((32,), T.float32), B: T.Tensor((32,), T.int32)):
    with T.Kernel(1, threads=32) as _:
        tx = T.get_thread_binding()
        B[tx] = T.any_sync(A[tx] < 0.0) + T.all_sync(A[tx] > 1.0)

# CHECK-LABEL: func.func @votes
# CHECK: %[[NEG:.*]] = arith.cmpf olt
# CHECK: %[[ALL:.*]] = arith.constant -1 : i32
# CHECK: %[[ANY:.*]] = nvvm.vote.sync  any %[[ALL]], %[[NEG]] -> i1
# CHECK: arith.extui %[[ANY]] : i1 to i32
# CHECK: nvvm.vote.sync  all
