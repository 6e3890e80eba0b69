// RUN: tilec-opt --widen-k-tiles --split-input-file %s | FileCheck %s

// widen-k-tiles (sm_90a): a T.Pipelined GEMM
// loop whose operand tiles span 64 bytes of K (block_K = 32 in f16) runs half the iterations
// over tiles of 128-byte K rows: the tiles and the copies' boxes twice as wide along K, the
// K corner k * 64, the trip count ceil(N / 2), the stages ceil(S / 2) but at least 2.

// The quickstart: A 128 x 32 (K along columns), B 32 x 128 (K along rows), 256 iterations.
// CHECK-LABEL: func.func @quickstart
// CHECK: %[[A:.*]] = tile.alloc : memref<128x64xf16, "shared">
// CHECK: %[[B:.*]] = tile.alloc : memref<64x128xf16, "shared">
// CHECK: %[[N:.*]] = arith.constant 128 : index
// CHECK-NEXT: tile.pipelined %{{.*}} to %[[N]] step %{{.*}} stages 2 {
// CHECK-NEXT: ^bb0(%[[K:.*]]: index):
// CHECK-NEXT: %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[K0:.*]] = arith.muli %[[K]], %[[C64]] : index
// CHECK-NEXT: tile.copy %arg0[%{{.*}}, %[[K0]]] [128, 64] to %[[A]][%{{.*}}, %{{.*}}] [128, 64]
// CHECK: %[[K1:.*]] = arith.muli %[[K]], %{{.*}} : index
// CHECK-NEXT: tile.copy %arg1[%[[K1]], %{{.*}}] [64, 128] to %[[B]][%{{.*}}, %{{.*}}] [64, 128]
// CHECK: tile.gemm %[[A]], %[[B]], %{{.*}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
module attributes {tile.arch = "sm_90a"} {
  func.func @quickstart(%A: memref<8192x8192xf16>, %B: memref<8192x8192xf16>, %C: memref<8192x8192xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    tile.kernel grid(%c64, %c64) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c256 step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<8192x8192xf16> to memref<128x32xf16, "shared">
        %k1 = arith.muli %c32, %k : index
        tile.copy %B[%k1, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<8192x8192xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf32, "fragment"> to memref<8192x8192xf32>
    }
    return
  }
}

// -----

// A batched bf16 GEMM with B as N x K (transpose_B), K = 96: 3 tiles of 32 reach the end of K,
// so the second widened tile may lie half outside it (read as zero); 4 stages become 2. The
// batch coordinate does not depend on k.
// CHECK-LABEL: func.func @batched_ragged_k
// CHECK: tile.alloc : memref<64x64xbf16, "shared">
// CHECK: tile.alloc : memref<64x64xbf16, "shared">
// CHECK: %[[N:.*]] = arith.constant 2 : index
// CHECK-NEXT: tile.pipelined %{{.*}} to %[[N]] step %{{.*}} stages 2 {
// CHECK: tile.copy %arg0[%{{.*}}, %{{.*}}, %{{.*}}] [1, 64, 64] to
// CHECK: tile.copy %arg1[%{{.*}}, %{{.*}}, %{{.*}}] [1, 64, 64] to
// CHECK: tile.gemm {{.*}} {transpose_b = true} : memref<64x64xbf16, "shared">, memref<64x64xbf16, "shared">
module attributes {tile.arch = "sm_90a"} {
  func.func @batched_ragged_k(%A: memref<3x72x96xbf16>, %B: memref<3x136x96xbf16>, %C: memref<3x72x136xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    tile.kernel grid(%c3, %c2, %c3) threads [128] {
    ^bb0(%bx: index, %by: index, %bz: index):
      %as = tile.alloc : memref<64x32xbf16, "shared">
      %bs = tile.alloc : memref<64x32xbf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      %row = arith.muli %by, %c64 : index
      %col = arith.muli %bx, %c64 : index
      tile.pipelined %c0 to %c3 step %c1 stages 4 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%bz, %row, %k0] [1, 64, 32] to %as[%c0, %c0] [64, 32] : memref<3x72x96xbf16> to memref<64x32xbf16, "shared">
        tile.copy %B[%bz, %col, %k0] [1, 64, 32] to %bs[%c0, %c0] [64, 32] : memref<3x136x96xbf16> to memref<64x32xbf16, "shared">
        tile.gemm %as, %bs, %acc {transpose_b = true} : memref<64x32xbf16, "shared">, memref<64x32xbf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%bz, %row, %col] [1, 64, 64] : memref<64x64xf32, "fragment"> to memref<3x72x136xf32>
    }
    return
  }
}

// -----

