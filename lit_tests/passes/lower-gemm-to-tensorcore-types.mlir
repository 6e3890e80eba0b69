// RUN: tilec-opt --infer-mma-layout --select-shared-swizzle --select-epilogue-store --pipeline-async-copies --specialize-warps --rasterize-blocks --lower-gemm-to-tensorcore --split-input-file %s | FileCheck %s

// Operand types and layouts of the tensor-core GEMM: transpose_A / transpose_B (16-bit), fp8,
// int8 and tf32 (K-major operands only), f32 / i32 outputs; sm_90a unless the module says sm_80.
// The inputs are the frontend's tile IR for a GEMM written as in the quickstart.

// -----

// fp8 e4m3, K-major operands (B given as N x K: transpose_B), bf16 output on sm_90a: one TMA
// box of 128 K bytes per operand, wgmma k32 with fp32 accumulators, no transpose bits.
// CHECK: \22tma\22: {\22A\22: {\22box\22: [128, 128], \22swizzle\22: 128}, \22B\22: {\22box\22: [128, 128], \22swizzle\22: 128}, \22C\22: {\22box\22: [64, 64], \22swizzle\22: 128}}
// CHECK-SAME: \22dtype\22: \22e4m3\22
// CHECK-SAME: \22out_dtype\22: \22bf16\22, \22trans_a\22: false, \22trans_b\22: true
// CHECK-LABEL: func.func @fp8_nt
// CHECK-NEXT: return
// CHECK: gpu.func @fp8_nt
// CHECK: nvgpu.tma.async.load {{.*}} -> memref<128x128xi8, #gpu.address_space<workgroup>>
// CHECK: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, p, 1, 1;
// CHECK: cvt.rn.bf16x2.f32
module {
  func.func @fp8_nt(%arg0: memref<256x512xf8E4M3FN>, %arg1: memref<256x512xf8E4M3FN>, %arg2: memref<256x256xbf16>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c2_0 = arith.constant 2 : index
    tile.kernel grid(%c2, %c2_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %1 = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %2 = tile.alloc : memref<128x128xf32, "fragment">
      %cst = arith.constant 0.000000e+00 : f32
      tile.fill %2, %cst : memref<128x128xf32, "fragment">, f32
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c128_4 = arith.constant 128 : index
        %6 = arith.muli %arg4, %c128_4 : index
        %c64 = arith.constant 64 : index
        %7 = arith.muli %arg5, %c64 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%6, %7] [128, 64] to %0[%c0_5, %c0_6] [128, 64] : memref<256x512xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        %c128_7 = arith.constant 128 : index
        %8 = arith.muli %arg3, %c128_7 : index
        %c64_8 = arith.constant 64 : index
        %9 = arith.muli %arg5, %c64_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%8, %9] [128, 64] to %1[%c0_9, %c0_10] [128, 64] : memref<256x512xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
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
      tile.copy %5[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xbf16, "fragment"> to memref<256x256xbf16>
    }
    return
  }
}

// -----

