// RUN: not tilec-opt --lower-gemm-simt %s 2>&1 | FileCheck %s
// The accumulator's layout comes from infer-fragment-layout: without it the pass stops.

// CHECK: lower-gemm-simt-invalid.mlir:11: error: run infer-fragment-layout before lower-gemm-simt
func.func @no_layout(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    tile.gemm %a, %b, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}