// Left alone: 5 tiles of 32 cover only half of K = 320 (a split of K): a widened loop would
// add the sixth tile's data.
// CHECK-LABEL: func.func @part_of_k
// CHECK: tile.alloc : memref<64x32xf16, "shared">
// CHECK: tile.pipelined {{.*}} stages 3 {
// CHECK: tile.copy {{.*}} [64, 32] to
module attributes {tile.arch = "sm_90a"} {
  func.func @part_of_k(%A: memref<64x320xf16>, %B: memref<320x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %c32 = arith.constant 32 : index
    tile.kernel grid(%c1, %c1) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<64x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.pipelined %c0 to %c5 step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%c0, %k0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<64x320xf16> to memref<64x32xf16, "shared">
        tile.copy %B[%k0, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<320x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}

// -----

// A register-A chain: A's shared tile, its fragment and the copy between them widen along K
// with B; the gemm reads the 64 x 64 fragment.
// CHECK-LABEL: func.func @register_a
// CHECK: %[[AS:.*]] = tile.alloc : memref<64x64xf16, "shared">
// CHECK: %[[AF:.*]] = tile.alloc : memref<64x64xf16, "fragment">
// CHECK: %[[BS:.*]] = tile.alloc : memref<64x64xf16, "shared">
// CHECK: tile.pipelined {{.*}} stages 2 {
// CHECK: tile.copy %arg0[{{.*}}] [64, 64] to %[[AS]]
// CHECK: tile.copy %arg1[{{.*}}] [64, 64] to %[[BS]]
// CHECK: tile.copy %[[AS]][%{{.*}}, %{{.*}}] [64, 64] to %[[AF]][%{{.*}}, %{{.*}}] [64, 64]
// CHECK: tile.gemm %[[AF]], %[[BS]], %{{.*}} : memref<64x64xf16, "fragment">, memref<64x64xf16, "shared">
module attributes {tile.arch = "sm_90a"} {
  func.func @register_a(%A: memref<64x320xf16>, %B: memref<320x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    %c32 = arith.constant 32 : index
    tile.kernel grid(%c1, %c1) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<64x32xf16, "shared">
      %af = tile.alloc : memref<64x32xf16, "fragment">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.pipelined %c0 to %c10 step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%c0, %k0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<64x320xf16> to memref<64x32xf16, "shared">
        tile.copy %B[%k0, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<320x64xf16> to memref<32x64xf16, "shared">
        tile.copy %as[%c0, %c0] [64, 32] to %af[%c0, %c0] [64, 32] : memref<64x32xf16, "shared"> to memref<64x32xf16, "fragment">
        tile.gemm %af, %bs, %acc : memref<64x32xf16, "fragment">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}

// -----

// Left alone: a register-A chain whose fragment a T.Parallel rescales before the gemm (a
// statement besides the copies and the gemm), and below the quickstart's loop on sm_80 and
// without TMA (tile.disable_tma).
// CHECK-LABEL: func.func @register_a_scaled
// CHECK: tile.alloc : memref<64x32xf16, "shared">
// CHECK: tile.alloc : memref<64x32xf16, "fragment">
// CHECK: tile.pipelined {{.*}} stages 3 {
module attributes {tile.arch = "sm_90a"} {
  func.func @register_a_scaled(%A: memref<64x320xf16>, %B: memref<320x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    %c32 = arith.constant 32 : index
    tile.kernel grid(%c1, %c1) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<64x32xf16, "shared">
      %af = tile.alloc : memref<64x32xf16, "fragment">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.pipelined %c0 to %c10 step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%c0, %k0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<64x320xf16> to memref<64x32xf16, "shared">
        tile.copy %B[%k0, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<320x64xf16> to memref<32x64xf16, "shared">
        tile.copy %as[%c0, %c0] [64, 32] to %af[%c0, %c0] [64, 32] : memref<64x32xf16, "shared"> to memref<64x32xf16, "fragment">
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %v = memref.load %af[%i, %j] : memref<64x32xf16, "fragment">
          %w = arith.addf %v, %v : f16
          memref.store %w, %af[%i, %j] : memref<64x32xf16, "fragment">
        }
        tile.gemm %af, %bs, %acc : memref<64x32xf16, "fragment">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}

// -----

// Left alone: a register-A chain over a 128 x 128 accumulator on 128 threads: its 128
// registers a thread and the widened A's 32 pass CHAIN_REGISTERS (144).
// CHECK-LABEL: func.func @register_a_too_wide
// CHECK: tile.alloc : memref<128x32xf16, "fragment">
// CHECK: tile.pipelined {{.*}} stages 3 {
module attributes {tile.arch = "sm_90a"} {
  func.func @register_a_too_wide(%A: memref<128x320xf16>, %B: memref<320x128xf16>, %C: memref<128x128xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    %c32 = arith.constant 32 : index
    tile.kernel grid(%c1, %c1) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x32xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c10 step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%c0, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<128x320xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %c0] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<320x128xf16> to memref<32x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
        tile.gemm %af, %bs, %acc : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<128x128xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @without_tma
// CHECK: tile.alloc : memref<64x32xf16, "shared">
module attributes {tile.arch = "sm_90a", tile.disable_tma} {
  func.func @without_tma(%A: memref<64x320xf16>, %B: memref<320x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    %c32 = arith.constant 32 : index
    tile.kernel grid(%c1, %c1) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<64x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.pipelined %c0 to %c10 step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%c0, %k0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<64x320xf16> to memref<64x32xf16, "shared">
        tile.copy %B[%k0, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<320x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @sm80
// CHECK: tile.alloc : memref<64x32xf16, "shared">
module attributes {tile.arch = "sm_80"} {
  func.func @sm80(%A: memref<64x320xf16>, %B: memref<320x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    %c32 = arith.constant 32 : index
    tile.kernel grid(%c1, %c1) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<64x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.pipelined %c0 to %c10 step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%c0, %k0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<64x320xf16> to memref<64x32xf16, "shared">
        tile.copy %B[%k0, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<320x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}
