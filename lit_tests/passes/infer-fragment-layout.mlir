// RUN: tilec-opt --infer-fragment-layout %s --split-input-file | FileCheck %s

// A fragment only copied and used in T.Parallel gets 16-byte runs along its last dimension;
// the T.Parallel indexing it takes the same mapping.
// CHECK-LABEL: func.func @copy_parallel
// CHECK: tile.alloc {tile.layout = {spt = array<i64: 1, 4>, threads = 128 : i64, tpb = array<i64: 8, 16>, tstride = array<i64: 16, 1>}} : memref<64x64xf32, "fragment">
// CHECK: tile.parallel [64, 64] attributes {tile.layout = {spt = array<i64: 1, 4>, threads = 128 : i64, tpb = array<i64: 8, 16>, tstride = array<i64: 16, 1>}}
func.func @copy_parallel(%A: memref<?x?xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc : memref<64x64xf32, "fragment">
    tile.copy %A[%c0, %c0] [64, 64] to %f[%c0, %c0] [64, 64] : memref<?x?xf32> to memref<64x64xf32, "fragment">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %f[%i, %j] : memref<64x64xf32, "fragment">
      %y = arith.addf %x, %x : f32
      memref.store %y, %f[%i, %j] : memref<64x64xf32, "fragment">
    }
  }
  return
}

// -----

// A gemm accumulator: each thread owns 4x4 runs of C (8 x 16 threads); a fragment written
// from it in T.Parallel (the f16 staging buffer) follows.
// CHECK-LABEL: func.func @accumulator
// CHECK: tile.alloc {tile.layout = {spt = array<i64: 4, 4>, threads = 128 : i64, tpb = array<i64: 8, 16>, tstride = array<i64: 16, 1>}} : memref<64x64xf32, "fragment">
// CHECK: tile.alloc {tile.layout = {spt = array<i64: 4, 4>, threads = 128 : i64, tpb = array<i64: 8, 16>, tstride = array<i64: 16, 1>}} : memref<64x64xf16, "fragment">
func.func @accumulator(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    %h = tile.alloc : memref<64x64xf16, "fragment">
    tile.gemm %a, %b, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %c[%i, %j] : memref<64x64xf32, "fragment">
      %y = arith.truncf %x : f32 to f16
      memref.store %y, %h[%i, %j] : memref<64x64xf16, "fragment">
    }
  }
  return
}

// -----

// A reduce destination is its source's layout without the reduced dimension: replicated over
// the 16 threads that shared a row.
// CHECK-LABEL: func.func @row_max
// CHECK: tile.alloc {tile.layout = {spt = array<i64: 1>, threads = 128 : i64, tpb = array<i64: 8>, tstride = array<i64: 16>}} : memref<16xf32, "fragment">
// CHECK-NEXT: tile.alloc {tile.layout = {spt = array<i64: 1, 4>, threads = 128 : i64, tpb = array<i64: 8, 16>, tstride = array<i64: 16, 1>}} : memref<16x64xf32, "fragment">
func.func @row_max(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<16xf32, "fragment">
    %f = tile.alloc : memref<16x64xf32, "fragment">
    tile.reduce "max" %f to %s dim 1 : memref<16x64xf32, "fragment"> to memref<16xf32, "fragment">
  }
  return
}

// -----

// A T.Parallel touching no fragment: one point per thread per step, so consecutive threads
// read consecutive elements (coalesced scalar accesses).
// CHECK-LABEL: func.func @global_only
// CHECK: tile.parallel [32, 64] attributes {tile.layout = {spt = array<i64: 1, 1>, threads = 128 : i64, tpb = array<i64: 2, 64>, tstride = array<i64: 64, 1>}}
func.func @global_only(%A: memref<32x64xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    tile.parallel [32, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %A[%i, %j] : memref<32x64xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %A[%i, %j] : memref<32x64xf32>
    }
  }
  return
}
