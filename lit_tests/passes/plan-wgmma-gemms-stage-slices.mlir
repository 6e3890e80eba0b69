// RUN: tilec-opt --plan-wgmma-gemms --split-input-file %s | FileCheck %s

// plan-wgmma-gemms (sm_90a) on operands that are column slices of one stage of a 3-d stage
// buffer (`KV_shared[stage, :, :256]`, the frontend's copy of box [1, rows, columns]): where
// the slice starts at a whole column box of the stage, laid out as the slice's tile, and a
// stage is a whole number of 1 KiB swizzle patterns, the copy gets tile.read_in_place and the
// stage buffer the slice's layout, stacked over its stages (every stage one operand tile,
// stage s from s * stage bytes on); the stage index may be a constant or a loop value.

// MLA decode: per stage of a 2 x 64 x 512 buffer, Q K^T over its two 256-column halves
// (K-major, the stage a loop value) and P V over its first half (MN-major, B as K x N); the
// 64-column tail buffer is read whole, at the constant stage 1.
// CHECK-LABEL: func.func @stage_slices
// CHECK: %[[KV:.*]] = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<2x64x512xf16, "shared">
// CHECK: %[[KT:.*]] = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<2x64x64xf16, "shared">
// CHECK: tile.for
// CHECK: ^bb0(%[[S:.*]]: index):
// CHECK: tile.copy %[[KV]][%[[S]], %{{.*}}, %c0{{.*}}] [1, 64, 256] to %{{.*}} {tile.read_in_place = {box_bytes = 8192 : i64, columns = 64 : i64}}
// CHECK: tile.gemm {{.*}}tile.wgmma =
// CHECK: tile.copy %[[KV]][%[[S]], %{{.*}}, %c256] [1, 64, 256] to %{{.*}} {tile.read_in_place = {box_bytes = 8192 : i64, columns = 64 : i64}}
// CHECK: tile.gemm {{.*}}tile.wgmma =
// CHECK: tile.copy %[[KT]][%c1{{[_0-9]*}}, %{{.*}}, %{{.*}}] [1, 64, 64] to %{{.*}} {tile.read_in_place = {box_bytes = 8192 : i64, columns = 64 : i64}}
// CHECK: tile.gemm {{.*}}tile.wgmma =
// CHECK: %[[V:.*]] = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x256xf16, "shared">
// CHECK: tile.copy %[[KV]][%[[S]], %{{.*}}, %{{.*}}] [1, 64, 256] to %[[V]]{{.*}} {tile.read_in_place = {box_bytes = 8192 : i64, columns = 64 : i64}}
// CHECK: tile.gemm %{{.*}}, %[[V]], %{{.*}} {{.*}}tile.wgmma =
module attributes {tile.arch = "sm_90a"} {
  func.func @stage_slices(%Q: memref<64x576xf16>, %KV: memref<64x576xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c256 = arith.constant 256 : index
      %c512 = arith.constant 512 : index
      %q = tile.alloc : memref<64x512xf16, "shared">
      %qt = tile.alloc : memref<64x64xf16, "shared">
      %kv = tile.alloc : memref<2x64x512xf16, "shared">
      %kt = tile.alloc : memref<2x64x64xf16, "shared">
      %p = tile.alloc : memref<64x64xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x64xf32, "fragment">
      %acc_o = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x256xf32, "fragment">
      tile.copy %Q[%c0, %c0] [64, 512] to %q[%c0, %c0] [64, 512] : memref<64x576xf16> to memref<64x512xf16, "shared">
      tile.copy %Q[%c0, %c512] [64, 64] to %qt[%c0, %c0] [64, 64] : memref<64x576xf16> to memref<64x64xf16, "shared">
      tile.copy %KV[%c0, %c0] [64, 512] to %kv[%c0, %c0, %c0] [1, 64, 512] : memref<64x576xf16> to memref<2x64x512xf16, "shared">
      tile.copy %KV[%c0, %c0] [64, 512] to %kv[%c1, %c0, %c0] [1, 64, 512] : memref<64x576xf16> to memref<2x64x512xf16, "shared">
      tile.copy %KV[%c0, %c512] [64, 64] to %kt[%c1, %c0, %c0] [1, 64, 64] : memref<64x576xf16> to memref<2x64x64xf16, "shared">
      tile.for %c0 to %c2 step %c1 {
      ^bb0(%s: index):
        %qa = tile.alloc : memref<64x256xf16, "shared">
        tile.copy %q[%c0, %c0] [64, 256] to %qa[%c0, %c0] [64, 256] : memref<64x512xf16, "shared"> to memref<64x256xf16, "shared">
        %ka = tile.alloc : memref<64x256xf16, "shared">
        tile.copy %kv[%s, %c0, %c0] [1, 64, 256] to %ka[%c0, %c0] [64, 256] : memref<2x64x512xf16, "shared"> to memref<64x256xf16, "shared">
        tile.gemm %qa, %ka, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x256xf16, "shared">, memref<64x256xf16, "shared">, memref<64x64xf32, "fragment">
        %qb = tile.alloc : memref<64x256xf16, "shared">
        tile.copy %q[%c0, %c256] [64, 256] to %qb[%c0, %c0] [64, 256] : memref<64x512xf16, "shared"> to memref<64x256xf16, "shared">
        %kb = tile.alloc : memref<64x256xf16, "shared">
        tile.copy %kv[%s, %c0, %c256] [1, 64, 256] to %kb[%c0, %c0] [64, 256] : memref<2x64x512xf16, "shared"> to memref<64x256xf16, "shared">
        tile.gemm %qb, %kb, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x256xf16, "shared">, memref<64x256xf16, "shared">, memref<64x64xf32, "fragment">
        %kc = tile.alloc : memref<64x64xf16, "shared">
        tile.copy %kt[%c1, %c0, %c0] [1, 64, 64] to %kc[%c0, %c0] [64, 64] : memref<2x64x64xf16, "shared"> to memref<64x64xf16, "shared">
        tile.gemm %qt, %kc, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
        %v = tile.alloc : memref<64x256xf16, "shared">
        tile.copy %kv[%s, %c0, %c0] [1, 64, 256] to %v[%c0, %c0] [64, 256] : memref<2x64x512xf16, "shared"> to memref<64x256xf16, "shared">
        tile.gemm %p, %v, %acc_o {tile.mma = {a_source = "shared", instr = array<i64: 64, 256, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x256xf16, "shared">, memref<64x256xf32, "fragment">
      }
    }
    return
  }
}

// -----

// Stage slices that keep their copies (no tile.read_in_place, the stage buffers no layout):
// one starting inside a 128-byte box (column 32), one of some of the stage's rows, and one of
// a stage buffer written between the copy and the gemm; their gemms still run on wgmma, on
// the slices' own tiles.
// CHECK-LABEL: func.func @copied_stage_slices
// CHECK: tile.alloc : memref<2x64x128xf16, "shared">
// CHECK: tile.alloc : memref<2x128x64xf16, "shared">
// CHECK: tile.alloc : memref<2x64x64xf16, "shared">
// CHECK-NOT: tile.read_in_place
// CHECK: tile.gemm {{.*}}tile.wgmma =
// CHECK-NOT: tile.read_in_place
// CHECK: tile.gemm {{.*}}tile.wgmma =
// CHECK-NOT: tile.read_in_place
// CHECK: tile.gemm {{.*}}tile.wgmma =
// CHECK-NOT: tile.read_in_place
module attributes {tile.arch = "sm_90a"} {
  func.func @copied_stage_slices(%KV: memref<128x128xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %one = arith.constant 1.0 : f16
      %q = tile.alloc : memref<64x64xf16, "shared">
      %off = tile.alloc : memref<2x64x128xf16, "shared">
      %rows = tile.alloc : memref<2x128x64xf16, "shared">
      %written = tile.alloc : memref<2x64x64xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x64xf32, "fragment">
      %a = tile.alloc : memref<64x64xf16, "shared">
      tile.copy %off[%c1, %c0, %c32] [1, 64, 64] to %a[%c0, %c0] [64, 64] : memref<2x64x128xf16, "shared"> to memref<64x64xf16, "shared">
      tile.gemm %q, %a, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      %b = tile.alloc : memref<64x64xf16, "shared">
      tile.copy %rows[%c1, %c0, %c0] [1, 64, 64] to %b[%c0, %c0] [64, 64] : memref<2x128x64xf16, "shared"> to memref<64x64xf16, "shared">
      tile.gemm %q, %b, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      %c = tile.alloc : memref<64x64xf16, "shared">
      tile.copy %written[%c0, %c0, %c0] [1, 64, 64] to %c[%c0, %c0] [64, 64] : memref<2x64x64xf16, "shared"> to memref<64x64xf16, "shared">
      memref.store %one, %written[%c1, %c0, %c0] : memref<2x64x64xf16, "shared">
      tile.gemm %q, %c, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
    }
    return
  }
}

// -----

// A stage of 8 rows of 32-byte rows (256 bytes) is not a whole 1 KiB swizzle pattern: its
// stages cannot be stacked, so the slice keeps its copy.
// CHECK-LABEL: func.func @small_stages
// CHECK: tile.alloc : memref<2x8x16xf16, "shared">
// CHECK-NOT: tile.read_in_place
// CHECK: tile.gemm {{.*}}tile.wgmma =
module attributes {tile.arch = "sm_90a"} {
  func.func @small_stages(%KV: memref<8x16xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %q = tile.alloc : memref<64x16xf16, "shared">
      %kv = tile.alloc : memref<2x8x16xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x8xf32, "fragment">
      %b = tile.alloc : memref<8x16xf16, "shared">
      tile.copy %kv[%c1, %c0, %c0] [1, 8, 16] to %b[%c0, %c0] [8, 16] : memref<2x8x16xf16, "shared"> to memref<8x16xf16, "shared">
      tile.gemm %q, %b, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 8, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x16xf16, "shared">, memref<8x16xf16, "shared">, memref<64x8xf32, "fragment">
    }
    return
  }
}
