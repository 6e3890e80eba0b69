// RUN: tilec-opt --plan-wgmma-gemms --insert-shared-barriers %s | FileCheck %s

// A copy plan-wgmma-gemms marks tile.read_in_place moves nothing: no barrier between it and
// its gemm, which reads the larger tile Q itself, so Q's write before it is waited for just
// before the gemm, and the next iteration's write into Q waits for the gemm (the loop's back
// edge: a barrier before the first copy).
// CHECK-LABEL: func.func @slice_in_a_loop
// CHECK: tile.for
// CHECK-NEXT: ^bb0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy %arg0
// CHECK-NEXT: tile.copy %arg1
// CHECK-NEXT: tile.alloc
// CHECK-NEXT: tile.copy {{.*}}tile.read_in_place
// CHECK-NEXT: tile.alloc
// CHECK-NEXT: tile.copy {{.*}}tile.read_in_place
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm
module attributes {tile.arch = "sm_90a"} {
  func.func @slice_in_a_loop(%Q: memref<64x128xf16>, %KV: memref<64x128xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %q = tile.alloc : memref<64x128xf16, "shared">
      %kv = tile.alloc : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x64xf32, "fragment">
      tile.for %c0 to %c4 step %c1 {
      ^bb0(%k: index):
        tile.copy %Q[%c0, %c0] [64, 128] to %q[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, "shared">
        tile.copy %KV[%c0, %c0] [64, 128] to %kv[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, "shared">
        %qs = tile.alloc : memref<64x64xf16, "shared">
        tile.copy %q[%c0, %c64] [64, 64] to %qs[%c0, %c0] [64, 64] : memref<64x128xf16, "shared"> to memref<64x64xf16, "shared">
        %ks = tile.alloc : memref<64x64xf16, "shared">
        tile.copy %kv[%c0, %c64] [64, 64] to %ks[%c0, %c0] [64, 64] : memref<64x128xf16, "shared"> to memref<64x64xf16, "shared">
        tile.gemm %qs, %ks, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
    }
    return
  }
}