// fp8 e5m2 with f16 output, ragged M and N.
// CHECK-LABEL: func.func @e5m2_nt
// CHECK: arith.constant 200 : i32
// CHECK: wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2
// CHECK: cvt.rn.f16x2.f32
module {
  func.func @e5m2_nt(%arg0: memref<200x512xf8E5M2>, %arg1: memref<136x512xf8E5M2>, %arg2: memref<200x136xf16>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c2_0 = arith.constant 2 : index
    tile.kernel grid(%c2, %c2_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<128x64xf8E5M2, "shared">
      %1 = tile.alloc : memref<128x64xf8E5M2, "shared">
      %2 = tile.alloc : memref<128x128xf32, "fragment">
      %cst = arith.constant 0.000000e+00 : f32
      tile.fill %2, %cst : memref<128x128xf32, "fragment">, f32
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c128_4 = arith.constant 128 : index
        %6 = arith.muli %arg4, %c128_4 : index
        %c64 = arith.constant 64 : index
        %7 = arith.muli %arg5, %c64 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%6, %7] [128, 64] to %0[%c0_5, %c0_6] [128, 64] : memref<200x512xf8E5M2> to memref<128x64xf8E5M2, "shared">
        %c128_7 = arith.constant 128 : index
        %8 = arith.muli %arg3, %c128_7 : index
        %c64_8 = arith.constant 64 : index
        %9 = arith.muli %arg5, %c64_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%8, %9] [128, 64] to %1[%c0_9, %c0_10] [128, 64] : memref<136x512xf8E5M2> to memref<128x64xf8E5M2, "shared">
        tile.gemm %0, %1, %2 {transpose_b = true} : memref<128x64xf8E5M2, "shared">, memref<128x64xf8E5M2, "shared">, memref<128x128xf32, "fragment">
      }
      %c128 = arith.constant 128 : index
      %3 = arith.muli %arg4, %c128 : index
      %c128_1 = arith.constant 128 : index
      %4 = arith.muli %arg3, %c128_1 : index
      %5 = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%arg5: index, %arg6: index):
        %6 = memref.load %2[%arg5, %arg6] : memref<128x128xf32, "fragment">
        %7 = arith.truncf %6 : f32 to f16
        memref.store %7, %5[%arg5, %arg6] : memref<128x128xf16, "fragment">
      }
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      tile.copy %5[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xf16, "fragment"> to memref<200x136xf16>
    }
    return
  }
}

// -----

// int8 with int32 accumulation and output: wgmma .s32.s8.s8 (scale-d only), the staged C rows
// hold 32 columns of 4 bytes (TMA store box 32 x 64).
// CHECK: \22C\22: {\22box\22: [32, 64], \22swizzle\22: 128}
// CHECK-LABEL: func.func @int8_nt
// CHECK: arith.constant 0 : i32
// CHECK: wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {{.*}}, p;
// CHECK: st.shared.v2.b32
module {
  func.func @int8_nt(%arg0: memref<256x512xi8>, %arg1: memref<256x512xi8>, %arg2: memref<256x256xi32>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c2_0 = arith.constant 2 : index
    tile.kernel grid(%c2, %c2_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<128x64xi8, "shared">
      %1 = tile.alloc : memref<128x64xi8, "shared">
      %2 = tile.alloc : memref<128x128xi32, "fragment">
      %c0_i32 = arith.constant 0 : i32
      tile.fill %2, %c0_i32 : memref<128x128xi32, "fragment">, i32
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c128_4 = arith.constant 128 : index
        %5 = arith.muli %arg4, %c128_4 : index
        %c64 = arith.constant 64 : index
        %6 = arith.muli %arg5, %c64 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%5, %6] [128, 64] to %0[%c0_5, %c0_6] [128, 64] : memref<256x512xi8> to memref<128x64xi8, "shared">
        %c128_7 = arith.constant 128 : index
        %7 = arith.muli %arg3, %c128_7 : index
        %c64_8 = arith.constant 64 : index
        %8 = arith.muli %arg5, %c64_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%7, %8] [128, 64] to %1[%c0_9, %c0_10] [128, 64] : memref<256x512xi8> to memref<128x64xi8, "shared">
        tile.gemm %0, %1, %2 {transpose_b = true} : memref<128x64xi8, "shared">, memref<128x64xi8, "shared">, memref<128x128xi32, "fragment">
      }
      %c128 = arith.constant 128 : index
      %3 = arith.muli %arg4, %c128 : index
      %c128_1 = arith.constant 128 : index
      %4 = arith.muli %arg3, %c128_1 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      tile.copy %2[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xi32, "fragment"> to memref<256x256xi32>
    }
    return
  }
}

// -----

