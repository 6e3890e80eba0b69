// RUN: tilec-opt --infer-fragment-layout %s --split-input-file | FileCheck %s

// A fragment only copied and used in T.Parallel gets 16-byte runs along its last dimension;
// the T.Parallel indexing it takes the same mapping.
// CHECK-LABEL: func.func @copy_parallel
// CHECK: tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = {{\[\[}}2, 0], [4, 0]]>} : memref<64x64xf32, "fragment">
// CHECK: tile.parallel [64, 64] attributes {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = {{\[\[}}2, 0], [4, 0]]>}
func.func @copy_parallel(%A: memref<?x?xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc : memref<64x64xf32, "fragment">
    tile.copy %A[%c0, %c0] [64, 64] to %f[%c0, %c0] [64, 64] : memref<?x?xf32> to memref<64x64xf32, "fragment">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %f[%i, %j] : memref<64x64xf32, "fragment">
      %y = arith.addf %x, %x : f32
      memref.store %y, %f[%i, %j] : memref<64x64xf32, "fragment">
    }
  }
  return
}

// -----

// A gemm accumulator: each thread owns 4x4 runs of C (8 x 16 threads); a fragment written
// from it in T.Parallel (the f16 staging buffer) follows.
// CHECK-LABEL: func.func @accumulator
// CHECK: tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [1, 0], [2, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [4, 0]], warp = {{\[\[}}8, 0], [16, 0]]>} : memref<64x64xf32, "fragment">
// CHECK: tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [1, 0], [2, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [4, 0]], warp = {{\[\[}}8, 0], [16, 0]]>} : memref<64x64xf16, "fragment">
func.func @accumulator(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    %h = tile.alloc : memref<64x64xf16, "fragment">
    tile.gemm %a, %b, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %c[%i, %j] : memref<64x64xf32, "fragment">
      %y = arith.truncf %x : f32 to f16
      memref.store %y, %h[%i, %j] : memref<64x64xf16, "fragment">
    }
  }
  return
}

// -----

// A reduce destination is its source's layout without the reduced dimension: replicated over
// the 16 threads that shared a row.
// CHECK-LABEL: func.func @row_max
// CHECK: tile.alloc {tile.layout = #tile.linear<[16], register = {{\[\[}}8]], lane = {{\[\[}}0], [0], [0], [0], [1]], warp = {{\[\[}}2], [4]]>} : memref<16xf32, "fragment">
// CHECK-NEXT: tile.alloc {tile.layout = #tile.linear<[16, 64], register = {{\[\[}}0, 1], [0, 2], [8, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = {{\[\[}}2, 0], [4, 0]]>} : memref<16x64xf32, "fragment">
func.func @row_max(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<16xf32, "fragment">
    %f = tile.alloc : memref<16x64xf32, "fragment">
    tile.reduce "max" %f to %s dim 1 : memref<16x64xf32, "fragment"> to memref<16xf32, "fragment">
  }
  return
}

// -----

// A T.Parallel touching no fragment: one point per thread per step, so consecutive threads
// read consecutive elements (coalesced scalar accesses).
// CHECK-LABEL: func.func @global_only
// CHECK: tile.parallel [32, 64] attributes {tile.layout = #tile.linear<[32, 64], register = {{\[\[}}2, 0], [4, 0], [8, 0], [16, 0]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], warp = {{\[\[}}0, 32], [1, 0]]>}
func.func @global_only(%A: memref<32x64xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    tile.parallel [32, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %A[%i, %j] : memref<32x64xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %A[%i, %j] : memref<32x64xf32>
    }
  }
  return
}

// -----

// A T.Parallel gathering global rows into a shared tile (an implicit GEMM's patch tile, zero
// where the select drops the read): 16 bytes of each row per thread (8 f16 registers along
// the columns), so the reads can be vectors. A read whose last index does not follow the
// last loop variable (B[j, i]) gives no such run: one point per thread per step.
// CHECK-LABEL: func.func @gather_rows
// CHECK: tile.parallel [64, 32] attributes {tile.layout = #tile.linear<[64, 32], register = {{\[\[}}0, 1], [0, 2], [0, 4], [32, 0]], lane = {{\[\[}}0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}8, 0], [16, 0]]>}
// CHECK-LABEL: func.func @gather_columns
// CHECK: tile.parallel [32, 32] attributes {tile.layout = #tile.linear<[32, 32], register = {{\[\[}}8, 0], [16, 0]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], warp = {{\[\[}}1, 0], [2, 0], [4, 0]]>}
func.func @gather_rows(%A: memref<1024x256xf16>, %k: index, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %tile = tile.alloc : memref<64x32xf16, "shared">
    tile.parallel [64, 32] {
    ^bb0(%i: index, %j: index):
      %c3 = arith.constant 3 : index
      %row = arith.muli %i, %c3 : index
      %col = arith.addi %k, %j : index
      %x = memref.load %A[%row, %col] : memref<1024x256xf16>
      %c0 = arith.constant 0 : index
      %inside = arith.cmpi ne, %i, %c0 : index
      %zero = arith.constant 0.0 : f16
      %y = arith.select %inside, %x, %zero : f16
      memref.store %y, %tile[%i, %j] : memref<64x32xf16, "shared">
    }
  }
  return
}

