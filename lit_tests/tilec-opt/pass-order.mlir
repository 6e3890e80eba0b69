// RUN: tilec-opt %s --lower-tile-ops-to-loops --print-ir-after-all --pass-pipeline='builtin.module(canonicalize)' --lower-tile-structure-to-scf -o %t 2>&1 | FileCheck %s --check-prefix=DUMPS
// RUN: FileCheck %s < %t
// Passes run in the order given, tilec and upstream ones mixed; -o writes the result;
// --print-ir-after-all dumps after each one (to stderr).

// DUMPS: IR Dump After lower-tile-ops-to-loops
// DUMPS: tile.kernel
// DUMPS: IR Dump After {{.*}}anonicalizer
// DUMPS: IR Dump After lower-tile-structure-to-scf
// DUMPS-NOT: tile.kernel

// CHECK-LABEL: func.func @fill
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: tile.
func.func @fill(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<4xf32, "fragment">
    %z = arith.constant 0.0 : f32
    tile.fill %f, %z : memref<4xf32, "fragment">, f32
  }
  return
}
