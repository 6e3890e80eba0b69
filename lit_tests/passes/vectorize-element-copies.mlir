// RUN: tilec-opt --vectorize-element-copies --split-input-file %s | FileCheck %s

// TileLang's GEMV fills its registers element by element (`for v in T.vectorized(8):
// A_local[v] = A[by, ko * 256 + tx * 8 + v]`, and the packed weight bytes the same way): each
// loop becomes one tile.copy of its run, the boxes starting where the first iteration reads
// and writes (its indices computed before the copy), 8 and 4 elements long in their last
// dimension.
// CHECK-LABEL: func.func @tilelang_gemv_loads
// CHECK-SAME: (%[[A:.*]]: memref<1x8192xf16>, %[[B:.*]]: memref<28672x4096xi8>
// CHECK: tile.kernel
// CHECK: ^bb0(%[[BX:.*]]: index, %[[BY:.*]]: index):
// CHECK: %[[AL:.*]] = tile.alloc : memref<8xf16, "local">
// CHECK: %[[BL:.*]] = tile.alloc : memref<4xi8, "local">
// CHECK: tile.for
// CHECK: ^bb0(%[[KO:.*]]: index):
// CHECK-NOT: tile.for
// CHECK: %[[STEP:.*]] = arith.muli %[[KO]], %{{.*}} : index
// CHECK: %[[K:.*]] = arith.addi %[[STEP]], %{{.*}} : index
// CHECK: %[[K0:.*]] = arith.addi %[[K]], %[[C0:.*]] : index
// CHECK: tile.copy %[[A]][%[[BY]], %[[K0]]] [1, 8] to %[[AL]][%[[C0]]] [8] : memref<1x8192xf16> to memref<8xf16, "local">
// CHECK-NOT: tile.for
// CHECK: tile.copy %[[B]][%{{.*}}, %{{.*}}] [1, 4] to %[[BL]][%{{.*}}] [4] : memref<28672x4096xi8> to memref<4xi8, "local">
// CHECK-NOT: tile.for
// CHECK-NOT: memref.load %[[A]]
// CHECK-NOT: memref.load %[[B]]
// CHECK: memref.load %[[AL]]
func.func @tilelang_gemv_loads(%a: memref<1x8192xf16>, %b: memref<28672x4096xi8>, %c: memref<1x28672xf16>) attributes {tile.entry} {
  %grid = arith.constant 7168 : index
  %one = arith.constant 1 : index
  tile.kernel grid(%grid, %one) threads [32, 4] {
  ^bb0(%bx: index, %by: index):
    %al = tile.alloc : memref<8xf16, "local">
    %bl = tile.alloc : memref<4xi8, "local">
    %tx = gpu.thread_id x
    %ty = gpu.thread_id y
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    tile.for %c0 to %c32 step %c1 {
    ^bb0(%ko: index):
      tile.for %c0 to %c8 step %c1 attributes {unroll} {
      ^bb0(%v: index):
        %c256 = arith.constant 256 : index
        %step = arith.muli %ko, %c256 : index
        %lane = arith.muli %tx, %c8 : index
        %k = arith.addi %step, %lane : index
        %kv = arith.addi %k, %v : index
        %x = memref.load %a[%by, %kv] : memref<1x8192xf16>
        memref.store %x, %al[%v] : memref<8xf16, "local">
      }
      tile.for %c0 to %c4 step %c1 attributes {unroll} {
      ^bb0(%v: index):
        %row0 = arith.muli %bx, %c4 : index
        %row = arith.addi %row0, %ty : index
        %c128 = arith.constant 128 : index
        %step = arith.muli %ko, %c128 : index
        %lane = arith.muli %tx, %c4 : index
        %k = arith.addi %step, %lane : index
        %kv = arith.addi %k, %v : index
        %x = memref.load %b[%row, %kv] : memref<28672x4096xi8>
        memref.store %x, %bl[%v] : memref<4xi8, "local">
      }
      %first = memref.load %al[%c0] : memref<8xf16, "local">
      %word = memref.load %bl[%c0] : memref<4xi8, "local">
    }
  }
  return
}

// -----

// Left alone: a loop not marked unroll (T.serial), a strided run (2 * v), a converted value,
// a store into shared memory, a row index that moves with the loop, a single trip.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tile.copy
// CHECK-COUNT-6: memref.load %{{.*}} : memref<64x64xf16>
// CHECK-NOT: tile.copy
func.func @left_alone(%a: memref<64x64xf16>) attributes {tile.entry} {
  %one = arith.constant 1 : index
  tile.kernel grid(%one) threads [32] {
  ^bb0(%bx: index):
    %l = tile.alloc : memref<8xf16, "local">
    %f = tile.alloc : memref<8xf32, "local">
    %s = tile.alloc : memref<8xf16, "shared">
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    tile.for %c0 to %c8 step %c1 {
    ^bb0(%v: index):
      %x = memref.load %a[%bx, %v] : memref<64x64xf16>
      memref.store %x, %l[%v] : memref<8xf16, "local">
    }
    tile.for %c0 to %c8 step %c1 attributes {unroll} {
    ^bb0(%v: index):
      %k = arith.muli %v, %c2 : index
      %x = memref.load %a[%bx, %k] : memref<64x64xf16>
      memref.store %x, %l[%v] : memref<8xf16, "local">
    }
    tile.for %c0 to %c8 step %c1 attributes {unroll} {
    ^bb0(%v: index):
      %x = memref.load %a[%bx, %v] : memref<64x64xf16>
      %y = arith.extf %x : f16 to f32
      memref.store %y, %f[%v] : memref<8xf32, "local">
    }
    tile.for %c0 to %c8 step %c1 attributes {unroll} {
    ^bb0(%v: index):
      %x = memref.load %a[%bx, %v] : memref<64x64xf16>
      memref.store %x, %s[%v] : memref<8xf16, "shared">
    }
    tile.for %c0 to %c8 step %c1 attributes {unroll} {
    ^bb0(%v: index):
      %x = memref.load %a[%v, %v] : memref<64x64xf16>
      memref.store %x, %l[%v] : memref<8xf16, "local">
    }
    tile.for %c0 to %c1 step %c1 attributes {unroll} {
    ^bb0(%v: index):
      %x = memref.load %a[%bx, %v] : memref<64x64xf16>
      memref.store %x, %l[%v] : memref<8xf16, "local">
    }
  }
  return
}
