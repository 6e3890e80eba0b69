// RUN: tilec-opt --plan-wgmma-gemms --split-input-file %s | FileCheck %s

// plan-wgmma-gemms (sm_90a) on operands that are column slices of larger shared tiles (the
// frontend fills each slice's tile by a copy, `T.gemm(Q_shared[:, 256:512], ...)`): where the
// slice starts at a whole column box of the larger tile, laid out with the same rows and span,
// the copy gets tile.read_in_place (the gemm reads the larger tile's bytes, nothing is copied)
// and the larger tile the slice's layout over its own shape; other slices keep their copy.

// MLA's Q K^T over 512 + 64 columns: Q and KV slices at columns 256 and 512 (whole 128-byte
// boxes of 64 f16 columns) are read in place, K-major; P V reads KV's first 256 columns
// MN-major (B as K x N), the same bytes as the K-major reads.
// CHECK-LABEL: func.func @mla_slices
// CHECK: %[[Q:.*]] = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x576xf16, "shared">
// CHECK: %[[KV:.*]] = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x576xf16, "shared">
// CHECK: tile.copy %[[Q]][%{{.*}}, %c256] [64, 256] to %{{.*}} {tile.read_in_place = {box_bytes = 8192 : i64, columns = 64 : i64}}
// CHECK: tile.copy %[[KV]][%{{.*}}, %c256] [64, 256] to %{{.*}} {tile.read_in_place = {box_bytes = 8192 : i64, columns = 64 : i64}}
// CHECK: tile.gemm {{.*}}tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64
// CHECK: tile.copy %[[Q]][%{{.*}}, %c512] [64, 64] to %{{.*}} {tile.read_in_place = {box_bytes = 8192 : i64, columns = 64 : i64}}
// CHECK: tile.copy %[[KV]][%{{.*}}, %c512] [64, 64] to %{{.*}} {tile.read_in_place = {box_bytes = 8192 : i64, columns = 64 : i64}}
// CHECK: tile.gemm {{.*}}tile.wgmma =
// CHECK: %[[V:.*]] = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x256xf16, "shared">
// CHECK: tile.copy %[[KV]][%{{.*}}, %c0{{.*}}] [64, 256] to %[[V]]{{.*}} {tile.read_in_place = {box_bytes = 8192 : i64, columns = 64 : i64}}
// CHECK: tile.gemm %{{.*}}, %[[V]], %{{.*}} {{.*}}tile.wgmma =
module attributes {tile.arch = "sm_90a"} {
  func.func @mla_slices(%Q: memref<64x576xf16>, %KV: memref<64x576xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c256 = arith.constant 256 : index
      %c512 = arith.constant 512 : index
      %q = tile.alloc : memref<64x576xf16, "shared">
      %kv = tile.alloc : memref<64x576xf16, "shared">
      %p = tile.alloc : memref<64x64xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x64xf32, "fragment">
      %acc_o = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x256xf32, "fragment">
      tile.copy %Q[%c0, %c0] [64, 576] to %q[%c0, %c0] [64, 576] : memref<64x576xf16> to memref<64x576xf16, "shared">
      tile.copy %KV[%c0, %c0] [64, 576] to %kv[%c0, %c0] [64, 576] : memref<64x576xf16> to memref<64x576xf16, "shared">
      %qa = tile.alloc : memref<64x256xf16, "shared">
      tile.copy %q[%c0, %c256] [64, 256] to %qa[%c0, %c0] [64, 256] : memref<64x576xf16, "shared"> to memref<64x256xf16, "shared">
      %kb = tile.alloc : memref<64x256xf16, "shared">
      tile.copy %kv[%c0, %c256] [64, 256] to %kb[%c0, %c0] [64, 256] : memref<64x576xf16, "shared"> to memref<64x256xf16, "shared">
      tile.gemm %qa, %kb, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x256xf16, "shared">, memref<64x256xf16, "shared">, memref<64x64xf32, "fragment">
      %qt = tile.alloc : memref<64x64xf16, "shared">
      tile.copy %q[%c0, %c512] [64, 64] to %qt[%c0, %c0] [64, 64] : memref<64x576xf16, "shared"> to memref<64x64xf16, "shared">
      %kt = tile.alloc : memref<64x64xf16, "shared">
      tile.copy %kv[%c0, %c512] [64, 64] to %kt[%c0, %c0] [64, 64] : memref<64x576xf16, "shared"> to memref<64x64xf16, "shared">
      tile.gemm %qt, %kt, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      %v = tile.alloc : memref<64x256xf16, "shared">
      tile.copy %kv[%c0, %c0] [64, 256] to %v[%c0, %c0] [64, 256] : memref<64x576xf16, "shared"> to memref<64x256xf16, "shared">
      tile.gemm %p, %v, %acc_o {tile.mma = {a_source = "shared", instr = array<i64: 64, 256, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x256xf16, "shared">, memref<64x256xf32, "fragment">
    }
    return
  }
}

// -----

// A slice off a box boundary (column 32 of 128-byte boxes), a slice of a tile written between
// its copy and the gemm, and a slice of some rows keep their copies (no tile.read_in_place);
// their gemms still run on wgmma, on the slices' own tiles.
// CHECK-LABEL: func.func @copied_slices
// CHECK: %[[Q:.*]] = tile.alloc : memref<64x128xf16, "shared">
// CHECK-NOT: tile.read_in_place
// CHECK: tile.gemm {{.*}}tile.wgmma =
// CHECK-NOT: tile.read_in_place
// CHECK: tile.gemm {{.*}}tile.wgmma =
// CHECK-NOT: tile.read_in_place
// CHECK: tile.gemm {{.*}}tile.wgmma =
module attributes {tile.arch = "sm_90a"} {
  func.func @copied_slices(%Q: memref<64x128xf16>, %R: memref<128x64xf16>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %q = tile.alloc : memref<64x128xf16, "shared">
      %r = tile.alloc : memref<128x64xf16, "shared">
      %bt = tile.alloc : memref<64x64xf16, "shared">
      %acc = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x64xf32, "fragment">
      tile.copy %Q[%c0, %c0] [64, 128] to %q[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, "shared">
      tile.copy %R[%c0, %c0] [64, 64] to %bt[%c0, %c0] [64, 64] : memref<128x64xf16> to memref<64x64xf16, "shared">
      tile.copy %R[%c0, %c0] [128, 64] to %r[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, "shared">
      %a = tile.alloc : memref<64x64xf16, "shared">
      tile.copy %q[%c0, %c32] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x128xf16, "shared"> to memref<64x64xf16, "shared">
      tile.gemm %a, %bt, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      %a2 = tile.alloc : memref<64x64xf16, "shared">
      tile.copy %q[%c0, %c0] [64, 64] to %a2[%c0, %c0] [64, 64] : memref<64x128xf16, "shared"> to memref<64x64xf16, "shared">
      tile.copy %Q[%c0, %c0] [64, 128] to %q[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, "shared">
      tile.gemm %a2, %bt, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      %b3 = tile.alloc : memref<64x64xf16, "shared">
      tile.copy %r[%c64, %c0] [64, 64] to %b3[%c0, %c0] [64, 64] : memref<128x64xf16, "shared"> to memref<64x64xf16, "shared">
      tile.gemm %b3, %bt, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
    }
    return
  }
}