func.func @gather_columns(%B: memref<32x32xf16>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %tile = tile.alloc : memref<32x32xf16, "shared">
    tile.parallel [32, 32] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %B[%j, %i] : memref<32x32xf16>
      memref.store %x, %tile[%i, %j] : memref<32x32xf16, "shared">
    }
  }
  return
}

// -----

// A fragment one gemm accumulates and another reads as its A operand in a different layout
// (C's rows, whole along K): the second gemm reads a converted copy.
// CHECK-LABEL: func.func @gemm_chain
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [1, 0], [2, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [4, 0]], warp = {{\[\[}}8, 0], [16, 0]]>} : memref<64x64xf32, "fragment">
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}1, 0], [2, 0], [32, 0], [0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32]], lane = {{\[\[}}0, 0], [0, 0], [0, 0], [0, 0], [4, 0]], warp = {{\[\[}}8, 0], [16, 0]]>} : memref<64x64xf32, "fragment">
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [1, 0], [2, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [4, 0]], warp = {{\[\[}}8, 0], [16, 0]]>} : memref<64x64xf32, "fragment">
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} : memref<64x32xf32, "shared">, memref<32x64xf32, "shared">, memref<64x64xf32, "fragment">
// CHECK: tile.convert_layout %{{.*}} to %{{.*}} : memref<64x64xf32, "fragment"> to memref<64x64xf32, "fragment">
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} : memref<64x64xf32, "fragment">, memref<64x64xf32, "shared">, memref<64x64xf32, "fragment">
func.func @gemm_chain(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf32, "shared">
    %b = tile.alloc : memref<32x64xf32, "shared">
    %b2 = tile.alloc : memref<64x64xf32, "shared">
    %x = tile.alloc : memref<64x64xf32, "fragment">
    %y = tile.alloc : memref<64x64xf32, "fragment">
    tile.gemm %a, %b, %x : memref<64x32xf32, "shared">, memref<32x64xf32, "shared">, memref<64x64xf32, "fragment">
    tile.gemm %x, %b2, %y : memref<64x64xf32, "fragment">, memref<64x64xf32, "shared">, memref<64x64xf32, "fragment">
  }
  return
}

// -----

// Attention's row statistics: the row maximum of a 64x32 score tile is sliced from its layout;
// a T.Parallel over a 64x128 accumulator (whose threads split rows differently) reads it
// through a converted copy laid out as that accumulator's rows.
// CHECK-LABEL: func.func @row_scale
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[64, 32], register = {{\[\[}}0, 1], [0, 2], [1, 0], [2, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [4, 0], [8, 0]], warp = {{\[\[}}16, 0], [32, 0]]>} : memref<64x32xf32, "fragment">
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[64, 128], register = {{\[\[}}0, 1], [0, 2], [0, 64], [1, 0], [2, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [4, 0]], warp = {{\[\[}}8, 0], [16, 0]]>} : memref<64x128xf32, "fragment">
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[64], register = {{\[\[}}1], [2]], lane = {{\[\[}}0], [0], [0], [4], [8]], warp = {{\[\[}}16], [32]]>} : memref<64xf32, "fragment">
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[64], register = {{\[\[}}1], [2], [32]], lane = {{\[\[}}0], [0], [0], [0], [4]], warp = {{\[\[}}8], [16]]>} : memref<64xf32, "fragment">
// CHECK: tile.reduce "max" %{{.*}} to %{{.*}} dim 1 : memref<64x32xf32, "fragment"> to memref<64xf32, "fragment">
// CHECK: tile.convert_layout %{{.*}} to %{{.*}} : memref<64xf32, "fragment"> to memref<64xf32, "fragment">
// CHECK: tile.parallel [64, 128] attributes {tile.layout = #tile.linear<[64, 128], register = {{\[\[}}0, 1], [0, 2], [0, 64], [1, 0], [2, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [4, 0]], warp = {{\[\[}}8, 0], [16, 0]]>}
func.func @row_scale(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %q = tile.alloc : memref<64x16xf32, "shared">
    %k = tile.alloc : memref<16x32xf32, "shared">
    %v = tile.alloc : memref<16x128xf32, "shared">
    %s = tile.alloc : memref<64x32xf32, "fragment">
    %o = tile.alloc : memref<64x128xf32, "fragment">
    %m = tile.alloc : memref<64xf32, "fragment">
    tile.gemm %q, %k, %s : memref<64x16xf32, "shared">, memref<16x32xf32, "shared">, memref<64x32xf32, "fragment">
    tile.gemm %q, %v, %o : memref<64x16xf32, "shared">, memref<16x128xf32, "shared">, memref<64x128xf32, "fragment">
    tile.reduce "max" %s to %m dim 1 : memref<64x32xf32, "fragment"> to memref<64xf32, "fragment">
    tile.parallel [64, 128] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %o[%i, %j] : memref<64x128xf32, "fragment">
      %r = memref.load %m[%i] : memref<64xf32, "fragment">
      %y = arith.mulf %x, %r : f32
      memref.store %y, %o[%i, %j] : memref<64x128xf32, "fragment">
    }
  }
  return
}

// -----

