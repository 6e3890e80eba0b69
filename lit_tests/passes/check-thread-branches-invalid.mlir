// RUN: tilec-opt --check-thread-branches %s --split-input-file --verify-diagnostics
// What check-thread-branches rejects: tile-wide statements under conditions that differ
// between the block's threads, other than a thread range (a multiple of the warp size).

// `tx < 1`: one thread of 128; the fragment's other 127 threads would never copy their part.
func.func @below_one(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc : memref<128xf32, "fragment">
    %tx = gpu.thread_id x
    %low = arith.cmpi slt, %tx, %c1 : index
    scf.if %low {
      // expected-error @+1 {{T.copy stands under an `if` whose condition differs between the block's threads}}
      tile.copy %A[%c0] [128] to %f[%c0] [128] : memref<128xf32> to memref<128xf32, "fragment">
    }
  }
  return
}

// -----

// `tx < 48`: not a whole number of warps.
func.func @part_of_a_warp(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c48 = arith.constant 48 : index
    %zero = arith.constant 0.0 : f32
    %f = tile.alloc : memref<128xf32, "fragment">
    %tx = gpu.thread_id x
    %low = arith.cmpi slt, %tx, %c48 : index
    scf.if %low {
      // expected-error @+1 {{T.fill (T.clear) stands under}}
      tile.fill %f, %zero : memref<128xf32, "fragment">, f32
    }
  }
  return
}

// -----

// `tx % 2 == 0`, a value derived from the thread index: every other thread.
func.func @even_threads(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %two = arith.constant 2.0 : f32
    %f = tile.alloc : memref<128xf32, "fragment">
    %tx = gpu.thread_id x
    %odd = arith.remsi %tx, %c2 : index
    %even = arith.cmpi eq, %odd, %c0 : index
    scf.if %even {
      // expected-error @+1 {{a T.Parallel loop stands under}}
      tile.parallel [128] {
      ^bb0(%i: index):
        memref.store %two, %f[%i] : memref<128xf32, "fragment">
      }
    }
  }
  return
}

// -----

// The thread index kept in a T.alloc_var, then tested: the variable differs between threads.
func.func @through_a_variable(%A: memref<64x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : i32
    %v = tile.alloc : memref<1xi32, "var">
    %a = tile.alloc : memref<64x64xf16, "shared">
    %acc = tile.alloc : memref<64x64xf32, "fragment">
    %tx = gpu.thread_id x
    %t = arith.index_cast %tx : index to i32
    memref.store %t, %v[%c0] : memref<1xi32, "var">
    %value = memref.load %v[%c0] : memref<1xi32, "var">
    %small = arith.cmpi slt, %value, %c7 : i32
    scf.if %small {
      // expected-error @+1 {{T.gemm stands under}}
      tile.gemm %a, %a, %acc : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
    }
  }
  return
}

// -----

// A variable set under a condition on the thread index (control, not data, carries it).
func.func @set_under_a_condition(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c5 = arith.constant 5 : index
    %no = arith.constant 0 : i32
    %yes = arith.constant 1 : i32
    %v = tile.alloc : memref<1xi32, "var">
    %f = tile.alloc : memref<128xf32, "fragment">
    memref.store %no, %v[%c0] : memref<1xi32, "var">
    %tx = gpu.thread_id x
    %low = arith.cmpi ult, %tx, %c5 : index
    scf.if %low {
      memref.store %yes, %v[%c0] : memref<1xi32, "var">
    }
    %value = memref.load %v[%c0] : memref<1xi32, "var">
    %set = arith.cmpi eq, %value, %yes : i32
    scf.if %set {
      // expected-error @+1 {{T.copy stands under}}
      tile.copy %A[%c0] [128] to %f[%c0] [128] : memref<128xf32> to memref<128xf32, "fragment">
    }
  }
  return
}

// -----

// A middle range's else: threads 0-31 and 64-127 are two ranges, not one, so the `if` is
// ordinary divergent code (its then branch too).
func.func @else_of_a_middle_range(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %f = tile.alloc : memref<128xf32, "fragment">
    %tx = gpu.thread_id x
    %from = arith.cmpi sge, %tx, %c32 : index
    %below = arith.cmpi slt, %tx, %c64 : index
    %middle = arith.andi %from, %below : i1
    scf.if %middle {
      // expected-error @+1 {{T.fill (T.clear) stands under}}
      tile.fill %f, %zero : memref<128xf32, "fragment">, f32
    } else {
      tile.copy %f[%c0] [128] to %A[%c0] [128] : memref<128xf32, "fragment"> to memref<128xf32>
    }
  }
  return
}

