// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// Round trip of tile.reduce: every kind (umax / umin: integers compared as unsigned), either
// dim, clear on and off.

// CHECK-LABEL: func.func @reductions
// CHECK: tile.reduce "max" %{{.*}} to %{{.*}} dim 1 : memref<64x32xf32, "fragment"> to memref<64xf32, "fragment">
// CHECK: tile.reduce "min" %{{.*}} to %{{.*}} dim 0 : memref<64x32xf32, "fragment"> to memref<32xf32, "fragment">
// CHECK: tile.reduce "sum" %{{.*}} to %{{.*}} dim 1 {clear = false}
// CHECK: tile.reduce "abssum" %{{.*}} to %{{.*}} dim 1 : memref<64x32xf32, "fragment"> to memref<64x1xf32, "fragment">
// CHECK: tile.reduce "absmax" %{{.*}} to %{{.*}} dim 0
// CHECK: tile.reduce "umax" %{{.*}} to %{{.*}} dim 1 : memref<64x32xi32, "fragment"> to memref<64xi32, "fragment">
// CHECK: tile.reduce "umin" %{{.*}} to %{{.*}} dim 1 {clear = false} : memref<64x32xi32, "fragment">
func.func @reductions(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %src = tile.alloc : memref<64x32xf32, "fragment">
    %rows = tile.alloc : memref<64xf32, "fragment">
    %cols = tile.alloc : memref<32xf32, "fragment">
    %rows2 = tile.alloc : memref<64x1xf32, "fragment">
    tile.reduce "max" %src to %rows dim 1 : memref<64x32xf32, "fragment"> to memref<64xf32, "fragment">
    tile.reduce "min" %src to %cols dim 0 : memref<64x32xf32, "fragment"> to memref<32xf32, "fragment">
    tile.reduce "sum" %src to %rows dim 1 {clear = false} : memref<64x32xf32, "fragment"> to memref<64xf32, "fragment">
    tile.reduce "abssum" %src to %rows2 dim 1 : memref<64x32xf32, "fragment"> to memref<64x1xf32, "fragment">
    tile.reduce "absmax" %src to %cols dim 0 : memref<64x32xf32, "fragment"> to memref<32xf32, "fragment">
    %words = tile.alloc : memref<64x32xi32, "fragment">
    %word_rows = tile.alloc : memref<64xi32, "fragment">
    tile.reduce "umax" %words to %word_rows dim 1 : memref<64x32xi32, "fragment"> to memref<64xi32, "fragment">
    tile.reduce "umin" %words to %word_rows dim 1 {clear = false} : memref<64x32xi32, "fragment"> to memref<64xi32, "fragment">
  }
  return
}
