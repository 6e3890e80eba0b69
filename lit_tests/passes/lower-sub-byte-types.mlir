// RUN: tilec-opt --lower-sub-byte-types --split-input-file %s | FileCheck %s

// lower-sub-byte-types: a tensor of i4 packs two to a byte along its last dimension; a load
// reads the byte at k / 2 and shifts by (k % 2) * 4, a store clears and sets its nibble with
// two atomics, skipped outside the tensor. The signature follows. The conversion to f32 is
// integer code: biased to unsigned, OR-ed into 2 ** 23's mantissa, 2 ** 23 + 8 subtracted.

// CHECK-LABEL: func.func @packed_tensor
// CHECK-SAME: (%[[B:.*]]: memref<8x16xi8>, %[[C:.*]]: memref<8x32xf32>, %[[D:.*]]: memref<8x16xi8>)
// CHECK: %[[BYTE:.*]] = arith.shrui %[[K:.*]], %{{.*}} : index
// CHECK: %[[WITHIN:.*]] = arith.andi %[[K]], %{{.*}}
// CHECK: %[[BITS:.*]] = arith.muli %[[WITHIN]], %{{.*}}
// CHECK: %[[SHIFT:.*]] = arith.index_castui %[[BITS]] : index to i8
// CHECK: %[[LOADED:.*]] = memref.load %[[B]][%{{.*}}, %[[BYTE]]] : memref<8x16xi8>
// CHECK: %[[DOWN:.*]] = arith.shrui %[[LOADED]], %[[SHIFT]] : i8
// CHECK: %[[VALUE:.*]] = arith.trunci %[[DOWN]] : i8 to i4
// CHECK: %[[BIASED:.*]] = arith.xori %[[VALUE]], %{{.*}} : i4
// CHECK: %[[WIDE:.*]] = arith.extui %[[BIASED]] : i4 to i32
// CHECK: %[[MAGIC:.*]] = arith.ori %[[WIDE]], %{{.*}} : i32
// CHECK: %[[FLOAT:.*]] = arith.bitcast %[[MAGIC]] : i32 to f32
// CHECK: arith.subf %[[FLOAT]], %{{.*}} : f32
// CHECK-NOT: sitofp
// CHECK: arith.extui %[[VALUE]] : i4 to i8
// CHECK: scf.if
// CHECK: memref.atomic_rmw andi %{{.*}}, %[[D]][%{{.*}}] : (i8, memref<8x16xi8>) -> i8
// CHECK: memref.atomic_rmw ori %{{.*}}, %[[D]][%{{.*}}] : (i8, memref<8x16xi8>) -> i8
// CHECK-NOT: i4>
func.func @packed_tensor(%b: memref<8x32xi4>, %c: memref<8x32xf32>, %d: memref<8x32xi4>) attributes {tile.entry} {
  %g = arith.constant 1 : index
  tile.kernel grid(%g) threads [128] {
  ^bb0(%bx: index):
    tile.parallel [8, 32] {
    ^bb0(%i: index, %k: index):
      %q = memref.load %b[%i, %k] : memref<8x32xi4>
      %f = arith.sitofp %q : i4 to f32
      memref.store %f, %c[%i, %k] : memref<8x32xf32>
      memref.store %q, %d[%i, %k] : memref<8x32xi4>
    }
  }
  return
}

// -----

// A copy whose boxes start and end on whole bytes copies bytes (the corner along the last
// dimension halved, a constant corner folded: the cp.async pipeline takes only constant
// shared corners); a fragment holds one element per byte, so the copy from shared becomes
// a T.Parallel over elements; a local buffer is one thread's: its stores are plain
// read-modify-writes.

