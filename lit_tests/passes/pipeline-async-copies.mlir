// RUN: not tilec-opt --pipeline-async-copies --split-input-file %s | FileCheck %s
// RUN: not tilec-opt --pipeline-async-copies --split-input-file %s 2>&1 | FileCheck --check-prefix=ERR %s

// pipeline-async-copies: each T.Pipelined loop's global -> shared copies get tile.async and the
// loop tile.pipeline {stages, k_tile, mechanism}. The arch comes from the module's tile.arch
// (sm_90a without one).

// sm_90a, the quickstart (tile.mma wgmma, TMA epilogue of 128 f16 columns): both operand copies
// by TMA; one stage is one K row of the tiles' 128B swizzle (64 f16), and the ring grows to
// 6 stages: 1 KiB + 6 x (128 + 128) x 64 x 2 B + 128 x 128 x 2 B of staged C = 230400 B fit in
// 227 KiB.
// CHECK-LABEL: func.func @quickstart
// CHECK: tile.pipelined {{.*}} attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 6 : i64}}
// CHECK: tile.copy {{.*}} {tile.async = "tma"}
// CHECK: tile.copy {{.*}} {tile.async = "tma"}
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
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
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
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// K = 256 is 4 k-tiles of 64: no more stages than k-tiles.
// CHECK-LABEL: func.func @short_k
// CHECK: tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 4 : i64}
module {
  func.func @short_k(%A: memref<512x256xf16>, %B: memref<256x384xf16>, %C: memref<512x384xf16>) attributes {tile.entry} {
    %gx = arith.constant 3 : index
    %gy = arith.constant 4 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<512x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x384xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<512x384xf16>
    }
    return
  }
}

// -----

// K = 64 is a single k-tile of 64: the wgmma kernel streams at least two through its ring, so
// the loop is scheduled by cp.async like any other (the SIMT path then pipelines it).
// CHECK-LABEL: func.func @one_k_tile
// CHECK: tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}
// CHECK-COUNT-2: {tile.async = "cp.async"}
module {
  func.func @one_k_tile(%A: memref<512x64xf16>, %B: memref<64x384xf16>, %C: memref<512x384xf16>) attributes {tile.entry} {
    %gx = arith.constant 3 : index
    %gy = arith.constant 4 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 2 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<512x64xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<64x384xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<512x384xf16>
    }
    return
  }
}

// -----

// K known only at run time: no TMA ring (the wgmma kernel needs K at compile time); cp.async
// for B, whose rows (N = 384 f16) are 16-byte multiples; A's rows of K elements may not be.
// CHECK-LABEL: func.func @dynamic_k
// CHECK: tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.muli
// CHECK-NEXT: tile.copy %arg0{{.*}} : memref<512x?xf16>
// CHECK-NEXT: tile.copy %arg1{{.*}} {tile.async = "cp.async"}
module {
  func.func @dynamic_k(%A: memref<512x?xf16>, %B: memref<?x384xf16>, %C: memref<512x384xf16>) attributes {tile.entry} {
    %gx = arith.constant 3 : index
    %gy = arith.constant 4 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<512x?xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<?x384xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<512x384xf16>
    }
    return
  }
}

// -----

// The same wgmma gemm with tiles select-shared-swizzle did not mark: no TMA ring (its K tile is
// the swizzle row), the copies go by cp.async.
// CHECK-LABEL: func.func @unswizzled
// CHECK: tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}
module {
  func.func @unswizzled(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
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
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// TileLang's tuned 128x256x64 bf16, two consumer warpgroups: 4 stages of 48 KiB and 32 KiB of
// staged C fit (5 would not).
// CHECK-LABEL: func.func @tuned
// CHECK: tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 4 : i64}
module {
  func.func @tuned(%A: memref<4096x4096xbf16>, %B: memref<4096x4096xbf16>, %C: memref<4096x4096xbf16>) attributes {tile.entry} {
    %gx = arith.constant 16 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 256 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 64 : index
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x64xbf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<64x256xbf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x256xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 4 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<4096x4096xbf16> to memref<128x64xbf16, "shared">
        tile.copy %B[%k0, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<4096x4096xbf16> to memref<64x256xbf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 256, 16>, kind = "wgmma", warpgroups = 2 : i64}} : memref<128x64xbf16, "shared">, memref<64x256xbf16, "shared">, memref<128x256xf32, "fragment">
      }
      %h = tile.alloc : memref<128x256xbf16, "fragment">
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %t = arith.truncf %v : f32 to bf16
        memref.store %t, %h[%i, %j] : memref<128x256xbf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 256] to %C[%row, %col] [128, 256] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x256xbf16, "fragment"> to memref<4096x4096xbf16>
    }
    return
  }
}

