// RUN: tilec-opt --plan-wgmma-gemms --infer-fragment-layout --insert-shared-barriers --lower-tile-to-gpu --split-input-file %s | FileCheck %s
// A tile.gemm that plan-wgmma-gemms marked becomes wgmma where it stands (compiler/passes/
// _wgmma.py): its operand tiles are flat views on 1 KiB boundaries that copies write through
// the swizzle (16-byte chunk index XOR-ed with the row's place in the pattern); the gemm fences
// those generic-proxy writes for the async proxy, then per 32-byte K step one
// wgmma.mma_async over the accumulator's registers, with descriptors (address >> 4 | constant
// bits: A K-major with 64-byte rows, B MN-major in one 128-byte box of 32 rows; a later K step's
// or atom's the first's plus its byte offset >> 4), then commit and wait for the group before
// the accumulator is read.

// CHECK-LABEL: gpu.func @gemm_then_store
// the two 4 KiB tiles from the window's first 1 KiB boundary (found at run time: up to 1 KiB
// in)
// CHECK-SAME: tile.shared_bytes = 9216 : i64
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[START:.*]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: %[[FROM:.*]] = arith.remui %[[START]], %c1024
// CHECK: %[[GAP:.*]] = arith.subi %c1024{{.*}}, %[[FROM]]
// CHECK: %[[BASE:.*]] = arith.remui %[[GAP]], %c1024
// CHECK: %[[AS:.*]] = memref.view %[[SMEM]][%[[BASE]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2048xf16, #gpu.address_space<workgroup>>
// CHECK: %[[BOFF:.*]] = arith.addi %[[BASE]], %c4096
// CHECK: %[[BS:.*]] = memref.view %[[SMEM]][%[[BOFF]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2048xf16, #gpu.address_space<workgroup>>
// the copy into A: 16-byte vectors at swizzled offsets
// CHECK: arith.xori
// CHECK: vector.store %{{.*}}, %[[AS]][%{{.*}}] {alignment = 16 : i64}
// CHECK: arith.xori
// CHECK: vector.store %{{.*}}, %[[BS]][%{{.*}}] {alignment = 16 : i64}
// CHECK: gpu.barrier
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// each operand's descriptor made once at the gemm and kept there (an empty asm LLVM does not
// hoist out of a loop), every K step's an offset >> 4 added to it
// CHECK: memref.extract_aligned_pointer_as_index %[[AS]]
// CHECK: %[[ABITS:.*]] = arith.constant -9223371899415756800 : i64
// CHECK: %[[A0:.*]] = arith.ori %{{.*}}, %[[ABITS]] : i64
// CHECK: %[[DA:.*]] = llvm.inline_asm has_side_effects "", "=l,0" %[[A0]] : (i64) -> i64
// CHECK: memref.extract_aligned_pointer_as_index %[[BS]]
// CHECK: %[[BBITS:.*]] = arith.constant 4611686293322072064 : i64
// CHECK: %[[B0:.*]] = arith.ori %{{.*}}, %[[BBITS]] : i64
// CHECK: %[[DB:.*]] = llvm.inline_asm has_side_effects "", "=l,0" %[[B0]] : (i64) -> i64
// CHECK: nvvm.wgmma.fence.aligned
// 32 accumulators (tied in and out), the descriptors, scale-d = 1: D += A * B
// CHECK: llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ne.b32 p, $66, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}, $31}, $64, $65, p, 1, 1, 0, 1; }", "=f,{{.*}},=f,0,{{.*}},31,l,l,r" {{.*}}, %[[DA]], %[[DB]], %c1_i32
// second K step: B 16 rows of 128 bytes down (2048 >> 4), A 32 bytes along its rows (32 >> 4)
// CHECK: %[[DB1:.*]] = arith.addi %[[DB]], %c128_i64
// CHECK: %[[DA1:.*]] = arith.addi %[[DA]], %c2_i64
// CHECK: llvm.inline_asm has_side_effects {{.*}}m64n64k16{{.*}}, %[[DA1]], %[[DB1]], %c1_i32
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

// -----

