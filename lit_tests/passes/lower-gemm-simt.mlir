// RUN: tilec-opt --lower-gemm-simt --split-input-file %s | FileCheck %s
// T.gemm(transpose_B, clear_accum) becomes: zero C, then a K loop (unrolled only for fragment
// operands) around a T.Parallel over C's layout doing C[i, j] += A[i, k] * B[j, k] in float32.

// CHECK-LABEL: func.func @gemm_tb
// CHECK: %[[C:.*]] = tile.alloc {tile.layout = {{.*}}} : memref<64x64xf32, "fragment">
// CHECK-NOT: tile.gemm
// CHECK: tile.fill %[[C]], %{{.*}} : memref<64x64xf32, "fragment">, f32
// CHECK: tile.for %{{.*}} to %[[K:.*]] step %{{.*}} {
// CHECK-NEXT: ^bb0(%[[k:.*]]: index):
// CHECK-NEXT: tile.parallel [64, 64] attributes {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [1, 0], [2, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [4, 0]], warp = {{\[\[}}8, 0], [16, 0]]>} {
// CHECK-NEXT: ^bb0(%[[i:.*]]: index, %[[j:.*]]: index):
// CHECK-NEXT: %[[a:.*]] = memref.load %{{.*}}[%[[i]], %[[k]]] : memref<64x32xf16, "shared">
// CHECK-NEXT: %[[b:.*]] = memref.load %{{.*}}[%[[j]], %[[k]]] : memref<64x32xf16, "shared">
// CHECK-NEXT: %[[aw:.*]] = arith.extf %[[a]] : f16 to f32
// CHECK-NEXT: %[[bw:.*]] = arith.extf %[[b]] : f16 to f32
// CHECK-NEXT: %[[old:.*]] = memref.load %[[C]][%[[i]], %[[j]]]
// CHECK-NEXT: %[[sum:.*]] = math.fma %[[aw]], %[[bw]], %[[old]] : f32
// CHECK-NEXT: memref.store %[[sum]], %[[C]][%[[i]], %[[j]]]
func.func @gemm_tb(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<64x32xf16, "shared">
    %c = tile.alloc {tile.layout = #tile.linear<[64, 64], register = [[0, 1], [0, 2], [1, 0], [2, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<64x64xf32, "fragment">
    tile.gemm %a, %b, %c {transpose_b = true, clear_accum = true} : memref<64x32xf16, "shared">, memref<64x32xf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}

// -----

// With the opt-in tile.simt_slices_in_place: an operand copied whole from a column slice of a
// larger shared tile just before the gemm (the frontend's copy of `Q[:, 32:96]`): the gemm reads
// Q at the slice's offset, and the copy and its tile go.
// CHECK-LABEL: func.func @slice_read_in_place
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[Q:.*]] = tile.alloc : memref<64x96xf16, "shared">
// CHECK-NOT: tile.copy
// CHECK-NOT: memref<64x64xf16, "shared">
// CHECK: tile.for
// CHECK-NEXT: ^bb0(%[[k:[a-z0-9]+]]: index):
// CHECK-NEXT: tile.parallel
// CHECK-NEXT: ^bb0(%[[i:[a-z0-9]+]]: index, %[[j:[a-z0-9]+]]: index):
// CHECK-NEXT: %[[col:.*]] = arith.addi %[[C32]], %[[k]] : index
// CHECK-NEXT: memref.load %[[Q]][%[[i]], %[[col]]] : memref<64x96xf16, "shared">
// CHECK: return
module attributes {tile.simt_slices_in_place} {
  func.func @slice_read_in_place(%n: index) attributes {tile.entry} {
    tile.kernel grid(%n) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %b = tile.alloc : memref<64x64xf16, "shared">
      %q = tile.alloc : memref<64x96xf16, "shared">
      %c = tile.alloc {tile.layout = #tile.linear<[64, 64], register = [[0, 1], [0, 2], [1, 0], [2, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<64x64xf32, "fragment">
      %qs = tile.alloc : memref<64x64xf16, "shared">
      tile.copy %q[%c0, %c32] [64, 64] to %qs[%c0, %c0] [64, 64] : memref<64x96xf16, "shared"> to memref<64x64xf16, "shared">
      tile.gemm %qs, %b, %c {transpose_b = true, clear_accum = false} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
    }
    return
  }
}

// -----

// The larger tile written between the copy and the gemm: the gemm reads the copy, as written.
// CHECK-LABEL: func.func @slice_written_between
// CHECK: %[[QS:.*]] = tile.alloc : memref<64x64xf16, "shared">
// CHECK: tile.copy
// CHECK: memref.store
// CHECK: memref.load %[[QS]]
module attributes {tile.simt_slices_in_place} {
  func.func @slice_written_between(%n: index, %x: f16) attributes {tile.entry} {
    tile.kernel grid(%n) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %q = tile.alloc : memref<64x96xf16, "shared">
      %b = tile.alloc : memref<64x64xf16, "shared">
      %c = tile.alloc {tile.layout = #tile.linear<[64, 64], register = [[0, 1], [0, 2], [1, 0], [2, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<64x64xf32, "fragment">
      %qs = tile.alloc : memref<64x64xf16, "shared">
      tile.copy %q[%c0, %c32] [64, 64] to %qs[%c0, %c0] [64, 64] : memref<64x96xf16, "shared"> to memref<64x64xf16, "shared">
      memref.store %x, %q[%c0, %c32] : memref<64x96xf16, "shared">
      tile.gemm %qs, %b, %c {transpose_b = true, clear_accum = false} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
    }
    return
  }
}