// Where infer-mma-layout chose wgmma for the whole block, the accumulator is wgmma's D
// fragment; a row sum of it keeps lane bits 2-4, the warps and the +8 row register, the
// column lanes become copies; a fragment copy gives the other fragment the same layout.
// CHECK-LABEL: func.func @wgmma_accumulator
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}16, 0], [32, 0]]>, tile.mma_layout = "wgmma-accumulator"} : memref<64x64xf32, "fragment">
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}16, 0], [32, 0]]>} : memref<64x64xf32, "fragment">
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[64], register = {{\[\[}}8]], lane = {{\[\[}}0], [0], [1], [2], [4]], warp = {{\[\[}}16], [32]]>} : memref<64xf32, "fragment">
// CHECK: tile.reduce "sum" %{{.*}} to %{{.*}} dim 1 : memref<64x64xf32, "fragment"> to memref<64xf32, "fragment">
func.func @wgmma_accumulator(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc {tile.mma_layout = "wgmma-accumulator"} : memref<64x64xf32, "fragment">
    %h = tile.alloc : memref<64x64xf32, "fragment">
    %r = tile.alloc : memref<64xf32, "fragment">
    tile.gemm %a, %b, %c {tile.mma = {a_source = "shared", instr = array<i64: 64, 64, 16>, kind = "wgmma", warpgroups = 1 : i64}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    tile.reduce "sum" %c to %r dim 1 : memref<64x64xf32, "fragment"> to memref<64xf32, "fragment">
    %c0 = arith.constant 0 : index
    tile.copy %c[%c0, %c0] [64, 64] to %h[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32, "fragment">
  }
  return
}

// -----

// A layout already on a fragment (T.annotate_layout) is kept; the T.Parallel follows it, and
// a reduce into a destination annotated otherwise goes through a converted copy (read first:
// clear = false).
// CHECK-LABEL: func.func @annotated
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[16, 8], register = {{\[\[}}0, 1], [8, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} : memref<16x8xf32, "fragment">
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[16], register = {{\[\[}}1], [2], [4], [8]], lane = {{\[\[}}0], [0], [0], [0], [0]], warp = []>} : memref<16xf32, "fragment">
// CHECK: %{{.*}} = tile.alloc {tile.layout = #tile.linear<[16], register = {{\[\[}}8]], lane = {{\[\[}}0], [0], [1], [2], [4]], warp = []>} : memref<16xf32, "fragment">
// CHECK: tile.parallel [16, 8] attributes {tile.layout = #tile.linear<[16, 8], register = {{\[\[}}0, 1], [8, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>}
// CHECK: tile.convert_layout %{{.*}} to %{{.*}} : memref<16xf32, "fragment"> to memref<16xf32, "fragment">
// CHECK: tile.reduce "sum" %{{.*}} to %{{.*}} dim 1 {clear = false} : memref<16x8xf32, "fragment"> to memref<16xf32, "fragment">
// CHECK: tile.convert_layout %{{.*}} to %{{.*}} : memref<16xf32, "fragment"> to memref<16xf32, "fragment">
func.func @annotated(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} : memref<16x8xf32, "fragment">
    %s = tile.alloc {tile.layout = #tile.linear<[16], register = [[1], [2], [4], [8]], lane = [[0], [0], [0], [0], [0]], warp = []>} : memref<16xf32, "fragment">
    tile.parallel [16, 8] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %f[%i, %j] : memref<16x8xf32, "fragment">
      %y = arith.addf %x, %x : f32
      memref.store %y, %f[%i, %j] : memref<16x8xf32, "fragment">
    }
    tile.reduce "sum" %f to %s dim 1 {clear = false} : memref<16x8xf32, "fragment"> to memref<16xf32, "fragment">
  }
  return
}

// -----

// mma.sync over a 2 x 2 warp grid (infer-mma-layout's decision): the accumulator is the
// m16n8 C fragment of each warp's 32 x 32 tile (warp = wm * 2 + wn: warp bit 0 along N); a
// T.Parallel writing a second fragment from it follows it.
// CHECK-LABEL: func.func @mma_sync_accumulator
// CHECK: tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [16, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}0, 32], [32, 0]]>, tile.mma_layout = "mma-accumulator"} : memref<64x64xf32, "fragment">
// CHECK: tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [16, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}0, 32], [32, 0]]>} : memref<64x64xf16, "fragment">
// CHECK: tile.parallel [64, 64] attributes {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [8, 0], [0, 8], [0, 16], [16, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}0, 32], [32, 0]]>}
func.func @mma_sync_accumulator(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc {tile.mma_layout = "mma-accumulator"} : memref<64x64xf32, "fragment">
    %h = tile.alloc : memref<64x64xf16, "fragment">
    tile.gemm %a, %b, %c {tile.mma = {a_source = "shared", instr = array<i64: 16, 8, 16>, kind = "mma.sync", warps = array<i64: 2, 2>}} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %c[%i, %j] : memref<64x64xf32, "fragment">
      %y = arith.truncf %x : f32 to f16
      memref.store %y, %h[%i, %j] : memref<64x64xf16, "fragment">
    }
  }
  return
}

// -----

