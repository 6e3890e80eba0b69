// RUN: tilec-opt --transpose-mn-major-operands --split-input-file %s | FileCheck %s

// transpose-mn-major-operands (sm_90a, opted in by the module's
// tile.transpose_mn_major_operands): wgmma reads 8-bit and tf32 operands K-major only, so a
// gemm whose B is stored K x N (or A K x M) gets a K-major tile of its own, filled right before
// the gemm by a T.Parallel laid out for 16-byte stores along K (consecutive threads on
// consecutive rows), and reads it with the transpose flag flipped.

// fp8 e4m3, B stored K x N in a pipelined loop: each iteration transposes its B tile into a
// 128 x 64 (N x K) tile, which the gemm reads as N x K (transpose_b).
// CHECK-LABEL: func.func @e4m3_b_k_by_n
// CHECK: %[[B:.*]] = tile.alloc : memref<64x128xf8E4M3FN, "shared">
// CHECK-NEXT: %[[BT:.*]] = tile.alloc : memref<128x64xf8E4M3FN, "shared">
// CHECK: tile.pipelined
// CHECK: tile.copy {{.*}} to %[[B]]
// CHECK: tile.parallel [128, 64] attributes {tile.layout = #tile.linear<[128, 64], register = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = {{\[\[}}32, 0], [64, 0]]>}
// CHECK-NEXT: ^bb0(%[[N:.*]]: index, %[[K:.*]]: index):
// CHECK-NEXT: %[[V:.*]] = memref.load %[[B]][%[[K]], %[[N]]] : memref<64x128xf8E4M3FN, "shared">
// CHECK-NEXT: memref.store %[[V]], %[[BT]][%[[N]], %[[K]]] : memref<128x64xf8E4M3FN, "shared">
// CHECK: tile.gemm %{{.*}}, %[[BT]], %{{.*}} {transpose_b = true} : memref<128x64xf8E4M3FN, "shared">, memref<128x64xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
module attributes {tile.arch = "sm_90a", tile.transpose_mn_major_operands} {
  func.func @e4m3_b_k_by_n(%A: memref<512x512xf8E4M3FN>, %B: memref<512x512xf8E4M3FN>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c64 = arith.constant 64 : index
      %as = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %bs = tile.alloc : memref<64x128xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%k: index):
        %kk = arith.muli %k, %c64 : index
        tile.copy %A[%c0, %kk] [128, 64] to %as[%c0, %c0] [128, 64] : memref<512x512xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        tile.copy %B[%kk, %c0] [64, 128] to %bs[%c0, %c0] [64, 128] : memref<512x512xf8E4M3FN> to memref<64x128xf8E4M3FN, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf8E4M3FN, "shared">, memref<64x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// int8, A stored K x M (transpose_a) and B N x K over 256 threads: A gets the 128 x 128 M x K
// copy, two threads per row of it, and the gemm reads it untransposed.
// CHECK-LABEL: func.func @s8_a_k_by_m
// CHECK: %[[A:.*]] = tile.alloc : memref<128x128xi8, "shared">
// CHECK-NEXT: %[[AT:.*]] = tile.alloc : memref<128x128xi8, "shared">
// CHECK: tile.parallel [128, 128] attributes {tile.layout = #tile.linear<[128, 128], register = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 32], [0, 64]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = {{\[\[}}32, 0], [64, 0], [0, 16]]>}
// CHECK: memref.load %[[A]][%[[K:.*]], %[[M:.*]]] : memref<128x128xi8, "shared">
// CHECK-NEXT: memref.store %{{.*}}, %[[AT]][%[[M]], %[[K]]]
// CHECK: tile.gemm %[[AT]], %{{.*}}, %{{.*}} {transpose_b = true}
module attributes {tile.arch = "sm_90a", tile.transpose_mn_major_operands} {
  func.func @s8_a_k_by_m(%A: memref<512x512xi8>, %B: memref<512x512xi8>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x128xi8, "shared">
      %bs = tile.alloc : memref<128x128xi8, "shared">
      %acc = tile.alloc : memref<128x128xi32, "fragment">
      tile.copy %A[%c0, %c0] [128, 128] to %as[%c0, %c0] [128, 128] : memref<512x512xi8> to memref<128x128xi8, "shared">
      tile.copy %B[%c0, %c0] [128, 128] to %bs[%c0, %c0] [128, 128] : memref<512x512xi8> to memref<128x128xi8, "shared">
      tile.gemm %as, %bs, %acc {transpose_a = true, transpose_b = true} : memref<128x128xi8, "shared">, memref<128x128xi8, "shared">, memref<128x128xi32, "fragment">
    }
    return
  }
}

