// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// Round trip of tile.kernel with one, two and three grid dimensions.

// CHECK-LABEL: func.func @grid_1d
// CHECK: tile.kernel grid(%{{.*}}) threads [128] {
// CHECK-NEXT: ^bb0(%{{.*}}: index):
func.func @grid_1d(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
  }
  return
}

// CHECK-LABEL: func.func @grid_2d
// CHECK: tile.kernel grid(%{{.*}}, %{{.*}}) threads [32, 4] {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index):
func.func @grid_2d(%x: index, %y: index) {
  tile.kernel grid(%x, %y) threads [32, 4] {
  ^bb0(%bx: index, %by: index):
  }
  return
}

// CHECK-LABEL: func.func @grid_3d
// CHECK: tile.kernel grid(%{{.*}}, %{{.*}}, %{{.*}}) threads [8, 8, 4] attributes {note = "kept"} {
func.func @grid_3d(%x: index, %y: index, %z: index) {
  tile.kernel grid(%x, %y, %z) threads [8, 8, 4] attributes {note = "kept"} {
  ^bb0(%bx: index, %by: index, %bz: index):
  }
  return
}