// float32 inputs run as tf32 (wgmma k8), fp32 output; a K tile is 32 elements (128 bytes).
// CHECK: \22A\22: {\22box\22: [32, 128], \22swizzle\22: 128}
// CHECK-LABEL: func.func @tf32_nt
// CHECK: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
// CHECK: st.shared.v2.f32
module {
  func.func @tf32_nt(%arg0: memref<256x512xf32>, %arg1: memref<256x512xf32>, %arg2: memref<256x256xf32>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c2_0 = arith.constant 2 : index
    tile.kernel grid(%c2, %c2_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<128x64xf32, "shared">
      %1 = tile.alloc : memref<128x64xf32, "shared">
      %2 = tile.alloc : memref<128x128xf32, "fragment">
      %cst = arith.constant 0.000000e+00 : f32
      tile.fill %2, %cst : memref<128x128xf32, "fragment">, f32
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c128_4 = arith.constant 128 : index
        %5 = arith.muli %arg4, %c128_4 : index
        %c64 = arith.constant 64 : index
        %6 = arith.muli %arg5, %c64 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%5, %6] [128, 64] to %0[%c0_5, %c0_6] [128, 64] : memref<256x512xf32> to memref<128x64xf32, "shared">
        %c128_7 = arith.constant 128 : index
        %7 = arith.muli %arg3, %c128_7 : index
        %c64_8 = arith.constant 64 : index
        %8 = arith.muli %arg5, %c64_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%7, %8] [128, 64] to %1[%c0_9, %c0_10] [128, 64] : memref<256x512xf32> to memref<128x64xf32, "shared">
        tile.gemm %0, %1, %2 {transpose_b = true} : memref<128x64xf32, "shared">, memref<128x64xf32, "shared">, memref<128x128xf32, "fragment">
      }
      %c128 = arith.constant 128 : index
      %3 = arith.muli %arg4, %c128 : index
      %c128_1 = arith.constant 128 : index
      %4 = arith.muli %arg3, %c128_1 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      tile.copy %2[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// f16 with A stored K x M (transpose_A): A is MN-major, loaded as 64-column boxes, and both
// transpose bits are set (B stays N-major).
// CHECK: \22A\22: {\22box\22: [64, 64], \22swizzle\22: 128}
// CHECK-LABEL: func.func @f16_tn
// CHECK: arith.constant 384 : i32
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 1, 1;
module {
  func.func @f16_tn(%arg0: memref<512x384xf16>, %arg1: memref<512x256xf16>, %arg2: memref<384x256xf16>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    tile.kernel grid(%c2, %c3) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<64x128xf16, "shared">
      %1 = tile.alloc : memref<64x128xf16, "shared">
      %2 = tile.alloc : memref<128x128xf32, "fragment">
      %cst = arith.constant 0.000000e+00 : f32
      tile.fill %2, %cst : memref<128x128xf32, "fragment">, f32
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c64 = arith.constant 64 : index
        %6 = arith.muli %arg5, %c64 : index
        %c128_3 = arith.constant 128 : index
        %7 = arith.muli %arg4, %c128_3 : index
        %c0_4 = arith.constant 0 : index
        %c0_5 = arith.constant 0 : index
        tile.copy %arg0[%6, %7] [64, 128] to %0[%c0_4, %c0_5] [64, 128] : memref<512x384xf16> to memref<64x128xf16, "shared">
        %c64_6 = arith.constant 64 : index
        %8 = arith.muli %arg5, %c64_6 : index
        %c128_7 = arith.constant 128 : index
        %9 = arith.muli %arg3, %c128_7 : index
        %c0_8 = arith.constant 0 : index
        %c0_9 = arith.constant 0 : index
        tile.copy %arg1[%8, %9] [64, 128] to %1[%c0_8, %c0_9] [64, 128] : memref<512x256xf16> to memref<64x128xf16, "shared">
        tile.gemm %0, %1, %2 {transpose_a = true} : memref<64x128xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %c128 = arith.constant 128 : index
      %3 = arith.muli %arg4, %c128 : index
      %c128_0 = arith.constant 128 : index
      %4 = arith.muli %arg3, %c128_0 : index
      %5 = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%arg5: index, %arg6: index):
        %6 = memref.load %2[%arg5, %arg6] : memref<128x128xf32, "fragment">
        %7 = arith.truncf %6 : f32 to f16
        memref.store %7, %5[%arg5, %arg6] : memref<128x128xf16, "fragment">
      }
      %c0_1 = arith.constant 0 : index
      %c0_2 = arith.constant 0 : index
      tile.copy %5[%c0_1, %c0_2] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xf16, "fragment"> to memref<384x256xf16>
    }
    return
  }
}

