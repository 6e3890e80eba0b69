// RUN: tilec-opt --infer-mma-layout --select-shared-swizzle --select-epilogue-store --pipeline-async-copies --specialize-warps --rasterize-blocks --lower-gemm-to-tensorcore %s --pass-pipeline="builtin.module(gpu-lower-to-nvvm-pipeline{cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa})" | FileCheck %s

// The PTX of an fp8 e4m3 GEMM (A M x K, B N x K via transpose_B, bf16 output) on sm_90a: TMA
// loads, wgmma k32 on e4m3 operands, bf16 epilogue stored by TMA.
// CHECK: gpu.binary @kernels
// CHECK-SAME: cp.async.bulk.tensor.2d.shared::cluster.global
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// CHECK-SAME: cvt.rn.bf16x2.f32
// CHECK-SAME: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
module {
  func.func @fp8_gemm(%arg0: memref<4096x4096xf8E4M3FN>, %arg1: memref<4096x4096xf8E4M3FN>, %arg2: memref<4096x4096xbf16>) attributes {tile.entry} {
    %c32 = arith.constant 32 : index
    %c32_0 = arith.constant 32 : index
    tile.kernel grid(%c32, %c32_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %1 = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %2 = tile.alloc : memref<128x128xf32, "fragment">
      %cst = arith.constant 0.000000e+00 : f32
      tile.fill %2, %cst : memref<128x128xf32, "fragment">, f32
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c64 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c128_4 = arith.constant 128 : index
        %6 = arith.muli %arg4, %c128_4 : index
        %c64_5 = arith.constant 64 : index
        %7 = arith.muli %arg5, %c64_5 : index
        %c0_6 = arith.constant 0 : index
        %c0_7 = arith.constant 0 : index
        tile.copy %arg0[%6, %7] [128, 64] to %0[%c0_6, %c0_7] [128, 64] : memref<4096x4096xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        %c128_8 = arith.constant 128 : index
        %8 = arith.muli %arg3, %c128_8 : index
        %c64_9 = arith.constant 64 : index
        %9 = arith.muli %arg5, %c64_9 : index
        %c0_10 = arith.constant 0 : index
        %c0_11 = arith.constant 0 : index
        tile.copy %arg1[%8, %9] [128, 64] to %1[%c0_10, %c0_11] [128, 64] : memref<4096x4096xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        tile.gemm %0, %1, %2 {transpose_b = true} : memref<128x64xf8E4M3FN, "shared">, memref<128x64xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
      }
      %c128 = arith.constant 128 : index
      %3 = arith.muli %arg4, %c128 : index
      %c128_1 = arith.constant 128 : index
      %4 = arith.muli %arg3, %c128_1 : index
      %5 = tile.alloc : memref<128x128xbf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%arg5: index, %arg6: index):
        %6 = memref.load %2[%arg5, %arg6] : memref<128x128xf32, "fragment">
        %7 = arith.truncf %6 : f32 to bf16
        memref.store %7, %5[%arg5, %arg6] : memref<128x128xbf16, "fragment">
      }
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      tile.copy %5[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xbf16, "fragment"> to memref<4096x4096xbf16>
    }
    return
  }
}