// A fragment read outside T.Parallel (a block-sparse mask tested by the whole block) is held
// whole by every thread: its registers walk the tile row-major, no thread basis moves. The
// copy filling it and the one-element counter stored outside T.Parallel take the same form.
// CHECK-LABEL: func.func @floating_mask
// CHECK: tile.alloc {tile.layout = #tile.linear<[4], register = {{\[\[}}1], [2]], lane = {{\[\[}}0], [0], [0], [0], [0]], warp = {{\[\[}}0], [0]]>} : memref<4xi8, "fragment">
// CHECK: tile.alloc {tile.layout = #tile.linear<[1], register = [], lane = {{\[\[}}0], [0], [0], [0], [0]], warp = {{\[\[}}0], [0]]>} : memref<1xf32, "fragment">
// CHECK-NOT: tile.convert_layout
func.func @floating_mask(%M: memref<4xi8>, %n: index, %v: f32) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0 : i8
    %mask = tile.alloc : memref<4xi8, "fragment">
    %count = tile.alloc : memref<1xf32, "fragment">
    tile.copy %M[%c0] [4] to %mask[%c0] [4] : memref<4xi8> to memref<4xi8, "fragment">
    tile.for %c0 to %c4 step %c1 {
    ^bb0(%k: index):
      %flag = memref.load %mask[%k] : memref<4xi8, "fragment">
      %set = arith.cmpi ne, %flag, %zero : i8
      scf.if %set {
        memref.store %v, %count[%c0] : memref<1xf32, "fragment">
      }
    }
  }
  return
}

// -----

// A gemm accumulator read outside T.Parallel keeps its instruction's layout; the read goes
// through a converted copy every thread holds whole.
// CHECK-LABEL: func.func @floating_accumulator
// CHECK: %[[WHOLE:.*]] = tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [32, 0]], lane = {{\[\[}}0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], warp = {{\[\[}}0, 0], [0, 0]]>} : memref<64x64xf32, "fragment">
// CHECK: tile.gemm
// CHECK: tile.convert_layout %{{.*}} to %[[WHOLE]]
// CHECK-NEXT: memref.load %[[WHOLE]][%{{.*}}, %{{.*}}] : memref<64x64xf32, "fragment">
func.func @floating_accumulator(%out: memref<1xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    tile.gemm %a, %b, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    %x = memref.load %c[%c0, %c0] : memref<64x64xf32, "fragment">
    memref.store %x, %out[%c0] : memref<1xf32>
  }
  return
}

// -----

// Indices that are neither loop variables nor constants (a T.serial variable, an offset
// from it, a transposed read): the loop reads a shared copy of those fragments, made once
// before the T.serial loop that leaves them untouched; the fragment it writes by its loop
// variables stays in registers.
// CHECK-LABEL: func.func @free_indices
// CHECK: %[[X:.*]] = tile.alloc {tile.layout = {{.*}}} : memref<32x64xf32, "fragment">
// CHECK-NEXT: %[[XS:.*]] = tile.alloc : memref<32x64xf32, "shared">
// CHECK: tile.copy %[[X]][%{{.*}}, %{{.*}}] [32, 64] to %[[XS]][%{{.*}}, %{{.*}}] [32, 64] : memref<32x64xf32, "fragment"> to memref<32x64xf32, "shared">
// CHECK-NEXT: tile.for
// CHECK: tile.parallel [32, 4]
// CHECK: memref.load %[[XS]][%{{.*}}, %{{.*}}] : memref<32x64xf32, "shared">
func.func @free_indices(%X: memref<32x64xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %x = tile.alloc : memref<32x64xf32, "fragment">
    %part = tile.alloc : memref<32x4xf32, "fragment">
    tile.copy %X[%c0, %c0] [32, 64] to %x[%c0, %c0] [32, 64] : memref<32x64xf32> to memref<32x64xf32, "fragment">
    tile.for %c0 to %c16 step %c1 {
    ^bb0(%jj: index):
      tile.parallel [32, 4] {
      ^bb0(%i: index, %j: index):
        %base = arith.muli %jj, %c4 : index
        %col = arith.addi %base, %j : index
        %v = memref.load %x[%i, %col] : memref<32x64xf32, "fragment">
        %p = memref.load %part[%i, %j] : memref<32x4xf32, "fragment">
        %s = arith.addf %p, %v : f32
        memref.store %s, %part[%i, %j] : memref<32x4xf32, "fragment">
      }
    }
  }
  return
}

// -----

// A T.Parallel writing a fragment at a free index writes the shared copy, copied back after.
// CHECK-LABEL: func.func @free_store
// CHECK: %[[F:.*]] = tile.alloc {tile.layout = {{.*}}} : memref<64xf32, "fragment">
// CHECK-NEXT: %[[FS:.*]] = tile.alloc : memref<64xf32, "shared">
// CHECK: tile.copy %[[F]][%{{.*}}] [64] to %[[FS]][%{{.*}}] [64]
// CHECK-NEXT: tile.parallel [32]
// CHECK: memref.store %{{.*}}, %[[FS]][%{{.*}}] : memref<64xf32, "shared">
// CHECK: tile.copy %[[FS]][%{{.*}}] [64] to %[[F]][%{{.*}}] [64]
func.func @free_store(%n: index, %v: f32) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c2 = arith.constant 2 : index
    %f = tile.alloc : memref<64xf32, "fragment">
    tile.parallel [32] {
    ^bb0(%i: index):
      %even = arith.muli %i, %c2 : index
      memref.store %v, %f[%even] : memref<64xf32, "fragment">
    }
  }
  return
}

// -----

