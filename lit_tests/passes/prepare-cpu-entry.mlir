// RUN: tilec-opt --prepare-cpu-entry %s --split-input-file | FileCheck %s
// The entry gets its C symbol; half-precision scalars arrive as f32 and are truncated.

// CHECK-LABEL: func.func @tilec_kernel
// CHECK-SAME: (%[[X:.*]]: memref<?xf16>, %[[S:.*]]: f32, %[[B:.*]]: f32, %[[I:.*]]: i32)
// CHECK-NOT: tile.entry
// CHECK-NEXT: %[[S16:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT: %[[B16:.*]] = arith.truncf %[[B]] : f32 to bf16
// CHECK: memref.store %[[S16]], %[[X]]
// CHECK: arith.extf %[[B16]] : bf16 to f32
// CHECK: arith.index_cast %[[I]]
func.func @kernel(%x: memref<?xf16>, %s: f16, %b: bf16, %i: i32) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  memref.store %s, %x[%c0] : memref<?xf16>
  %e = arith.extf %b : bf16 to f32
  %j = arith.index_cast %i : i32 to index
  return
}

// -----

// Other functions become private: only the entry is exported.
// CHECK-LABEL: func.func private @helper
// CHECK-LABEL: func.func @tilec_main
func.func @helper() {
  return
}
func.func @main() attributes {tile.entry} {
  func.call @helper() : () -> ()
  return
}
