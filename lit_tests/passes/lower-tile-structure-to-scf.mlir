// RUN: tilec-opt --lower-tile-structure-to-scf %s --split-input-file | FileCheck %s
// Region ops become scf.for loops; allocations become stack buffers at the function's start.

// The grid becomes a loop nest with x innermost; block indices are the induction variables.
// CHECK-LABEL: func.func @grid_2d
// CHECK-SAME: (%[[OUT:.*]]: memref<4x8xindex>, %[[GX:.*]]: index, %[[GY:.*]]: index)
// CHECK: scf.for %[[BY:.*]] = %{{.*}} to %[[GY]] step
// CHECK-NEXT: scf.for %[[BX:.*]] = %{{.*}} to %[[GX]] step
// CHECK: memref.store %[[BX]], %[[OUT]][%[[BY]], %[[BX]]]
// CHECK-NOT: tile.
func.func @grid_2d(%out: memref<4x8xindex>, %gx: index, %gy: index) {
  tile.kernel grid(%gx, %gy) threads [32, 4] {
  ^bb0(%bx: index, %by: index):
    memref.store %bx, %out[%by, %bx] : memref<4x8xindex>
  }
  return
}

// -----

// CHECK-LABEL: func.func @grid_3d
// CHECK: scf.for %[[BZ:.*]] = %{{.*}} to %arg3 step
// CHECK-NEXT: scf.for %[[BY:.*]] = %{{.*}} to %arg2 step
// CHECK-NEXT: scf.for %[[BX:.*]] = %{{.*}} to %arg1 step
// CHECK: memref.store %{{.*}}, %arg0[%[[BZ]], %[[BY]], %[[BX]]]
func.func @grid_3d(%out: memref<2x3x4xf32>, %x: index, %y: index, %z: index) {
  tile.kernel grid(%x, %y, %z) threads [1, 1, 1] {
  ^bb0(%bx: index, %by: index, %bz: index):
    %one = arith.constant 1.0 : f32
    memref.store %one, %out[%bz, %by, %bx] : memref<2x3x4xf32>
  }
  return
}

// -----

// Every tile.alloc, even inside a loop, becomes an alloca at the function's start, without
// memory space, in allocation order.
// CHECK-LABEL: func.func @allocs
// CHECK-NEXT: %[[S:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16xf16>
// CHECK-NEXT: %[[F:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x4xf32>
// CHECK-NEXT: %[[V:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1xi32>
// CHECK: scf.for
// CHECK: memref.load %[[S]]
// CHECK: memref.store %{{.*}}, %[[F]]
// CHECK: memref.store %{{.*}}, %[[V]]
// CHECK-NOT: tile.alloc
func.func @allocs(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s = tile.alloc : memref<16xf16, "shared">
    %f = tile.alloc : memref<4x4xf32, "fragment">
    %x = memref.load %s[%c0] : memref<16xf16, "shared">
    %y = arith.extf %x : f16 to f32
    memref.store %y, %f[%c0, %c0] : memref<4x4xf32, "fragment">
    tile.for %c0 to %c1 step %c1 {
    ^bb1(%i: index):
      %v = tile.alloc : memref<1xi32, "var">
      %k = arith.constant 7 : i32
      memref.store %k, %v[%c0] : memref<1xi32, "var">
    }
  }
  return
}

// -----

// A buffer past 64 KiB lives on the heap (a large fragment overflowed the stack): allocated at
// the function's start, freed before its return; small ones stay on the stack.
// CHECK-LABEL: func.func @large_alloc
// CHECK-NEXT: %[[BIG:.*]] = memref.alloc() {alignment = 64 : i64} : memref<256x128xf32>
// CHECK-NEXT: %[[SMALL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<128x128xf32>
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[BIG]]
// CHECK: memref.store %{{.*}}, %[[SMALL]]
// CHECK: memref.dealloc %[[BIG]]
// CHECK-NEXT: return
func.func @large_alloc(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %big = tile.alloc : memref<256x128xf32, "fragment">
    %small = tile.alloc : memref<128x128xf32, "fragment">
    memref.store %one, %big[%c0, %c0] : memref<256x128xf32, "fragment">
    memref.store %one, %small[%c0, %c0] : memref<128x128xf32, "fragment">
  }
  return
}