// CHECK-LABEL: func.func @copies
// CHECK: %[[SHARED:.*]] = tile.alloc : memref<16x32xi8, "shared">
// CHECK: %[[FRAGMENT:.*]] = tile.alloc : memref<16x64xi8, "fragment">
// CHECK: %[[LOCAL:.*]] = tile.alloc : memref<64xi8, "local">
// CHECK: %[[HALF:.*]] = arith.shrui %{{.*}}, %{{.*}} : index
// CHECK-NOT: arith.shrui
// CHECK: tile.copy %arg0[%{{.*}}, %[[HALF]]] [16, 32] to %[[SHARED]][%{{.*}}, %[[CORNER:c0.*]]] [16, 32]
// CHECK: tile.parallel [16, 64]
// CHECK: memref.load %[[SHARED]]
// CHECK: arith.trunci %{{.*}} : i8 to i4
// CHECK: arith.extui %{{.*}} : i4 to i8
// CHECK: memref.store %{{.*}}, %[[FRAGMENT]]
// CHECK: tile.fill %[[LOCAL]], %{{.*}} : memref<64xi8, "local">, i8
// CHECK-NOT: atomic_rmw
// CHECK: memref.load %[[LOCAL]]
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK: memref.store %{{.*}}, %[[LOCAL]]
func.func @copies(%b: memref<64x128xi4>) attributes {tile.entry} {
  %g = arith.constant 2 : index
  tile.kernel grid(%g) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %k = arith.muli %bx, %c64 : index
    %shared = tile.alloc : memref<16x64xi4, "shared">
    %fragment = tile.alloc : memref<16x64xi4, "fragment">
    %local = tile.alloc : memref<128xi4, "local">
    tile.copy %b[%c0, %k] [16, 64] to %shared[%c0, %c0] [16, 64] : memref<64x128xi4> to memref<16x64xi4, "shared">
    tile.copy %shared[%c0, %c0] [16, 64] to %fragment[%c0, %c0] [16, 64] : memref<16x64xi4, "shared"> to memref<16x64xi4, "fragment">
    %seven = arith.constant 7 : i4
    tile.fill %local, %seven : memref<128xi4, "local">, i4
    %v = memref.load %fragment[%c0, %c0] : memref<16x64xi4, "fragment">
    memref.store %v, %local[%k] : memref<128xi4, "local">
  }
  return
}

// -----

// T.float4_e2m1fn: its bits are an i4, widened by placing its fields in an f32's; a conversion
// to it compares the magnitude with the midpoints between its values and sets the sign bit.

// CHECK-LABEL: func.func @float4
// CHECK: %[[NIBBLE:.*]] = arith.trunci %{{.*}} : i8 to i4
// CHECK: %[[VALUE:.*]] = arith.bitcast %[[NIBBLE]] : i4 to f4E2M1FN
// CHECK: arith.bitcast %[[VALUE]] : f4E2M1FN to i4
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK-NOT: arith.extf
// CHECK: math.absf
// CHECK-COUNT-7: arith.cmpf
// CHECK: arith.bitcast %{{.*}} : i4 to f4E2M1FN
// CHECK-NOT: arith.truncf
func.func @float4(%b: memref<4x8xf4E2M1FN>, %x: memref<4x8xf32>) attributes {tile.entry} {
  %g = arith.constant 1 : index
  tile.kernel grid(%g) threads [32] {
  ^bb0(%bx: index):
    tile.parallel [4, 8] {
    ^bb0(%i: index, %k: index):
      %q = memref.load %b[%i, %k] : memref<4x8xf4E2M1FN>
      %f = arith.extf %q : f4E2M1FN to f32
      %y = memref.load %x[%i, %k] : memref<4x8xf32>
      %s = arith.addf %f, %y : f32
      %r = arith.truncf %s : f32 to f4E2M1FN
      memref.store %r, %b[%i, %k] : memref<4x8xf4E2M1FN>
    }
  }
  return
}

// -----

// An e8m0 scale widens by moving its byte into f32's exponent field (0: 2 ** -127).

// CHECK-LABEL: func.func @e8m0
// CHECK: %[[BYTE:.*]] = arith.bitcast %{{.*}} : f8E8M0FNU to i8
// CHECK: %[[EXPONENT:.*]] = arith.extui %[[BYTE]] : i8 to i32
// CHECK: arith.shli %[[EXPONENT]], %{{.*}} : i32
// CHECK: arith.select
// CHECK: arith.select
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK-NOT: arith.extf
func.func @e8m0(%s: memref<8xf8E8M0FNU>, %out: memref<8xf32>) attributes {tile.entry} {
  %g = arith.constant 1 : index
  tile.kernel grid(%g) threads [32] {
  ^bb0(%bx: index):
    tile.parallel [8] {
    ^bb0(%i: index):
      %e = memref.load %s[%i] : memref<8xf8E8M0FNU>
      %f = arith.extf %e : f8E8M0FNU to f32
      memref.store %f, %out[%i] : memref<8xf32>
    }
  }
  return
}
