// RUN: tilec-opt --plan-wgmma-gemms --infer-fragment-layout --insert-shared-barriers --plan-shared-memory --lower-tile-to-gpu --split-input-file %s | FileCheck %s
// A gemm reading column slices of larger shared tiles in place (plan-wgmma-gemms'
// tile.read_in_place copies): the slices take no shared memory of their own, the copies move
// nothing, and each wgmma descriptor starts at the larger tile's address plus the slice's
// first column box (column / 64 * rows * 128 bytes).

// Q and KV are 64 x 128 f16 tiles (two 8 KiB boxes each); the gemm reads columns 64..127 of
// both (box 1: 8192 bytes in). The arena holds Q and KV only (16 KiB each, from the window's
// first 1 KiB boundary).
// CHECK-LABEL: gpu.func @second_box
// CHECK-SAME: tile.shared_bytes = 33792 : i64
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[Q:.*]] = memref.view %[[SMEM]]{{.*}} to memref<8192xf16, #gpu.address_space<workgroup>>
// CHECK: %[[KV:.*]] = memref.view %[[SMEM]]{{.*}} to memref<8192xf16, #gpu.address_space<workgroup>>
// CHECK: %[[WINDOW:.*]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: %[[QADDR:.*]] = memref.extract_aligned_pointer_as_index %[[Q]]
// CHECK: %[[QFROM:.*]] = arith.subi %[[QADDR]], %[[WINDOW]]
// CHECK: %[[QBOX:.*]] = arith.muli %{{.*}}, %c8192
// CHECK: %[[QAT:.*]] = arith.addi %[[QFROM]], %[[QBOX]]
// CHECK: %[[QS:.*]] = memref.view %[[SMEM]][%[[QAT]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4096xf16, #gpu.address_space<workgroup>>
// CHECK: %[[KVADDR:.*]] = memref.extract_aligned_pointer_as_index %[[KV]]
// CHECK: %[[KVS:.*]] = memref.view %[[SMEM]]{{.*}} to memref<4096xf16, #gpu.address_space<workgroup>>
// no element is copied between the tiles
// CHECK-NOT: vector.load %[[Q]]
// CHECK: memref.extract_aligned_pointer_as_index %[[QS]]
// CHECK: memref.extract_aligned_pointer_as_index %[[KVS]]
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
module attributes {tile.arch = "sm_90a"} {
  func.func @second_box(%Q: memref<64x128xf16>, %KV: memref<64x128xf16>, %S: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0.0 : f32
      %q = tile.alloc : memref<64x128xf16, "shared">
      %kv = tile.alloc : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x64xf32, "fragment">
      tile.copy %Q[%c0, %c0] [64, 128] to %q[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, "shared">
      tile.copy %KV[%c0, %c0] [64, 128] to %kv[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, "shared">
      tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
      %qs = tile.alloc : memref<64x64xf16, "shared">
      tile.copy %q[%c0, %c64] [64, 64] to %qs[%c0, %c0] [64, 64] : memref<64x128xf16, "shared"> to memref<64x64xf16, "shared">
      %ks = tile.alloc : memref<64x64xf16, "shared">
      tile.copy %kv[%c0, %c64] [64, 64] to %ks[%c0, %c0] [64, 64] : memref<64x128xf16, "shared"> to memref<64x64xf16, "shared">
      tile.gemm %qs, %ks, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 64] to %S[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}
