// RUN: not tilec-opt --lower-sub-byte-types --split-input-file %s 2>&1 | FileCheck %s
// What lower-sub-byte-types rejects: a packed row that is not whole bytes, tile ops that do
// not move elements one by one (gemm, reduce) on sub-byte buffers, and views of them.

// CHECK: error: a buffer of i4 elements packs 2 to a byte along its last dimension, whose size must be a static multiple of 2; it is memref<4x3xi4>
func.func @odd_row(%b: memref<4x3xi4>) attributes {tile.entry} {
  return
}

// -----

// CHECK: error: 'tile.gemm' on a buffer of i4 elements is not supported by tilec
func.func @gemm(%c: memref<16x16xi32>) attributes {tile.entry} {
  %g = arith.constant 1 : index
  tile.kernel grid(%g) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<16x64xi4, "shared">
    %b = tile.alloc : memref<64x16xi4, "shared">
    %f = tile.alloc : memref<16x16xi32, "fragment">
    tile.gemm %a, %b, %f : memref<16x64xi4, "shared">, memref<64x16xi4, "shared">, memref<16x16xi32, "fragment">
  }
  return
}

// -----

// CHECK: error: 'memref.reinterpret_cast' on a buffer of i4 elements is not supported by tilec
func.func @view(%b: memref<4x8xi4>) attributes {tile.entry} {
  %g = arith.constant 1 : index
  tile.kernel grid(%g) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %v = memref.reinterpret_cast %b to offset: [0], sizes: [32], strides: [1] : memref<4x8xi4> to memref<32xi4>
    %q = memref.load %v[%c0] : memref<32xi4>
  }
  return
}
