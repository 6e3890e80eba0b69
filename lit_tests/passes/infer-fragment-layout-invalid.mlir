// RUN: not tilec-opt --infer-fragment-layout %s 2>&1 | FileCheck %s

// One fragment cannot be a gemm accumulator and, in another gemm, an A operand laid out
// along that gemm's rows.
// CHECK: error: a fragment is used with two different thread layouts
func.func @conflict(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf32, "shared">
    %b = tile.alloc : memref<32x64xf32, "shared">
    %b2 = tile.alloc : memref<64x64xf32, "shared">
    %x = tile.alloc : memref<64x64xf32, "fragment">
    %y = tile.alloc : memref<64x64xf32, "fragment">
    tile.gemm %a, %b, %x : memref<64x32xf32, "shared">, memref<32x64xf32, "shared">, memref<64x64xf32, "fragment">
    tile.gemm %x, %b2, %y : memref<64x64xf32, "fragment">, memref<64x64xf32, "shared">, memref<64x64xf32, "fragment">
  }
  return
}
