// RUN: tilec-opt --place-ascend-buffers %s --split-input-file --verify-diagnostics
// What place-ascend-buffers rejects: uses one Ascend memory cannot serve.

// The vector unit reads an accumulator only after its last gemm (it travels to UB through
// global memory once): a read between two gemms into it.
func.func @read_between_gemms(%A: memref<64x32xf16>, %B: memref<32x64xf16>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %acc = tile.alloc : memref<64x64xf32, "fragment">
    tile.gemm %a, %b, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      // expected-error @+1 {{memref.load uses a gemm accumulator that a later tile.gemm accumulates into; on Ascend it lives in L0C, which the vector unit reads only after the last gemm (through global memory)}}
      %x = memref.load %acc[%i, %j] : memref<64x64xf32, "fragment">
    }
    tile.gemm %a, %b, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}

// -----

// The vector unit does not read L1 either: a T.Parallel over a gemm operand.
func.func @vector_reads_operand(%A: memref<64x32xf16>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %acc = tile.alloc : memref<64x64xf32, "fragment">
    tile.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, "shared">
    tile.parallel [64, 32] {
    ^bb0(%i: index, %j: index):
      // expected-error @+1 {{memref.load uses a gemm operand; on Ascend it lives in L1, which the vector unit does not read}}
      %x = memref.load %a[%i, %j] : memref<64x32xf16, "shared">
    }
    tile.gemm %a, %b, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}