// -----

// A register-A chain (A a fragment, M x K) with an fp8 B stored K x N: B alone is copied.
// CHECK-LABEL: func.func @register_a_b_k_by_n
// CHECK: %[[AF:.*]] = tile.alloc : memref<128x64xf8E4M3FN, "fragment">
// CHECK: %[[B:.*]] = tile.alloc : memref<64x128xf8E4M3FN, "shared">
// CHECK-NEXT: %[[BT:.*]] = tile.alloc : memref<128x64xf8E4M3FN, "shared">
// CHECK: tile.copy %{{.*}} to %[[AF]]
// CHECK-NEXT: tile.parallel [128, 64]
// CHECK: tile.gemm %[[AF]], %[[BT]], %{{.*}} {transpose_b = true} : memref<128x64xf8E4M3FN, "fragment">, memref<128x64xf8E4M3FN, "shared">
module attributes {tile.arch = "sm_90a", tile.transpose_mn_major_operands} {
  func.func @register_a_b_k_by_n(%A: memref<512x512xf8E4M3FN>, %B: memref<512x512xf8E4M3FN>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %af = tile.alloc : memref<128x64xf8E4M3FN, "fragment">
      %bs = tile.alloc : memref<64x128xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<512x512xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
      tile.copy %B[%c0, %c0] [64, 128] to %bs[%c0, %c0] [64, 128] : memref<512x512xf8E4M3FN> to memref<64x128xf8E4M3FN, "shared">
      tile.copy %as[%c0, %c0] [128, 64] to %af[%c0, %c0] [128, 64] : memref<128x64xf8E4M3FN, "shared"> to memref<128x64xf8E4M3FN, "fragment">
      tile.gemm %af, %bs, %acc : memref<128x64xf8E4M3FN, "fragment">, memref<64x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
    }
    return
  }
}

// -----

// Left alone: an f16 B stored K x N (wgmma transposes 16-bit operands itself), an fp8 gemm
// without the opt-in, an fp8 tile wgmma cannot cover (48 columns of N).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tile.parallel
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} : memref<128x64xf8E4M3FN, "shared">, memref<64x48xf8E4M3FN, "shared">
module attributes {tile.arch = "sm_90a", tile.transpose_mn_major_operands} {
  func.func @left_alone(%A: memref<512x512xf16>, %B: memref<512x512xf16>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      %as8 = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %bs8 = tile.alloc : memref<64x48xf8E4M3FN, "shared">
      %acc8 = tile.alloc : memref<128x48xf32, "fragment">
      tile.gemm %as8, %bs8, %acc8 : memref<128x64xf8E4M3FN, "shared">, memref<64x48xf8E4M3FN, "shared">, memref<128x48xf32, "fragment">
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @not_opted_in
// CHECK-NOT: tile.parallel
module attributes {tile.arch = "sm_90a"} {
  func.func @not_opted_in(%A: memref<512x512xf8E4M3FN>, %B: memref<512x512xf8E4M3FN>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %bs = tile.alloc : memref<64x128xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.gemm %as, %bs, %acc : memref<128x64xf8E4M3FN, "shared">, memref<64x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
    }
    return
  }
}

// -----

// fp8 on sm_80 (mma.sync has no fp8 shape there): left on CUDA cores.
// CHECK-LABEL: func.func @sm_80
// CHECK-NOT: tile.parallel
module attributes {tile.arch = "sm_80", tile.transpose_mn_major_operands} {
  func.func @sm_80(%A: memref<512x512xf8E4M3FN>, %B: memref<512x512xf8E4M3FN>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %bs = tile.alloc : memref<64x128xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.gemm %as, %bs, %acc : memref<128x64xf8E4M3FN, "shared">, memref<64x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
    }
    return
  }
}

