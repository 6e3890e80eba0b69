// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// Round trip of tile.pipelined with and without an explicit schedule.

// CHECK-LABEL: func.func @pipelined
// CHECK: tile.pipelined %{{.*}} to %{{.*}} step %{{.*}} stages 3 {
// CHECK: tile.pipelined %{{.*}} to %{{.*}} step %{{.*}} stages 2 attributes {order = array<i64: 1, 0>, stage = array<i64: 0, 1>} {
func.func @pipelined(%n: index, %k: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s = tile.alloc : memref<16xf32, "shared">
    %z = arith.constant 0.0 : f32
    tile.pipelined %c0 to %k step %c1 stages 3 {
    ^bb0(%i: index):
      tile.fill %s, %z : memref<16xf32, "shared">, f32
    }
    tile.pipelined %c0 to %k step %c1 stages 2 attributes {order = array<i64: 1, 0>, stage = array<i64: 0, 1>} {
    ^bb0(%i: index):
      tile.fill %s, %z : memref<16xf32, "shared">, f32
      tile.fill %s, %z : memref<16xf32, "shared">, f32
    }
  }
  return
}
