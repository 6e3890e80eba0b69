// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// Round trip of tile.copy between scopes, with unit extents dropped on one side.

// CHECK-LABEL: func.func @global_to_shared
// CHECK: tile.copy %{{.*}}[%{{.*}}, %{{.*}}] [64, 32] to %{{.*}}[%{{.*}}, %{{.*}}] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
func.func @global_to_shared(%a: memref<?x?xf16>, %n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %s = tile.alloc : memref<64x32xf16, "shared">
    tile.copy %a[%bx, %c0] [64, 32] to %s[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
  }
  return
}

// CHECK-LABEL: func.func @fragment_to_global_row
// CHECK: tile.copy %{{.*}}[%{{.*}}] [32] to %{{.*}}[%{{.*}}, %{{.*}}] [1, 32] : memref<32xf32, "fragment"> to memref<8x32xf32>
func.func @fragment_to_global_row(%out: memref<8x32xf32>) {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc : memref<32xf32, "fragment">
    tile.copy %f[%c0] [32] to %out[%bx, %c0] [1, 32] : memref<32xf32, "fragment"> to memref<8x32xf32>
  }
  return
}

// CHECK-LABEL: func.func @shared_to_fragment
// CHECK: tile.copy {{.*}} : memref<16x16xbf16, "shared"> to memref<16x16xbf16, "fragment">
func.func @shared_to_fragment(%n: index) {
  tile.kernel grid(%n) threads [64] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %s = tile.alloc : memref<16x16xbf16, "shared">
    %f = tile.alloc : memref<16x16xbf16, "fragment">
    tile.copy %s[%c0, %c0] [16, 16] to %f[%c0, %c0] [16, 16] : memref<16x16xbf16, "shared"> to memref<16x16xbf16, "fragment">
  }
  return
}
