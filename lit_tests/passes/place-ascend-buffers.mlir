// RUN: tilec-opt --place-ascend-buffers %s --split-input-file | FileCheck %s
// place-ascend-buffers: a gemm's operands in L1 (A1, B1), its accumulator in L0C (CO1), every
// other tile buffer in the Unified Buffer (VECCALC).

// CHECK-LABEL: func.func @gemm
// CHECK: tile.alloc {tile.ascend_position = "A1"} : memref<64x32xf16, "shared">
// CHECK: tile.alloc {tile.ascend_position = "B1"} : memref<32x64xf16, "shared">
// CHECK: tile.alloc {tile.ascend_position = "CO1"} : memref<64x64xf32, "fragment">
// CHECK: tile.alloc {tile.ascend_position = "VECCALC"} : memref<64xf32, "fragment">
func.func @gemm(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %acc = tile.alloc : memref<64x64xf32, "fragment">
    %row = tile.alloc : memref<64xf32, "fragment">
    tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
    tile.fill %row, %zero : memref<64xf32, "fragment">, f32
    tile.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, "shared">
    tile.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, "shared">
    tile.gemm %a, %b, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
  }
  return
}

// -----

// An f32 accumulator converted into an f16 fragment only to be copied out (what T.copy of the
// accumulator into an f16 tensor makes): the Fixpipe converts, so the fragment is "FIX" and
// the T.Parallel is marked to emit nothing.
// CHECK-LABEL: func.func @converted_out
// CHECK: tile.alloc {tile.ascend_position = "CO1"} : memref<64x64xf32, "fragment">
// CHECK: tile.alloc {tile.ascend_position = "FIX"} : memref<64x64xf16, "fragment">
// CHECK: tile.parallel [64, 64] attributes {tile.ascend_fixpipe}
func.func @converted_out(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf16>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %acc = tile.alloc : memref<64x64xf32, "fragment">
    tile.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, "shared">
    tile.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, "shared">
    tile.gemm %a, %b, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    %h = tile.alloc : memref<64x64xf16, "fragment">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %acc[%i, %j] : memref<64x64xf32, "fragment">
      %y = arith.truncf %x : f32 to f16
      memref.store %y, %h[%i, %j] : memref<64x64xf16, "fragment">
    }
    tile.copy %h[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf16, "fragment"> to memref<64x64xf16>
  }
  return
}

// -----

// An epilogue after the last gemm: the accumulator stays in L0C and is marked to travel to UB
// through global memory.
// CHECK-LABEL: func.func @epilogue
// CHECK: tile.alloc {tile.ascend_position = "CO1", tile.ascend_through_gm} : memref<64x64xf32, "fragment">
func.func @epilogue(%C: memref<64x64xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %acc = tile.alloc : memref<64x64xf32, "fragment">
    tile.gemm %a, %b, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %acc[%i, %j] : memref<64x64xf32, "fragment">
      %y = arith.maximumf %x, %zero : f32
      memref.store %y, %acc[%i, %j] : memref<64x64xf32, "fragment">
    }
    tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
  }
  return
}