// A reduce into a shared buffer reduces into a fragment of its own (the source's slice),
// copied into the shared buffer after it; accumulating (clear = false), the shared values are
// copied in first. A shared source is copied into a fragment before.
// CHECK-LABEL: func.func @reduce_shared
// CHECK-DAG: %[[SRC:.*]] = tile.alloc {tile.layout = {{.*}}} : memref<16x64xf32, "fragment">
// CHECK-DAG: %[[DST:.*]] = tile.alloc {tile.layout = #tile.linear<[16], {{.*}}>} : memref<16xf32, "fragment">
// CHECK: tile.copy %[[S:.*]][%{{.*}}, %{{.*}}] [16, 64] to %[[SRC]][%{{.*}}, %{{.*}}] [16, 64] : memref<16x64xf32, "shared"> to memref<16x64xf32, "fragment">
// CHECK: tile.copy %[[B:.*]][%{{.*}}] [16] to %[[DST]][%{{.*}}] [16] : memref<16xf32, "shared"> to memref<16xf32, "fragment">
// CHECK: tile.reduce "sum" %[[SRC]] to %[[DST]] dim 1 {clear = false}
// CHECK-NEXT: tile.copy %[[DST]][%{{.*}}] [16] to %[[B]][%{{.*}}] [16] : memref<16xf32, "fragment"> to memref<16xf32, "shared">
func.func @reduce_shared(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<16x64xf32, "shared">
    %b = tile.alloc : memref<16xf32, "shared">
    tile.reduce "sum" %s to %b dim 1 {clear = false} : memref<16x64xf32, "shared"> to memref<16xf32, "shared">
  }
  return
}

// -----

// Inside a T.ws block over one warpgroup of a 256-thread block, fragments and T.Parallel loops
// are laid out over that warpgroup's 128 threads (thread index from 0 in the block): the
// fragment its blocks use, the loop reading it, and a loop touching no fragment.
// CHECK-LABEL: func.func @warpgroup_fragments
// CHECK: tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = {{\[\[}}2, 0], [4, 0]]>} : memref<64x64xf32, "fragment">
// CHECK: tile.warpgroups [1]
// CHECK: tile.parallel [64, 64] attributes {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = {{\[\[}}2, 0], [4, 0]]>}
// CHECK: tile.parallel [128] attributes {tile.layout = #tile.linear<[128], register = [], lane = {{\[\[}}1], [2], [4], [8], [16]], warp = {{\[\[}}32], [64]]>}
func.func @warpgroup_fragments(%A: memref<64x64xf32>, %B: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [256] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc : memref<64x64xf32, "fragment">
    tile.warpgroups [1] {
      tile.copy %A[%c0, %c0] [64, 64] to %f[%c0, %c0] [64, 64] : memref<64x64xf32> to memref<64x64xf32, "fragment">
      tile.parallel [64, 64] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %f[%i, %j] : memref<64x64xf32, "fragment">
        %w = arith.addf %v, %v : f32
        memref.store %w, %f[%i, %j] : memref<64x64xf32, "fragment">
      }
      tile.parallel [128] {
      ^bb0(%i: index):
        %one = arith.constant 1.0 : f32
        memref.store %one, %B[%i] : memref<128xf32>
      }
      tile.copy %f[%c0, %c0] [64, 64] to %A[%c0, %c0] [64, 64] : memref<64x64xf32, "fragment"> to memref<64x64xf32>
    }
  }
  return
}

// -----

// A block of 96 threads: layouts span the largest power of two it holds (64 threads, warps 0
// and 1); warp 2 runs as a copy of warp 0 (lower-tile-to-gpu stores from warps 0 and 1 only).
// CHECK-LABEL: func.func @threads_96
// CHECK: tile.alloc {tile.layout = #tile.linear<[256], register = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = {{\[\[}}128]]>} : memref<256xf32, "fragment">
// CHECK: tile.parallel [256] attributes {tile.layout = #tile.linear<[256], register = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = {{\[\[}}128]]>}
func.func @threads_96(%A: memref<?xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [96] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc : memref<256xf32, "fragment">
    tile.copy %A[%c0] [256] to %f[%c0] [256] : memref<?xf32> to memref<256xf32, "fragment">
    tile.parallel [256] {
    ^bb0(%i: index):
      %x = memref.load %f[%i] : memref<256xf32, "fragment">
      %y = arith.addf %x, %x : f32
      memref.store %y, %f[%i] : memref<256xf32, "fragment">
    }
  }
  return
}

// -----

// `if tx < 32: ... else: ...` in a block of 96: the then branch's fragment spans warp 0's 32
// threads, the else branch's the 64 threads of warps 1 and 2 (their index from 32 up, as a
// T.ws block's; its second warp holds copies of the first's 16-byte runs): a layout over the
// whole block would leave the elements of the threads that do not run the branch uncomputed.
// CHECK-LABEL: func.func @thread_branches
// CHECK: scf.if
// CHECK: tile.alloc {tile.layout = #tile.linear<[128], register = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = []>} : memref<128xf32, "fragment">
// CHECK: } else {
// CHECK: tile.alloc {tile.layout = #tile.linear<[128], register = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = {{\[\[}}0]]>} : memref<128xf32, "fragment">
func.func @thread_branches(%A: memref<?xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [96] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %tx = gpu.thread_id x
    %low = arith.cmpi slt, %tx, %c32 : index
    scf.if %low {
      %f = tile.alloc : memref<128xf32, "fragment">
      tile.copy %A[%c0] [128] to %f[%c0] [128] : memref<?xf32> to memref<128xf32, "fragment">
      tile.copy %f[%c0] [128] to %A[%c0] [128] : memref<128xf32, "fragment"> to memref<?xf32>
    } else {
      %g = tile.alloc : memref<128xf32, "fragment">
      tile.copy %A[%c0] [128] to %g[%c0] [128] : memref<?xf32> to memref<128xf32, "fragment">
      tile.copy %g[%c0] [128] to %A[%c0] [128] : memref<128xf32, "fragment"> to memref<?xf32>
    }
  }
  return
}