// -----

// sm_80: mma.sync reads 8-bit and tf32 operands K-major only too (ldmatrix.trans moves 16-bit
// elements), so an int8 B stored K x N gets the same copy and the gemm runs on mma.sync.
// With three stages of 128 x 32 tf32 tiles (96 KiB) the 16 KiB copy fits sm_80's 163 KiB.
// CHECK-LABEL: func.func @sm_80_s8_and_tf32
// CHECK: %[[B:.*]] = tile.alloc : memref<64x128xi8, "shared">
// CHECK-NEXT: %[[BT:.*]] = tile.alloc : memref<128x64xi8, "shared">
// CHECK: tile.parallel [128, 64]
// CHECK: memref.load %[[B]][%[[K:.*]], %[[N:.*]]] : memref<64x128xi8, "shared">
// CHECK-NEXT: memref.store %{{.*}}, %[[BT]][%[[N]], %[[K]]]
// CHECK: tile.gemm %{{.*}}, %[[BT]], %{{.*}} {transpose_b = true} : memref<128x64xi8, "shared">, memref<128x64xi8, "shared">, memref<128x128xi32, "fragment">
// CHECK: %[[B32:.*]] = tile.alloc : memref<32x128xf32, "shared">
// CHECK-NEXT: %[[BT32:.*]] = tile.alloc : memref<128x32xf32, "shared">
// CHECK: tile.parallel [128, 32]
// CHECK: tile.gemm %{{.*}}, %[[BT32]], %{{.*}} {transpose_b = true}
module attributes {tile.arch = "sm_80", tile.transpose_mn_major_operands} {
  func.func @sm_80_s8_and_tf32(%A: memref<512x512xi8>, %B: memref<512x512xi8>, %A32: memref<512x512xf32>, %B32: memref<512x512xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %as = tile.alloc : memref<128x64xi8, "shared">
      %bs = tile.alloc : memref<64x128xi8, "shared">
      %acc = tile.alloc : memref<128x128xi32, "fragment">
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%k: index):
        %kk = arith.muli %k, %c64 : index
        tile.copy %A[%c0, %kk] [128, 64] to %as[%c0, %c0] [128, 64] : memref<512x512xi8> to memref<128x64xi8, "shared">
        tile.copy %B[%kk, %c0] [64, 128] to %bs[%c0, %c0] [64, 128] : memref<512x512xi8> to memref<64x128xi8, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xi8, "shared">, memref<64x128xi8, "shared">, memref<128x128xi32, "fragment">
      }
      %as32 = tile.alloc : memref<128x32xf32, "shared">
      %bs32 = tile.alloc : memref<32x128xf32, "shared">
      %acc32 = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%k: index):
        %kk = arith.muli %k, %c32 : index
        tile.copy %A32[%c0, %kk] [128, 32] to %as32[%c0, %c0] [128, 32] : memref<512x512xf32> to memref<128x32xf32, "shared">
        tile.copy %B32[%kk, %c0] [32, 128] to %bs32[%c0, %c0] [32, 128] : memref<512x512xf32> to memref<32x128xf32, "shared">
        tile.gemm %as32, %bs32, %acc32 : memref<128x32xf32, "shared">, memref<32x128xf32, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// The copy is planned against the chip's shared memory (the loop's tiles at their pipeline