// -----

// sm_80: cp.async of the user's 32-deep K tiles, the user's stage count.
// CHECK-LABEL: func.func @ampere
// CHECK: tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}
// CHECK: tile.copy {{.*}} {tile.async = "cp.async"}
// CHECK: tile.copy {{.*}} {tile.async = "cp.async"}
module attributes {tile.arch = "sm_80"} {
  func.func @ampere(%A: memref<1000x1000xf16>, %B: memref<1000x1016xf16>, %C: memref<1000x1016xf16>) attributes {tile.entry} {
    %gx = arith.constant 8 : index
    %gy = arith.constant 8 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 32 : index
      %as = tile.alloc {tile.swizzle = "xor"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "xor"} : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<1000x1000xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<1000x1016xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<1000x1016xf16>
    }
    return
  }
}

// -----

// Packed int4 weights after lower-sub-byte-types (gemm_int4's decode-into-shared loop): the
// bytes' column is the element column shifted right, (k * 128) >> 1, a multiple of 16 bytes,
// so the copy is cp.async too, as is TileLang's uint8 storage at k * 128 // 2; a column (k * 8) >> 1 is not provably 16-byte aligned and stays
// synchronous.
// CHECK-LABEL: func.func @packed_columns
// CHECK: tile.pipeline = {k_tile = {{[0-9]+}} : i64, mechanism = "cp.async", stages = 2 : i64}
// CHECK: tile.copy %arg0{{.*}} {tile.async = "cp.async"}
// CHECK: tile.copy %arg0{{.*}} {tile.async = "cp.async"}
// CHECK: tile.copy %arg1{{.*}} : memref<256x512xi8> to memref<128x4xi8, "shared">
// CHECK-NOT: tile.async
// CHECK: tile.parallel
module attributes {tile.arch = "sm_80"} {
  func.func @packed_columns(%B: memref<256x512xi8>, %D: memref<256x512xi8>) attributes {tile.entry} {
    %g = arith.constant 2 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c128 = arith.constant 128 : index
      %bs = tile.alloc : memref<128x64xi8, "shared">
      %bs2 = tile.alloc : memref<128x64xi8, "shared">
      %ds = tile.alloc : memref<128x4xi8, "shared">
      %out = tile.alloc : memref<128x64xf16, "shared">
      %row = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c8 step %c1 stages 2 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        %byte = arith.shrui %k0, %c1 : index
        tile.copy %B[%row, %byte] [128, 64] to %bs[%c0, %c0] [128, 64] : memref<256x512xi8> to memref<128x64xi8, "shared">
        %c2 = arith.constant 2 : index
        %halved = arith.floordivsi %k0, %c2 : index
        tile.copy %B[%row, %halved] [128, 64] to %bs2[%c0, %c0] [128, 64] : memref<256x512xi8> to memref<128x64xi8, "shared">
        %k1 = arith.muli %k, %c8 : index
        %narrow = arith.shrui %k1, %c1 : index
        tile.copy %D[%row, %narrow] [128, 4] to %ds[%c0, %c0] [128, 4] : memref<256x512xi8> to memref<128x4xi8, "shared">
        tile.parallel [128, 64] {
        ^bb0(%i: index, %j: index):
          %q0 = memref.load %bs[%i, %j] : memref<128x64xi8, "shared">
          %q1 = memref.load %bs2[%i, %j] : memref<128x64xi8, "shared">
          %q = arith.addi %q0, %q1 : i8
          %jd = arith.shrui %j, %c1 : index
          %c3 = arith.constant 3 : index
          %jj = arith.andi %jd, %c3 : index
          %d = memref.load %ds[%i, %jj] : memref<128x4xi8, "shared">
          %s = arith.addi %q, %d : i8
          %w = arith.uitofp %s : i8 to f16
          memref.store %w, %out[%i, %j] : memref<128x64xf16, "shared">
        }
      }
    }
    return
  }
}

