# RUN: tilec --emit=tile %s | FileCheck %s
# Scalar math (math dialect), casts, T.infinity, T.if_then_else, literal dtype promotion.
import tilec.language as T


@T.prim_func
def activations(X: T.Tensor((32,), "float16"), Y: T.Tensor((32,), "float32")):
    with T.Kernel(1, threads=32) as _:
        for i in T.Parallel(32):
            h = X[i] * 0.5
            x = h.astype(T.float32)
            y = T.exp(x) + T.exp2(x) + T.log(x) + T.log2(x) + T.sqrt(x) + T.rsqrt(x) + T.tanh(x)
            y = T.max(T.min(y, 10.0), -T.infinity("float32")) + T.abs(x) + T.sigmoid(x)
            Y[i] = T.if_then_else(x > 0, y, T.cast(i, "float32"))

# CHECK-LABEL: func.func @activations
# CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f16
# CHECK: arith.mulf %{{.*}}, %[[HALF]] : f16
# CHECK: arith.extf %{{.*}} : f16 to f32
# CHECK: math.exp %{{.*}} : f32
# CHECK: math.exp2
# CHECK: math.log
# CHECK: math.log2
# CHECK: math.sqrt
# CHECK: math.rsqrt
# CHECK: math.tanh
# CHECK: arith.minimumf
# CHECK: arith.constant 0x7F800000 : f32
# CHECK: arith.negf
# CHECK: arith.maximumf
# CHECK: math.absf
# CHECK: arith.cmpf ogt
# CHECK: arith.index_cast %{{.*}} : index to i64
# CHECK: arith.sitofp %{{.*}} : i64 to f32
# CHECK: arith.select
