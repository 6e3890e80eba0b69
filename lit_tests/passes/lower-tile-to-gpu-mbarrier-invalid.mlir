// RUN: not tilec-opt --lower-tile-to-gpu %s --split-input-file 2>&1 | FileCheck %s
// What the CUDA lowering of user synchronization refuses: a fragment in a T.ws block over part
// of the block laid out over the whole block (its layout names the other threads;
// infer-fragment-layout lays such fragments out over the block's warpgroups), warpgroups that
// are not adjacent, and a one-thread op (tma_copy, expect_tx) under a condition on the thread
// index.

// CHECK: lower-tile-to-gpu-mbarrier-invalid.mlir:15: error: this fragment is laid out over 256 threads, but the T.ws block using it runs on 128
func.func @fragment_in_half(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %f = tile.alloc {tile.layout = #tile.linear<[256], register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64], [128]]>} : memref<256xf32, "fragment">
    %zero = arith.constant 0.0 : f32
    tile.warpgroups [1] {
      tile.fill %f, %zero : memref<256xf32, "fragment">, f32
    }
  }
  return
}

// -----

// CHECK: lower-tile-to-gpu-mbarrier-invalid.mlir:27: error: T.ws over warpgroups [0, 2] that are not adjacent
func.func @gap(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [384] {
  ^bb0(%bx: index):
    tile.warpgroups [0, 2] {
    }
  }
  return
}

// -----

// CHECK: lower-tile-to-gpu-mbarrier-invalid.mlir:46: error: T.mbarrier_expect_tx is issued by the first thread of those running it, but it stands under a condition on the thread index
func.func @divergent(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %bytes = arith.constant 64 : i32
    %bars = tile.alloc_barrier [1] : memref<1xi64, "barrier">
    %tid = gpu.thread_id x
    %upper = arith.cmpi uge, %tid, %c128 : index
    scf.if %upper {
      tile.mbarrier_expect_tx %bars[%c0], %bytes : memref<1xi64, "barrier">
    }
  }
  return
}