// -----

// A gemm left to the SIMT path (no tile.mma) on sm_90a: cp.async all the same, and at least
// two stages when the user asked for one.
// CHECK-LABEL: func.func @simt_gemm
// CHECK: tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 2 : i64}
// CHECK-COUNT-2: {tile.async = "cp.async"}
module {
  func.func @simt_gemm(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
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
      tile.pipelined %c0 to %kt step %c1 stages 1 {
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

// A's rows (1003 f16) are not 16-byte multiples: no TMA ring for the wgmma gemm; B's copy still
// goes by cp.async, A's stays synchronous.
// CHECK-LABEL: func.func @ragged_k
// CHECK: tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}
// CHECK: tile.copy %arg0{{.*}} : memref<1000x1003xf16>
// CHECK: tile.copy {{.*}} {tile.async = "cp.async"}
module {
  func.func @ragged_k(%A: memref<1000x1003xf16>, %B: memref<1003x1016xf16>, %C: memref<1000x1016xf16>) attributes {tile.entry} {
    %gx = arith.constant 8 : index
    %gy = arith.constant 8 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 32 : index
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
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<1000x1003xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<1003x1016xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<1000x1016xf16>
    }
    return
  }
}

// -----

// A loop without a gemm: the K tile is the copied box's extent along the loop (128 columns).
// CHECK-LABEL: func.func @row_sum
// CHECK: tile.pipeline = {k_tile = 128 : i64, mechanism = "cp.async", stages = 3 : i64}
// CHECK: tile.copy {{.*}} {tile.async = "cp.async"}
module {
  func.func @row_sum(%X: memref<64x4096xf32>, %Y: memref<64xf32>) attributes {tile.entry} {
    %g = arith.constant 16 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c128 = arith.constant 128 : index
      %c32 = arith.constant 32 : index
      %row = arith.muli %bx, %c4 : index
      %xs = tile.alloc : memref<4x128xf32, "shared">
      %acc = tile.alloc : memref<4xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<4xf32, "fragment">, f32
      tile.pipelined %c0 to %c32 step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %X[%row, %k0] [4, 128] to %xs[%c0, %c0] [4, 128] : memref<64x4096xf32> to memref<4x128xf32, "shared">
        tile.reduce "sum" %xs to %acc dim 1 {clear = false} : memref<4x128xf32, "shared"> to memref<4xf32, "fragment">
      }
      tile.copy %acc[%c0] [4] to %Y[%row] [4] : memref<4xf32, "fragment"> to memref<64xf32>
    }
    return
  }
}

// -----

// No copy whose rows move in 16-byte pieces (A's and B's rows both 1003 f16): left alone.
// CHECK-LABEL: func.func @no_async
// CHECK-NOT: tile.async
// CHECK-NOT: tile.pipeline =
module attributes {tile.arch = "sm_80"} {
  func.func @no_async(%A: memref<1000x1003xf16>, %B: memref<1003x1003xf16>, %C: memref<1000x1003xf16>) attributes {tile.entry} {
    %gx = arith.constant 8 : index
    %gy = arith.constant 8 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 32 : index
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
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<1000x1003xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<1003x1003xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<1000x1003xf16>
    }
    return
  }
}

// -----

