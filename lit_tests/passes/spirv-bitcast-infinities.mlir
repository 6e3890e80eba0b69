// RUN: tilec-opt --spirv-bitcast-infinities %s | FileCheck %s

// -inf (a maximum's neutral value), +inf and NaN become bitcasts of their bits; finite
// constants stay.
// CHECK-LABEL: spirv.func @neutral
// CHECK-DAG: %[[NEG:.*]] = spirv.Constant -8388608 : i32
// CHECK-DAG: spirv.Bitcast %[[NEG]] : i32 to f32
// CHECK-DAG: %[[POS:.*]] = spirv.Constant 31744 : i16
// CHECK-DAG: spirv.Bitcast %[[POS]] : i16 to f16
// CHECK-DAG: %[[NAN:.*]] = spirv.Constant 2143289344 : i32
// CHECK-DAG: spirv.Bitcast %[[NAN]] : i32 to f32
// CHECK-DAG: spirv.Constant 1.500000e+00 : f32
// CHECK-NOT: 0xFF800000
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader, Float16], []> {
  spirv.func @neutral() -> f32 "None" {
    %low = spirv.Constant 0xFF800000 : f32
    %high = spirv.Constant 0x7C00 : f16
    %nan = spirv.Constant 0x7FC00000 : f32
    %one = spirv.Constant 1.5 : f32
    %a = spirv.FAdd %low, %one : f32
    %b = spirv.FAdd %a, %nan : f32
    spirv.ReturnValue %b : f32
  }
}
