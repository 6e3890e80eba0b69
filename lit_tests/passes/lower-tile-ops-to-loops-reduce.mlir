// RUN: tilec-opt --lower-tile-ops-to-loops %s --split-input-file | FileCheck %s
// tile.reduce: the first element along `dim` starts the accumulator (no identity needed);
// without `clear` the destination's value does.

// CHECK-LABEL: func.func @max_rows
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[FIRST:.*]] = memref.load %[[SRC:.*]][%[[I]], %{{.*}}] : memref<4x8xf32, "fragment">
// CHECK: %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[FIRST]]) -> (f32) {
// CHECK: %[[X:.*]] = memref.load %[[SRC]][%[[I]], %[[K]]]
// CHECK: %[[M:.*]] = arith.maximumf %[[ACC]], %[[X]] : f32
// CHECK: scf.yield %[[M]]
// CHECK: memref.store %[[R]], %{{.*}}[%[[I]]] : memref<4xf32, "fragment">
func.func @max_rows(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<4x8xf32, "fragment">
    %d = tile.alloc : memref<4xf32, "fragment">
    tile.reduce "max" %s to %d dim 1 : memref<4x8xf32, "fragment"> to memref<4xf32, "fragment">
  }
  return
}

// -----

// CHECK-LABEL: func.func @min_columns_keepdim
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: arith.minimumf
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[ZERO]], %[[J]]] : memref<1x8xf32, "fragment">
func.func @min_columns_keepdim(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<4x8xf32, "fragment">
    %d = tile.alloc : memref<1x8xf32, "fragment">
    tile.reduce "min" %s to %d dim 0 : memref<4x8xf32, "fragment"> to memref<1x8xf32, "fragment">
  }
  return
}

// -----

// CHECK-LABEL: func.func @sum_without_clear
// CHECK: %[[OLD:.*]] = memref.load %[[DST:.*]][%{{.*}}] : memref<4xf16, "fragment">
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[OLD]]) -> (f16) {
// CHECK: arith.addf %[[ACC]], %{{.*}} : f16
func.func @sum_without_clear(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<4x8xf16, "fragment">
    %d = tile.alloc : memref<4xf16, "fragment">
    tile.reduce "sum" %s to %d dim 1 {clear = false} : memref<4x8xf16, "fragment"> to memref<4xf16, "fragment">
  }
  return
}

// -----

// CHECK-LABEL: func.func @abs_kinds
// CHECK: math.absf
// CHECK: arith.addf
// CHECK: math.absf
// CHECK: arith.maximumf
func.func @abs_kinds(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<4x8xf32, "fragment">
    %d = tile.alloc : memref<4xf32, "fragment">
    tile.reduce "abssum" %s to %d dim 1 : memref<4x8xf32, "fragment"> to memref<4xf32, "fragment">
    tile.reduce "absmax" %s to %d dim 1 : memref<4x8xf32, "fragment"> to memref<4xf32, "fragment">
  }
  return
}

// -----

// Integers use the signed integer forms.
// CHECK-LABEL: func.func @integer_kinds
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: math.absi
// CHECK: arith.addi
func.func @integer_kinds(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<4x8xi32, "fragment">
    %d = tile.alloc : memref<8xi32, "fragment">
    tile.reduce "max" %s to %d dim 0 : memref<4x8xi32, "fragment"> to memref<8xi32, "fragment">
    tile.reduce "min" %s to %d dim 0 : memref<4x8xi32, "fragment"> to memref<8xi32, "fragment">
    tile.reduce "abssum" %s to %d dim 0 : memref<4x8xi32, "fragment"> to memref<8xi32, "fragment">
  }
  return
}

// -----

// umax / umin (an unsigned dtype's T.reduce_max / T.reduce_min): memrefs' integers are
// signless, so the kind picks the unsigned comparison (maxsi would take 0x80000000 as the
// most negative value).
// CHECK-LABEL: func.func @unsigned_kinds
// CHECK: arith.maxui %{{.*}}, %{{.*}} : i32
// CHECK-NOT: arith.maxsi
// CHECK: arith.minui %{{.*}}, %{{.*}} : i8
// CHECK-NOT: arith.minsi
func.func @unsigned_kinds(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<4x8xi32, "fragment">
    %d = tile.alloc : memref<4xi32, "fragment">
    tile.reduce "umax" %s to %d dim 1 : memref<4x8xi32, "fragment"> to memref<4xi32, "fragment">
    %b = tile.alloc : memref<4x8xi8, "fragment">
    %e = tile.alloc : memref<4xi8, "fragment">
    tile.reduce "umin" %b to %e dim 1 : memref<4x8xi8, "fragment"> to memref<4xi8, "fragment">
  }
  return
}
