// RUN: tilec-opt --check-parallel-updates %s --split-input-file --verify-diagnostics
// What check-parallel-updates rejects: a T.Parallel read-modify-write at an index that leaves
// out one of the loop's variables (extent > 1), a reduction the points would run at once.

// `acc[j] += tile[i, j]` under a bound on i (runtime_slices' varlen_sum): a sum over i.
func.func @sum_over_rows(%n: index) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %tile = tile.alloc : memref<8x5xf32, "fragment">
    %acc = tile.alloc : memref<5xf32, "fragment">
    tile.parallel [8, 5] {
    ^bb0(%i: index, %j: index):
      %inside = arith.cmpi slt, %i, %n : index
      scf.if %inside {
        %old = memref.load %acc[%j] : memref<5xf32, "fragment">
        %x = memref.load %tile[%i, %j] : memref<8x5xf32, "fragment">
        %sum = arith.addf %old, %x : f32
        // expected-error @+1 {{T.Parallel updates a fragment element it reads at an index that leaves out its first variable (extent 8)}}
        memref.store %sum, %acc[%j] : memref<5xf32, "fragment">
      }
    }
  }
  return
}

// -----

// A running max over a shared buffer: `m[j] = max(m[j], x[i, j])`.
func.func @max_update(%X: memref<8x4xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %m = tile.alloc : memref<4xf32, "shared">
    tile.parallel [8, 4] {
    ^bb0(%i: index, %j: index):
      %old = memref.load %m[%j] : memref<4xf32, "shared">
      %x = memref.load %X[%i, %j] : memref<8x4xf32>
      %new = arith.maximumf %old, %x : f32
      // expected-error @+1 {{T.Parallel updates a shared buffer element}}
      memref.store %new, %m[%j] : memref<4xf32, "shared">
    }
  }
  return
}

// -----

// `out[i] = out[i] * s + x[i, j]` on a tensor: a recurrence over j (the second variable).
func.func @scaled_update(%X: memref<8x4xf32>, %Out: memref<8xf32>, %s: f32)
    attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    tile.parallel [8, 4] {
    ^bb0(%i: index, %j: index):
      %old = memref.load %Out[%i] : memref<8xf32>
      %x = memref.load %X[%i, %j] : memref<8x4xf32>
      %scaled = arith.mulf %old, %s : f32
      %new = arith.addf %scaled, %x : f32
      // expected-error @+1 {{T.Parallel updates a tensor element it reads at an index that leaves out its second variable (extent 4)}}
      memref.store %new, %Out[%i] : memref<8xf32>
    }
  }
  return
}

// -----

// `total -= x[i]` into a T.alloc_var: every variable left out.
func.func @var_total(%X: memref<8xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %total = tile.alloc : memref<1xf32, "var">
    tile.parallel [8] {
    ^bb0(%i: index):
      %old = memref.load %total[%c0] : memref<1xf32, "var">
      %x = memref.load %X[%i] : memref<8xf32>
      %new = arith.subf %old, %x : f32
      // expected-error @+1 {{T.Parallel updates a T.alloc_var element}}
      memref.store %new, %total[%c0] : memref<1xf32, "var">
    }
  }
  return
}

// -----

// A T.Parallel nested in another: the inner update leaves out the outer loop's variable.
func.func @nested(%X: memref<8x4xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %acc = tile.alloc : memref<4xf32, "fragment">
    tile.parallel [8] {
    ^bb0(%i: index):
      tile.parallel [4] {
      ^bb0(%j: index):
        %old = memref.load %acc[%j] : memref<4xf32, "fragment">
        %x = memref.load %X[%i, %j] : memref<8x4xf32>
        %sum = arith.addf %old, %x : f32
        // expected-error @+1 {{leaves out the first variable of the T.Parallel at line 97 (extent 8)}}
        memref.store %sum, %acc[%j] : memref<4xf32, "fragment">
      }
    }
  }
  return
}

// -----

// `if i < 4` bounds i but does not pin it: four points still share each element.
func.func @bounded_not_pinned(%X: memref<8x4xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c4 = arith.constant 4 : index
    %acc = tile.alloc : memref<4xf32, "fragment">
    tile.parallel [8, 4] {
    ^bb0(%i: index, %j: index):
      %low = arith.cmpi slt, %i, %c4 : index
      scf.if %low {
        %old = memref.load %acc[%j] : memref<4xf32, "fragment">
        %x = memref.load %X[%i, %j] : memref<8x4xf32>
        %sum = arith.addf %old, %x : f32
        // expected-error @+1 {{leaves out its first variable}}
        memref.store %sum, %acc[%j] : memref<4xf32, "fragment">
      }
    }
  }
  return
}

