// RUN: tilec-opt --check-scalar-stores %s --split-input-file | FileCheck %s
// What check-scalar-stores accepts: it changes nothing.

// Every thread stores the same value, read from elsewhere, into one element: each store
// writes what the others write.
// CHECK-LABEL: func.func @same_value_everywhere
// CHECK: memref.store
func.func @same_value_everywhere(%X: memref<4xf32>, %Out: memref<4xf32>) attributes {tile.entry} {
  %c4 = arith.constant 4 : index
  tile.kernel grid(%c4) threads [128] {
  ^bb0(%bx: index):
    %x = memref.load %X[%bx] : memref<4xf32>
    memref.store %x, %Out[%bx] : memref<4xf32>
  }
  return
}

// -----

// A read-modify-write under `if tx == 0` (one thread) or of each thread's own element.
// CHECK-LABEL: func.func @one_thread_or_own_element
// CHECK: scf.if
// CHECK: memref.store
// CHECK: memref.store
func.func @one_thread_or_own_element(%Out: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %tx = gpu.thread_id x
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %old = memref.load %Out[%c0] : memref<128xf32>
      %new = arith.addf %old, %one : f32
      memref.store %new, %Out[%c0] : memref<128xf32>
    }
    %mine = memref.load %Out[%tx] : memref<128xf32>
    %twice = arith.addf %mine, %mine : f32
    memref.store %twice, %Out[%tx] : memref<128xf32>
  }
  return
}

// -----

// Atomics of a value that differs between the threads (each thread's contribution), and
// updates of a thread's own T.alloc_var.
// CHECK-LABEL: func.func @per_thread_contributions
// CHECK: tile.atomic_add
func.func @per_thread_contributions(%X: memref<128xf32>, %Out: memref<1xf32>)
    attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %tx = gpu.thread_id x
    %v = tile.alloc : memref<1xf32, "var">
    %x = memref.load %X[%tx] : memref<128xf32>
    %old = memref.load %v[%c0] : memref<1xf32, "var">
    %sum = arith.addf %old, %x : f32
    memref.store %sum, %v[%c0] : memref<1xf32, "var">
    %mine = memref.load %v[%c0] : memref<1xf32, "var">
    tile.atomic_add %Out[%c0], %mine : memref<1xf32>, f32
  }
  return
}

// -----

// Inside T.Parallel each point is its own (check-parallel-updates judges those); a block of one
// thread runs its scalar code once.
// CHECK-LABEL: func.func @points_and_single_thread
// CHECK: tile.parallel
// CHECK: tile.atomic_add
func.func @points_and_single_thread(%Out: memref<4xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    tile.parallel [4] {
    ^bb0(%i: index):
      %old = memref.load %Out[%i] : memref<4xf32>
      %new = arith.addf %old, %one : f32
      memref.store %new, %Out[%i] : memref<4xf32>
    }
  }
  tile.kernel grid(%c1) threads [1] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    tile.atomic_add %Out[%c0], %one : memref<4xf32>, f32
  }
  return
}

// -----

// Under a condition on a loaded value the threads that run the store are known at run time
// only: left unchecked. Under `tx < 1` exactly one thread runs it.
// CHECK-LABEL: func.func @loaded_or_single_thread_conditions
// CHECK: scf.if
// CHECK: memref.store
// CHECK: scf.if
// CHECK: memref.store
func.func @loaded_or_single_thread_conditions(%X: memref<128xf32>, %Out: memref<1xf32>)
    attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %tx = gpu.thread_id x
    %x = memref.load %X[%tx] : memref<128xf32>
    %positive = arith.cmpf ogt, %x, %zero : f32
    scf.if %positive {
      %old = memref.load %Out[%c0] : memref<1xf32>
      %new = arith.addf %old, %x : f32
      memref.store %new, %Out[%c0] : memref<1xf32>
    }
    %first = arith.cmpi ult, %tx, %c1 : index
    scf.if %first {
      %old = memref.load %Out[%c0] : memref<1xf32>
      %new = arith.addf %old, %zero : f32
      memref.store %new, %Out[%c0] : memref<1xf32>
    }
  }
  return
}
