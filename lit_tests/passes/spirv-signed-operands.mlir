// RUN: tilec-opt --spirv-signed-operands --split-input-file %s | FileCheck %s

// The operands of the signed integer instructions are bitcast to signed types, their integer
// results (ConvertFToS's too) back: naga reads the signedness from the types, and MLIR's
// integers are written unsigned. A shift's count stays as it is.
// CHECK-LABEL: spirv.func @signed
// CHECK: %[[X:.*]] = spirv.Bitcast %arg0 : i32 to si32
// CHECK: spirv.ConvertSToF %[[X]] : si32 to f32
// CHECK: %[[BASE:.*]] = spirv.Bitcast %arg0 : i32 to si32
// CHECK: %[[SHIFTED:.*]] = spirv.ShiftRightArithmetic %[[BASE]], %arg1 : si32, i32
// CHECK: spirv.Bitcast %[[SHIFTED]] : si32 to i32
// CHECK: %[[A:.*]] = spirv.Bitcast %arg0 : i32 to si32
// CHECK: %[[B:.*]] = spirv.Bitcast %arg1 : i32 to si32
// CHECK: %[[Q:.*]] = spirv.SDiv %[[A]], %[[B]] : si32
// CHECK: spirv.Bitcast %[[Q]] : si32 to i32
// CHECK: %[[M:.*]] = spirv.SMod
// CHECK: spirv.Bitcast %[[M]] : si32 to i32
// CHECK: %[[V:.*]] = spirv.Bitcast %arg2 : vector<2xi32> to vector<2xsi32>
// CHECK: %[[WIDE:.*]] = spirv.SConvert %[[V]] : vector<2xsi32> to vector<2xsi64>
// CHECK: spirv.Bitcast %[[WIDE]] : vector<2xsi64> to vector<2xi64>
// CHECK: %[[TRUNCATED:.*]] = spirv.ConvertFToS %{{.*}} : f32 to si32
// CHECK: spirv.Bitcast %[[TRUNCATED]] : si32 to i32
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader, Int64], []> {
  spirv.func @signed(%x: i32, %y: i32, %v: vector<2xi32>) -> vector<2xi64> "None" {
    %f = spirv.ConvertSToF %x : i32 to f32
    %s = spirv.ShiftRightArithmetic %x, %y : i32, i32
    %q = spirv.SDiv %x, %y : i32
    %m = spirv.SMod %s, %q : i32
    %w = spirv.SConvert %v : vector<2xi32> to vector<2xi64>
    %t = spirv.ConvertFToS %f : f32 to i32
    spirv.ReturnValue %w : vector<2xi64>
  }
}

// -----

// Operands signed already, and the unsigned instructions, are left alone.
// CHECK-LABEL: spirv.func @unsigned
// CHECK-NOT: spirv.Bitcast
// CHECK: spirv.ConvertSToF %arg0 : si32 to f32
// CHECK: spirv.ConvertUToF %arg1 : i32 to f32
// CHECK: spirv.UDiv %arg1, %arg1 : i32
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader], []> {
  spirv.func @unsigned(%x: si32, %y: i32) -> f32 "None" {
    %f = spirv.ConvertSToF %x : si32 to f32
    %g = spirv.ConvertUToF %y : i32 to f32
    %q = spirv.UDiv %y, %y : i32
    spirv.ReturnValue %g : f32
  }
}
