// RUN: tilec-opt --plan-wgmma-gemms --infer-fragment-layout --insert-shared-barriers --lower-tile-to-gpu %s | FileCheck %s
// A tile.gemm that plan-wgmma-gemms marked becomes wgmma where it stands (compiler/passes/
// _wgmma.py): its operand tiles are flat views on 1 KiB boundaries that copies write through
// the swizzle (16-byte chunk index XOR-ed with the row's place in the pattern); the gemm fences
// those generic-proxy writes for the async proxy, then per 32-byte K step one
// wgmma.mma_async over the accumulator's registers, with descriptors (address >> 4 | constant
// bits: A K-major with 64-byte rows, B MN-major in one 128-byte box of 32 rows), then commit and
// wait for the group before the accumulator is read.

// CHECK-LABEL: gpu.func @gemm_then_store
// 1 KiB to find the window's first 1 KiB boundary, then the two 4 KiB tiles
// CHECK-SAME: tile.shared_bytes = 9216 : i64
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[START:.*]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: %[[FROM:.*]] = arith.remui %[[START]], %c1024
// CHECK: %[[GAP:.*]] = arith.subi %c1024{{.*}}, %[[FROM]]
// CHECK: %[[BASE:.*]] = arith.remui %[[GAP]], %c1024
// CHECK: %[[AOFF:.*]] = arith.addi %[[BASE]], %c1024
// CHECK: %[[AS:.*]] = memref.view %[[SMEM]][%[[AOFF]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2048xf16, #gpu.address_space<workgroup>>
// CHECK: %[[BOFF:.*]] = arith.addi %[[BASE]], %c5120
// CHECK: %[[BS:.*]] = memref.view %[[SMEM]][%[[BOFF]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2048xf16, #gpu.address_space<workgroup>>
// the copy into A: 16-byte vectors at swizzled offsets
// CHECK: arith.xori
// CHECK: vector.store %{{.*}}, %[[AS]][%{{.*}}] {alignment = 16 : i64}
// CHECK: arith.xori
// CHECK: vector.store %{{.*}}, %[[BS]][%{{.*}}] {alignment = 16 : i64}
// CHECK: gpu.barrier
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: memref.extract_aligned_pointer_as_index %[[AS]]
// CHECK: memref.extract_aligned_pointer_as_index %[[BS]]
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[BBITS:.*]] = arith.constant 4611686293322072064 : i64
// CHECK: %[[DB:.*]] = arith.ori %{{.*}}, %[[BBITS]] : i64
// CHECK: %[[ABITS:.*]] = arith.constant -9223371899415756800 : i64
// CHECK: %[[DA:.*]] = arith.ori %{{.*}}, %[[ABITS]] : i64
// 32 accumulators (tied in and out), the descriptors, scale-d = 1: D += A * B
// CHECK: llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ne.b32 p, $66, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}, $31}, $64, $65, p, 1, 1, 0, 1; }", "=f,{{.*}},=f,0,{{.*}},31,l,l,r" {{.*}}, %[[DA]], %[[DB]], %c1_i32
// second K step: B 16 rows of 128 bytes down, A 32 bytes along its rows
// CHECK: arith.addi %{{.*}}, %c2048
// CHECK: arith.addi %{{.*}}, %c32
// CHECK: llvm.inline_asm has_side_effects {{.*}}m64n64k16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: llvm.inline_asm
// CHECK: gpu.return
module attributes {tile.arch = "sm_90a"} {
  func.func @gemm_then_store(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0.0 : f32
      %as = tile.alloc : memref<64x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
      tile.copy %A[%c0, %c0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, "shared">
      tile.copy %B[%c0, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, "shared">
      tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}
