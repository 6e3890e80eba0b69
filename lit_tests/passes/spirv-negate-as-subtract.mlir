// RUN: tilec-opt --spirv-negate-as-subtract %s | FileCheck %s

// Integer negation (scalar and vector) becomes a subtraction from zero.
// CHECK-LABEL: spirv.func @negate
// CHECK: %[[ZERO:.*]] = spirv.Constant 0 : i32
// CHECK: spirv.ISub %[[ZERO]], %arg0 : i32
// CHECK: %[[ZEROS:.*]] = spirv.Constant dense<0> : vector<2xi32>
// CHECK: spirv.ISub %[[ZEROS]], %arg1 : vector<2xi32>
// CHECK-NOT: spirv.SNegate
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader], []> {
  spirv.func @negate(%x: i32, %v: vector<2xi32>) -> vector<2xi32> "None" {
    %n = spirv.SNegate %x : i32
    %w = spirv.SNegate %v : vector<2xi32>
    %s = spirv.CompositeConstruct %n, %n : (i32, i32) -> vector<2xi32>
    %r = spirv.IAdd %s, %w : vector<2xi32>
    spirv.ReturnValue %r : vector<2xi32>
  }
}