// -----

// bf16 with both operands transposed: A MN-major, B K-major (transpose bits 1, 0), f32 output.
// CHECK: \22B\22: {\22box\22: [64, 128], \22swizzle\22: 128}
// CHECK-LABEL: func.func @bf16_tt
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1, 0;
// CHECK: st.shared.v2.f32
module {
  func.func @bf16_tt(%arg0: memref<512x256xbf16>, %arg1: memref<256x512xbf16>, %arg2: memref<256x256xf32>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c2_0 = arith.constant 2 : index
    tile.kernel grid(%c2, %c2_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<64x128xbf16, "shared">
      %1 = tile.alloc : memref<128x64xbf16, "shared">
      %2 = tile.alloc : memref<128x128xf32, "fragment">
      %cst = arith.constant 0.000000e+00 : f32
      tile.fill %2, %cst : memref<128x128xf32, "fragment">, f32
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c64 = arith.constant 64 : index
        %5 = arith.muli %arg5, %c64 : index
        %c128_4 = arith.constant 128 : index
        %6 = arith.muli %arg4, %c128_4 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%5, %6] [64, 128] to %0[%c0_5, %c0_6] [64, 128] : memref<512x256xbf16> to memref<64x128xbf16, "shared">
        %c128_7 = arith.constant 128 : index
        %7 = arith.muli %arg3, %c128_7 : index
        %c64_8 = arith.constant 64 : index
        %8 = arith.muli %arg5, %c64_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%7, %8] [128, 64] to %1[%c0_9, %c0_10] [128, 64] : memref<256x512xbf16> to memref<128x64xbf16, "shared">
        tile.gemm %0, %1, %2 {transpose_a = true, transpose_b = true} : memref<64x128xbf16, "shared">, memref<128x64xbf16, "shared">, memref<128x128xf32, "fragment">
      }
      %c128 = arith.constant 128 : index
      %3 = arith.muli %arg4, %c128 : index
      %c128_1 = arith.constant 128 : index
      %4 = arith.muli %arg3, %c128_1 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      tile.copy %2[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// sm_80, f16 with B stored N x K: ldmatrix (no .trans) for both operands.
// CHECK: \22arch\22: \22sm_80\22
// CHECK-LABEL: func.func @f16_nt_sm80
// CHECK-NOT: .trans
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
module attributes {tile.arch = "sm_80"} {
  func.func @f16_nt_sm80(%arg0: memref<256x512xf16>, %arg1: memref<256x512xf16>, %arg2: memref<256x256xf16>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c2_0 = arith.constant 2 : index
    tile.kernel grid(%c2, %c2_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<128x64xf16, "shared">
      %1 = tile.alloc : memref<128x64xf16, "shared">
      %2 = tile.alloc : memref<128x128xf32, "fragment">
      %cst = arith.constant 0.000000e+00 : f32
      tile.fill %2, %cst : memref<128x128xf32, "fragment">, f32
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c128_4 = arith.constant 128 : index
        %6 = arith.muli %arg4, %c128_4 : index
        %c64 = arith.constant 64 : index
        %7 = arith.muli %arg5, %c64 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%6, %7] [128, 64] to %0[%c0_5, %c0_6] [128, 64] : memref<256x512xf16> to memref<128x64xf16, "shared">
        %c128_7 = arith.constant 128 : index
        %8 = arith.muli %arg3, %c128_7 : index
        %c64_8 = arith.constant 64 : index
        %9 = arith.muli %arg5, %c64_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%8, %9] [128, 64] to %1[%c0_9, %c0_10] [128, 64] : memref<256x512xf16> to memref<128x64xf16, "shared">
        tile.gemm %0, %1, %2 {transpose_b = true} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %c128 = arith.constant 128 : index
      %3 = arith.muli %arg4, %c128 : index
      %c128_1 = arith.constant 128 : index
      %4 = arith.muli %arg3, %c128_1 : index
      %5 = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%arg5: index, %arg6: index):
        %6 = memref.load %2[%arg5, %arg6] : memref<128x128xf32, "fragment">
        %7 = arith.truncf %6 : f32 to f16
        memref.store %7, %5[%arg5, %arg6] : memref<128x128xf16, "fragment">
      }
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      tile.copy %5[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// sm_80, f16 with A stored K x M: ldmatrix.trans for A and B.
// CHECK-LABEL: func.func @f16_tn_sm80
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-NOT: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
module attributes {tile.arch = "sm_80"} {
  func.func @f16_tn_sm80(%arg0: memref<512x256xf16>, %arg1: memref<512x256xf16>, %arg2: memref<256x256xf16>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c2_0 = arith.constant 2 : index
    tile.kernel grid(%c2, %c2_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<64x128xf16, "shared">
      %1 = tile.alloc : memref<64x128xf16, "shared">
      %2 = tile.alloc : memref<128x128xf32, "fragment">
      %cst = arith.constant 0.000000e+00 : f32
      tile.fill %2, %cst : memref<128x128xf32, "fragment">, f32
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c64 = arith.constant 64 : index
        %6 = arith.muli %arg5, %c64 : index
        %c128_4 = arith.constant 128 : index
        %7 = arith.muli %arg4, %c128_4 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%6, %7] [64, 128] to %0[%c0_5, %c0_6] [64, 128] : memref<512x256xf16> to memref<64x128xf16, "shared">
        %c64_7 = arith.constant 64 : index
        %8 = arith.muli %arg5, %c64_7 : index
        %c128_8 = arith.constant 128 : index
        %9 = arith.muli %arg3, %c128_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%8, %9] [64, 128] to %1[%c0_9, %c0_10] [64, 128] : memref<512x256xf16> to memref<64x128xf16, "shared">
        tile.gemm %0, %1, %2 {transpose_a = true} : memref<64x128xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %c128 = arith.constant 128 : index
      %3 = arith.muli %arg4, %c128 : index
      %c128_1 = arith.constant 128 : index
      %4 = arith.muli %arg3, %c128_1 : index
      %5 = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%arg5: index, %arg6: index):
        %6 = memref.load %2[%arg5, %arg6] : memref<128x128xf32, "fragment">
        %7 = arith.truncf %6 : f32 to f16
        memref.store %7, %5[%arg5, %arg6] : memref<128x128xf16, "fragment">
      }
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      tile.copy %5[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// sm_80, int8: mma.sync m16n8k32 with int32 accumulators, K-major ldmatrix.
// CHECK-LABEL: func.func @int8_nt_sm80
// CHECK-NOT: .trans
// CHECK: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
// CHECK: st.shared.v2.b32
module attributes {tile.arch = "sm_80"} {
  func.func @int8_nt_sm80(%arg0: memref<256x512xi8>, %arg1: memref<256x512xi8>, %arg2: memref<256x256xi32>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c2_0 = arith.constant 2 : index
    tile.kernel grid(%c2, %c2_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<128x64xi8, "shared">
      %1 = tile.alloc : memref<128x64xi8, "shared">
      %2 = tile.alloc : memref<128x128xi32, "fragment">
      %c0_i32 = arith.constant 0 : i32
      tile.fill %2, %c0_i32 : memref<128x128xi32, "fragment">, i32
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c128_4 = arith.constant 128 : index
        %5 = arith.muli %arg4, %c128_4 : index
        %c64 = arith.constant 64 : index
        %6 = arith.muli %arg5, %c64 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%5, %6] [128, 64] to %0[%c0_5, %c0_6] [128, 64] : memref<256x512xi8> to memref<128x64xi8, "shared">
        %c128_7 = arith.constant 128 : index
        %7 = arith.muli %arg3, %c128_7 : index
        %c64_8 = arith.constant 64 : index
        %8 = arith.muli %arg5, %c64_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%7, %8] [128, 64] to %1[%c0_9, %c0_10] [128, 64] : memref<256x512xi8> to memref<128x64xi8, "shared">
        tile.gemm %0, %1, %2 {transpose_b = true} : memref<128x64xi8, "shared">, memref<128x64xi8, "shared">, memref<128x128xi32, "fragment">
      }
      %c128 = arith.constant 128 : index
      %3 = arith.muli %arg4, %c128 : index
      %c128_1 = arith.constant 128 : index
      %4 = arith.muli %arg3, %c128_1 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      tile.copy %2[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xi32, "fragment"> to memref<256x256xi32>
    }
    return
  }
}

