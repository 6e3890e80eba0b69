// RUN: tilec-opt --expand-narrow-float-conversions %s --split-input-file | FileCheck %s
// Float8 conversions become a table lookup (extf) and integer rounding (truncf); bf16 ones
// with a side other than f32 go through f32.

// The table, printed as hex: +0, then 2^-9 (0x3B000000) for the smallest subnormal ...
// CHECK: memref.global "private" constant @__tilec_f8e4m3fn_to_f32 : memref<256xf32> = dense<"0x000000000000003B
// CHECK-LABEL: func.func @extend
// CHECK: %[[TABLE:.*]] = memref.get_global @__tilec_f8e4m3fn_to_f32 : memref<256xf32>
// CHECK: %[[BITS:.*]] = arith.bitcast %arg0 : f8E4M3FN to i8
// CHECK: %[[INDEX:.*]] = arith.index_castui %[[BITS]] : i8 to index
// CHECK: %[[F32:.*]] = memref.load %[[TABLE]][%[[INDEX]]] : memref<256xf32>
// CHECK: %[[WIDE:.*]] = memref.load
// CHECK: %[[F64:.*]] = arith.extf %[[WIDE]] : f32 to f64
// CHECK: return %[[F32]], %[[F64]]
func.func @extend(%x: f8E4M3FN) -> (f32, f64) {
  %a = arith.extf %x : f8E4M3FN to f32
  %b = arith.extf %x : f8E4M3FN to f64
  return %a, %b : f32, f64
}

// -----

// E4M3FN saturates (minui with 0x7E = 126); NaN stays NaN (0x7F = 127).
// CHECK-LABEL: func.func @truncate_e4m3
// CHECK: %[[BITS:.*]] = arith.bitcast %arg0 : f32 to i32
// CHECK: arith.minui %{{.*}}, %{{.*}} : i32
// CHECK: %[[BYTE:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK: %[[F8:.*]] = arith.bitcast %[[BYTE]] : i8 to f8E4M3FN
// CHECK: return %[[F8]]
// CHECK-NOT: arith.truncf
func.func @truncate_e4m3(%x: f32) -> f8E4M3FN {
  %t = arith.truncf %x : f32 to f8E4M3FN
  return %t : f8E4M3FN
}

// -----

// E5M2 overflows to inf (0x7C = 124); a wider source goes through f32 first.
// CHECK-LABEL: func.func @truncate_e5m2_from_f16
// CHECK: arith.extf %arg0 : f16 to f32
// CHECK: arith.constant 124 : i32
// CHECK: arith.bitcast %{{.*}} : i8 to f8E5M2
func.func @truncate_e5m2_from_f16(%x: f16) -> f8E5M2 {
  %t = arith.truncf %x : f16 to f8E5M2
  return %t : f8E5M2
}

// -----

// Conversions between other types are left alone.
// CHECK-LABEL: func.func @other_types
// CHECK-NEXT: arith.extf %arg0 : f16 to f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
func.func @other_types(%x: f16) -> bf16 {
  %a = arith.extf %x : f16 to f32
  %b = arith.truncf %a : f32 to bf16
  return %b : bf16
}

// -----

// bf16 from or to anything but f32 goes through f32 (arith-expand handles bf16 <-> f32 only).
// CHECK-LABEL: func.func @bf16_and_f64
// CHECK: %[[W:.*]] = arith.extf %arg0 : bf16 to f32
// CHECK-NEXT: %[[D:.*]] = arith.extf %[[W]] : f32 to f64
// CHECK: %[[N:.*]] = arith.truncf %[[D]] : f64 to f32
// CHECK-NEXT: %[[B:.*]] = arith.truncf %[[N]] : f32 to bf16
// CHECK: return %[[D]], %[[B]]
func.func @bf16_and_f64(%x: bf16) -> (f64, bf16) {
  %d = arith.extf %x : bf16 to f64
  %b = arith.truncf %d : f64 to bf16
  return %d, %b : f64, bf16
}
