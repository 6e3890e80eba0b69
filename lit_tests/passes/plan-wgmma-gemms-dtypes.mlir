// RUN: tilec-opt --plan-wgmma-gemms --split-input-file %s | FileCheck %s

// plan-wgmma-gemms per operand type (sm_90a): fp8 (e4m3, e5m2) and float32 (tf32) into an f32
// accumulator, int8 into an i32 one. Their wgmma reads K-major operands only (A as M x K, B as
// N x K): the instruction's K is 32 bytes (k32 for one-byte types, k8 for tf32), the swizzle
// the widest span dividing a K row, as for 16-bit types. An MN-major 8-bit or 32-bit operand
// is refused and the gemm stays on the SIMT path.

// fp8 e4m3, A as M x K and B as N x K (transpose_B), both K-major as fp8 wgmma reads them:
// 128 one-byte K elements per row (128B swizzle), one m64n128k32 per atom and 32-byte K step.
// CHECK-LABEL: func.func @e4m3_k_major
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf8E4M3FN, "shared">
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf8E4M3FN, "shared">
// CHECK: tile.gemm {{.*}}tile.wgmma = {a_registers = false, dtype = "e4m3", k = 32 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @e4m3_k_major(%A: memref<512x512xf8E4M3FN>, %B: memref<512x512xf8E4M3FN>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x128xf8E4M3FN, "shared">
      %bs = tile.alloc : memref<128x128xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.copy %A[%c0, %c0] [128, 128] to %as[%c0, %c0] [128, 128] : memref<512x512xf8E4M3FN> to memref<128x128xf8E4M3FN, "shared">
      tile.copy %B[%c0, %c0] [128, 128] to %bs[%c0, %c0] [128, 128] : memref<512x512xf8E4M3FN> to memref<128x128xf8E4M3FN, "shared">
      tile.gemm %as, %bs, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 32>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x128xf8E4M3FN, "shared">, memref<128x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
    }
    return
  }
}

// -----

// fp8 e5m2 with 64-byte K rows: the 64B swizzle, k32.
// CHECK-LABEL: func.func @e5m2_k_major
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 64 : i64, warpgroups = 0 : i64}} : memref<128x64xf8E5M2, "shared">
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 64 : i64, warpgroups = 0 : i64}} : memref<128x64xf8E5M2, "shared">
// CHECK: tile.gemm {{.*}}tile.wgmma = {a_registers = false, dtype = "e5m2", k = 32 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @e5m2_k_major(%A: memref<512x512xf8E5M2>, %B: memref<512x512xf8E5M2>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x64xf8E5M2, "shared">
      %bs = tile.alloc : memref<128x64xf8E5M2, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<512x512xf8E5M2> to memref<128x64xf8E5M2, "shared">
      tile.copy %B[%c0, %c0] [128, 64] to %bs[%c0, %c0] [128, 64] : memref<512x512xf8E5M2> to memref<128x64xf8E5M2, "shared">
      tile.gemm %as, %bs, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 32>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x64xf8E5M2, "shared">, memref<128x64xf8E5M2, "shared">, memref<128x128xf32, "fragment">
    }
    return
  }
}

// -----

// int8 into an int32 accumulator: k32, the s32 accumulator.
// CHECK-LABEL: func.func @s8_k_major
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xi8, "shared">
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xi8, "shared">
// CHECK: tile.gemm {{.*}}tile.wgmma = {a_registers = false, dtype = "s8", k = 32 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @s8_k_major(%A: memref<512x512xi8>, %B: memref<512x512xi8>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x128xi8, "shared">
      %bs = tile.alloc : memref<128x128xi8, "shared">
      %acc = tile.alloc : memref<128x128xi32, "fragment">
      tile.copy %A[%c0, %c0] [128, 128] to %as[%c0, %c0] [128, 128] : memref<512x512xi8> to memref<128x128xi8, "shared">
      tile.copy %B[%c0, %c0] [128, 128] to %bs[%c0, %c0] [128, 128] : memref<512x512xi8> to memref<128x128xi8, "shared">
      tile.gemm %as, %bs, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 32>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x128xi8, "shared">, memref<128x128xi8, "shared">, memref<128x128xi32, "fragment">
    }
    return
  }
}