// -----

// An `elif` chain of two-sided ranges in a block of 256 (TileLang's `elif tx >= 64 and
// tx < 160`, `elif 160 <= tx < 192`): each branch nested in the one before is laid out over
// its own range, [0, 64) over 64 threads (a warp bit), [64, 160) over the 64 its 96 threads
// hold, [160, 192) over one warp, [192, 256) over 64 threads.
// CHECK-LABEL: func.func @range_chain
// CHECK: tile.alloc {tile.layout = #tile.linear<[128], register = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = {{\[\[}}0]]>} : memref<128xf32, "fragment">
// CHECK: } else {
// CHECK: tile.alloc {tile.layout = #tile.linear<[128], register = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = {{\[\[}}0]]>} : memref<128xf32, "fragment">
// CHECK: } else {
// CHECK: tile.alloc {tile.layout = #tile.linear<[128], register = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = []>} : memref<128xf32, "fragment">
// CHECK: } else {
// CHECK: tile.alloc {tile.layout = #tile.linear<[128], register = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = {{\[\[}}0]]>} : memref<128xf32, "fragment">
func.func @range_chain(%A: memref<?xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c160 = arith.constant 160 : index
    %c191 = arith.constant 191 : index
    %tx = gpu.thread_id x
    %first = arith.cmpi slt, %tx, %c64 : index
    scf.if %first {
      %f = tile.alloc : memref<128xf32, "fragment">
      tile.copy %A[%c0] [128] to %f[%c0] [128] : memref<?xf32> to memref<128xf32, "fragment">
      tile.copy %f[%c0] [128] to %A[%c0] [128] : memref<128xf32, "fragment"> to memref<?xf32>
    } else {
      %from = arith.cmpi sge, %tx, %c64 : index
      %below = arith.cmpi slt, %tx, %c160 : index
      %second = arith.andi %from, %below : i1
      scf.if %second {
        %g = tile.alloc : memref<128xf32, "fragment">
        tile.copy %A[%c0] [128] to %g[%c0] [128] : memref<?xf32> to memref<128xf32, "fragment">
        tile.copy %g[%c0] [128] to %A[%c0] [128] : memref<128xf32, "fragment"> to memref<?xf32>
      } else {
        // `191 >= tx`, the constant on the left, inside [160, 256)
        %third = arith.cmpi sge, %c191, %tx : index
        scf.if %third {
          %h = tile.alloc : memref<128xf32, "fragment">
          tile.copy %A[%c0] [128] to %h[%c0] [128] : memref<?xf32> to memref<128xf32, "fragment">
          tile.copy %h[%c0] [128] to %A[%c0] [128] : memref<128xf32, "fragment"> to memref<?xf32>
        } else {
          %k = tile.alloc : memref<128xf32, "fragment">
          tile.copy %A[%c0] [128] to %k[%c0] [128] : memref<?xf32> to memref<128xf32, "fragment">
          tile.copy %k[%c0] [128] to %A[%c0] [128] : memref<128xf32, "fragment"> to memref<?xf32>
        }
      }
    }
  }
  return
}

// -----

// AMD has no named barriers, so no thread ranges there: the branch's fragment spans the
// block's 128 threads (two 64-lane wavefronts, a warp bit), as any fragment of the block.
// CHECK-LABEL: func.func @no_thread_ranges_on_amd
// CHECK: scf.if
// CHECK: tile.alloc {tile.layout = #tile.linear<[128], register = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [64], [0]], warp = {{\[\[}}0]]>} : memref<128xf32, "fragment">
module attributes {tile.arch = "gfx942"} {
func.func @no_thread_ranges_on_amd(%A: memref<?xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %tx = gpu.thread_id x
    %low = arith.cmpi slt, %tx, %c64 : index
    scf.if %low {
      %f = tile.alloc : memref<128xf32, "fragment">
      tile.copy %A[%c0] [128] to %f[%c0] [128] : memref<?xf32> to memref<128xf32, "fragment">
      tile.copy %f[%c0] [128] to %A[%c0] [128] : memref<128xf32, "fragment"> to memref<?xf32>
    }
  }
  return
}
}

// -----

