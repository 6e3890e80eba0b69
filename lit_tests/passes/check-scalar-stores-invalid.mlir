// RUN: tilec-opt --check-scalar-stores %s --split-input-file --verify-diagnostics
// What check-scalar-stores rejects: a scalar statement (outside T.Parallel) that every thread of
// the block runs into one element of shared memory or a tensor, where the result then depends
// on the number of threads or on their schedule.

// `out[bx] += s` in the kernel's body: a race between the block's threads.
func.func @read_modify_write(%X: memref<4xf32>, %Out: memref<4xf32>) attributes {tile.entry} {
  %c4 = arith.constant 4 : index
  tile.kernel grid(%c4) threads [128] {
  ^bb0(%bx: index):
    %x = memref.load %X[%bx] : memref<4xf32>
    %old = memref.load %Out[%bx] : memref<4xf32>
    %new = arith.addf %old, %x : f32
    // expected-error @+1 {{a store to one tensor element outside T.Parallel runs on each of the block's 128 threads: it reads the element and stores it back}}
    memref.store %new, %Out[%bx] : memref<4xf32>
  }
  return
}

// -----

// T.atomic_add of one value into one element: once per thread.
func.func @atomic_per_thread(%Count: memref<1xi32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [64] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %one = arith.constant 1 : i32
    // expected-error @+1 {{T.atomic_add into one tensor element outside T.Parallel runs on each of the block's 64 threads: it adds the same value once per thread}}
    tile.atomic_add %Count[%c0], %one : memref<1xi32>, i32
  }
  return
}

// -----

// A shared element read and written back in a serial loop every thread runs.
func.func @shared_counter(%Out: memref<1xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %one = arith.constant 1.0 : f32
    %s = tile.alloc : memref<1xf32, "shared">
    scf.for %k = %c0 to %c8 step %c1 {
      %old = memref.load %s[%c0] : memref<1xf32, "shared">
      %new = arith.addf %old, %one : f32
      // expected-error @+1 {{a store to one shared buffer element outside T.Parallel runs on each of the block's 32 threads}}
      memref.store %new, %s[%c0] : memref<1xf32, "shared">
    }
  }
  return
}

// -----

// The thread index stored into one element: whichever thread stores last wins.
func.func @thread_value(%Out: memref<1xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %tx = gpu.thread_id x
    %i = arith.index_cast %tx : index to i32
    %f = arith.sitofp %i : i32 to f32
    // expected-error @+1 {{stores a value that differs between the threads at an index that does not}}
    memref.store %f, %Out[%c0] : memref<1xf32>
  }
  return
}

// -----

// A thread range (`tx < 32`) still runs its scalar code on each of its threads.
func.func @thread_range(%Out: memref<1xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %one = arith.constant 1.0 : f32
    %tx = gpu.thread_id x
    %low = arith.cmpi slt, %tx, %c32 : index
    scf.if %low {
      // expected-error @+1 {{T.atomic_add into one tensor element outside T.Parallel runs on each of the 32 threads of its thread range}}
      tile.atomic_add %Out[%c0], %one : memref<1xf32>, f32
    }
  }
  return
}

// -----

// Under `tx % 32 == 0` (evaluated for every thread: 4 of the 128 run it), a read-modify-write
// of one element still races among those 4.
func.func @warp_leaders(%Out: memref<1xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %one = arith.constant 1.0 : f32
    %tx = gpu.thread_id x
    %lane = arith.remui %tx, %c32 : index
    %leader = arith.cmpi eq, %lane, %c0 : index
    scf.if %leader {
      %old = memref.load %Out[%c0] : memref<1xf32>
      %new = arith.addf %old, %one : f32
      // expected-error @+1 {{a store to one tensor element outside T.Parallel runs on each of the 4 threads its conditions select: it reads the element and stores it back}}
      memref.store %new, %Out[%c0] : memref<1xf32>
    }
  }
  return
}