// -----

// sm_80, tf32: mma.sync m16n8k8 (block_K 32 = 128 bytes of K).
// CHECK-LABEL: func.func @tf32_nt_sm80
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
module attributes {tile.arch = "sm_80"} {
  func.func @tf32_nt_sm80(%arg0: memref<256x512xf32>, %arg1: memref<256x512xf32>, %arg2: memref<256x256xf32>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c2_0 = arith.constant 2 : index
    tile.kernel grid(%c2, %c2_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<128x32xf32, "shared">
      %1 = tile.alloc : memref<128x32xf32, "shared">
      %2 = tile.alloc : memref<128x128xf32, "fragment">
      %cst = arith.constant 0.000000e+00 : f32
      tile.fill %2, %cst : memref<128x128xf32, "fragment">, f32
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c16 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c128_4 = arith.constant 128 : index
        %5 = arith.muli %arg4, %c128_4 : index
        %c32 = arith.constant 32 : index
        %6 = arith.muli %arg5, %c32 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%5, %6] [128, 32] to %0[%c0_5, %c0_6] [128, 32] : memref<256x512xf32> to memref<128x32xf32, "shared">
        %c128_7 = arith.constant 128 : index
        %7 = arith.muli %arg3, %c128_7 : index
        %c32_8 = arith.constant 32 : index
        %8 = arith.muli %arg5, %c32_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%7, %8] [128, 32] to %1[%c0_9, %c0_10] [128, 32] : memref<256x512xf32> to memref<128x32xf32, "shared">
        tile.gemm %0, %1, %2 {transpose_b = true} : memref<128x32xf32, "shared">, memref<128x32xf32, "shared">, memref<128x128xf32, "fragment">
      }
      %c128 = arith.constant 128 : index
      %3 = arith.muli %arg4, %c128 : index
      %c128_1 = arith.constant 128 : index
      %4 = arith.muli %arg3, %c128_1 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      tile.copy %2[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// Not run on tensor cores: fp8 with B stored K x N (wgmma reads 8-bit operands K-major only).
// CHECK-NOT: tile.tensorcore
// CHECK-LABEL: func.func @fp8_nn
// CHECK: tile.gemm
// CHECK-NOT: gpu.module
module {
  func.func @fp8_nn(%arg0: memref<256x512xf8E4M3FN>, %arg1: memref<512x256xf8E4M3FN>, %arg2: memref<256x256xbf16>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c2_0 = arith.constant 2 : index
    tile.kernel grid(%c2, %c2_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %1 = tile.alloc : memref<64x128xf8E4M3FN, "shared">
      %2 = tile.alloc : memref<128x128xf32, "fragment">
      %cst = arith.constant 0.000000e+00 : f32
      tile.fill %2, %cst : memref<128x128xf32, "fragment">, f32
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c128_4 = arith.constant 128 : index
        %6 = arith.muli %arg4, %c128_4 : index
        %c64 = arith.constant 64 : index
        %7 = arith.muli %arg5, %c64 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%6, %7] [128, 64] to %0[%c0_5, %c0_6] [128, 64] : memref<256x512xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        %c64_7 = arith.constant 64 : index
        %8 = arith.muli %arg5, %c64_7 : index
        %c128_8 = arith.constant 128 : index
        %9 = arith.muli %arg3, %c128_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%8, %9] [64, 128] to %1[%c0_9, %c0_10] [64, 128] : memref<512x256xf8E4M3FN> to memref<64x128xf8E4M3FN, "shared">
        tile.gemm %0, %1, %2 : memref<128x64xf8E4M3FN, "shared">, memref<64x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
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
      tile.copy %5[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xbf16, "fragment"> to memref<256x256xbf16>
    }
    return
  }
}