// An arch the passes do not schedule for is an error.
// ERR: pipeline-async-copies: unsupported CUDA arch 'sm_75'
module attributes {tile.arch = "sm_75"} {
  func.func @bad_arch(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
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

// A in registers, filled in the loop from A's shared tile (T.copy(A_shared, A_frag)): that
// tile is A's operand tile of the TMA ring (the kernel ldmatrix-reads it from the slot), so the
// loop is the quickstart's ring: both global copies by TMA, 6 stages of 64 f16 of K. The
// shared -> fragment copy is not a global copy: no tile.async.
// CHECK-LABEL: func.func @register_a
// CHECK: tile.pipelined {{.*}} attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 6 : i64}}
// CHECK: tile.copy {{.*}} {tile.async = "tma"} : memref<4096x4096xf16> to memref<128x32xf16, "shared">
// CHECK: tile.copy {{.*}} {tile.async = "tma"} : memref<4096x4096xf16> to memref<32x128xf16, "shared">
// CHECK: tile.copy {{.*}}[128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
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
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
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
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// A's shared tile without the swizzle select-shared-swizzle gives it: not a TMA ring (the
// operand tiles must be swizzled alike); cp.async with the user's K tile.
// CHECK-LABEL: func.func @register_a_unswizzled
// CHECK: tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}
module {
  func.func @register_a_unswizzled(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
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
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
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
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// The fragment is filled from part of a wider shared tile: the copies are not exactly the
// gemm's operand tiles, so no TMA ring.
// CHECK-LABEL: func.func @register_a_partial_fill
// CHECK: tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}
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
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
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
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// Register A on sm_80: cp.async as for every sm_80 loop.
// CHECK-LABEL: func.func @register_a_sm80
// CHECK: tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}
// CHECK: tile.copy {{.*}} {tile.async = "cp.async"}
// CHECK: tile.copy {{.*}} {tile.async = "cp.async"}
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
      %bs = tile.alloc {tile.swizzle = "xor"} : memref<32x128xf16, "shared">
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
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {kind = "shared-staged", vector_bytes = 16 : i64}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// The quickstart in a module marked tile.disable_tma (the user disabled TMA lowering or warp
// specialization): no TMA ring, the copies go by cp.async with the user's K tile and depth.
// CHECK-LABEL: func.func @quickstart_without_tma
// CHECK: tile.pipelined {{.*}} attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}}
// CHECK: tile.copy {{.*}} {tile.async = "cp.async"}
// CHECK: tile.copy {{.*}} {tile.async = "cp.async"}
module attributes {tile.disable_tma} {
  func.func @quickstart_without_tma(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
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
      %as = tile.alloc {tile.swizzle = "128B"} : memref<128x32xf16, "shared">
      %bs = tile.alloc {tile.swizzle = "128B"} : memref<32x128xf16, "shared">
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
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}} : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// Opted in (tile.async_gathers, TILEC_ASYNC_GATHERS=1): an implicit GEMM's patch gather, a
// T.Parallel storing select(inside, a global element, 0) into a shared tile, joins the cp.async
// pipeline beside the filter's tile copy (the rest is checked once layouts are known).
// CHECK-LABEL: func.func @gather_opted_in
// CHECK: tile.pipelined {{.*}} attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}}
// CHECK: tile.parallel [64, 32] attributes {tile.async = "cp.async"}
// CHECK: tile.copy {{.*}} {tile.async = "cp.async"}
module attributes {tile.arch = "sm_80", tile.async_gathers} {
  func.func @gather_opted_in(%X: memref<1024x64xf16>, %W: memref<64x64xf16>) attributes {tile.entry} {
    %g = arith.constant 16 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c32 = arith.constant 32 : index
      %c1000 = arith.constant 1000 : index
      %zero = arith.constant 0.0 : f16
      %ps = tile.alloc : memref<64x32xf16, "shared">
      %ws = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.pipelined %c0 to %c2 step %c2 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %row = arith.addi %bx, %i : index
          %inside = arith.cmpi ult, %row, %c1000 : index
          %col = arith.addi %k0, %j : index
          %v = memref.load %X[%row, %col] : memref<1024x64xf16>
          %s = arith.select %inside, %v, %zero : f16
          memref.store %s, %ps[%i, %j] : memref<64x32xf16, "shared">
        }
        tile.copy %W[%k0, %c0] [32, 64] to %ws[%c0, %c0] [32, 64] : memref<64x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %ps, %ws, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
    }
    return
  }
}

// -----

// Not opted in: the gather stays synchronous in the loop, only the tile copy goes ahead.
// CHECK-LABEL: func.func @gather_not_opted_in
// CHECK: tile.parallel [64, 32] {
// CHECK: tile.copy {{.*}} {tile.async = "cp.async"}
module attributes {tile.arch = "sm_80"} {
  func.func @gather_not_opted_in(%X: memref<1024x64xf16>, %W: memref<64x64xf16>) attributes {tile.entry} {
    %g = arith.constant 16 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c32 = arith.constant 32 : index
      %ps = tile.alloc : memref<64x32xf16, "shared">
      %ws = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.pipelined %c0 to %c2 step %c2 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %row = arith.addi %bx, %i : index
          %col = arith.addi %k0, %j : index
          %v = memref.load %X[%row, %col] : memref<1024x64xf16>
          memref.store %v, %ps[%i, %j] : memref<64x32xf16, "shared">
        }
        tile.copy %W[%k0, %c0] [32, 64] to %ws[%c0, %c0] [32, 64] : memref<64x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %ps, %ws, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
    }
    return
  }
}

