// RUN: tilec-opt --insert-shared-barriers %s --split-input-file | FileCheck %s

// In a pipelined loop: a barrier before the copies (the previous iteration's gemm may still
// read the tiles) and one before the gemm (the copies must be complete); none between the two
// copies, which write different buffers.
// CHECK-LABEL: func.func @pipeline
// CHECK: tile.pipelined
// CHECK-NEXT: ^bb0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
// CHECK-NEXT: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm
func.func @pipeline(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %kt: index) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<64x32xf16, "shared">
    %bs = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    tile.pipelined %c0 to %kt step %c1 stages 2 {
    ^bb0(%k: index):
      tile.copy %A[%c0, %k] [64, 32] to %as[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
      tile.copy %B[%k, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<?x?xf16> to memref<32x64xf16, "shared">
      tile.gemm %as, %bs, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    }
  }
  return
}

// -----

// A T.Parallel writing a shared buffer, then a copy reading it: one barrier between; a copy
// of global data into fragments needs none.
// CHECK-LABEL: func.func @parallel_then_copy
// CHECK: tile.parallel
// CHECK: gpu.barrier
// CHECK-NEXT: tile.copy %{{.*}} to %arg0
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @parallel_then_copy(%A: memref<64xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [64] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %s = tile.alloc : memref<64xf32, "shared">
    %f = tile.alloc : memref<64xf32, "fragment">
    tile.parallel [64] {
    ^bb0(%i: index):
      %one = arith.constant 1.0 : f32
      memref.store %one, %s[%i] : memref<64xf32, "shared">
    }
    tile.copy %s[%c0] [64] to %A[%c0] [64] : memref<64xf32, "shared"> to memref<64xf32>
    tile.copy %A[%c0] [64] to %f[%c0] [64] : memref<64xf32> to memref<64xf32, "fragment">
  }
  return
}
