// RUN: tilec-opt --stage-reduce-operands %s --split-input-file | FileCheck %s
// A reduction over a shared tile reads a fragment copy of it; one into a shared buffer writes
// a fragment copied back after it (filled from the buffer first when it accumulates,
// clear = false). The fragments sit at the top of the T.Kernel block. The pass rejects
// nothing: reductions between fragments stay as they are.

// CHECK-LABEL: func.func @shared_to_shared
// CHECK: tile.kernel
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[DST:.*]] = tile.alloc : memref<64xf32, "fragment">
// CHECK-NEXT: %[[SRC:.*]] = tile.alloc : memref<64x32xf32, "fragment">
// CHECK: %[[S:.*]] = tile.alloc : memref<64x32xf32, "shared">
// CHECK: %[[R:.*]] = tile.alloc : memref<64xf32, "shared">
// CHECK: tile.copy %[[S]][{{.*}}] [64, 32] to %[[SRC]][{{.*}}] [64, 32]
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: tile.copy %[[R]][{{.*}}] [64] to %[[DST]][{{.*}}] [64]
// CHECK: tile.reduce "sum" %[[SRC]] to %[[DST]] dim 1 {clear = false} : memref<64x32xf32, "fragment"> to memref<64xf32, "fragment">
// CHECK-NEXT: tile.copy %[[DST]][{{.*}}] [64] to %[[R]][{{.*}}] [64]
func.func @shared_to_shared(%X: memref<64x32xf32>, %out: memref<64xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %s = tile.alloc : memref<64x32xf32, "shared">
    %r = tile.alloc : memref<64xf32, "shared">
    tile.copy %X[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] : memref<64x32xf32> to memref<64x32xf32, "shared">
    tile.reduce "sum" %s to %r dim 1 {clear = false} : memref<64x32xf32, "shared"> to memref<64xf32, "shared">
    tile.copy %r[%c0] [64] to %out[%c0] [64] : memref<64xf32, "shared"> to memref<64xf32>
  }
  return
}

// -----

// A fragment into a shared buffer that the reduction clears: no copy in, one copy back.
// CHECK-LABEL: func.func @fragment_to_shared
// CHECK: %[[DST:.*]] = tile.alloc : memref<32xf32, "fragment">
// CHECK-NOT: to %[[DST]]
// CHECK: tile.reduce "max" %{{.*}} to %[[DST]] dim 0 : memref<64x32xf32, "fragment"> to memref<32xf32, "fragment">
// CHECK-NEXT: tile.copy %[[DST]][{{.*}}] [32] to %{{.*}}[{{.*}}] [32] : memref<32xf32, "fragment"> to memref<32xf32, "shared">
func.func @fragment_to_shared(%X: memref<64x32xf32>, %out: memref<32xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc : memref<64x32xf32, "fragment">
    %r = tile.alloc : memref<32xf32, "shared">
    tile.copy %X[%c0, %c0] [64, 32] to %f[%c0, %c0] [64, 32] : memref<64x32xf32> to memref<64x32xf32, "fragment">
    tile.reduce "max" %f to %r dim 0 : memref<64x32xf32, "fragment"> to memref<32xf32, "shared">
    tile.copy %r[%c0] [32] to %out[%c0] [32] : memref<32xf32, "shared"> to memref<32xf32>
  }
  return
}

// -----

// Between fragments: unchanged.
// CHECK-LABEL: func.func @fragments_only
// CHECK-COUNT-2: tile.alloc
// CHECK-NOT: tile.alloc
// CHECK: tile.reduce "sum" %{{.*}} to %{{.*}} dim 1 : memref<16x8xf32, "fragment"> to memref<16xf32, "fragment">
func.func @fragments_only(%X: memref<16x8xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<16x8xf32, "fragment">
    %s = tile.alloc : memref<16xf32, "fragment">
    tile.reduce "sum" %f to %s dim 1 : memref<16x8xf32, "fragment"> to memref<16xf32, "fragment">
  }
  return
}

// -----

// A reduction into a T.alloc_local buffer (the CPU target's reduce writes it whole) reduces into
// a fragment, copied into the buffer after it (infer-fragment-layout then gives every thread
// the whole result) and filled from it first when the reduction accumulates.
// CHECK-LABEL: func.func @fragment_to_local
// CHECK: %[[DST:.*]] = tile.alloc : memref<16xf32, "fragment">
// CHECK: %[[L:.*]] = tile.alloc : memref<16xf32, "local">
// CHECK: tile.copy %[[L]][{{.*}}] [16] to %[[DST]][{{.*}}] [16] : memref<16xf32, "local"> to memref<16xf32, "fragment">
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: tile.reduce "sum" %{{.*}} to %[[DST]] dim 1 {clear = false} : memref<16x32xf32, "fragment"> to memref<16xf32, "fragment">
// CHECK-NEXT: tile.copy %[[DST]][{{.*}}] [16] to %[[L]][{{.*}}] [16] : memref<16xf32, "fragment"> to memref<16xf32, "local">
func.func @fragment_to_local(%X: memref<16x32xf32>, %out: memref<16xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [64] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc : memref<16x32xf32, "fragment">
    %l = tile.alloc : memref<16xf32, "local">
    tile.copy %X[%c0, %c0] [16, 32] to %f[%c0, %c0] [16, 32] : memref<16x32xf32> to memref<16x32xf32, "fragment">
    tile.reduce "sum" %f to %l dim 1 {clear = false} : memref<16x32xf32, "fragment"> to memref<16xf32, "local">
    tile.copy %l[%c0] [16] to %out[%c0] [16] : memref<16xf32, "local"> to memref<16xf32>
  }
  return
}
