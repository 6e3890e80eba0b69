// RUN: tilec-opt --check-parallel-updates %s --split-input-file | FileCheck %s
// What check-parallel-updates accepts: it changes nothing.

// An update at an index computed from every variable (through arithmetic): each point owns
// its element.
// CHECK-LABEL: func.func @every_variable
// CHECK: tile.parallel [8, 4]
// CHECK: memref.store
func.func @every_variable(%X: memref<8x4xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c4 = arith.constant 4 : index
    %acc = tile.alloc : memref<32xf32, "fragment">
    tile.parallel [8, 4] {
    ^bb0(%i: index, %j: index):
      %row = arith.muli %i, %c4 : index
      %at = arith.addi %row, %j : index
      %old = memref.load %acc[%at] : memref<32xf32, "fragment">
      %x = memref.load %X[%i, %j] : memref<8x4xf32>
      %sum = arith.addf %old, %x : f32
      memref.store %sum, %acc[%at] : memref<32xf32, "fragment">
    }
  }
  return
}

// -----

// The variable the index leaves out has extent 1: one point per element (TileLang's
// layernorm backward, T.Parallel(1, D)).
// CHECK-LABEL: func.func @extent_one
// CHECK: memref.store
func.func @extent_one(%X: memref<1x4xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %acc = tile.alloc : memref<4xf32, "fragment">
    tile.parallel [1, 4] {
    ^bb0(%i: index, %j: index):
      %old = memref.load %acc[%j] : memref<4xf32, "fragment">
      %x = memref.load %X[%i, %j] : memref<1x4xf32>
      %sum = arith.addf %old, %x : f32
      memref.store %sum, %acc[%j] : memref<4xf32, "fragment">
    }
  }
  return
}

// -----

// A per-point temporary: written before it is read in the same point.
// CHECK-LABEL: func.func @temporary
// CHECK: memref.store
func.func @temporary(%X: memref<8xf32>, %Y: memref<8xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %t = tile.alloc : memref<1xf32, "var">
    tile.parallel [8] {
    ^bb0(%i: index):
      %x = memref.load %X[%i] : memref<8xf32>
      memref.store %x, %t[%c0] : memref<1xf32, "var">
      %v = memref.load %t[%c0] : memref<1xf32, "var">
      %twice = arith.addf %v, %v : f32
      memref.store %twice, %Y[%i] : memref<8xf32>
    }
  }
  return
}

// -----

// An update of shared memory under `if i == 0`: one point along i writes each element.
// CHECK-LABEL: func.func @pinned
// CHECK: scf.if
// CHECK: memref.store
func.func @pinned(%X: memref<8x4xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %acc = tile.alloc : memref<4xf32, "shared">
    tile.parallel [8, 4] {
    ^bb0(%i: index, %j: index):
      %first = arith.cmpi eq, %i, %c0 : index
      scf.if %first {
        %old = memref.load %acc[%j] : memref<4xf32, "shared">
        %x = memref.load %X[%i, %j] : memref<8x4xf32>
        %sum = arith.addf %old, %x : f32
        memref.store %sum, %acc[%j] : memref<4xf32, "shared">
      }
    }
  }
  return
}

// -----

// A store without a read whose value is the same at every point along the variable its index
// leaves out (each point stores what the others store), and an update at an index loaded at i
// (a scatter over i's points: the pass cannot prove two of them share an element).
// CHECK-LABEL: func.func @plain_store_and_scatter
// CHECK-COUNT-2: memref.store
func.func @plain_store_and_scatter(%X: memref<8x4xf32>, %Idx: memref<8xindex>)
    attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %last = tile.alloc : memref<4xf32, "shared">
    %hist = tile.alloc : memref<8xf32, "shared">
    tile.parallel [8, 4] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %X[%c0, %j] : memref<8x4xf32>
      memref.store %x, %last[%j] : memref<4xf32, "shared">
    }
    tile.parallel [8] {
    ^bb0(%i: index):
      %x = memref.load %X[%i, %c0] : memref<8x4xf32>
      %k = memref.load %Idx[%i] : memref<8xindex>
      %old = memref.load %hist[%k] : memref<8xf32, "shared">
      %sum = arith.addf %old, %x : f32
      memref.store %sum, %hist[%k] : memref<8xf32, "shared">
    }
  }
  return
}

// -----

// `if i % 2 == 0: s[i // 2] += x[i]` into shared memory: the condition leaves one point per
// element (the points' indices and conditions evaluated over the loop's extent).
// CHECK-LABEL: func.func @even_points
// CHECK: memref.store
func.func @even_points(%X: memref<8xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %s = tile.alloc : memref<4xf32, "shared">
    tile.parallel [8] {
    ^bb0(%i: index):
      %odd = arith.remsi %i, %c2 : index
      %even = arith.cmpi eq, %odd, %c0 : index
      scf.if %even {
        %half = arith.divsi %i, %c2 : index
        %old = memref.load %s[%half] : memref<4xf32, "shared">
        %x = memref.load %X[%i] : memref<8xf32>
        %sum = arith.addf %old, %x : f32
        memref.store %sum, %s[%half] : memref<4xf32, "shared">
      }
    }
  }
  return
}

// -----

// T.rng_init's state (tile.thread_stream): each thread's own generator, advanced by the draws
// of every point it runs, as cuRAND's per-thread stream in TileLang.
// CHECK-LABEL: func.func @thread_stream
// CHECK: tile.alloc {tile.thread_stream}
// CHECK: memref.store
func.func @thread_stream(%U: memref<8xi32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [1] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %one = arith.constant 1 : i32
    %state = tile.alloc {tile.thread_stream} : memref<1xi32, "local">
    tile.parallel [8] {
    ^bb0(%i: index):
      %old = memref.load %state[%c0] : memref<1xi32, "local">
      %next = arith.addi %old, %one : i32
      memref.store %next, %state[%c0] : memref<1xi32, "local">
      memref.store %next, %U[%i] : memref<8xi32>
    }
  }
  return
}

// -----

// Plain stores at an index two points share, of values that are the same at both: the loaded
// element is indexed by i // 2 as well, or the value is a load at an index known only at run
// time (left unchecked, as collisions through loaded indices are).
// CHECK-LABEL: func.func @same_value_pairs
// CHECK: memref.store
// CHECK: memref.store
func.func @same_value_pairs(%X: memref<8xf32>, %Idx: memref<8xindex>, %Out: memref<4xf32>)
    attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c2 = arith.constant 2 : index
    %s = tile.alloc : memref<4xf32, "shared">
    tile.parallel [8] {
    ^bb0(%i: index):
      %half = arith.floordivsi %i, %c2 : index
      %x = memref.load %X[%half] : memref<8xf32>
      memref.store %x, %s[%half] : memref<4xf32, "shared">
      %at = memref.load %Idx[%i] : memref<8xindex>
      %y = memref.load %X[%at] : memref<8xf32>
      memref.store %y, %Out[%half] : memref<4xf32>
    }
  }
  return
}