// -----

// float32 operands run as tf32: 32 four-byte K elements per 128-byte row, k8.
// CHECK-LABEL: func.func @tf32_k_major
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x32xf32, "shared">
// CHECK: tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x32xf32, "shared">
// CHECK: tile.gemm {{.*}}tile.wgmma = {a_registers = false, dtype = "tf32", k = 8 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @tf32_k_major(%A: memref<512x512xf32>, %B: memref<512x512xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x32xf32, "shared">
      %bs = tile.alloc : memref<128x32xf32, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.copy %A[%c0, %c0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<512x512xf32> to memref<128x32xf32, "shared">
      tile.copy %B[%c0, %c0] [128, 32] to %bs[%c0, %c0] [128, 32] : memref<512x512xf32> to memref<128x32xf32, "shared">
      tile.gemm %as, %bs, %acc {transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 8>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf32, "shared">, memref<128x32xf32, "shared">, memref<128x128xf32, "fragment">
    }
    return
  }
}

// -----

// Refused: fp8 B stored K x N (MN-major). wgmma transposes 16-bit operands only; the gemm
// is left to lower-gemm-simt (the CUDA cores), as TileLang leaves it to mma.sync.
// CHECK-LABEL: func.func @e4m3_mn_major_b
// CHECK-NOT: tile.shared_layout
// CHECK-NOT: tile.wgmma
module attributes {tile.arch = "sm_90a"} {
  func.func @e4m3_mn_major_b(%A: memref<512x512xf8E4M3FN>, %B: memref<512x512xf8E4M3FN>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x128xf8E4M3FN, "shared">
      %bs = tile.alloc : memref<128x128xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.copy %A[%c0, %c0] [128, 128] to %as[%c0, %c0] [128, 128] : memref<512x512xf8E4M3FN> to memref<128x128xf8E4M3FN, "shared">
      tile.copy %B[%c0, %c0] [128, 128] to %bs[%c0, %c0] [128, 128] : memref<512x512xf8E4M3FN> to memref<128x128xf8E4M3FN, "shared">
      tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 32>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x128xf8E4M3FN, "shared">, memref<128x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
    }
    return
  }
}

// -----

// Refused: int8 A stored K x M (transpose_A): MN-major, which 8-bit wgmma does not read.
// CHECK-LABEL: func.func @s8_transposed_a
// CHECK-NOT: tile.shared_layout
// CHECK-NOT: tile.wgmma
module attributes {tile.arch = "sm_90a"} {
  func.func @s8_transposed_a(%A: memref<512x512xi8>, %B: memref<512x512xi8>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x128xi8, "shared">
      %bs = tile.alloc : memref<128x128xi8, "shared">
      %acc = tile.alloc : memref<128x128xi32, "fragment">
      tile.copy %A[%c0, %c0] [128, 128] to %as[%c0, %c0] [128, 128] : memref<512x512xi8> to memref<128x128xi8, "shared">
      tile.copy %B[%c0, %c0] [128, 128] to %bs[%c0, %c0] [128, 128] : memref<512x512xi8> to memref<128x128xi8, "shared">
      tile.gemm %as, %bs, %acc {transpose_a = true, transpose_b = true, tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 32>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x128xi8, "shared">, memref<128x128xi8, "shared">, memref<128x128xi32, "fragment">
    }
    return
  }
}

// -----

// Refused: tf32 B stored K x N.
// CHECK-LABEL: func.func @tf32_mn_major_b
// CHECK-NOT: tile.shared_layout
// CHECK-NOT: tile.wgmma
module attributes {tile.arch = "sm_90a"} {
  func.func @tf32_mn_major_b(%A: memref<512x512xf32>, %B: memref<512x512xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x32xf32, "shared">
      %bs = tile.alloc : memref<32x128xf32, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.copy %A[%c0, %c0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<512x512xf32> to memref<128x32xf32, "shared">
      tile.copy %B[%c0, %c0] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<512x512xf32> to memref<32x128xf32, "shared">
      tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 8>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf32, "shared">, memref<32x128xf32, "shared">, memref<128x128xf32, "fragment">
    }
    return
  }
}
