// RUN: tilec-opt --widen-register-bound-blocks --split-input-file %s | FileCheck %s

// widen-register-bound-blocks (sm_90a): a block of one warpgroup (128 threads) whose fragments
// need more than the 240 registers a consumer thread has runs on two warpgroups (256 threads),
// each taking 64 of every gemm's 128 rows; kernels that fit, name their threads, or whose
// gemms have fewer rows keep their block.

// Attention's loop at 128 x 128 tiles, d 128 (TileLang's example_mha_fwd_bshd.py, main
// config): S (f32, 128 registers a thread), P (f16, 64) and O (f32, 128) are 320 > 240.
// CHECK-LABEL: func.func @attention_one_warpgroup
// CHECK: tile.kernel grid(%{{.*}}) threads [256]
module attributes {tile.arch = "sm_90a"} {
  func.func @attention_one_warpgroup(%Q: memref<4096x128xf16>, %K: memref<4096x128xf16>, %V: memref<4096x128xf16>, %O: memref<4096x128xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c32) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<128x128xf16, "shared">
      %ks = tile.alloc : memref<128x128xf16, "shared">
      %vs = tile.alloc : memref<128x128xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      %p = tile.alloc : memref<128x128xf16, "fragment">
      %o = tile.alloc : memref<128x128xf32, "fragment">
      %row = arith.muli %bx, %c128 : index
      tile.copy %Q[%row, %c0] [128, 128] to %qs[%c0, %c0] [128, 128] : memref<4096x128xf16> to memref<128x128xf16, "shared">
      tile.pipelined %c0 to %c32 step %c1 stages 1 {
      ^bb0(%k: index):
        %key = arith.muli %k, %c128 : index
        tile.copy %K[%key, %c0] [128, 128] to %ks[%c0, %c0] [128, 128] : memref<4096x128xf16> to memref<128x128xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true} : memref<128x128xf16, "shared">, memref<128x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.parallel [128, 128] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<128x128xf32, "fragment">
          %e = math.exp2 %x : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<128x128xf16, "fragment">
        }
        tile.copy %V[%key, %c0] [128, 128] to %vs[%c0, %c0] [128, 128] : memref<4096x128xf16> to memref<128x128xf16, "shared">
        tile.gemm %p, %vs, %o : memref<128x128xf16, "fragment">, memref<128x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %o[%c0, %c0] [128, 128] to %O[%row, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<4096x128xf32>
    }
    return
  }
}

// -----

// The quickstart GEMM: its 128 x 128 f32 accumulator is 128 registers a thread, which fit.
// CHECK-LABEL: func.func @gemm_fits
// CHECK: tile.kernel grid(%{{.*}}) threads [128]
module attributes {tile.arch = "sm_90a"} {
  func.func @gemm_fits(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    tile.kernel grid(%c8, %c8) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x128xf16, "shared">
      %bs = tile.alloc : memref<128x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.gemm %as, %bs, %acc : memref<128x128xf16, "shared">, memref<128x128xf16, "shared">, memref<128x128xf32, "fragment">
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// The same 128 x 256 accumulator (256 registers a thread) in a kernel that reads its thread
// index: the block's threads mean something to it, so they stay.
// CHECK-LABEL: func.func @names_its_threads
// CHECK: tile.kernel grid(%{{.*}}) threads [128]
module attributes {tile.arch = "sm_90a"} {
  func.func @names_its_threads(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    tile.kernel grid(%c4) threads [128] {
    ^bb0(%bx: index):
      %as = tile.alloc : memref<128x128xf16, "shared">
      %bs = tile.alloc : memref<128x256xf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      tile.gemm %as, %bs, %acc : memref<128x128xf16, "shared">, memref<128x256xf16, "shared">, memref<128x256xf32, "fragment">
      %tx = gpu.thread_id x
      %v = arith.constant 1.0 : f32
      memref.store %v, %C[%tx, %c0] : memref<1024x1024xf32>
    }
    return
  }
}

// -----

// Without the thread index the same kernel is widened: a 128 x 256 accumulator is the tuned
// GEMM's, two warpgroups of 128 registers each.
// CHECK-LABEL: func.func @wide_accumulator
// CHECK: tile.kernel grid(%{{.*}}) threads [256]
module attributes {tile.arch = "sm_90a"} {
  func.func @wide_accumulator(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    tile.kernel grid(%c4) threads [128] {
    ^bb0(%bx: index):
      %as = tile.alloc : memref<128x128xf16, "shared">
      %bs = tile.alloc : memref<128x256xf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      tile.gemm %as, %bs, %acc : memref<128x128xf16, "shared">, memref<128x256xf16, "shared">, memref<128x256xf32, "fragment">
      tile.copy %acc[%c0, %c0] [128, 256] to %C[%c0, %c0] [128, 256] : memref<128x256xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// A 64-row accumulator (MLA decode's block of 64 heads) is one warpgroup's wgmma atom: a second
// warpgroup would have no rows of its own.
// CHECK-LABEL: func.func @sixty_four_rows
// CHECK: tile.kernel grid(%{{.*}}) threads [128]
module attributes {tile.arch = "sm_90a"} {
  func.func @sixty_four_rows(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    tile.kernel grid(%c4) threads [128] {
    ^bb0(%bx: index):
      %as = tile.alloc : memref<64x128xf16, "shared">
      %bs = tile.alloc : memref<128x512xf16, "shared">
      %acc = tile.alloc : memref<64x512xf32, "fragment">
      tile.gemm %as, %bs, %acc : memref<64x128xf16, "shared">, memref<128x512xf16, "shared">, memref<64x512xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 512] to %C[%c0, %c0] [64, 512] : memref<64x512xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// sm_80 has no wgmma warpgroups: the block is left as the user wrote it.
// CHECK-LABEL: func.func @no_wgmma
// CHECK: tile.kernel grid(%{{.*}}) threads [128]
module attributes {tile.arch = "sm_80"} {
  func.func @no_wgmma(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    tile.kernel grid(%c4) threads [128] {
    ^bb0(%bx: index):
      %as = tile.alloc : memref<128x128xf16, "shared">
      %bs = tile.alloc : memref<128x256xf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      tile.gemm %as, %bs, %acc : memref<128x128xf16, "shared">, memref<128x256xf16, "shared">, memref<128x256xf32, "fragment">
      tile.copy %acc[%c0, %c0] [128, 256] to %C[%c0, %c0] [128, 256] : memref<128x256xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}
