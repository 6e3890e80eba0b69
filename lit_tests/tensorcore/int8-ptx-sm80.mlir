// RUN: tilec-opt --infer-mma-layout --select-shared-swizzle --select-epilogue-store --pipeline-async-copies --specialize-warps --rasterize-blocks --lower-gemm-to-tensorcore %s --pass-pipeline="builtin.module(gpu-lower-to-nvvm-pipeline{cubin-chip=sm_80 cubin-features=+ptx80 cubin-format=isa})" | FileCheck %s

// The PTX of an int8 GEMM (B N x K, int32 accumulation and output) on sm_80: cp.async,
// ldmatrix without .trans (both operands K-major), mma.sync m16n8k32 on s8.
// CHECK: gpu.binary @kernels
// CHECK-SAME: cp.async.cg.shared.global
// CHECK-SAME: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-SAME: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
// CHECK-SAME: st.global.v4.b32
module attributes {tile.arch = "sm_80"} {
  func.func @int8_gemm(%arg0: memref<1024x1024xi8>, %arg1: memref<1024x1024xi8>, %arg2: memref<1024x1024xi32>) attributes {tile.entry} {
    %c8 = arith.constant 8 : index
    %c8_0 = arith.constant 8 : index
    tile.kernel grid(%c8, %c8_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<128x64xi8, "shared">
      %1 = tile.alloc : memref<128x64xi8, "shared">
      %2 = tile.alloc : memref<128x128xi32, "fragment">
      %c0_i32 = arith.constant 0 : i32
      tile.fill %2, %c0_i32 : memref<128x128xi32, "fragment">, i32
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c16 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c128_4 = arith.constant 128 : index
        %5 = arith.muli %arg4, %c128_4 : index
        %c64 = arith.constant 64 : index
        %6 = arith.muli %arg5, %c64 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%5, %6] [128, 64] to %0[%c0_5, %c0_6] [128, 64] : memref<1024x1024xi8> to memref<128x64xi8, "shared">
        %c128_7 = arith.constant 128 : index
        %7 = arith.muli %arg3, %c128_7 : index
        %c64_8 = arith.constant 64 : index
        %8 = arith.muli %arg5, %c64_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%7, %8] [128, 64] to %1[%c0_9, %c0_10] [128, 64] : memref<1024x1024xi8> to memref<128x64xi8, "shared">
        tile.gemm %0, %1, %2 {transpose_b = true} : memref<128x64xi8, "shared">, memref<128x64xi8, "shared">, memref<128x128xi32, "fragment">
      }
      %c128 = arith.constant 128 : index
      %3 = arith.muli %arg4, %c128 : index
      %c128_1 = arith.constant 128 : index
      %4 = arith.muli %arg3, %c128_1 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      tile.copy %2[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xi32, "fragment"> to memref<1024x1024xi32>
    }
    return
  }
}