// depth, max(2, stages), beside it, as plan-shared-memory will place them): where it would
// not fit the gemm stays on CUDA cores, as without the opt-in. sm_89 has 99 KiB a block:
// three stages of 128 x 32 tf32 tiles (96 KiB) leave no room for the 16 KiB copy of B.
// CHECK-LABEL: func.func @sm_89_tf32_over_the_limit
// CHECK-NOT: tile.parallel
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} : memref<128x32xf32, "shared">, memref<32x128xf32, "shared">, memref<128x128xf32, "fragment">
// CHECK-NOT: tile.alloc
module attributes {tile.arch = "sm_89", tile.transpose_mn_major_operands} {
  func.func @sm_89_tf32_over_the_limit(%A: memref<512x512xf32>, %B: memref<512x512xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %as = tile.alloc : memref<128x32xf32, "shared">
      %bs = tile.alloc : memref<32x128xf32, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c8 step %c1 stages 3 {
      ^bb0(%k: index):
        %kk = arith.muli %k, %c32 : index
        tile.copy %A[%c0, %kk] [128, 32] to %as[%c0, %c0] [128, 32] : memref<512x512xf32> to memref<128x32xf32, "shared">
        tile.copy %B[%kk, %c0] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<512x512xf32> to memref<32x128xf32, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf32, "shared">, memref<32x128xf32, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// sm_90a, int8 with A stored K x M and B K x N at 128 x 256 x 128 over four stages: the ring's
// 192 KiB and both copies (16 + 32 KiB) exceed the 227 KiB of a block, so neither is made
// (one alone is not enough for wgmma); the same loop at two stages (96 KiB) takes both.
// CHECK-LABEL: func.func @sm_90a_both_over_the_limit
// CHECK-NOT: tile.parallel
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {transpose_a = true} : memref<128x128xi8, "shared">, memref<128x256xi8, "shared">, memref<128x256xi32, "fragment">
// CHECK: tile.parallel [128, 128]
// CHECK: tile.parallel [256, 128]
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {transpose_b = true} : memref<128x128xi8, "shared">, memref<256x128xi8, "shared">, memref<128x256xi32, "fragment">
module attributes {tile.arch = "sm_90a", tile.transpose_mn_major_operands} {
  func.func @sm_90a_both_over_the_limit(%A: memref<1024x1024xi8>, %B: memref<1024x1024xi8>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c128 = arith.constant 128 : index
      %as = tile.alloc : memref<128x128xi8, "shared">
      %bs = tile.alloc : memref<128x256xi8, "shared">
      %acc = tile.alloc : memref<128x256xi32, "fragment">
      tile.pipelined %c0 to %c8 step %c1 stages 4 {
      ^bb0(%k: index):
        %kk = arith.muli %k, %c128 : index
        tile.copy %A[%kk, %c0] [128, 128] to %as[%c0, %c0] [128, 128] : memref<1024x1024xi8> to memref<128x128xi8, "shared">
        tile.copy %B[%kk, %c0] [128, 256] to %bs[%c0, %c0] [128, 256] : memref<1024x1024xi8> to memref<128x256xi8, "shared">
        tile.gemm %as, %bs, %acc {transpose_a = true} : memref<128x128xi8, "shared">, memref<128x256xi8, "shared">, memref<128x256xi32, "fragment">
      }
    }
    tile.kernel grid(%g, %g) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c128 = arith.constant 128 : index
      %as = tile.alloc : memref<128x128xi8, "shared">
      %bs = tile.alloc : memref<128x256xi8, "shared">
      %acc = tile.alloc : memref<128x256xi32, "fragment">
      tile.pipelined %c0 to %c8 step %c1 stages 2 {
      ^bb0(%k: index):
        %kk = arith.muli %k, %c128 : index
        tile.copy %A[%kk, %c0] [128, 128] to %as[%c0, %c0] [128, 128] : memref<1024x1024xi8> to memref<128x128xi8, "shared">
        tile.copy %B[%kk, %c0] [128, 256] to %bs[%c0, %c0] [128, 256] : memref<1024x1024xi8> to memref<128x256xi8, "shared">
        tile.gemm %as, %bs, %acc {transpose_a = true} : memref<128x128xi8, "shared">, memref<128x256xi8, "shared">, memref<128x256xi32, "fragment">
      }
    }
    return
  }
}
