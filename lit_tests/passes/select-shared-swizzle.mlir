// RUN: tilec-opt --select-shared-swizzle --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: not tilec-opt --select-shared-swizzle --split-input-file %s 2>&1 | FileCheck --check-prefix=ERR %s

// select-shared-swizzle: tile.swizzle on each shared tile a tensor-core gemm (tile.mma, given
// here as infer-mma-layout writes it) reads. wgmma: 128B for every operand (a K-major tile is
// staged in 128-byte K rows: pipeline-async-copies makes its K tile the swizzle span);
// mma.sync: xor.

// The quickstart on sm_90a: A (128 x 32 f16, K-major: its 64-byte rows are staged two
// iterations to a 128-byte row) and B (32 x 128, MN-major: 64-element boxes) both 128B. The
// accumulator is not shared: no swizzle.
// CHECK-LABEL: func.func @quickstart
// CHECK: tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
// CHECK: tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
// CHECK: tile.alloc : memref<128x128xf32, "fragment">
module {
  func.func @quickstart(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// Both operands K-major (B given as N x K) with 128-byte rows (64 f16): 128B.
// CHECK-LABEL: func.func @k_major_128
// CHECK-COUNT-2: tile.alloc {tile.swizzle = "128B"} : memref<128x64xf16, "shared">
module {
  func.func @k_major_128(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 4 : index
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<128x64xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<256x256xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%col, %k0] [128, 64] to %bs[%c0, %c0] [128, 64] : memref<256x256xf16> to memref<128x64xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 2 : i64}, transpose_b = true} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// K-major int8 rows of 32 bytes: 128B as well (four iterations to a staged row).
// CHECK-LABEL: func.func @int8_32b
// CHECK-COUNT-2: tile.alloc {tile.swizzle = "128B"} : memref<128x32xi8, "shared">
module {
  func.func @int8_32b(%A: memref<256x256xi8>, %B: memref<256x256xi8>, %C: memref<256x256xi32>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xi8, "shared">
      %bs = tile.alloc : memref<128x32xi8, "shared">
      %acc = tile.alloc : memref<128x128xi32, "fragment">
      %zero = arith.constant 0 : i32
      tile.fill %acc, %zero : memref<128x128xi32, "fragment">, i32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xi8> to memref<128x32xi8, "shared">
        tile.copy %B[%col, %k0] [128, 32] to %bs[%c0, %c0] [128, 32] : memref<256x256xi8> to memref<128x32xi8, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 32>, kind = "wgmma", warpgroups = 1 : i64}, transpose_b = true} : memref<128x32xi8, "shared">, memref<128x32xi8, "shared">, memref<128x128xi32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xi32, "fragment"> to memref<256x256xi32>
    }
    return
  }
}

// -----

// A transposed (stored K x M) is MN-major: 128B whatever its K extent.
// CHECK-LABEL: func.func @f16_tn
// CHECK: tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
// CHECK: tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
module {
  func.func @f16_tn(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<32x128xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%k0, %row] [32, 128] to %as[%c0, %c0] [32, 128] : memref<256x256xf16> to memref<32x128xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}, transpose_a = true} : memref<32x128xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// sm_80 (mma.sync): the 16-byte-chunk XOR swizzle ldmatrix reads without bank conflicts.
