// RUN: tilec-opt --spirv-round-half-ops --split-input-file %s | FileCheck %s

// A float16 chain, (x * f - c) - z: each op is the float32 op of its widened operands, rounded
// to float16 before the next reads it, so a driver cannot take z into the first difference;
// the fast-math flags stay on the float32 op.
// CHECK-LABEL: gpu.func @chain
// CHECK: %[[X:.*]] = arith.extf %arg0 : f16 to f32
// CHECK: %[[F:.*]] = arith.extf %arg1 : f16 to f32
// CHECK: %[[PRODUCT:.*]] = arith.mulf %[[X]], %[[F]] fastmath<contract> : f32
// CHECK: %[[ROUNDED:.*]] = arith.truncf %[[PRODUCT]] : f32 to f16
// CHECK: %[[P:.*]] = arith.extf %[[ROUNDED]] : f16 to f32
// CHECK: arith.subf %[[P]], %{{.*}} : f32
// CHECK: %[[FIRST:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[D:.*]] = arith.extf %[[FIRST]] : f16 to f32
// CHECK: %[[Z:.*]] = arith.extf %arg2 : f16 to f32
// CHECK: %[[SECOND:.*]] = arith.subf %[[D]], %[[Z]] : f32
// CHECK: %[[RESULT:.*]] = arith.truncf %[[SECOND]] : f32 to f16
// CHECK: memref.store %[[RESULT]]
// CHECK-NOT: arith.subf %{{.*}} : f16
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @chain(%x: f16, %f: f16, %z: f16, %out: memref<1xf16>) kernel {
      %c0 = arith.constant 0 : index
      %c = arith.constant 1.024000e+03 : f16
      %p = arith.mulf %x, %f fastmath<contract> : f16
      %d = arith.subf %p, %c : f16
      %r = arith.subf %d, %z : f16
      memref.store %r, %out[%c0] : memref<1xf16>
      gpu.return
    }
  }
}

// -----

// A T.float16x2 pair: the same on vector<2xf16>. float32 arithmetic, a division and a
// float16 maximum (exact, or not a chain a driver reassociates) are left alone.
// CHECK-LABEL: gpu.func @pairs_and_others
// CHECK: arith.extf %arg0 : vector<2xf16> to vector<2xf32>
// CHECK: arith.extf %arg1 : vector<2xf16> to vector<2xf32>
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK: arith.truncf %[[SUM]] : vector<2xf32> to vector<2xf16>
// CHECK: arith.addf %arg2, %arg2 : f32
// CHECK: arith.divf %arg3, %arg3 : f16
// CHECK: arith.maximumf %arg3, %arg3 : f16
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @pairs_and_others(%a: vector<2xf16>, %b: vector<2xf16>, %w: f32, %h: f16,
                               %out: memref<1xvector<2xf16>>, %wide: memref<1xf32>,
                               %half: memref<2xf16>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %s = arith.addf %a, %b : vector<2xf16>
      memref.store %s, %out[%c0] : memref<1xvector<2xf16>>
      %t = arith.addf %w, %w : f32
      memref.store %t, %wide[%c0] : memref<1xf32>
      %q = arith.divf %h, %h : f16
      memref.store %q, %half[%c0] : memref<2xf16>
      %m = arith.maximumf %h, %h : f16
      memref.store %m, %half[%c1] : memref<2xf16>
      gpu.return
    }
  }
}
