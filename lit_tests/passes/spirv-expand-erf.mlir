// RUN: tilec-opt --spirv-expand-erf --split-input-file --verify-diagnostics %s | FileCheck %s

// f32: the series near zero and the exp tail beyond 0.5, one selected, the sign copied back.
// CHECK-LABEL: func.func @erf_f32
// CHECK: %[[ABS:.*]] = math.absf %arg0 : f32
// CHECK: %[[SQUARE:.*]] = arith.mulf %[[ABS]], %[[ABS]] : f32
// CHECK: %[[SERIES:.*]] = arith.mulf %[[ABS]], %{{.*}} : f32
// CHECK: arith.constant 0.327591091 : f32
// CHECK: %[[NEG:.*]] = arith.negf %[[SQUARE]] : f32
// CHECK: %[[DECAY:.*]] = math.exp %[[NEG]] : f32
// CHECK: %[[TAIL:.*]] = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: %[[LIMIT:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[NEAR:.*]] = arith.cmpf olt, %[[ABS]], %[[LIMIT]] : f32
// CHECK: %[[PICK:.*]] = arith.select %[[NEAR]], %[[SERIES]], %[[TAIL]] : f32
// CHECK: %[[ERF:.*]] = math.copysign %[[PICK]], %arg0 : f32
// CHECK: return %[[ERF]] : f32
// CHECK-NOT: math.erf
func.func @erf_f32(%x: f32) -> f32 {
  %y = math.erf %x : f32
  return %y : f32
}

// -----

// f16: computed in f32, rounded back.
// CHECK-LABEL: func.func @erf_f16
// CHECK: %[[WIDE:.*]] = arith.extf %arg0 : f16 to f32
// CHECK: math.absf %[[WIDE]] : f32
// CHECK: %[[ERF:.*]] = math.copysign %{{.*}}, %[[WIDE]] : f32
// CHECK: %[[NARROW:.*]] = arith.truncf %[[ERF]] : f32 to f16
// CHECK: return %[[NARROW]] : f16
// CHECK-NOT: math.erf
func.func @erf_f16(%x: f16) -> f16 {
  %y = math.erf %x : f16
  return %y : f16
}

// -----

// f64 needs more precision than the expansion has: an error at the op.
func.func @erf_f64(%x: f64) -> f64 {
  // expected-error @below {{T.erf of f64: the SPIR-V targets compute erf of f32 and f16 scalars only}}
  %y = math.erf %x : f64
  return %y : f64
}
