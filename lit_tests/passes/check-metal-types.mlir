// RUN: tilec-opt --check-metal-types --split-input-file --verify-diagnostics %s | FileCheck %s

// float32 and 32-bit integer values are left as they are.
// CHECK-LABEL: spirv.func @fits
// CHECK: spirv.ConvertSToF
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader], []> {
  spirv.func @fits(%out: !spirv.ptr<f32, StorageBuffer>, %n: !spirv.ptr<i32, StorageBuffer>) "None" {
    %count = spirv.Load "StorageBuffer" %n : i32
    %x = spirv.ConvertSToF %count : i32 to f32
    spirv.Store "StorageBuffer" %out, %x : f32
    spirv.Return
  }
}

// -----

// A float64 value: an error at the first op computing on one that names a line.
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader, Float64], []> {
  spirv.func @doubles(%out: !spirv.ptr<f64, StorageBuffer>, %x: f64) "None" {
    %two = spirv.Constant 2.0 : f64
    // expected-error @below {{the metal target has no float64 values: Metal has no double}}
    %y = spirv.FMul %x, %two : f64 loc("-":22:8)
    spirv.Store "StorageBuffer" %out, %y : f64 loc("-":23:8)
    spirv.Return
  }
}

// -----

// A 64-bit integer, a tensor's element or one computed in registers (an index widened before
// its conversion to a float): an error at the first op on one.
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader, Int64], []> {
  spirv.func @long_values(%n: !spirv.ptr<i32, StorageBuffer>, %out: !spirv.ptr<f32, StorageBuffer>) "None" {
    %count = spirv.Load "StorageBuffer" %n : i32
    // expected-error @below {{the metal target has no 64-bit integer values: MSL 2.1 has none}}
    %wide = spirv.SConvert %count : i32 to i64 loc("-":36:8)
    %x = spirv.ConvertSToF %wide : i64 to f32
    spirv.Store "StorageBuffer" %out, %x : f32
    spirv.Return
  }
}