// -----

// Not run on tensor cores: fp8 on sm_80 (no fp8 mma.sync before sm_89).
// CHECK-NOT: tile.tensorcore
// CHECK-LABEL: func.func @fp8_sm80
// CHECK: tile.gemm
// CHECK-NOT: gpu.module
module attributes {tile.arch = "sm_80"} {
  func.func @fp8_sm80(%arg0: memref<256x512xf8E4M3FN>, %arg1: memref<256x512xf8E4M3FN>, %arg2: memref<256x256xbf16>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c2_0 = arith.constant 2 : index
    tile.kernel grid(%c2, %c2_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %1 = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %2 = tile.alloc : memref<128x128xf32, "fragment">
      %cst = arith.constant 0.000000e+00 : f32
      tile.fill %2, %cst : memref<128x128xf32, "fragment">, f32
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c128_4 = arith.constant 128 : index
        %6 = arith.muli %arg4, %c128_4 : index
        %c64 = arith.constant 64 : index
        %7 = arith.muli %arg5, %c64 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%6, %7] [128, 64] to %0[%c0_5, %c0_6] [128, 64] : memref<256x512xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        %c128_7 = arith.constant 128 : index
        %8 = arith.muli %arg3, %c128_7 : index
        %c64_8 = arith.constant 64 : index
        %9 = arith.muli %arg5, %c64_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%8, %9] [128, 64] to %1[%c0_9, %c0_10] [128, 64] : memref<256x512xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
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
      tile.copy %5[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xbf16, "fragment"> to memref<256x256xbf16>
    }
    return
  }
}