// A cp.async pipeline whose only work is the gemm: the copies are fenced for wgmma before the
// iteration's barrier; each gemm's group stays in flight through the next iteration's wait, so
// the ring has S + 1 = 4 slots (1 KiB + 4 x 8 KiB) and iteration i waits for gemm i - 2 (the
// reader of the slot it refills) before its barrier; the drain waits for the last gemm.
// CHECK-LABEL: gpu.func @pipelined
// CHECK-SAME: tile.shared_bytes = 33792 : i64
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
module attributes {tile.arch = "sm_90a"} {
  func.func @pipelined(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %zero = arith.constant 0.0 : f32
      %as = tile.alloc : memref<64x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
      tile.pipelined %c0 to %c8 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%c0, %k0] [64, 32] to %as[%c0, %c0] [64, 32] {tile.async = "cp.async"} : memref<256x256xf16> to memref<64x32xf16, "shared">
        tile.copy %B[%k0, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] {tile.async = "cp.async"} : memref<256x256xf16> to memref<32x64xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}

// -----

// A from registers: per K step the fragment's f16 pairs are packed into wgmma's a0..a3 (32-bit
// registers, constraint "r") and only B has a descriptor. Every register the wgmmas read, A's
// and the accumulator's, is pinned by an empty asm before wgmma.fence, so LLVM does not sink
// the packing between the wgmmas (ptxas would fence again before each one).
// CHECK-LABEL: gpu.func @register_a
// CHECK: llvm.inline_asm has_side_effects "", "=f,0"
// CHECK: vector.bitcast %{{.*}} : vector<2xf16> to vector<1xi32>
// CHECK: llvm.inline_asm has_side_effects "", "=r,0"
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: vector.bitcast
// CHECK: llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ne.b32 p, $69, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}, $31}, {$64, $65, $66, $67}, $68, p, 1, 1, 1; }", "=f,{{.*}},31,r,r,r,r,l,r"
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
module attributes {tile.arch = "sm_90a"} {
  func.func @register_a(%A: memref<64x16xf16>, %B: memref<16x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0.0 : f32
      %af = tile.alloc : memref<64x16xf16, "fragment">
      %bs = tile.alloc : memref<16x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
      tile.copy %A[%c0, %c0] [64, 16] to %af[%c0, %c0] [64, 16] : memref<64x16xf16> to memref<64x16xf16, "fragment">
      tile.copy %B[%c0, %c0] [16, 64] to %bs[%c0, %c0] [16, 64] : memref<16x64xf16> to memref<16x64xf16, "shared">
      tile.gemm %af, %bs, %acc {tile.mma = {a_source = "registers", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x16xf16, "fragment">, memref<16x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}

// -----

// A stored K x M (transpose_A), MN-major like B: both descriptors take the MN-major bits (8-row
// K groups 1 KiB apart, the 64-column boxes 32 x 128 bytes apart), the instruction's
// transpose-A and transpose-B bits are set; atom 1 (rows 64..127 of C) reads A's second box,
// 4 KiB on; the second K step is 16 rows (2 KiB) down both tiles (atom 1: 6 KiB).
// CHECK-LABEL: gpu.func @transposed_a
// CHECK: %[[ABITS:.*]] = arith.constant 4611686293322072064 : i64
// CHECK: %[[A0:.*]] = arith.ori %{{.*}}, %[[ABITS]] : i64
// CHECK: %[[DA:.*]] = llvm.inline_asm has_side_effects "", "=l,0" %[[A0]]
// CHECK: %[[BBITS:.*]] = arith.constant 4611686293322072064 : i64
// CHECK: %[[B0:.*]] = arith.ori %{{.*}}, %[[BBITS]] : i64
// CHECK: %[[DB:.*]] = llvm.inline_asm has_side_effects "", "=l,0" %[[B0]]
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects {{.*}}m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 1, 1; }"{{.*}}, %[[DA]], %[[DB]], %c1_i32
// CHECK: arith.addi %[[DA]], %c256_i64
// CHECK: llvm.inline_asm has_side_effects {{.*}}m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 1, 1; }"
// CHECK: arith.addi %[[DB]], %c128_i64
// CHECK: arith.addi %[[DA]], %c128_i64
// CHECK: llvm.inline_asm has_side_effects {{.*}}m64n64k16
// CHECK: arith.addi %[[DA]], %c384_i64
// CHECK: llvm.inline_asm has_side_effects {{.*}}m64n64k16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
module attributes {tile.arch = "sm_90a"} {
  func.func @transposed_a(%A: memref<32x128xf16>, %B: memref<32x64xf16>, %C: memref<128x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0.0 : f32
      %as = tile.alloc : memref<32x128xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<128x64xf32, "fragment">
      tile.fill %acc, %zero : memref<128x64xf32, "fragment">, f32
      tile.copy %A[%c0, %c0] [32, 128] to %as[%c0, %c0] [32, 128] : memref<32x128xf16> to memref<32x128xf16, "shared">
      tile.copy %B[%c0, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, "shared">
      tile.gemm %as, %bs, %acc {transpose_a = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<32x128xf16, "shared">, memref<32x64xf16, "shared">, memref<128x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [128, 64] to %C[%c0, %c0] [128, 64] : memref<128x64xf32, "fragment"> to memref<128x64xf32>
    }
    return
  }
}

// -----

// 384 threads, layouts over 256 (two warpgroups split A's 128 rows): the third warpgroup runs
// as a copy of the first, so its index is taken modulo 2 before A's descriptor starts its
// 64-row slab (64 rows x 64 bytes = 4096 bytes) in; unmasked it would read rows 128..191, past
// the tile, and store them over the first warpgroup's rows.
// CHECK-LABEL: gpu.func @copy_warpgroup
// CHECK: %[[A:.*]] = memref.extract_aligned_pointer_as_index %[[AS:.*]] : memref<4096xf16
// CHECK: %[[GROUP:.*]] = arith.divui %thread_id_x, %c128
// CHECK: %[[MASKED:.*]] = arith.andi %[[GROUP]], %c1
// CHECK: %[[RAW:.*]] = arith.index_cast %[[MASKED]] : index to i32
// CHECK: %[[UNIFORM:.*]], %{{.*}} = gpu.shuffle  idx %[[RAW]]
// CHECK: %[[G:.*]] = arith.index_cast %[[UNIFORM]] : i32 to index
// CHECK: %[[SLAB:.*]] = arith.muli %[[G]], %c4096
// CHECK: %[[START:.*]] = arith.addi %[[A]], %[[SLAB]]
// CHECK: arith.index_cast %[[START]] : index to i64
// CHECK: llvm.inline_asm has_side_effects "", "=l,0"
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16
module attributes {tile.arch = "sm_90a"} {
  func.func @copy_warpgroup(%A: memref<128x32xf16>, %B: memref<32x64xf16>, %C: memref<128x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [384] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0.0 : f32
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<128x64xf32, "fragment">
      tile.fill %acc, %zero : memref<128x64xf32, "fragment">, f32
      tile.copy %A[%c0, %c0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<128x32xf16> to memref<128x32xf16, "shared">
      tile.copy %B[%c0, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, "shared">
      tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 2 : i64}} : memref<128x32xf16, "shared">, memref<32x64xf16, "shared">, memref<128x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [128, 64] to %C[%c0, %c0] [128, 64] : memref<128x64xf32, "fragment"> to memref<128x64xf32>
    }
    return
  }
}

// -----

// The same gemm in a block of exactly its two warpgroups: no copies, no mask.
// CHECK-LABEL: gpu.func @two_warpgroups
// CHECK: %[[GROUP:.*]] = arith.divui %thread_id_x, %c128
// CHECK-NOT: arith.andi %[[GROUP]]
// CHECK: %[[RAW:.*]] = arith.index_cast %[[GROUP]] : index to i32
// CHECK: gpu.shuffle  idx %[[RAW]]
// CHECK: nvvm.wgmma.fence.aligned
module attributes {tile.arch = "sm_90a"} {
  func.func @two_warpgroups(%A: memref<128x32xf16>, %B: memref<32x64xf16>, %C: memref<128x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g, %g) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0.0 : f32
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<128x64xf32, "fragment">
      tile.fill %acc, %zero : memref<128x64xf32, "fragment">, f32
      tile.copy %A[%c0, %c0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<128x32xf16> to memref<128x32xf16, "shared">
      tile.copy %B[%c0, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, "shared">
      tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 2 : i64}} : memref<128x32xf16, "shared">, memref<32x64xf16, "shared">, memref<128x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [128, 64] to %C[%c0, %c0] [128, 64] : memref<128x64xf32, "fragment"> to memref<128x64xf32>
    }
    return
  }
}
