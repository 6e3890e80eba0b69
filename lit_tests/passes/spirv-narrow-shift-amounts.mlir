// RUN: tilec-opt --spirv-narrow-shift-amounts --split-input-file %s | FileCheck %s

// A 64-bit shift's constant amount becomes a 32-bit constant, a computed one an OpUConvert;
// the shifted value keeps its 64 bits.
// CHECK-LABEL: spirv.func @shifts64
// CHECK-DAG: %[[C32:.*]] = spirv.Constant 32 : i32
// CHECK: spirv.ShiftRightLogical %arg0, %[[C32]] : i64, i32
// CHECK: %[[NARROW:.*]] = spirv.UConvert %arg1 : i64 to i32
// CHECK: spirv.ShiftLeftLogical %{{.*}}, %[[NARROW]] : i64, i32
// CHECK: %[[NARROW2:.*]] = spirv.UConvert %arg1 : i64 to i32
// CHECK: spirv.ShiftRightArithmetic %{{.*}}, %[[NARROW2]] : i64, i32
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader, Int64], []> {
  spirv.func @shifts64(%x: i64, %n: i64) -> i64 "None" {
    %c32 = spirv.Constant 32 : i64
    %a = spirv.ShiftRightLogical %x, %c32 : i64, i64
    %b = spirv.ShiftLeftLogical %a, %n : i64, i64
    %c = spirv.ShiftRightArithmetic %b, %n : i64, i64
    spirv.ReturnValue %c : i64
  }
}

// -----

// 32-bit shifts (and a 32-bit amount of a 64-bit shift) are left as they are.
// CHECK-LABEL: spirv.func @shifts32
// CHECK-NOT: spirv.UConvert
// CHECK: spirv.ShiftRightLogical %arg0, %arg1 : i32, i32
// CHECK: spirv.ShiftLeftLogical %arg2, %arg1 : i64, i32
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader, Int64], []> {
  spirv.func @shifts32(%x: i32, %n: i32, %y: i64) -> i64 "None" {
    %a = spirv.ShiftRightLogical %x, %n : i32, i32
    %b = spirv.ShiftLeftLogical %y, %n : i64, i32
    spirv.ReturnValue %b : i64
  }
}
