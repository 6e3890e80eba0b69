// RUN: tilec-opt --infer-mma-layout --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: not tilec-opt --infer-mma-layout --split-input-file %s 2>&1 | FileCheck --check-prefix=ERR %s

// infer-mma-layout: the tensor-core instruction of each tile.gemm (tile.mma) and the
// accumulator's register layout (tile.mma_layout on its tile.alloc). The arch comes from the
// module's tile.arch (sm_90a without one).

// The quickstart (128x128x32 f16, 128 threads): one warpgroup owns all 128 rows (two m64 atoms),
// one m64n128k16 instruction spans block_n. The accumulator is marked, the f16 copy is not.
// CHECK-LABEL: func.func @quickstart
// CHECK: tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<128x128xf32, "fragment">
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}}
// CHECK: tile.alloc : memref<128x128xf16, "fragment">
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
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
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

// 256 threads and 128 rows: two consumer warpgroups of 64 rows, m64n256k16 (bf16).
// CHECK-LABEL: func.func @two_warpgroups
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 64, 256, 16>, kind = "wgmma", warpgroups = 2 : i64}}
module {
  func.func @two_warpgroups(%A: memref<1000x1000xbf16>, %B: memref<1000x1016xbf16>, %C: memref<1000x1016xbf16>) attributes {tile.entry} {
    %gx = arith.constant 4 : index
    %gy = arith.constant 8 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 256 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 16 : index
      %as = tile.alloc : memref<128x64xbf16, "shared">
      %bs = tile.alloc : memref<64x256xbf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x256xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<1000x1000xbf16> to memref<128x64xbf16, "shared">
        tile.copy %B[%k0, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<1000x1016xbf16> to memref<64x256xbf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xbf16, "shared">, memref<64x256xbf16, "shared">, memref<128x256xf32, "fragment">
      }
      %h = tile.alloc : memref<128x256xbf16, "fragment">
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %t = arith.truncf %v : f32 to bf16
        memref.store %t, %h[%i, %j] : memref<128x256xbf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 256] to %C[%row, %col] [128, 256] : memref<128x256xbf16, "fragment"> to memref<1000x1016xbf16>
    }
    return
  }
}

// -----

// 256 threads but 64 rows: rows are not split below one m64 atom, so one warpgroup.
// CHECK-LABEL: func.func @short_block
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}}
module {
  func.func @short_block(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 4 : index
    %gy = arith.constant 4 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 64 : index
      %bn = arith.constant 64 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<64x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<256x256xf16> to memref<32x64xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      %h = tile.alloc : memref<64x64xf16, "fragment">
      tile.parallel [64, 64] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<64x64xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<64x64xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [64, 64] to %C[%row, %col] [64, 64] : memref<64x64xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// Each instruction takes 32 bytes of K: k32 for K-major int8 (int32 accumulator stored as is).
// CHECK-LABEL: func.func @int8_nt
// CHECK: tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<128x128xi32, "fragment">
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 32>, kind = "wgmma", warpgroups = 2 : i64}, transpose_b = true}
module attributes {tile.arch = "sm_90a"} {
  func.func @int8_nt(%A: memref<256x512xi8>, %B: memref<256x512xi8>, %C: memref<256x256xi32>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x64xi8, "shared">
      %bs = tile.alloc : memref<128x64xi8, "shared">
      %acc = tile.alloc : memref<128x128xi32, "fragment">
      %zero = arith.constant 0 : i32
      tile.fill %acc, %zero : memref<128x128xi32, "fragment">, i32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<256x512xi8> to memref<128x64xi8, "shared">
        tile.copy %B[%col, %k0] [128, 64] to %bs[%c0, %c0] [128, 64] : memref<256x512xi8> to memref<128x64xi8, "shared">
        tile.gemm %as, %bs, %acc {transpose_b = true} : memref<128x64xi8, "shared">, memref<128x64xi8, "shared">, memref<128x128xi32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xi32, "fragment"> to memref<256x256xi32>
    }
    return
  }
}

// -----