// -----

// `tx >= 32 and tx <= 64`: [32, 65), one thread past the second warp.
func.func @one_past_a_warp(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %f = tile.alloc : memref<128xf32, "fragment">
    %tx = gpu.thread_id x
    %from = arith.cmpi sge, %tx, %c32 : index
    %upto = arith.cmpi sle, %tx, %c64 : index
    %range = arith.andi %from, %upto : i1
    scf.if %range {
      // expected-error @+1 {{T.fill (T.clear) stands under}}
      tile.fill %f, %zero : memref<128xf32, "fragment">, f32
    }
  }
  return
}

// -----

// A range inside an `if` on the thread index that is no range (`tx % 2 == 0`): divergent.
func.func @range_in_divergent_code(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %f = tile.alloc : memref<128xf32, "fragment">
    %tx = gpu.thread_id x
    %odd = arith.remsi %tx, %c2 : index
    %even = arith.cmpi eq, %odd, %c0 : index
    scf.if %even {
      %low = arith.cmpi slt, %tx, %c64 : index
      scf.if %low {
        // expected-error @+1 {{T.fill (T.clear) stands under}}
        tile.fill %f, %zero : memref<128xf32, "fragment">, f32
      }
    }
  }
  return
}

// -----

// A loop whose trip count is the thread index: each thread would run the statement a
// different number of times.
func.func @loop_over_thread_index(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc : memref<4x32xf32, "fragment">
    %s = tile.alloc : memref<4xf32, "fragment">
    %tx = gpu.thread_id x
    tile.for %c0 to %tx step %c1 {
    ^bb0(%k: index):
      // expected-error @+1 {{T.reduce stands under a loop whose bounds differ}}
      tile.reduce "sum" %f to %s dim 1 : memref<4x32xf32, "fragment"> to memref<4xf32, "fragment">
    }
  }
  return
}

// -----

// A warp shuffle's result differs between lanes.
func.func @shuffled_value(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1_i32 = arith.constant 1 : i32
    %all = arith.constant -1 : i32
    %clamp = arith.constant 31 : i32
    %f = tile.alloc : memref<128xf32, "fragment">
    %tx = gpu.thread_id x
    %t = arith.index_cast %tx : index to i32
    %moved = nvvm.shfl.sync bfly %all, %t, %c1_i32, %clamp : i32 -> i32
    %set = arith.cmpi eq, %moved, %c1_i32 : i32
    scf.if %set {
      // expected-error @+1 {{T.copy stands under}}
      tile.copy %A[%c0] [128] to %f[%c0] [128] : memref<128xf32> to memref<128xf32, "fragment">
    }
  }
  return
}

// -----

// AMD has no thread ranges: even `tx < 64` (a whole wavefront) is rejected there.
module attributes {tile.arch = "gfx942"} {
func.func @no_ranges_on_amd(%A: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %f = tile.alloc : memref<128xf32, "fragment">
    %tx = gpu.thread_id x
    %low = arith.cmpi slt, %tx, %c64 : index
    scf.if %low {
      // expected-error @+1 {{gfx942 has no thread ranges}}
      tile.copy %A[%c0] [128] to %f[%c0] [128] : memref<128xf32> to memref<128xf32, "fragment">
    }
  }
  return
}
}

// -----

// The same variable read after the range's branch: threads 0-63 wrote it, the others did not.
func.func @variable_after_a_range(%A: memref<128xf32>, %Lens: memref<4xindex>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %v = tile.alloc : memref<1xindex, "var">
    %f = tile.alloc : memref<128xf32, "fragment">
    memref.store %c0, %v[%c0] : memref<1xindex, "var">
    %tx = gpu.thread_id x
    %low = arith.cmpi slt, %tx, %c64 : index
    scf.if %low {
      %length = memref.load %Lens[%bx] : memref<4xindex>
      memref.store %length, %v[%c0] : memref<1xindex, "var">
    }
    %bound = memref.load %v[%c0] : memref<1xindex, "var">
    tile.for %c0 to %bound step %c1 {
    ^bb0(%k: index):
      // expected-error @+1 {{T.copy stands under a loop whose bounds differ}}
      tile.copy %A[%c0] [128] to %f[%c0] [128] : memref<128xf32> to memref<128xf32, "fragment">
    }
  }
  return
}
