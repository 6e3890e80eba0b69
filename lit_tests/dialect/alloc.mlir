// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// Round trip of tile.alloc in each block scope.

// CHECK-LABEL: func.func @scopes
// CHECK: tile.alloc : memref<64x32xf16, "shared">
// CHECK: tile.alloc : memref<64x64xf32, "fragment">
// CHECK: tile.alloc : memref<4xbf16, "local">
// CHECK: tile.alloc : memref<1xi32, "var">
// CHECK: tile.alloc : memref<16xf8E4M3FN, "shared">
func.func @scopes(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<64x32xf16, "shared">
    %f = tile.alloc : memref<64x64xf32, "fragment">
    %l = tile.alloc : memref<4xbf16, "local">
    %v = tile.alloc : memref<1xi32, "var">
    %e = tile.alloc : memref<16xf8E4M3FN, "shared">
  }
  return
}