// -----

// `if i == 0` pins i, but a fragment's element is each thread's copy: the threads of the other
// i points would keep their old copies.
func.func @pinned_fragment(%X: memref<8x4xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %acc = tile.alloc : memref<4xf32, "fragment">
    tile.parallel [8, 4] {
    ^bb0(%i: index, %j: index):
      %first = arith.cmpi eq, %i, %c0 : index
      scf.if %first {
        %old = memref.load %acc[%j] : memref<4xf32, "fragment">
        %x = memref.load %X[%i, %j] : memref<8x4xf32>
        %sum = arith.addf %old, %x : f32
        // expected-error @+1 {{T.Parallel updates a fragment element}}
        memref.store %sum, %acc[%j] : memref<4xf32, "fragment">
      }
    }
  }
  return
}

// -----

// `acc[i // 2] += x[i]`: the index depends on i, but points 0 and 1 share element 0.
func.func @pairs(%X: memref<8xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c2 = arith.constant 2 : index
    %acc = tile.alloc : memref<4xf32, "fragment">
    tile.parallel [8] {
    ^bb0(%i: index):
      %half = arith.floordivsi %i, %c2 : index
      %old = memref.load %acc[%half] : memref<4xf32, "fragment">
      %x = memref.load %X[%i] : memref<8xf32>
      %sum = arith.addf %old, %x : f32
      // expected-error @+1 {{T.Parallel updates a fragment element it reads at an index two of its points share: points (0,) and (1,) both update element (0,)}}
      memref.store %sum, %acc[%half] : memref<4xf32, "fragment">
    }
  }
  return
}

// -----

// The same under `if i % 2 == 0` into a fragment: each thread's copy of an element, so the
// threads of the odd points keep stale copies; the condition does not count there.
func.func @even_points_fragment(%X: memref<8xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %acc = tile.alloc : memref<4xf32, "fragment">
    tile.parallel [8] {
    ^bb0(%i: index):
      %odd = arith.remsi %i, %c2 : index
      %even = arith.cmpi eq, %odd, %c0 : index
      scf.if %even {
        %half = arith.divsi %i, %c2 : index
        %old = memref.load %acc[%half] : memref<4xf32, "fragment">
        %x = memref.load %X[%i] : memref<8xf32>
        %sum = arith.addf %old, %x : f32
        // expected-error @+1 {{two of its points share: points (0,) and (1,)}}
        memref.store %sum, %acc[%half] : memref<4xf32, "fragment">
      }
    }
  }
  return
}

// -----

// A plain store of a value computed from i at an index that leaves i out: the points along i
// store different values into one shared element, which lands depending on the schedule.
func.func @last_row(%X: memref<8x4xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %last = tile.alloc : memref<4xf32, "shared">
    tile.parallel [8, 4] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %X[%i, %j] : memref<8x4xf32>
      // expected-error @+1 {{T.Parallel stores into a shared buffer element at an index that leaves out its first variable (extent 8), a value computed from it}}
      memref.store %x, %last[%j] : memref<4xf32, "shared">
    }
  }
  return
}

// -----

// The same into a fragment never read in the point (no per-point temporary): each thread's
// copy of `row[j]` keeps its own point's value.
func.func @fragment_row(%X: memref<8x4xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %row = tile.alloc : memref<4xf32, "fragment">
    %two = arith.constant 2.0 : f32
    tile.parallel [8, 4] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %X[%i, %j] : memref<8x4xf32>
      %y = arith.mulf %x, %two : f32
      // expected-error @+1 {{T.Parallel stores into a fragment element at an index that leaves out its first variable (extent 8), a value computed from it}}
      memref.store %y, %row[%j] : memref<4xf32, "fragment">
    }
  }
  return
}

// -----

// `s[i // 2] = x[i]`, a plain store: points 0 and 1 both store element 0, values loaded from
// different elements (x[0], x[1]): which lands depends on the schedule.
func.func @plain_pairs(%X: memref<8xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c2 = arith.constant 2 : index
    %s = tile.alloc : memref<4xf32, "shared">
    tile.parallel [8] {
    ^bb0(%i: index):
      %half = arith.floordivsi %i, %c2 : index
      %x = memref.load %X[%i] : memref<8xf32>
      // expected-error @+1 {{T.Parallel stores into a shared buffer element at an index two of its points share, of values that differ between them: points (0,) and (1,) both store element (0,)}}
      memref.store %x, %s[%half] : memref<4xf32, "shared">
    }
  }
  return
}
