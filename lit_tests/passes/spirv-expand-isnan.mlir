// RUN: tilec-opt --spirv-expand-isnan --split-input-file --verify-diagnostics %s | FileCheck %s

// NaN: the bits without the sign above the exponent mask; infinity: equal to it (f32, f16).
// CHECK-LABEL: spirv.func @tests
// CHECK: %[[BITS:.*]] = spirv.Bitcast %arg0 : f32 to i32
// CHECK: %[[MASK:.*]] = spirv.Constant 2147483647 : i32
// CHECK: %[[MAGNITUDE:.*]] = spirv.BitwiseAnd %[[BITS]], %[[MASK]] : i32
// CHECK: %[[EXPONENT:.*]] = spirv.Constant 2139095040 : i32
// CHECK: spirv.UGreaterThan %[[MAGNITUDE]], %[[EXPONENT]] : i32
// CHECK: %[[HALF:.*]] = spirv.Bitcast %arg1 : f16 to i16
// CHECK: spirv.BitwiseAnd %[[HALF]], %{{.*}} : i16
// CHECK: %[[INF:.*]] = spirv.Constant 31744 : i16
// CHECK: spirv.IEqual %{{.*}}, %[[INF]] : i16
// CHECK-NOT: spirv.IsNan
// CHECK-NOT: spirv.IsInf
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader, Float16, Int16], []> {
  spirv.func @tests(%x: f32, %h: f16) -> i1 "None" {
    %nan = spirv.IsNan %x : f32
    %inf = spirv.IsInf %h : f16
    %both = spirv.LogicalOr %nan, %inf : i1
    spirv.ReturnValue %both : i1
  }
}

// -----

// Vector tests are not rewritten: an error at the op.
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader], []> {
  spirv.func @vectors(%v: vector<4xf32>) -> vector<4xi1> "None" {
    // expected-error @below {{spirv.IsNan of vector<4xf32>: only f32 and f16 scalars are rewritten for WGSL}}
    %nan = spirv.IsNan %v : vector<4xf32>
    spirv.ReturnValue %nan : vector<4xi1>
  }
}
