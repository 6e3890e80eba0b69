// RUN: tilec-opt --lower-gemm-simt %s | FileCheck %s
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
