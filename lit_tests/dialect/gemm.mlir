// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// Round trip of tile.gemm: defaults are elided, transposes / clear / policy are kept.

// CHECK-LABEL: func.func @plain
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
func.func @plain(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    tile.gemm %a, %b, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}

// CHECK-LABEL: func.func @transposed
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {clear_accum = true, policy = "full_row", transpose_a = true, transpose_b = true}
func.func @transposed(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<32x64xbf16, "shared">
    %b = tile.alloc : memref<16x32xbf16, "shared">
    %c = tile.alloc : memref<64x16xf32, "fragment">
    tile.gemm %a, %b, %c {transpose_a = true, transpose_b = true, clear_accum = true, policy = "full_row"} : memref<32x64xbf16, "shared">, memref<16x32xbf16, "shared">, memref<64x16xf32, "fragment">
  }
  return
}