// ... k8 for f32 operands (read as tf32) ...
// CHECK-LABEL: func.func @tf32_nt
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 8>, kind = "wgmma", warpgroups = 1 : i64}, transpose_b = true}
module {
  func.func @tf32_nt(%A: memref<256x256xf32>, %B: memref<256x256xf32>, %C: memref<256x256xf32>) attributes {tile.entry} {
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
      %as = tile.alloc : memref<128x32xf32, "shared">
      %bs = tile.alloc : memref<128x32xf32, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf32> to memref<128x32xf32, "shared">
        tile.copy %B[%col, %k0] [128, 32] to %bs[%c0, %c0] [128, 32] : memref<256x256xf32> to memref<128x32xf32, "shared">
        tile.gemm %as, %bs, %acc {transpose_b = true} : memref<128x32xf32, "shared">, memref<128x32xf32, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// ... and k32 for float8 (bf16 output through a converting tile.parallel).
// CHECK-LABEL: func.func @fp8_nt
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 32>, kind = "wgmma", warpgroups = 1 : i64}, transpose_b = true}
module {
  func.func @fp8_nt(%A: memref<256x512xf8E4M3FN>, %B: memref<256x512xf8E4M3FN>, %C: memref<256x256xbf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %bs = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<256x512xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        tile.copy %B[%col, %k0] [128, 64] to %bs[%c0, %c0] [128, 64] : memref<256x512xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        tile.gemm %as, %bs, %acc {transpose_b = true} : memref<128x64xf8E4M3FN, "shared">, memref<128x64xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xbf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to bf16
        memref.store %t, %h[%i, %j] : memref<128x128xbf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xbf16, "fragment"> to memref<256x256xbf16>
    }
    return
  }
}

// -----

// 16-bit operands may be MN-major (A stored K x M): wgmma transposes them.
// CHECK-LABEL: func.func @f16_tn
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 2 : i64}, transpose_a = true}
module {
  func.func @f16_tn(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
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
      %as = tile.alloc : memref<64x128xf16, "shared">
      %bs = tile.alloc : memref<64x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%k0, %row] [64, 128] to %as[%c0, %c0] [64, 128] : memref<256x256xf16> to memref<64x128xf16, "shared">
        tile.copy %B[%k0, %col] [64, 128] to %bs[%c0, %c0] [64, 128] : memref<256x256xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {transpose_a = true} : memref<64x128xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
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

// sm_80: mma.sync m16n8k16 with the 4 warps as a 2 x 2 grid over the 128 x 128 tile.
// CHECK-LABEL: func.func @ampere
// CHECK: tile.alloc {tile.mma_layout = "mma-accumulator"} : memref<128x128xf32, "fragment">
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}}
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
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
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

// sm_89: the target description has no wgmma (Ada), so the same mma.sync decision as sm_80.
// CHECK-LABEL: func.func @ada
// CHECK: tile.alloc {tile.mma_layout = "mma-accumulator"} : memref<128x128xf32, "fragment">
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}}
module attributes {tile.arch = "sm_89"} {
  func.func @ada(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
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
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
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

// sm_90: the target description has no wgmma (sm_90 without the a suffix), so the same mma.sync decision as sm_80.
// CHECK-LABEL: func.func @hopper_without_wgmma
// CHECK: tile.alloc {tile.mma_layout = "mma-accumulator"} : memref<128x128xf32, "fragment">
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}}
module attributes {tile.arch = "sm_90"} {
  func.func @hopper_without_wgmma(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
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
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
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

// sm_80, 8 warps, K-major int8: the most square grid is 2 x 4 (64 x 32 warp tiles), k32.
// CHECK-LABEL: func.func @ampere_int8
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 32>, kind = "mma.sync", warps = array<i64: 2, 4>}, transpose_b = true}
module attributes {tile.arch = "sm_80"} {
  func.func @ampere_int8(%A: memref<256x512xi8>, %B: memref<256x512xi8>, %C: memref<256x256xi32>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x64xi8, "shared">
      %bs = tile.alloc : memref<128x64xi8, "shared">
      %acc = tile.alloc : memref<128x128xi32, "fragment">
      %zero = arith.constant 0 : i32
      tile.fill %acc, %zero : memref<128x128xi32, "fragment">, i32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<256x512xi8> to memref<128x64xi8, "shared">
        tile.copy %B[%col, %k0] [128, 64] to %bs[%c0, %c0] [128, 64] : memref<256x512xi8> to memref<128x64xi8, "shared">
        tile.gemm %as, %bs, %acc {transpose_b = true} : memref<128x64xi8, "shared">, memref<128x64xi8, "shared">, memref<128x128xi32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xi32, "fragment"> to memref<256x256xi32>
    }
    return
  }
}