// CHECK-LABEL: func.func @ampere
// CHECK: tile.alloc {tile.swizzle = "xor"} : memref<128x32xf16, "shared">
// CHECK: tile.alloc {tile.swizzle = "xor"} : memref<32x128xf16, "shared">
module attributes {tile.arch = "sm_80"} {
  func.func @ampere(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// Attention: Q and K are K-major for Q K^T (128-byte rows of 64 f16), V is MN-major for P V;
// P is read from registers and the accumulators are fragments: no swizzle.
// CHECK-LABEL: func.func @attention
// CHECK-COUNT-3: tile.alloc {tile.swizzle = "128B"} : memref<64x64xf16, "shared">
// CHECK-NOT: tile.swizzle
// CHECK: return
module {
  func.func @attention(%Q: memref<1x256x4x64xf16>, %K: memref<1x256x4x64xf16>, %V: memref<1x256x4x64xf16>, %Out: memref<1x256x4x64xf16>) attributes {tile.entry} {
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    tile.kernel grid(%c4, %c4, %c1) threads [128] {
    ^bb0(%bx: index, %by: index, %bz: index):
      %c0 = arith.constant 0 : index
      %bm = arith.constant 64 : index
      %bn = arith.constant 64 : index
      %q_s = tile.alloc : memref<64x64xf16, "shared">
      %k_s = tile.alloc : memref<64x64xf16, "shared">
      %v_s = tile.alloc : memref<64x64xf16, "shared">
      %acc_s = tile.alloc : memref<64x64xf32, "fragment">
      %p = tile.alloc : memref<64x64xf16, "fragment">
      %acc_o = tile.alloc : memref<64x64xf32, "fragment">
      %row = arith.muli %bx, %bm : index
      tile.copy %Q[%bz, %row, %by, %c0] [1, 64, 1, 64] to %q_s[%c0, %c0] [64, 64] : memref<1x256x4x64xf16> to memref<64x64xf16, "shared">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc_o, %zero : memref<64x64xf32, "fragment">, f32
      %kt = arith.constant 4 : index
      tile.pipelined %c0 to %kt step %c1 stages 2 {
      ^bb0(%k: index):
        %kv = arith.muli %k, %bn : index
        tile.copy %K[%bz, %kv, %by, %c0] [1, 64, 1, 64] to %k_s[%c0, %c0] [64, 64] : memref<1x256x4x64xf16> to memref<64x64xf16, "shared">
        tile.gemm %q_s, %k_s, %acc_s {clear_accum = true, policy = "full_row", tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}, transpose_b = true} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
        tile.parallel [64, 64] {
        ^bb0(%i: index, %j: index):
          %s = memref.load %acc_s[%i, %j] : memref<64x64xf32, "fragment">
          %e = math.exp2 %s : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<64x64xf16, "fragment">
        }
        tile.copy %V[%bz, %kv, %by, %c0] [1, 64, 1, 64] to %v_s[%c0, %c0] [64, 64] : memref<1x256x4x64xf16> to memref<64x64xf16, "shared">
        tile.gemm %p, %v_s, %acc_o {policy = "full_row", tile.mma = {a_source = "registers", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x64xf16, "fragment">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      %o_h = tile.alloc : memref<64x64xf16, "fragment">
      tile.parallel [64, 64] {
      ^bb0(%i: index, %j: index):
        %o = memref.load %acc_o[%i, %j] : memref<64x64xf32, "fragment">
        %h = arith.truncf %o : f32 to f16
        memref.store %h, %o_h[%i, %j] : memref<64x64xf16, "fragment">
      }
      tile.copy %o_h[%c0, %c0] [64, 64] to %Out[%bz, %row, %by, %c0] [1, 64, 1, 64] : memref<64x64xf16, "fragment"> to memref<1x256x4x64xf16>
    }
    return
  }
}

// -----

// The same attention on sm_80: xor on the three shared tiles.
// CHECK-LABEL: func.func @attention_sm80
// CHECK-COUNT-3: tile.alloc {tile.swizzle = "xor"} : memref<64x64xf16, "shared">
// CHECK-NOT: tile.swizzle
// CHECK: return
module attributes {tile.arch = "sm_80"} {
  func.func @attention_sm80(%Q: memref<1x256x4x64xf16>, %K: memref<1x256x4x64xf16>, %V: memref<1x256x4x64xf16>, %Out: memref<1x256x4x64xf16>) attributes {tile.entry} {
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    tile.kernel grid(%c4, %c4, %c1) threads [128] {
    ^bb0(%bx: index, %by: index, %bz: index):
      %c0 = arith.constant 0 : index
      %bm = arith.constant 64 : index
      %bn = arith.constant 64 : index
      %q_s = tile.alloc : memref<64x64xf16, "shared">
      %k_s = tile.alloc : memref<64x64xf16, "shared">
      %v_s = tile.alloc : memref<64x64xf16, "shared">
      %acc_s = tile.alloc : memref<64x64xf32, "fragment">
      %p = tile.alloc : memref<64x64xf16, "fragment">
      %acc_o = tile.alloc : memref<64x64xf32, "fragment">
      %row = arith.muli %bx, %bm : index
      tile.copy %Q[%bz, %row, %by, %c0] [1, 64, 1, 64] to %q_s[%c0, %c0] [64, 64] : memref<1x256x4x64xf16> to memref<64x64xf16, "shared">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc_o, %zero : memref<64x64xf32, "fragment">, f32
      %kt = arith.constant 4 : index
      tile.pipelined %c0 to %kt step %c1 stages 2 {
      ^bb0(%k: index):
        %kv = arith.muli %k, %bn : index
        tile.copy %K[%bz, %kv, %by, %c0] [1, 64, 1, 64] to %k_s[%c0, %c0] [64, 64] : memref<1x256x4x64xf16> to memref<64x64xf16, "shared">
        tile.gemm %q_s, %k_s, %acc_s {clear_accum = true, policy = "full_row", tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}, transpose_b = true} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
        tile.parallel [64, 64] {
        ^bb0(%i: index, %j: index):
          %s = memref.load %acc_s[%i, %j] : memref<64x64xf32, "fragment">
          %e = math.exp2 %s : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<64x64xf16, "fragment">
        }
        tile.copy %V[%bz, %kv, %by, %c0] [1, 64, 1, 64] to %v_s[%c0, %c0] [64, 64] : memref<1x256x4x64xf16> to memref<64x64xf16, "shared">
        tile.gemm %p, %v_s, %acc_o {policy = "full_row", tile.mma = {a_source = "registers", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<64x64xf16, "fragment">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      %o_h = tile.alloc : memref<64x64xf16, "fragment">
      tile.parallel [64, 64] {
      ^bb0(%i: index, %j: index):
        %o = memref.load %acc_o[%i, %j] : memref<64x64xf32, "fragment">
        %h = arith.truncf %o : f32 to f16
        memref.store %h, %o_h[%i, %j] : memref<64x64xf16, "fragment">
      }
      tile.copy %o_h[%c0, %c0] [64, 64] to %Out[%bz, %row, %by, %c0] [1, 64, 1, 64] : memref<64x64xf16, "fragment"> to memref<1x256x4x64xf16>
    }
    return
  }
}

// -----

// Left alone: a gemm without tile.mma (the SIMT path's) gets no swizzle.
// CHECK-LABEL: func.func @no_mma
// CHECK-NOT: tile.swizzle
// CHECK: return
module {
  func.func @no_mma(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// A K-major row of 16 bytes (8 f16): 128B too, eight iterations to a staged row.
// CHECK-LABEL: func.func @narrow_rows
// CHECK: tile.alloc {tile.swizzle = "128B"} : memref<128x8xf16, "shared">
// CHECK: tile.alloc {tile.swizzle = "128B"} : memref<8x128xf16, "shared">
module {
  func.func @narrow_rows(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 8 : index
      %kt = arith.constant 32 : index
      %as = tile.alloc : memref<128x8xf16, "shared">
      %bs = tile.alloc : memref<8x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 8] to %as[%c0, %c0] [128, 8] : memref<256x256xf16> to memref<128x8xf16, "shared">
        tile.copy %B[%k0, %col] [8, 128] to %bs[%c0, %c0] [8, 128] : memref<256x256xf16> to memref<8x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x8xf16, "shared">, memref<8x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// Rejected: an arch the tensor-core schedules do not serve.
// expected-error @unknown {{select-shared-swizzle: unsupported CUDA arch 'sm_75'}}
// ERR: error: select-shared-swizzle: unsupported CUDA arch 'sm_75' (supported: sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100a, sm_120a)
module attributes {tile.arch = "sm_75"} {
  func.func @old_arch(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// A in registers, filled from a shared tile in the loop (T.copy(A_shared, A_frag)): the
// wgmma kernel stages A there by TMA and each warp ldmatrix-reads its rows from that slot, so
// the tile is swizzled like a shared operand (128B); the fragment gets nothing.
// CHECK-LABEL: func.func @register_a
// CHECK: tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
// CHECK-NEXT: tile.alloc : memref<128x32xf16, "fragment">
// CHECK-NEXT: tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
module {
  func.func @register_a(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
        tile.gemm %af, %bs, %acc {tile.mma = {a_source = "registers", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// The same on sm_80: the mma.sync kernel does not read A from registers, so A's shared tile is
// left alone; B gets xor.
// CHECK-LABEL: func.func @register_a_sm80
// CHECK: tile.alloc : memref<128x32xf16, "shared">
// CHECK-NEXT: tile.alloc : memref<128x32xf16, "fragment">
// CHECK-NEXT: tile.alloc {tile.swizzle = "xor"} : memref<32x128xf16, "shared">
module attributes {tile.arch = "sm_80"} {
  func.func @register_a_sm80(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
        tile.gemm %af, %bs, %acc {tile.mma = {a_source = "registers", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// The fragment is filled from part of a wider shared tile (128 x 32 of 128 x 64): not the
// whole tile the kernel would stage, so that tile is left alone.
// CHECK-LABEL: func.func @register_a_partial_fill
// CHECK: tile.alloc : memref<128x64xf16, "shared">
// CHECK-NEXT: tile.alloc : memref<128x32xf16, "fragment">
// CHECK-NEXT: tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
module {
  func.func @register_a_partial_fill(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x64xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x64xf16, "shared"> to memref<128x32xf16, "fragment">
        tile.gemm %af, %bs, %acc {tile.mma = {a_source = "registers", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// A transpose through shared memory: the T.Parallel reads the tile across its rows (its
// innermost variable %i indexes the rows): "transpose". The second tile, read along its rows,
// keeps the plain layout; the third (24 f16 = 3 chunks a row, no power of two) cannot be
// swizzled and keeps it too.
// CHECK-LABEL: func.func @transpose
// CHECK: tile.alloc {tile.swizzle = "transpose"} : memref<64x64xf16, "shared">
// CHECK: tile.alloc : memref<64x64xf16, "shared">
// CHECK: tile.alloc : memref<64x24xf16, "shared">
module {
  func.func @transpose(%x: memref<1024x1024xf16>, %y: memref<1024x1024xf16>, %z: memref<64x24xf16>) attributes {tile.entry} {
    %g = arith.constant 16 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %tile = tile.alloc : memref<64x64xf16, "shared">
      %rows = tile.alloc : memref<64x64xf16, "shared">
      %odd = tile.alloc : memref<64x24xf16, "shared">
      %flipped = tile.alloc : memref<64x64xf16, "fragment">
      %same = tile.alloc : memref<64x64xf16, "fragment">
      %narrow = tile.alloc : memref<24x64xf16, "fragment">
      tile.copy %x[%c0, %c0] [64, 64] to %tile[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, "shared">
      tile.copy %x[%c0, %c0] [64, 64] to %rows[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, "shared">
      tile.copy %z[%c0, %c0] [64, 24] to %odd[%c0, %c0] [64, 24] : memref<64x24xf16> to memref<64x24xf16, "shared">
      tile.parallel [64, 64] {
      ^bb0(%j: index, %i: index):
        %v = memref.load %tile[%i, %j] : memref<64x64xf16, "shared">
        memref.store %v, %flipped[%j, %i] : memref<64x64xf16, "fragment">
        %w = memref.load %rows[%j, %i] : memref<64x64xf16, "shared">
        memref.store %w, %same[%j, %i] : memref<64x64xf16, "fragment">
      }
      tile.parallel [24, 64] {
      ^bb0(%j: index, %i: index):
        %v = memref.load %odd[%i, %j] : memref<64x24xf16, "shared">
        memref.store %v, %narrow[%j, %i] : memref<24x64xf16, "fragment">
      }
      tile.copy %flipped[%c0, %c0] [64, 64] to %y[%c0, %c0] [64, 64] : memref<64x64xf16, "fragment"> to memref<1024x1024xf16>
      tile.copy %same[%c0, %c0] [64, 64] to %y[%c0, %c0] [64, 64] : memref<64x64xf16, "fragment"> to memref<1024x1024xf16>
      tile.copy %narrow[%c0, %c0] [24, 64] to %y[%c0, %c0] [24, 64] : memref<24x64xf16, "fragment"> to memref<1024x1024xf16>
    }
    return
  }
}

// -----

// A tile read across its rows that a copy also turns into a gemm's A keeps its layout: the
// tensor-core lowerings may read it in place.
// CHECK-LABEL: func.func @feeds_gemm
// CHECK-NOT: tile.swizzle
// CHECK: tile.gemm
module {
  func.func @feeds_gemm(%x: memref<1024x1024xf16>, %y: memref<1024x1024xf16>) attributes {tile.entry} {
    %g = arith.constant 16 : index
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %tile = tile.alloc : memref<64x64xf16, "shared">
      %b = tile.alloc : memref<64x64xf16, "shared">
      %a = tile.alloc : memref<64x64xf16, "fragment">
      %flipped = tile.alloc : memref<64x64xf16, "fragment">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.copy %x[%c0, %c0] [64, 64] to %tile[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, "shared">
      tile.copy %x[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, "shared">
      tile.parallel [64, 64] {
      ^bb0(%j: index, %i: index):
        %v = memref.load %tile[%i, %j] : memref<64x64xf16, "shared">
        memref.store %v, %flipped[%j, %i] : memref<64x64xf16, "fragment">
      }
      tile.copy %tile[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16, "shared"> to memref<64x64xf16, "fragment">
      tile.gemm %a, %b, %acc : memref<64x64xf16, "fragment">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.copy %flipped[%c0, %c0] [64, 64] to %y[%c0, %c0] [64, 64] : memref<64x64xf16, "fragment"> to memref<1024x1024xf16>
    }
    return
  }
}