// -----

// With the module's opt-in tile.pipeline_table_loads (TILEC_PIPELINE_TABLE_LOADS=1), each load
// of a global tensor the function only loads from gets tile.table_load: the lengths before the
// loop and the block table in it. A tensor the function also writes keeps its loads unmarked.
// CHECK-LABEL: func.func @table_loads_marked
// CHECK: memref.load %{{.*}} {tile.table_load} : memref<4xi32>
// CHECK: memref.load %{{.*}} {tile.table_load} : memref<4x8xi32>
// CHECK: memref.load %{{.*}} : memref<4xi32>
// CHECK-NOT: tile.table_load
module attributes {tile.arch = "sm_80", tile.pipeline_table_loads} {
  func.func @table_loads_marked(%A: memref<256x32xf16>, %table: memref<4x8xi32>, %lengths: memref<4xi32>, %counts: memref<4xi32>) attributes {tile.entry} {
    %c4 = arith.constant 4 : index
    tile.kernel grid(%c4) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %as = tile.alloc : memref<32x32xf16, "shared">
      %length = memref.load %lengths[%bx] : memref<4xi32>
      %n = arith.index_cast %length : i32 to index
      tile.pipelined %c0 to %n step %c1 stages 2 {
      ^bb0(%k: index):
        %entry = memref.load %table[%bx, %k] : memref<4x8xi32>
        %page = arith.index_cast %entry : i32 to index
        %row = arith.muli %page, %c32 : index
        tile.copy %A[%row, %c0] [32, 32] to %as[%c0, %c0] [32, 32] : memref<256x32xf16> to memref<32x32xf16, "shared">
      }
      %count = memref.load %counts[%bx] : memref<4xi32>
      %more = arith.addi %count, %length : i32
      memref.store %more, %counts[%bx] : memref<4xi32>
    }
    return
  }
}

// -----

// Without the opt-in no load is marked.
// CHECK-LABEL: func.func @table_loads_not_opted_in
// CHECK-NOT: tile.table_load
// CHECK: return
module attributes {tile.arch = "sm_80"} {
  func.func @table_loads_not_opted_in(%A: memref<256x32xf16>, %table: memref<4x8xi32>) attributes {tile.entry} {
    %c4 = arith.constant 4 : index
    tile.kernel grid(%c4) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %as = tile.alloc : memref<32x32xf16, "shared">
      tile.pipelined %c0 to %c8 step %c1 stages 2 {
      ^bb0(%k: index):
        %entry = memref.load %table[%bx, %k] : memref<4x8xi32>
        %page = arith.index_cast %entry : i32 to index
        %row = arith.muli %page, %c32 : index
        tile.copy %A[%row, %c0] [32, 32] to %as[%c0, %c0] [32, 32] : memref<256x32xf16> to memref<32x32xf16, "shared">
      }
    }
    return
  }
}