// A copy from a fragment into a T.alloc_local row (`T.copy(fragment[i, 0], row)` in a
// T.serial loop) reads a shared copy of the fragment, made once before the loop that leaves
// the fragment untouched: each thread's row gets the whole box, not only the elements of its
// own registers.
// CHECK-LABEL: func.func @copy_into_local
// CHECK: %[[F:.*]] = tile.alloc {tile.layout = {{.*}}} : memref<4x8xf32, "fragment">
// CHECK-NEXT: %[[FS:.*]] = tile.alloc : memref<4x8xf32, "shared">
// CHECK: %[[ROW:.*]] = tile.alloc : memref<8xf32, "local">
// CHECK: tile.copy %[[F]][%{{.*}}, %{{.*}}] [4, 8] to %[[FS]][%{{.*}}, %{{.*}}] [4, 8] : memref<4x8xf32, "fragment"> to memref<4x8xf32, "shared">
// CHECK-NEXT: tile.for
// CHECK: tile.copy %[[FS]][%{{.*}}, %{{.*}}] [1, 8] to %[[ROW]][%{{.*}}] [8] : memref<4x8xf32, "shared"> to memref<8xf32, "local">
func.func @copy_into_local(%B: memref<4x8xf32>, %out: memref<4x8xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %f = tile.alloc : memref<4x8xf32, "fragment">
    %row = tile.alloc : memref<8xf32, "local">
    tile.copy %B[%c0, %c0] [4, 8] to %f[%c0, %c0] [4, 8] : memref<4x8xf32> to memref<4x8xf32, "fragment">
    tile.for %c0 to %c4 step %c1 {
    ^bb0(%i: index):
      tile.copy %f[%i, %c0] [1, 8] to %row[%c0] [8] : memref<4x8xf32, "fragment"> to memref<8xf32, "local">
      tile.copy %row[%c0] [8] to %out[%i, %c0] [1, 8] : memref<8xf32, "local"> to memref<4x8xf32>
    }
  }
  return
}

// -----

// A T.Parallel filling a T.alloc_local row by its points, the row read after it: every
// thread runs every point (no lane or warp basis moves), so each thread's row is whole. The
// fragment keeps the layout of the copy filling it (the loop lends its own to none) and is
// converted to the loop's before it.
// CHECK-LABEL: func.func @parallel_fills_local
// CHECK: %[[F:.*]] = tile.alloc {tile.layout = #tile.linear<[8], register = {{\[\[}}1], [2]], lane = {{\[\[}}4], [0], [0], [0], [0]], warp = []>} : memref<8xf32, "fragment">
// CHECK-NEXT: %[[WHOLE:.*]] = tile.alloc {tile.layout = #tile.linear<[8], register = {{\[\[}}1], [2], [4]], lane = {{\[\[}}0], [0], [0], [0], [0]], warp = []>} : memref<8xf32, "fragment">
// CHECK: tile.convert_layout %[[F]] to %[[WHOLE]]
// CHECK-NEXT: tile.parallel [8] attributes {tile.layout = #tile.linear<[8], register = {{\[\[}}1], [2], [4]], lane = {{\[\[}}0], [0], [0], [0], [0]], warp = []>}
// CHECK: memref.load %[[WHOLE]]
func.func @parallel_fills_local(%B: memref<8xf32>, %out: memref<8xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc : memref<8xf32, "fragment">
    %row = tile.alloc : memref<8xf32, "local">
    tile.copy %B[%c0] [8] to %f[%c0] [8] : memref<8xf32> to memref<8xf32, "fragment">
    tile.parallel [8] {
    ^bb0(%j: index):
      %v = memref.load %f[%j] : memref<8xf32, "fragment">
      memref.store %v, %row[%j] : memref<8xf32, "local">
    }
    tile.copy %row[%c0] [8] to %out[%c0] [8] : memref<8xf32, "local"> to memref<8xf32>
  }
  return
}

// -----

// A T.alloc_local element each point stores and reads back at a constant index is that
// point's temporary, and one the loop fills but nothing reads after it is its own scratch:
// both loops keep one point per thread.
// CHECK-LABEL: func.func @local_temporaries
// CHECK: tile.parallel [32] attributes {tile.layout = #tile.linear<[32], register = [], lane = {{\[\[}}1], [2], [4], [8], [16]], warp = []>}
// CHECK: tile.parallel [32] attributes {tile.layout = #tile.linear<[32], register = [], lane = {{\[\[}}1], [2], [4], [8], [16]], warp = []>}
func.func @local_temporaries(%B: memref<32xf32>, %out: memref<32xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %tmp = tile.alloc : memref<1xf32, "local">
    %scratch = tile.alloc : memref<32xf32, "local">
    tile.parallel [32] {
    ^bb0(%j: index):
      %v = memref.load %B[%j] : memref<32xf32>
      memref.store %v, %tmp[%c0] : memref<1xf32, "local">
      %t = memref.load %tmp[%c0] : memref<1xf32, "local">
      memref.store %t, %out[%j] : memref<32xf32>
    }
    tile.parallel [32] {
    ^bb0(%j: index):
      %v = memref.load %B[%j] : memref<32xf32>
      memref.store %v, %scratch[%j] : memref<32xf32, "local">
      %t = memref.load %scratch[%j] : memref<32xf32, "local">
      memref.store %t, %out[%j] : memref<32xf32>
    }
  }
  return
}

// -----

// A T.Parallel that stores every element of a fragment laid out otherwise (a cast of the
// accumulator into an annotated fragment) and reads none of it: the twin in the loop's layout
// is converted back into the fragment after the loop, and nothing is converted into it
// before (its old elements are all overwritten).
// CHECK-LABEL: func.func @overwritten_fragment
// CHECK: %[[H:.*]] = tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [8, 0]
// CHECK: %[[TWIN:.*]] = tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [1, 0], [2, 0], [32, 0]]
// CHECK-NOT: tile.convert_layout
// CHECK: tile.parallel
// CHECK: memref.store %{{.*}}, %[[TWIN]]
// CHECK: tile.convert_layout %[[TWIN]] to %[[H]]
// CHECK-NOT: tile.convert_layout
func.func @overwritten_fragment(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    %h = tile.alloc {tile.layout = #tile.linear<[64, 64], register = [[0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]]>} : memref<64x64xf16, "fragment">
    tile.gemm %a, %b, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %c[%i, %j] : memref<64x64xf32, "fragment">
      %y = arith.truncf %x : f32 to f16
      memref.store %y, %h[%i, %j] : memref<64x64xf16, "fragment">
    }
  }
  return
}

