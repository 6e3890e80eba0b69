// RUN: tilec-opt --check-thread-branches %s --split-input-file | FileCheck %s
// What check-thread-branches accepts: it changes nothing.

// A branch of `if tx < 32` (a multiple of the warp size) on NVIDIA is a thread range: its tile
// statements are laid out over the threads that run it (infer-fragment-layout).
// CHECK-LABEL: func.func @thread_range
// CHECK: scf.if
// CHECK: tile.copy
// CHECK: } else {
// CHECK: tile.fill
func.func @thread_range(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [96] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %zero = arith.constant 0.0 : f32
    %f = tile.alloc : memref<128xf32, "fragment">
    %tx = gpu.thread_id x
    %low = arith.cmpi slt, %tx, %c32 : index
    scf.if %low {
      tile.copy %A[%c0] [128] to %f[%c0] [128] : memref<128xf32> to memref<128xf32, "fragment">
    } else {
      tile.fill %f, %zero : memref<128xf32, "fragment">, f32
    }
  }
  return
}

// -----

// Two-sided ranges and `elif` chains of them (TileLang's warp-specialized MLA kernels):
// `tx >= 64 and tx < 192` alone, then `if tx < 64 ... elif 64 <= tx < 160 ... else` (a branch
// nested in a range's else counts within it: [64, 160), then [160, 256)), and a range inside
// a range ([0, 32) of [0, 64)).
// CHECK-LABEL: func.func @two_sided_ranges
// CHECK-COUNT-5: tile.fill
func.func @two_sided_ranges(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [256] {
  ^bb0(%bx: index):
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c160 = arith.constant 160 : index
    %c192 = arith.constant 192 : index
    %zero = arith.constant 0.0 : f32
    %f = tile.alloc : memref<128xf32, "fragment">
    %g = tile.alloc : memref<128xf32, "fragment">
    %h = tile.alloc : memref<128xf32, "fragment">
    %k = tile.alloc : memref<128xf32, "fragment">
    %m = tile.alloc : memref<128xf32, "fragment">
    %tx = gpu.thread_id x
    %from = arith.cmpi sge, %tx, %c64 : index
    %below = arith.cmpi slt, %tx, %c192 : index
    %middle = arith.andi %from, %below : i1
    scf.if %middle {
      tile.fill %f, %zero : memref<128xf32, "fragment">, f32
    }
    %first = arith.cmpi slt, %tx, %c64 : index
    scf.if %first {
      %lowest = arith.cmpi sgt, %c32, %tx : index
      scf.if %lowest {
        tile.fill %g, %zero : memref<128xf32, "fragment">, f32
      }
      tile.fill %h, %zero : memref<128xf32, "fragment">, f32
    } else {
      %second = arith.cmpi slt, %tx, %c160 : index
      scf.if %second {
        tile.fill %k, %zero : memref<128xf32, "fragment">, f32
      } else {
        tile.fill %m, %zero : memref<128xf32, "fragment">, f32
      }
    }
  }
  return
}

// -----

// Statements of one thread under any condition on the thread index: each thread runs its own.
// CHECK-LABEL: func.func @per_thread_statements
// CHECK: scf.if
// CHECK: memref.store
func.func @per_thread_statements(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c2 = arith.constant 2 : index
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %tx = gpu.thread_id x
    %odd = arith.remsi %tx, %c2 : index
    %even = arith.cmpi eq, %odd, %c0 : index
    scf.if %even {
      memref.store %one, %A[%tx] : memref<128xf32>
    }
  }
  return
}

// -----

// A condition every thread agrees on: a block index, or a shared element read at one index
// (a flag one thread wrote before a barrier), even where a thread wrote it.
// CHECK-LABEL: func.func @uniform_conditions
// CHECK-COUNT-2: tile.copy
func.func @uniform_conditions(%A: memref<128xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %f = tile.alloc : memref<128xf32, "fragment">
    %flag = tile.alloc : memref<1xf32, "shared">
    %tx = gpu.thread_id x
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      memref.store %zero, %flag[%c0] : memref<1xf32, "shared">
    }
    gpu.barrier
    %odd_block = arith.cmpi eq, %bx, %c1 : index
    scf.if %odd_block {
      tile.copy %A[%c0] [128] to %f[%c0] [128] : memref<128xf32> to memref<128xf32, "fragment">
    }
    %value = memref.load %flag[%c0] : memref<1xf32, "shared">
    %set = arith.cmpf oeq, %value, %zero : f32
    scf.if %set {
      tile.copy %f[%c0] [128] to %A[%c0] [128] : memref<128xf32, "fragment"> to memref<128xf32>
    }
  }
  return
}

// -----

// A variable written in a thread range's branch is the same on that range's threads: a loop
// there bounded by it runs its tile statements on all of them.
// CHECK-LABEL: func.func @variable_in_a_range
// CHECK: tile.for
// CHECK: tile.copy
func.func @variable_in_a_range(%A: memref<128xf32>, %Lens: memref<4xindex>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %v = tile.alloc : memref<1xindex, "var">
    %f = tile.alloc : memref<128xf32, "fragment">
    %tx = gpu.thread_id x
    %low = arith.cmpi slt, %tx, %c64 : index
    scf.if %low {
      %length = memref.load %Lens[%bx] : memref<4xindex>
      memref.store %length, %v[%c0] : memref<1xindex, "var">
      %bound = memref.load %v[%c0] : memref<1xindex, "var">
      tile.for %c0 to %bound step %c1 {
      ^bb0(%k: index):
        tile.copy %A[%c0] [128] to %f[%c0] [128] : memref<128xf32> to memref<128xf32, "fragment">
      }
    }
  }
  return
}

// -----

// An element's atomic add is each thread's own (a histogram, TileLang's topk_selector).
// CHECK-LABEL: func.func @element_atomic_add
// CHECK: scf.if
// CHECK: tile.atomic_add
func.func @element_atomic_add(%A: memref<128xi32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c100 = arith.constant 100 : index
    %one = arith.constant 1 : i32
    %histogram = tile.alloc : memref<256xi32, "shared">
    %tx = gpu.thread_id x
    %some = arith.cmpi slt, %tx, %c100 : index
    scf.if %some {
      %bin = memref.load %A[%tx] : memref<128xi32>
      %at = arith.index_cast %bin : i32 to index
      tile.atomic_add %histogram[%at], %one : memref<256xi32, "shared">, i32
    }
  }
  return
}

// -----

// A copy into, and a fill of, a T.alloc_local buffer: each thread moves all of it on its own
// copy, so a condition on the thread index is each thread's own business.
// CHECK-LABEL: func.func @per_thread_local_copies
// CHECK: scf.if
// CHECK: tile.copy
// CHECK: tile.fill
func.func @per_thread_local_copies(%A: memref<128x8xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c100 = arith.constant 100 : index
    %zero = arith.constant 0.0 : f32
    %row = tile.alloc : memref<8xf32, "local">
    %tx = gpu.thread_id x
    %some = arith.cmpi slt, %tx, %c100 : index
    scf.if %some {
      tile.copy %A[%tx, %c0] [1, 8] to %row[%c0] [8] : memref<128x8xf32> to memref<8xf32, "local">
    } else {
      tile.fill %row, %zero : memref<8xf32, "local">, f32
    }
  }
  return
}