// -----

// Not run on tensor cores: int8 rows of K = 520 bytes are not 16-byte aligned.
// CHECK-NOT: tile.tensorcore
// CHECK-LABEL: func.func @int8_oddk
// CHECK: tile.gemm
// CHECK-NOT: gpu.module
module {
  func.func @int8_oddk(%arg0: memref<256x520xi8>, %arg1: memref<256x520xi8>, %arg2: memref<256x256xi32>) attributes {tile.entry} {
    %c2 = arith.constant 2 : index
    %c2_0 = arith.constant 2 : index
    tile.kernel grid(%c2, %c2_0) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %0 = tile.alloc : memref<128x64xi8, "shared">
      %1 = tile.alloc : memref<128x64xi8, "shared">
      %2 = tile.alloc : memref<128x128xi32, "fragment">
      %c0_i32 = arith.constant 0 : i32
      tile.fill %2, %c0_i32 : memref<128x128xi32, "fragment">, i32
      %c0 = arith.constant 0 : index
      %c9 = arith.constant 9 : index
      %c1 = arith.constant 1 : index
      tile.pipelined %c0 to %c9 step %c1 stages 3 {
      ^bb0(%arg5: index):
        %c128_4 = arith.constant 128 : index
        %5 = arith.muli %arg4, %c128_4 : index
        %c64 = arith.constant 64 : index
        %6 = arith.muli %arg5, %c64 : index
        %c0_5 = arith.constant 0 : index
        %c0_6 = arith.constant 0 : index
        tile.copy %arg0[%5, %6] [128, 64] to %0[%c0_5, %c0_6] [128, 64] : memref<256x520xi8> to memref<128x64xi8, "shared">
        %c128_7 = arith.constant 128 : index
        %7 = arith.muli %arg3, %c128_7 : index
        %c64_8 = arith.constant 64 : index
        %8 = arith.muli %arg5, %c64_8 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        tile.copy %arg1[%7, %8] [128, 64] to %1[%c0_9, %c0_10] [128, 64] : memref<256x520xi8> to memref<128x64xi8, "shared">
        tile.gemm %0, %1, %2 {transpose_b = true} : memref<128x64xi8, "shared">, memref<128x64xi8, "shared">, memref<128x128xi32, "fragment">
      }
      %c128 = arith.constant 128 : index
      %3 = arith.muli %arg4, %c128 : index
      %c128_1 = arith.constant 128 : index
      %4 = arith.muli %arg3, %c128_1 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      tile.copy %2[%c0_2, %c0_3] [128, 128] to %arg2[%3, %4] [128, 128] : memref<128x128xi32, "fragment"> to memref<256x256xi32>
    }
    return
  }
}