// -----

// The same loop storing under a condition keeps the fragment's other elements: they are
// converted into the twin before it as well.
// CHECK-LABEL: func.func @partly_overwritten_fragment
// CHECK: %[[H:.*]] = tile.alloc {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [8, 0]
// CHECK: %[[TWIN:.*]] = tile.alloc
// CHECK: tile.convert_layout %[[H]] to %[[TWIN]]
// CHECK: tile.parallel
// CHECK: tile.convert_layout %[[TWIN]] to %[[H]]
func.func @partly_overwritten_fragment(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    %h = tile.alloc {tile.layout = #tile.linear<[64, 64], register = [[0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]]>} : memref<64x64xf16, "fragment">
    tile.gemm %a, %b, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %lower = arith.cmpi ult, %j, %i : index
      scf.if %lower {
        %x = memref.load %c[%i, %j] : memref<64x64xf32, "fragment">
        %y = arith.truncf %x : f32 to f16
        memref.store %y, %h[%i, %j] : memref<64x64xf16, "fragment">
      }
    }
  }
  return
}

// -----

// A large fragment (32 x 128 float32: 16 KiB) read at rows shifted by a T.serial variable,
// under `if i < 16`: the shared copy holds the 16 rows the loop reaches, copied from the
// fragment's box at the shift just before the loop (inside the T.serial loop: the corner moves
// with it); the loop reads it at its own variables.
// CHECK-LABEL: func.func @shifted_rows_box
// CHECK: %[[ACC:.*]] = tile.alloc {tile.layout = {{.*}}} : memref<32x128xf32, "fragment">
// CHECK-NEXT: %[[BOX:.*]] = tile.alloc : memref<16x128xf32, "shared">
// CHECK: tile.for
// CHECK-NEXT: ^bb0(%[[S:.*]]: index):
// CHECK: %[[CORNER:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK: tile.copy %[[ACC]][%[[CORNER]], %{{.*}}] [16, 128] to %[[BOX]][%{{.*}}, %{{.*}}] [16, 128] : memref<32x128xf32, "fragment"> to memref<16x128xf32, "shared">
// CHECK-NEXT: tile.parallel [32, 128]
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: memref.load %[[BOX]][%[[I]], %[[J]]] : memref<16x128xf32, "shared">
func.func @shifted_rows_box(%X: memref<32x128xf32>, %Out: memref<16x128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %acc = tile.alloc : memref<32x128xf32, "fragment">
    %half = tile.alloc : memref<16x128xf32, "shared">
    tile.copy %X[%c0, %c0] [32, 128] to %acc[%c0, %c0] [32, 128] : memref<32x128xf32> to memref<32x128xf32, "fragment">
    tile.for %c0 to %c2 step %c1 {
    ^bb0(%s: index):
      tile.parallel [32, 128] {
      ^bb0(%i: index, %j: index):
        %c16 = arith.constant 16 : index
        %inside = arith.cmpi slt, %i, %c16 : index
        scf.if %inside {
          %shift = arith.muli %s, %c16 : index
          %row = arith.addi %i, %shift : index
          %v = memref.load %acc[%row, %j] : memref<32x128xf32, "fragment">
          memref.store %v, %half[%i, %j] : memref<16x128xf32, "shared">
        }
      }
    }
  }
  return
}

// -----

// The same reads of a small fragment (16 x 64 float32: 4 KiB): one whole copy, made before
// the T.serial loop that leaves the fragment as it is.
// CHECK-LABEL: func.func @shifted_rows_small
// CHECK: %[[ACC:.*]] = tile.alloc {tile.layout = {{.*}}} : memref<16x64xf32, "fragment">
// CHECK-NEXT: %[[WHOLE:.*]] = tile.alloc : memref<16x64xf32, "shared">
// CHECK: tile.copy %[[ACC]][%{{.*}}, %{{.*}}] [16, 64] to %[[WHOLE]][%{{.*}}, %{{.*}}] [16, 64]
// CHECK-NEXT: tile.for
// CHECK: memref.load %[[WHOLE]][%{{.*}}, %{{.*}}] : memref<16x64xf32, "shared">
func.func @shifted_rows_small(%X: memref<16x64xf32>, %Out: memref<8x64xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %acc = tile.alloc : memref<16x64xf32, "fragment">
    %half = tile.alloc : memref<8x64xf32, "shared">
    tile.copy %X[%c0, %c0] [16, 64] to %acc[%c0, %c0] [16, 64] : memref<16x64xf32> to memref<16x64xf32, "fragment">
    tile.for %c0 to %c2 step %c1 {
    ^bb0(%s: index):
      tile.parallel [16, 64] {
      ^bb0(%i: index, %j: index):
        %c8 = arith.constant 8 : index
        %inside = arith.cmpi slt, %i, %c8 : index
        scf.if %inside {
          %shift = arith.muli %s, %c8 : index
          %row = arith.addi %i, %shift : index
          %v = memref.load %acc[%row, %j] : memref<16x64xf32, "fragment">
          memref.store %v, %half[%i, %j] : memref<8x64xf32, "shared">
        }
      }
    }
  }
  return
}