// -----

// Attention: two gemms in one pipelined loop. Q K^T reads both operands from shared memory;
// P V reads P, a fragment, from registers. Both accumulators are marked, P is not.
// CHECK-LABEL: func.func @attention
// CHECK-COUNT-2: tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x64xf32, "fragment">
// CHECK: tile.gemm %{{.*}} {clear_accum = true, policy = "full_row", tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}, transpose_b = true}
// CHECK: tile.gemm %{{.*}} {policy = "full_row", tile.mma = {a_source = "registers", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}}
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
        tile.gemm %q_s, %k_s, %acc_s {clear_accum = true, policy = "full_row", transpose_b = true} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
        tile.parallel [64, 64] {
        ^bb0(%i: index, %j: index):
          %s = memref.load %acc_s[%i, %j] : memref<64x64xf32, "fragment">
          %e = math.exp2 %s : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<64x64xf16, "fragment">
        }
        tile.copy %V[%bz, %kv, %by, %c0] [1, 64, 1, 64] to %v_s[%c0, %c0] [64, 64] : memref<1x256x4x64xf16> to memref<64x64xf16, "shared">
        tile.gemm %p, %v_s, %acc_o {policy = "full_row"} : memref<64x64xf16, "fragment">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
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

// The same attention on sm_80: mma.sync, P from registers; 4 x 1 warps (full_row: the first
// gemm's accumulator, cast, is the second's A, and each warp keeps whole rows).
// CHECK-LABEL: func.func @attention_sm80
// CHECK: tile.gemm %{{.*}} {clear_accum = true, policy = "full_row", tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 4, 1>}, transpose_b = true}
// CHECK: tile.gemm %{{.*}} {policy = "full_row", tile.mma = {a_source = "registers", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 4, 1>}}
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
        tile.gemm %q_s, %k_s, %acc_s {clear_accum = true, policy = "full_row", transpose_b = true} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
        tile.parallel [64, 64] {
        ^bb0(%i: index, %j: index):
          %s = memref.load %acc_s[%i, %j] : memref<64x64xf32, "fragment">
          %e = math.exp2 %s : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<64x64xf16, "fragment">
        }
        tile.copy %V[%bz, %kv, %by, %c0] [1, 64, 1, 64] to %v_s[%c0, %c0] [64, 64] : memref<1x256x4x64xf16> to memref<64x64xf16, "shared">
        tile.gemm %p, %v_s, %acc_o {policy = "full_row"} : memref<64x64xf16, "fragment">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
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

// Left alone (the SIMT path takes them): int8 operands must be K-major (B is K x N here).
// CHECK-LABEL: func.func @int8_mn_major
// CHECK-NOT: tile.mma
// CHECK: return
module {
  func.func @int8_mn_major(%A: memref<256x256xi8>, %B: memref<256x256xi8>, %C: memref<256x256xi32>) attributes {tile.entry} {
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
      %bs = tile.alloc : memref<32x128xi8, "shared">
      %acc = tile.alloc : memref<128x128xi32, "fragment">
      %zero = arith.constant 0 : i32
      tile.fill %acc, %zero : memref<128x128xi32, "fragment">, i32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xi8> to memref<128x32xi8, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xi8> to memref<32x128xi8, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xi8, "shared">, memref<32x128xi8, "shared">, memref<128x128xi32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xi32, "fragment"> to memref<256x256xi32>
    }
    return
  }
}

// -----

// block_n = 512 is wider than one wgmma (n <= 256).
// CHECK-LABEL: func.func @too_wide
// CHECK-NOT: tile.mma
// CHECK: return
module {
  func.func @too_wide(%A: memref<256x256xf16>, %B: memref<256x512xf16>, %C: memref<256x512xf16>) attributes {tile.entry} {
    %gx = arith.constant 1 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 512 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x512xf16, "shared">
      %acc = tile.alloc : memref<128x512xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x512xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 512] to %bs[%c0, %c0] [32, 512] : memref<256x512xf16> to memref<32x512xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x512xf16, "shared">, memref<128x512xf32, "fragment">
      }
      %h = tile.alloc : memref<128x512xf16, "fragment">
      tile.parallel [128, 512] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x512xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x512xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 512] to %C[%row, %col] [128, 512] : memref<128x512xf16, "fragment"> to memref<256x512xf16>
    }
    return
  }
}

