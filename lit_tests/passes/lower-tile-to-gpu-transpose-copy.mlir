// RUN: tilec-opt --transpose-mn-major-operands --infer-mma-layout --plan-wgmma-gemms --infer-fragment-layout --insert-shared-barriers --lower-tile-to-gpu %s | FileCheck %s
// The K-major copy transpose-mn-major-operands makes of an fp8 B stored K x N, lowered: each
// thread reads its 16 elements of one row of the copy (one column of B, 16 rows of it) one
// byte at a time and stores them as one 16-byte vector into a chunk of the 128-byte-swizzled
// copy (a T.Parallel that reads no global memory stores its runs of an operand tile as
// vectors); the barrier and the async-proxy fence follow, then the e4m3 wgmma reads the copy
// K-major (no transpose bits).

// CHECK-LABEL: gpu.func @e4m3_b_k_by_n
// CHECK: %[[B:.*]] = memref.view {{.*}} to memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>
// CHECK: %[[BT:.*]] = memref.view {{.*}} to memref<8192xf8E4M3FN, #gpu.address_space<workgroup>>
// the copies from global memory, then the transposition: thread t reads column t % 128 of B
// CHECK: gpu.barrier
// CHECK: %[[COLUMN:.*]] = arith.remui %{{.*}}, %c128
// CHECK-COUNT-16: memref.load %[[B]][%{{.*}}, %[[COLUMN]]]
// CHECK: %[[VALUES:.*]] = vector.from_elements {{.*}} : vector<16xf8E4M3FN>
// CHECK: arith.xori
// CHECK: vector.store %[[VALUES]], %[[BT]][%{{.*}}] {alignment = 16 : i64}
// CHECK: gpu.barrier
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}} p, 1, 1; }
module attributes {tile.arch = "sm_90a", tile.transpose_mn_major_operands} {
  func.func @e4m3_b_k_by_n(%A: memref<512x512xf8E4M3FN>, %B: memref<512x512xf8E4M3FN>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %bs = tile.alloc : memref<64x128xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<512x512xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
      tile.copy %B[%c0, %c0] [64, 128] to %bs[%c0, %c0] [64, 128] : memref<512x512xf8E4M3FN> to memref<64x128xf8E4M3FN, "shared">
      tile.gemm %as, %bs, %acc : memref<128x64xf8E4M3FN, "shared">, memref<64x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
    }
    return
  }
}
