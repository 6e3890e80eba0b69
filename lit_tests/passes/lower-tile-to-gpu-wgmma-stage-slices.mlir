// RUN: tilec-opt --plan-wgmma-gemms --infer-fragment-layout --insert-shared-barriers --plan-shared-memory --lower-tile-to-gpu --split-input-file %s | FileCheck %s
// A gemm reading a column slice of one stage of a 3-d stage buffer in place (plan-wgmma-gemms'
// tile.read_in_place on a copy of box [1, rows, columns]): the buffer is one flat view laid out
// stage after stage (StackedOperandLayout), every write of stage s lands s * 8192 elements in,
// and the wgmma descriptor starts at the buffer's address plus the slice's first column box
// (column / 64 * 8192 bytes) plus the stage's bytes (stage * 16384), the stage a loop value.

// Q is a 64 x 64 f16 tile, KV a 2 x 64 x 128 one (16 KiB a stage); each iteration's gemm reads
// columns 64..127 of stage %s. The arena holds Q and KV only.
// CHECK-LABEL: gpu.func @stage_box
// CHECK-SAME: tile.shared_bytes = 41984 : i64
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[KV:.*]] = memref.view %[[SMEM]]{{.*}} to memref<16384xf16, #gpu.address_space<workgroup>>
// the copy into stage 1 goes 8192 elements (one stage) in
// CHECK: arith.muli %c1{{.*}}, %c8192 : index
// CHECK: vector.store %{{.*}}, %[[KV]]
// CHECK: scf.for %[[S:.*]] = %c0{{.*}} to %c2
// CHECK: %[[BOX:.*]] = arith.divui %c64{{.*}}, %c64{{.*}} : index
// CHECK: %[[WINDOW:.*]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[KV]]
// CHECK: %[[FROM:.*]] = arith.subi %[[ADDR]], %[[WINDOW]]
// CHECK: %[[BOXBYTES:.*]] = arith.muli %[[BOX]], %c8192
// CHECK: %[[AT:.*]] = arith.addi %[[FROM]], %[[BOXBYTES]]
// CHECK: %[[STAGEBYTES:.*]] = arith.muli %[[S]], %c16384
// CHECK: %[[START:.*]] = arith.addi %[[AT]], %[[STAGEBYTES]]
// CHECK: %[[SLICE:.*]] = memref.view %[[SMEM]][%[[START]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4096xf16, #gpu.address_space<workgroup>>
// no element is copied out of the stage
// CHECK-NOT: vector.load %[[KV]]
// CHECK: memref.extract_aligned_pointer_as_index %[[SLICE]]
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
module attributes {tile.arch = "sm_90a"} {
  func.func @stage_box(%Q: memref<64x128xf16>, %KV: memref<128x128xf16>, %S: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0.0 : f32
      %q = tile.alloc : memref<64x64xf16, "shared">
      %kv = tile.alloc : memref<2x64x128xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x64xf32, "fragment">
      tile.copy %Q[%c0, %c0] [64, 64] to %q[%c0, %c0] [64, 64] : memref<64x128xf16> to memref<64x64xf16, "shared">
      tile.copy %KV[%c0, %c0] [64, 128] to %kv[%c0, %c0, %c0] [1, 64, 128] : memref<128x128xf16> to memref<2x64x128xf16, "shared">
      tile.copy %KV[%c64, %c0] [64, 128] to %kv[%c1, %c0, %c0] [1, 64, 128] : memref<128x128xf16> to memref<2x64x128xf16, "shared">
      tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
      tile.for %c0 to %c2 step %c1 {
      ^bb0(%s: index):
        %ks = tile.alloc : memref<64x64xf16, "shared">
        tile.copy %kv[%s, %c0, %c64] [1, 64, 64] to %ks[%c0, %c0] [64, 64] : memref<2x64x128xf16, "shared"> to memref<64x64xf16, "shared">
        tile.gemm %q, %ks, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %S[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}