// -----

// One warpgroup with 128 rows and block_n = 256 would need 256 accumulator registers per thread.
// CHECK-LABEL: func.func @too_many_registers
// CHECK-NOT: tile.mma
// CHECK: return
module {
  func.func @too_many_registers(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 1 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 256 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x256xf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x256xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 256] to %bs[%c0, %c0] [32, 256] : memref<256x256xf16> to memref<32x256xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
      %h = tile.alloc : memref<128x256xf16, "fragment">
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x256xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 256] to %C[%row, %col] [128, 256] : memref<128x256xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// f64 operands: no tensor-core instruction takes them.
// CHECK-LABEL: func.func @f64
// CHECK-NOT: tile.mma
// CHECK: return
module {
  func.func @f64(%A: memref<256x256xf64>, %B: memref<256x256xf64>, %C: memref<256x256xf64>) attributes {tile.entry} {
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
      %as = tile.alloc : memref<128x32xf64, "shared">
      %bs = tile.alloc : memref<32x128xf64, "shared">
      %acc = tile.alloc : memref<128x128xf64, "fragment">
      %zero = arith.constant 0.0 : f64
      tile.fill %acc, %zero : memref<128x128xf64, "fragment">, f64
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf64> to memref<128x32xf64, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xf64> to memref<32x128xf64, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf64, "shared">, memref<32x128xf64, "shared">, memref<128x128xf64, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf64, "fragment"> to memref<256x256xf64>
    }
    return
  }
}

// -----

// float8 on sm_80: mma.sync has no float8 shape.
// CHECK-LABEL: func.func @fp8_sm80
// CHECK-NOT: tile.mma
// CHECK: return
module attributes {tile.arch = "sm_80"} {
  func.func @fp8_sm80(%A: memref<256x512xf8E4M3FN>, %B: memref<256x512xf8E4M3FN>, %C: memref<256x256xbf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %bs = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<256x512xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        tile.copy %B[%col, %k0] [128, 64] to %bs[%c0, %c0] [128, 64] : memref<256x512xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        tile.gemm %as, %bs, %acc {transpose_b = true} : memref<128x64xf8E4M3FN, "shared">, memref<128x64xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xbf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to bf16
        memref.store %t, %h[%i, %j] : memref<128x128xbf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xbf16, "fragment"> to memref<256x256xbf16>
    }
    return
  }
}

// -----

// An f16 accumulator: the tensor-core kernels accumulate in f32 only.
// CHECK-LABEL: func.func @f16_accumulator
// CHECK-NOT: tile.mma
// CHECK: return
module {
  func.func @f16_accumulator(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
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
      %acc = tile.alloc : memref<128x128xf16, "fragment">
      %zero = arith.constant 0.0 : f16
      tile.fill %acc, %zero : memref<128x128xf16, "fragment">, f16
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf16, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// Rejected: an arch the tensor-core schedules do not serve.
// expected-error @unknown {{infer-mma-layout: unsupported CUDA arch 'sm_75'}}
// ERR: error: infer-mma-layout: unsupported CUDA arch 'sm_75' (supported: sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100a, sm_120a)
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

// A GEMM with A in registers as TileLang writes it: the loop copies A's shared tile into a
// fragment (T.copy(A_shared, A_frag)) and the gemm reads the fragment. wgmma's RS form: the
// accumulator is marked, the A fragment is not (the instruction fixes its layout).
// CHECK-LABEL: func.func @register_a
// CHECK: tile.alloc : memref<128x32xf16, "shared">
// CHECK-NEXT: tile.alloc : memref<128x32xf16, "fragment">
// CHECK: tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<128x128xf32, "fragment">
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "registers", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "fragment">
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
        tile.gemm %af, %bs, %acc : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
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

// The same in bf16 with 256 threads, 128 x 256 tiles and ragged sizes: two consumer
// warpgroups, m64n256 from registers.
// CHECK-LABEL: func.func @register_a_bf16
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "registers", instr = array<i64: 64, 256, 16>, kind = "wgmma", warpgroups = 2 : i64}} : memref<128x64xbf16, "fragment">
module {
  func.func @register_a_bf16(%A: memref<1000x1000xbf16>, %B: memref<1000x1016xbf16>, %C: memref<1000x1016xbf16>) attributes {tile.entry} {
    %gx = arith.constant 4 : index
    %gy = arith.constant 8 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 256 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 16 : index
      %as = tile.alloc : memref<128x64xbf16, "shared">
      %af = tile.alloc : memref<128x64xbf16, "fragment">
      %bs = tile.alloc : memref<64x256xbf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x256xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<1000x1000xbf16> to memref<128x64xbf16, "shared">
        tile.copy %B[%k0, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<1000x1016xbf16> to memref<64x256xbf16, "shared">
        tile.copy %as[%c0, %c0] [128, 64] to %af[%c0, %c0] [128, 64] : memref<128x64xbf16, "shared"> to memref<128x64xbf16, "fragment">
        tile.gemm %af, %bs, %acc : memref<128x64xbf16, "fragment">, memref<64x256xbf16, "shared">, memref<128x256xf32, "fragment">
      }
      %h = tile.alloc : memref<128x256xbf16, "fragment">
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %t = arith.truncf %v : f32 to bf16
        memref.store %t, %h[%i, %j] : memref<128x256xbf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 256] to %C[%row, %col] [128, 256] : memref<128x256xbf16, "fragment"> to memref<1000x1016xbf16>
    }
    return
  }
}

