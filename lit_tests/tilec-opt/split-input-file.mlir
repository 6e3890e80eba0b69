// RUN: tilec-opt --split-input-file %s | FileCheck %s
// RUN: tilec-opt %s | FileCheck %s --check-prefix=WHOLE
// Each chunk between `// -----` lines is its own module; without the flag, one module.

// CHECK: module {
// CHECK: func.func @first
// CHECK: // -----
// CHECK-NEXT: module {
// CHECK: func.func @second
// WHOLE: func.func @first
// WHOLE-NOT: // -----
// WHOLE: func.func @second
func.func @first() {
  return
}

// -----

func.func @second() {
  return
}
