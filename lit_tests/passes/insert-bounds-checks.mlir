// RUN: tilec-opt --split-input-file --insert-bounds-checks %s | FileCheck %s

// A shared buffer read at an index loaded from a tensor is tested: outside, the thread prints
// where and traps. The copy's store at a T.Parallel index inside its extent is not tested,
// nor is a global access (those are guarded elsewhere).
// CHECK-LABEL: func.func @gather
// CHECK: tile.parallel [8]
// CHECK-NOT: scf.if
// CHECK: memref.store
// CHECK: tile.parallel [16]
// CHECK: %[[I:.*]] = arith.index_cast
// CHECK: %[[N:.*]] = arith.constant 8 : index
// CHECK: %[[OUT:.*]] = arith.cmpi uge, %[[I]], %[[N]] : index
// CHECK: scf.if %[[OUT]] {
// CHECK: %[[BX:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: gpu.printf "tilec bounds check: gather.py:12: BlockIdx=(%d, %d, %d), ThreadIdx=(%d, %d, %d): read of a shared buffer of shape (8,) at index (%ld)\0A" {tile.print_threads = -1 : i64}, %[[BX]]
// CHECK: llvm.intr.trap
// CHECK: }
// CHECK: memref.load %{{.*}}[%[[I]]] : memref<8xf32, "shared">
func.func @gather(%a: memref<8xf32>, %index: memref<16xi32>, %b: memref<16xf32>, %g: index) {
  tile.kernel grid(%g) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<8xf32, "shared">
    tile.parallel [8] {
    ^bb0(%i: index):
      %v = memref.load %a[%i] : memref<8xf32>
      memref.store %v, %s[%i] : memref<8xf32, "shared">
    }
    tile.parallel [16] {
    ^bb0(%i: index):
      %k = memref.load %index[%i] : memref<16xi32>
      %j = arith.index_cast %k : i32 to index
      %v = memref.load %s[%j] : memref<8xf32, "shared"> loc("gather.py":12:5)
      memref.store %v, %b[%i] : memref<16xf32>
    }
  }
  return
}

// -----

// Interval arithmetic proves loop-index expressions inside: (i + 1) over a loop of 7 and
// (i * 2 + 1) % 4 stay in an 8-element local buffer; i + 2 over 7 may not.
// CHECK-LABEL: func.func @intervals
// CHECK-COUNT-1: gpu.printf
// CHECK-NOT: gpu.printf
func.func @intervals(%v: f32, %g: index) {
  tile.kernel grid(%g) threads [1] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c7 = arith.constant 7 : index
    %l = tile.alloc : memref<8xf32, "local">
    tile.for %c0 to %c7 step %c1 {
    ^bb0(%i: index):
      %next = arith.addi %i, %c1 : index
      memref.store %v, %l[%next] : memref<8xf32, "local">
      %twice = arith.muli %i, %c2 : index
      %odd = arith.addi %twice, %c1 : index
      %wrapped = arith.remui %odd, %c4 : index
      memref.store %v, %l[%wrapped] : memref<8xf32, "local">
      %far = arith.addi %i, %c2 : index
      memref.store %v, %l[%far] : memref<8xf32, "local">
    }
  }
  return
}