// -----

// tile.parallel becomes a loop nest over its extents.
// CHECK-LABEL: func.func @parallel
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[C4]] step
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[C8]] step
// CHECK: memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK-NOT: tile.parallel
func.func @parallel(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<4x8xf32, "fragment">
    tile.parallel [4, 8] {
    ^bb1(%i: index, %j: index):
      %v = memref.load %f[%i, %j] : memref<4x8xf32, "fragment">
      %w = arith.addf %v, %v : f32
      memref.store %w, %f[%i, %j] : memref<4x8xf32, "fragment">
    }
  }
  return
}

// -----

// tile.pipelined and tile.for (unrolled or not) become scf.for with their bounds and step;
// stages and unroll are dropped.
// CHECK-LABEL: func.func @loops
// CHECK-SAME: (%[[OUT:.*]]: memref<8xindex>, %[[N:.*]]: index, %[[LO:.*]]: index, %[[STEP:.*]]: index)
// CHECK: scf.for %[[K:.*]] = %[[LO]] to %[[N]] step %[[STEP]] {
// CHECK: memref.store %[[K]], %[[OUT]][%[[K]]]
// CHECK: scf.for %[[U:.*]] = %[[LO]] to %[[N]] step %[[STEP]] {
// CHECK: memref.store %[[U]], %[[OUT]][%[[U]]]
// CHECK-NOT: stages
// CHECK-NOT: unroll
func.func @loops(%out: memref<8xindex>, %n: index, %lo: index, %step: index) {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    tile.pipelined %lo to %n step %step stages 3 {
    ^bb1(%k: index):
      memref.store %k, %out[%k] : memref<8xindex>
    }
    tile.for %lo to %n step %step attributes {unroll} {
    ^bb1(%u: index):
      memref.store %u, %out[%u] : memref<8xindex>
    }
  }
  return
}

// -----

// T.sync_threads: the block's one thread runs its statements in order, so barriers go.
// CHECK-LABEL: func.func @barriers
// CHECK-NOT: barrier
// CHECK: memref.store
// CHECK-NOT: barrier
// CHECK: return
func.func @barriers(%out: memref<1xf32>) {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    gpu.barrier
    %one = arith.constant 1.0 : f32
    %c0 = arith.constant 0 : index
    memref.store %one, %out[%c0] : memref<1xf32>
    %id = arith.constant 1 : i32
    %count = arith.constant 64 : i32
    nvvm.barrier id = %id number_of_threads = %count
  }
  return
}

// -----

// Global element accesses whose index is not provably inside run under a guard, as on CUDA:
// an outside load gives 0, an outside store is skipped; a constant index inside is left alone.
// CHECK-LABEL: func.func @guarded_elements
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c100
// CHECK: %[[V:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK-NEXT: %[[L:.*]] = memref.load %arg0
// CHECK-NEXT: scf.yield %[[L]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: scf.yield %[[Z]] : f32
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: memref.store %[[V]], %arg1
// CHECK: memref.store %{{.*}}, %arg1[%c3] : memref<100xf32>
// CHECK-NOT: scf.if
func.func @guarded_elements(%a: memref<100xf32>, %b: memref<100xf32>, %g: index) {
  tile.kernel grid(%g) threads [16] {
  ^bb0(%bx: index):
    %c16 = arith.constant 16 : index
    %c3 = arith.constant 3 : index
    %base = arith.muli %bx, %c16 : index
    tile.parallel [16] {
    ^bb0(%i: index):
      %at = arith.addi %base, %i : index
      %v = memref.load %a[%at] : memref<100xf32>
      memref.store %v, %b[%at] : memref<100xf32>
    }
    %one = arith.constant 1.0 : f32
    memref.store %one, %b[%c3] : memref<100xf32>
  }
  return
}