// -----

// 8-bit A from registers with K-major B (transpose_B): k32.
// CHECK-LABEL: func.func @register_a_e4m3
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "registers", instr = array<i64: 64, 128, 32>, kind = "wgmma", warpgroups = 2 : i64}, transpose_b = true}
module {
  func.func @register_a_e4m3(%A: memref<512x1024xf8E4M3FN>, %B: memref<384x1024xf8E4M3FN>, %C: memref<512x384xbf16>) attributes {tile.entry} {
    %gx = arith.constant 3 : index
    %gy = arith.constant 4 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 16 : index
      %as = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %af = tile.alloc : memref<128x64xf8E4M3FN, "fragment">
      %bs = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<512x1024xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        tile.copy %B[%col, %k0] [128, 64] to %bs[%c0, %c0] [128, 64] : memref<384x1024xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        tile.copy %as[%c0, %c0] [128, 64] to %af[%c0, %c0] [128, 64] : memref<128x64xf8E4M3FN, "shared"> to memref<128x64xf8E4M3FN, "fragment">
        tile.gemm %af, %bs, %acc {transpose_b = true} : memref<128x64xf8E4M3FN, "fragment">, memref<128x64xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xbf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to bf16
        memref.store %t, %h[%i, %j] : memref<128x128xbf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xbf16, "fragment"> to memref<512x384xbf16>
    }
    return
  }
}

// -----

// 8-bit with B stored K x N (MN-major): wgmma reads 8-bit operands K-major only, whatever A's
// source. Left alone (SIMT).
// CHECK-LABEL: func.func @register_a_e4m3_mn_major_b
// CHECK-NOT: tile.mma
// CHECK: return
module {
  func.func @register_a_e4m3_mn_major_b(%A: memref<512x1024xf8E4M3FN>, %B: memref<1024x384xf8E4M3FN>, %C: memref<512x384xbf16>) attributes {tile.entry} {
    %gx = arith.constant 3 : index
    %gy = arith.constant 4 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 16 : index
      %as = tile.alloc : memref<128x64xf8E4M3FN, "shared">
      %af = tile.alloc : memref<128x64xf8E4M3FN, "fragment">
      %bs = tile.alloc : memref<64x128xf8E4M3FN, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<512x1024xf8E4M3FN> to memref<128x64xf8E4M3FN, "shared">
        tile.copy %B[%k0, %col] [64, 128] to %bs[%c0, %c0] [64, 128] : memref<1024x384xf8E4M3FN> to memref<64x128xf8E4M3FN, "shared">
        tile.copy %as[%c0, %c0] [128, 64] to %af[%c0, %c0] [128, 64] : memref<128x64xf8E4M3FN, "shared"> to memref<128x64xf8E4M3FN, "fragment">
        tile.gemm %af, %bs, %acc : memref<128x64xf8E4M3FN, "fragment">, memref<64x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xbf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to bf16
        memref.store %t, %h[%i, %j] : memref<128x128xbf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xbf16, "fragment"> to memref<512x384xbf16>
    }
    return
  }
}

// -----

