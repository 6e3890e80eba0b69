// RUN: tilec-opt --plan-mma-sync-gemms --infer-fragment-layout --plan-shared-memory --insert-shared-barriers --lower-tile-to-gpu --split-input-file --verify-diagnostics %s | FileCheck %s
// The register-A chain on sm_80: plan-mma-sync-gemms marks the copy of A's whole shared tile
// into the gemm's fragment A (tile.mma_sync_load), and lower-tile-to-gpu loads it the way a
// shared A is read: per warp, 16 rows and 32 bytes of K, one x4 ldmatrix (not .trans: the tile
// is K-major) at the lane's swizzled address, its four registers split into the fragment's f16
// pairs (a0: rows g, K 2t..2t+1; a1: rows g + 8; a2, a3: K + 8), after the barrier that
// publishes the tile. B (K x N) is read with ldmatrix.trans by the gemm.

// CHECK-LABEL: gpu.func @register_a
// CHECK: memref.store %{{.*}} : memref<2048xf16, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-NOT: memref.load %{{.*}} : memref<2048xf16, #gpu.address_space<workgroup>>
// CHECK: %[[A0:.*]] = llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4];"
// CHECK-NEXT: %[[R0:.*]] = llvm.extractvalue %[[A0]][0]
// CHECK: %[[W0:.*]] = vector.from_elements %[[R0]] : vector<1xi32>
// CHECK-NEXT: %[[H0:.*]] = vector.bitcast %[[W0]] : vector<1xi32> to vector<2xf16>
// CHECK-NEXT: %[[E0:.*]] = vector.extract %[[H0]][0] : f16 from vector<2xf16>
// CHECK-NEXT: %[[E1:.*]] = vector.extract %[[H0]][1] : f16 from vector<2xf16>
// CHECK-NEXT: %[[S0:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.store %[[E0]], %[[REGS:.*]][%[[S0]]] : memref<32xf16>
// CHECK-NEXT: %[[S1:.*]] = arith.constant 1 : index
// CHECK-NEXT: memref.store %[[E1]], %[[REGS]][%[[S1]]] : memref<32xf16>
// three more x4 loads: 2 pieces of 16 rows x 2 K steps for a warp's 32 x 32 A
// CHECK-COUNT-3: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-NOT: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-NOT: memref.load %{{.*}} : memref<2048xf16, #gpu.address_space<workgroup>>
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
module attributes {tile.arch = "sm_80"} {
  func.func @register_a(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x32xf16, "shared">
      %af = tile.alloc : memref<64x32xf16, "fragment">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, "shared">
      tile.copy %B[%c0, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, "shared">
      tile.copy %as[%c0, %c0] [64, 32] to %af[%c0, %c0] [64, 32] : memref<64x32xf16, "shared"> to memref<64x32xf16, "fragment">
      tile.gemm %af, %bs, %acc {clear_accum = true, tile.mma = {a_source = "registers", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<64x32xf16, "fragment">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}

// -----

module attributes {tile.arch = "sm_80"} {
  func.func @load_without_layout(%C: memref<64x32xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<64x32xf16, "shared">
      %af = tile.alloc {tile.layout = #tile.linear<[64, 32], register = [[0, 1], [8, 0], [0, 8], [0, 16], [16, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[0, 0], [32, 0]]>} : memref<64x32xf16, "fragment">
      // expected-error @+1 {{a tile.mma_sync_load copy reads a shared tile with tile.shared_layout into a fragment (plan-mma-sync-gemms)}}
      tile.copy %as[%c0, %c0] [64, 32] to %af[%c0, %c0] [64, 32] {tile.mma_sync_load = {a_registers = true, dtype = "f16", k = 16 : i64, warps_m = 2 : i64, warps_n = 2 : i64}} : memref<64x32xf16, "shared"> to memref<64x32xf16, "fragment">
      tile.copy %af[%c0, %c0] [64, 32] to %C[%c0, %c0] [64, 32] : memref<64x32xf16, "fragment"> to memref<64x32xf16>
    }
    return
  }
}

// -----

// The cp.async pipeline of a loop of mma.sync gemms checks its sources' bases and row lengths
// once, before the loop: where they are aligned it runs the loop of cp.async, with no branch
// around the copies, else the same loop reading element by element. The ldmatrix of A's piece 16 rows down and of B's second K step
// (16 rows down its K x N tile) address an immediate past the lane's first address: the
// swizzle keeps moves by whole 8-row blocks constant.
// CHECK-LABEL: gpu.func @loop_versions
// A's and B's bases and row lengths:
// CHECK: %[[A1:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[A2:.*]] = arith.andi %[[A1]], %{{.*}} : i1
// CHECK-NEXT: %[[ALIGNED:.*]] = arith.andi %[[A2]], %{{.*}} : i1
// CHECK-NEXT: scf.if %[[ALIGNED]] {
// CHECK-NOT: memref.load %{{.*}} : memref<?x?xf16, 1>
// CHECK: nvgpu.device_async_copy
// CHECK: scf.for
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: memref.load %{{.*}} : memref<?x?xf16, 1>
// CHECK: nvgpu.device_async_copy
// CHECK: "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4];"
// CHECK: "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4+1024];"
// CHECK: "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [$4];"
// CHECK: mma.sync.aligned.m16n8k16
// CHECK: "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [$4+2048];"
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: } else {
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: memref.load %{{.*}} : memref<?x?xf16, 1>
// CHECK: scf.for
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: mma.sync.aligned.m16n8k16
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: gpu.return
module attributes {tile.arch = "sm_80"} {
  func.func @loop_versions(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<64x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %K = memref.dim %A, %c1 : memref<?x?xf16>
    %kt = arith.ceildivui %K, %c32 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %as = tile.alloc : memref<64x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
      tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {stages = 3 : i64, k_tile = 32 : i64, mechanism = "cp.async"}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%c0, %k0] [64, 32] to %as[%c0, %c0] [64, 32] {tile.async = "cp.async"} : memref<?x?xf16> to memref<64x32xf16, "shared">
        tile.copy %B[%k0, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] {tile.async = "cp.async"} : memref<?x?xf16> to memref<32x64xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
    return
  }
}
