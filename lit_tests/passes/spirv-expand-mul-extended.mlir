// RUN: tilec-opt --spirv-expand-mul-extended --split-input-file %s | FileCheck %s

// The low word is the wrapping product; the high word is built from 16-bit limb products
// and their carries. No mului_extended is left.
// CHECK-LABEL: func.func @wide_i32
// CHECK: %[[LOW:.*]] = arith.muli %arg0, %arg1 : i32
// CHECK-DAG: %[[H:.*]] = arith.constant 16 : i32
// CHECK-DAG: %[[MASK:.*]] = arith.constant 65535 : i32
// CHECK: %[[AL:.*]] = arith.andi %arg0, %[[MASK]] : i32
// CHECK: %[[AH:.*]] = arith.shrui %arg0, %[[H]] : i32
// CHECK: %[[BL:.*]] = arith.andi %arg1, %[[MASK]] : i32
// CHECK: %[[BH:.*]] = arith.shrui %arg1, %[[H]] : i32
// CHECK: %[[LL:.*]] = arith.muli %[[AL]], %[[BL]] : i32
// CHECK: %[[LH:.*]] = arith.muli %[[AL]], %[[BH]] : i32
// CHECK: %[[HL:.*]] = arith.muli %[[AH]], %[[BL]] : i32
// CHECK: %[[HH:.*]] = arith.muli %[[AH]], %[[BH]] : i32
// CHECK: %[[HIGH:.*]] = arith.addi %[[HH]], %{{.*}} : i32
// CHECK: return %[[LOW]], %[[HIGH]] : i32, i32
// CHECK-NOT: arith.mului_extended
func.func @wide_i32(%a: i32, %b: i32) -> (i32, i32) {
  %low, %high = arith.mului_extended %a, %b : i32
  return %low, %high : i32, i32
}

// -----

// Vectors and 64-bit words alike: 32-bit limbs of i64.
// CHECK-LABEL: func.func @wide_vector_i64
// CHECK: arith.constant dense<32> : vector<2xi64>
// CHECK: arith.constant dense<4294967295> : vector<2xi64>
// CHECK-NOT: arith.mului_extended
func.func @wide_vector_i64(%a: vector<2xi64>, %b: vector<2xi64>) -> (vector<2xi64>, vector<2xi64>) {
  %low, %high = arith.mului_extended %a, %b : vector<2xi64>
  return %low, %high : vector<2xi64>, vector<2xi64>
}