// Register A on sm_80: mma.sync with A from registers (the tensor-core lowering leaves this one
// to the SIMT path; the decision itself is the instruction's).
// CHECK-LABEL: func.func @register_a_sm80
// CHECK: tile.alloc {tile.mma_layout = "mma-accumulator"} : memref<128x128xf32, "fragment">
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "registers", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "fragment">
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
        tile.gemm %af, %bs, %acc : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
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

// Inside a T.ws block over one warpgroup of a 256-thread block, that warpgroup alone computes
// the gemm: one warpgroup (the whole block would split the 128 rows between two).
// CHECK-LABEL: func.func @consumer_warpgroup
// CHECK: tile.warpgroups [1]
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}}
module {
  func.func @consumer_warpgroup(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %g = arith.constant 8 : index
    tile.kernel grid(%g, %g) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      tile.warpgroups [1] {
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<1024x1024xf32>
      }
    }
    return
  }
}

// -----

// A gemm in a thread range of 128 threads that starts at thread 64 (warps 2..5, no warpgroup
// of the hardware's: wgmma is issued by warps 4k..4k+3 together) gets mma.sync, a warp's
// instruction, over its 4 warps; its accumulator is mma.sync's C fragment.
// CHECK-LABEL: func.func @range_off_warpgroups
// CHECK: tile.alloc {tile.mma_layout = "mma-accumulator"} : memref<128x128xf32, "fragment">
// CHECK: tile.gemm %{{.*}} {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}}
module attributes {tile.arch = "sm_90a"} {
  func.func @range_off_warpgroups(%A: memref<128x64xf16>, %B: memref<64x128xf16>, %C: memref<128x128xf32>) attributes {tile.entry} {
    %c1 = arith.constant 1 : index
    tile.kernel grid(%c1) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %c192 = arith.constant 192 : index
      %tx = gpu.thread_id x
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x128xf16, "shared">
      %from = arith.cmpi sle, %c64, %tx : index
      %below = arith.cmpi slt, %tx, %c192 : index
      %inside = arith.andi %from, %below : i1
      scf.if %inside {
        %acc = tile.alloc : memref<128x128xf32, "fragment">
        tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%c0, %c0] [64, 128] to %bs[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<128x128xf32>
      }
    }
    return
  }
}

// -----

// The same range from thread 128 (warpgroup 1 of the hardware's) keeps wgmma.
// CHECK-LABEL: func.func @range_on_a_warpgroup
// CHECK: tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<128x128xf32, "fragment">
// CHECK: kind = "wgmma", warpgroups = 1
module attributes {tile.arch = "sm_90a"} {
  func.func @range_on_a_warpgroup(%A: memref<128x64xf16>, %B: memref<64x128xf16>, %C: memref<128x128xf32>) attributes {tile.entry} {
    %c1 = arith.constant 1 : index
    tile.kernel grid(%c1) threads [256] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c128 = arith.constant 128 : index
      %tx = gpu.thread_id x
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x128xf16, "shared">
      %inside = arith.cmpi sge, %tx, %c128 : index
      scf.if %inside {
        %acc = tile.alloc : memref<128x128xf32, "fragment">
        tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%c0, %c0] [64, 128] to %bs[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, "fragment"> to memref<128x128xf32>
      }
    }
    return
  }
}

// -----

// T.wgmma_gemm in the range from thread 32 (warps 1..8) has no wgmma: an error at its line.
module attributes {tile.arch = "sm_90a"} {
  func.func @wgmma_required_off_warpgroups(%A: memref<128x64xf16>, %B: memref<64x128xf16>, %C: memref<128x128xf32>) attributes {tile.entry} {
    %c1 = arith.constant 1 : index
    tile.kernel grid(%c1) threads [320] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %c288 = arith.constant 288 : index
      %tx = gpu.thread_id x
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x128xf16, "shared">
      %from = arith.cmpi sge, %tx, %c32 : index
      %below = arith.cmpi slt, %tx, %c288 : index
      %inside = arith.andi %from, %below : i1
      scf.if %inside {
        %acc = tile.alloc : memref<128x128xf32, "fragment">
        // expected-error @+1 {{T.wgmma_gemm runs on whole warpgroups of the hardware (warps 4k to 4k+3), and the threads running it here start at thread 32}}
        tile.gemm %as, %bs, %acc {tile.wgmma_required} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}
// ERR: error: T.wgmma_gemm runs on whole warpgroups of the hardware (warps 4k to 4k+3), and the threads running it here start at thread 32, not a multiple of 128
