// RUN: tilec-opt --stage-epilogue-source --split-input-file %s | FileCheck %s
// stage-epilogue-source (opt-in: the module's tile.epilogue_shared_source): the whole residual
// tile a T.Parallel after a TMA ring loop (tile.tma_ring) reads becomes a shared tile marked
// tile.ring_source (no bytes of its own: the ring's drained slots), filled by one tile.copy
// right after the loop carrying the TMA boxes the ring's producer loads
// (tile.epilogue_source: box innermost first, 128-byte column boxes, 128B swizzle), and the
// T.Parallel reads it there. Left alone: a loop no ring feeds, a tensor the function also
// writes, columns that are no whole 128-byte box, a tile the ring's stages cannot hold, and
// a module without the opt-in.

// -----

// CHECK-LABEL: func.func @residual
// A 128 x 256 f16 residual tile: four 64-column boxes of 128 rows (the ring's A slot holds
// one, its B slot two: two ring iterations), loaded right after the loop.
// CHECK: %[[TILE:.*]] = tile.alloc {tile.ring_source} : memref<128x256xf16, "shared">
// CHECK: tile.pipelined
// CHECK: tile.gemm
// CHECK: }
// CHECK-NEXT: %[[TOP:.*]] = arith.muli %{{.*}}, %c128
// CHECK-NEXT: %[[LEFT:.*]] = arith.muli %{{.*}}, %c256
// CHECK: tile.copy %arg2[%[[TOP]], %[[LEFT]]] [128, 256] to %[[TILE]][%{{.*}}, %{{.*}}] [128, 256] {tile.epilogue_source = {box = array<i64: 64, 128>, boxes = 4 : i64, swizzle = 128 : i64}}
// CHECK: tile.parallel [128, 256] {
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NOT: memref.load %arg2
// CHECK: memref.load %[[TILE]][%[[I]], %[[J]]] : memref<128x256xf16, "shared">
// CHECK-NOT: memref.load %arg2
// CHECK: return
module attributes {tile.arch = "sm_90a", tile.epilogue_shared_source} {
  func.func @residual(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %R: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %cn = arith.constant 256 : index
    %half = arith.constant 5.000000e-01 : f32
    tile.kernel grid(%c4, %c8) threads [256] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x256xf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = true, stages = 4 : i64}} {
      ^bb0(%k: index):
        %row = arith.muli %by, %c128 : index
        %kk = arith.muli %k, %c64 : index
        tile.copy %A[%row, %kk] [128, 64] to %as[%c0, %c0] [128, 64] {tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<1024x1024xf16> to memref<128x64xf16, "shared">
        %col = arith.muli %bx, %cn : index
        tile.copy %B[%kk, %col] [64, 256] to %bs[%c0, %c0] [64, 256] {tile.tma_load = {box = array<i64: 64, 64>, boxes = 4 : i64, swizzle = 128 : i64}} : memref<1024x1024xf16> to memref<64x256xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %s = arith.mulf %x, %half : f32
        %top = arith.muli %by, %c128 : index
        %r = arith.addi %top, %i : index
        %left = arith.muli %bx, %cn : index
        %c = arith.addi %left, %j : index
        %v = memref.load %R[%r, %c] : memref<1024x1024xf16>
      %w = arith.extf %v : f16 to f32
        %y = arith.addf %s, %w : f32
        memref.store %y, %acc[%i, %j] : memref<128x256xf32, "fragment">
      }
      %top = arith.muli %by, %c128 : index
      %left = arith.muli %bx, %cn : index
      tile.copy %acc[%c0, %c0] [128, 256] to %C[%top, %left] [128, 256] : memref<128x256xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @no_ring
// No TMA ring (a cp.async pipeline or none): nothing loads the tile early.
// CHECK-NOT: tile.ring_source
// CHECK: tile.pipelined
// CHECK-NOT: tile.epilogue_source
// CHECK: memref.load %arg2
// CHECK-NOT: tile.epilogue_source
// CHECK: return
module attributes {tile.arch = "sm_90a", tile.epilogue_shared_source} {
  func.func @no_ring(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %R: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %cn = arith.constant 256 : index
    %half = arith.constant 5.000000e-01 : f32
    tile.kernel grid(%c4, %c8) threads [256] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x256xf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      tile.pipelined %c0 to %c16 step %c1 stages 4 {
      ^bb0(%k: index):
        %row = arith.muli %by, %c128 : index
        %kk = arith.muli %k, %c64 : index
        tile.copy %A[%row, %kk] [128, 64] to %as[%c0, %c0] [128, 64] : memref<1024x1024xf16> to memref<128x64xf16, "shared">
        %col = arith.muli %bx, %cn : index
        tile.copy %B[%kk, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<1024x1024xf16> to memref<64x256xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %s = arith.mulf %x, %half : f32
        %top = arith.muli %by, %c128 : index
        %r = arith.addi %top, %i : index
        %left = arith.muli %bx, %cn : index
        %c = arith.addi %left, %j : index
        %v = memref.load %R[%r, %c] : memref<1024x1024xf16>
      %w = arith.extf %v : f16 to f32
        %y = arith.addf %s, %w : f32
        memref.store %y, %acc[%i, %j] : memref<128x256xf32, "fragment">
      }
      %top = arith.muli %by, %c128 : index
      %left = arith.muli %bx, %cn : index
      tile.copy %acc[%c0, %c0] [128, 256] to %C[%top, %left] [128, 256] : memref<128x256xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @written
// The function also writes R: the loop's producer would read it before that write.
// CHECK-NOT: tile.ring_source
// CHECK: tile.pipelined
// CHECK-NOT: tile.epilogue_source
// CHECK: memref.load %arg2
// CHECK-NOT: tile.epilogue_source
// CHECK: return
module attributes {tile.arch = "sm_90a", tile.epilogue_shared_source} {
  func.func @written(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %R: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %cn = arith.constant 256 : index
    %half = arith.constant 5.000000e-01 : f32
    tile.kernel grid(%c4, %c8) threads [256] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x256xf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = true, stages = 4 : i64}} {
      ^bb0(%k: index):
        %row = arith.muli %by, %c128 : index
        %kk = arith.muli %k, %c64 : index
        tile.copy %A[%row, %kk] [128, 64] to %as[%c0, %c0] [128, 64] {tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<1024x1024xf16> to memref<128x64xf16, "shared">
        %col = arith.muli %bx, %cn : index
        tile.copy %B[%kk, %col] [64, 256] to %bs[%c0, %c0] [64, 256] {tile.tma_load = {box = array<i64: 64, 64>, boxes = 4 : i64, swizzle = 128 : i64}} : memref<1024x1024xf16> to memref<64x256xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %s = arith.mulf %x, %half : f32
        %top = arith.muli %by, %c128 : index
        %r = arith.addi %top, %i : index
        %left = arith.muli %bx, %cn : index
        %c = arith.addi %left, %j : index
        %v = memref.load %R[%r, %c] : memref<1024x1024xf16>
      %w = arith.extf %v : f16 to f32
        %y = arith.addf %s, %w : f32
        memref.store %y, %acc[%i, %j] : memref<128x256xf32, "fragment">
      }
      %top = arith.muli %by, %c128 : index
      %left = arith.muli %bx, %cn : index
      tile.copy %as[%c0, %c0] [128, 64] to %R[%top, %left] [128, 64] : memref<128x64xf16, "shared"> to memref<1024x1024xf16>
      tile.copy %acc[%c0, %c0] [128, 256] to %C[%top, %left] [128, 256] : memref<128x256xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @narrow
// 32 f16 columns are 64 bytes: no whole 128-byte swizzled box.
// CHECK-NOT: tile.ring_source
// CHECK: tile.pipelined
// CHECK-NOT: tile.epilogue_source
// CHECK: memref.load %arg2
// CHECK-NOT: tile.epilogue_source
// CHECK: return
module attributes {tile.arch = "sm_90a", tile.epilogue_shared_source} {
  func.func @narrow(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %R: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %cn = arith.constant 32 : index
    %half = arith.constant 5.000000e-01 : f32
    tile.kernel grid(%c4, %c8) threads [256] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x32xf16, "shared">
      %acc = tile.alloc : memref<128x32xf32, "fragment">
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = true, stages = 4 : i64}} {
      ^bb0(%k: index):
        %row = arith.muli %by, %c128 : index
        %kk = arith.muli %k, %c64 : index
        tile.copy %A[%row, %kk] [128, 64] to %as[%c0, %c0] [128, 64] {tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<1024x1024xf16> to memref<128x64xf16, "shared">
        %col = arith.muli %bx, %cn : index
        tile.copy %B[%kk, %col] [64, 32] to %bs[%c0, %c0] [64, 32] {tile.tma_load = {box = array<i64: 64, 64>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<1024x1024xf16> to memref<64x32xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x32xf16, "shared">, memref<128x32xf32, "fragment">
      }
      tile.parallel [128, 32] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<128x32xf32, "fragment">
        %s = arith.mulf %x, %half : f32
        %top = arith.muli %by, %c128 : index
        %r = arith.addi %top, %i : index
        %left = arith.muli %bx, %cn : index
        %c = arith.addi %left, %j : index
        %v = memref.load %R[%r, %c] : memref<1024x1024xf16>
      %w = arith.extf %v : f16 to f32
        %y = arith.addf %s, %w : f32
        memref.store %y, %acc[%i, %j] : memref<128x32xf32, "fragment">
      }
      %top = arith.muli %by, %c128 : index
      %left = arith.muli %bx, %cn : index
      tile.copy %acc[%c0, %c0] [128, 32] to %C[%top, %left] [128, 32] : memref<128x32xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @too_large
// A 128 x 256 f32 tile is eight 16 KiB boxes, three ring iterations; the ring has two.
// CHECK-NOT: tile.ring_source
// CHECK: tile.pipelined
// CHECK-NOT: tile.epilogue_source
// CHECK: memref.load %arg2
// CHECK-NOT: tile.epilogue_source
// CHECK: return
module attributes {tile.arch = "sm_90a", tile.epilogue_shared_source} {
  func.func @too_large(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %R: memref<1024x1024xf32>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %cn = arith.constant 256 : index
    %half = arith.constant 5.000000e-01 : f32
    tile.kernel grid(%c4, %c8) threads [256] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x256xf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        %row = arith.muli %by, %c128 : index
        %kk = arith.muli %k, %c64 : index
        tile.copy %A[%row, %kk] [128, 64] to %as[%c0, %c0] [128, 64] {tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<1024x1024xf16> to memref<128x64xf16, "shared">
        %col = arith.muli %bx, %cn : index
        tile.copy %B[%kk, %col] [64, 256] to %bs[%c0, %c0] [64, 256] {tile.tma_load = {box = array<i64: 64, 64>, boxes = 4 : i64, swizzle = 128 : i64}} : memref<1024x1024xf16> to memref<64x256xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %s = arith.mulf %x, %half : f32
        %top = arith.muli %by, %c128 : index
        %r = arith.addi %top, %i : index
        %left = arith.muli %bx, %cn : index
        %c = arith.addi %left, %j : index
        %v = memref.load %R[%r, %c] : memref<1024x1024xf32>
        %y = arith.addf %s, %v : f32
        memref.store %y, %acc[%i, %j] : memref<128x256xf32, "fragment">
      }
      %top = arith.muli %by, %c128 : index
      %left = arith.muli %bx, %cn : index
      tile.copy %acc[%c0, %c0] [128, 256] to %C[%top, %left] [128, 256] : memref<128x256xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @not_opted_in
// A module without tile.epilogue_shared_source.
// CHECK-NOT: tile.ring_source
// CHECK: tile.pipelined
// CHECK-NOT: tile.epilogue_source
// CHECK: memref.load %arg2
// CHECK-NOT: tile.epilogue_source
// CHECK: return
module attributes {tile.arch = "sm_90a"} {
  func.func @not_opted_in(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %R: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %cn = arith.constant 256 : index
    %half = arith.constant 5.000000e-01 : f32
    tile.kernel grid(%c4, %c8) threads [256] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<128x64xf16, "shared">
      %bs = tile.alloc : memref<64x256xf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      tile.pipelined %c0 to %c16 step %c1 stages 4 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = true, stages = 4 : i64}} {
      ^bb0(%k: index):
        %row = arith.muli %by, %c128 : index
        %kk = arith.muli %k, %c64 : index
        tile.copy %A[%row, %kk] [128, 64] to %as[%c0, %c0] [128, 64] {tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<1024x1024xf16> to memref<128x64xf16, "shared">
        %col = arith.muli %bx, %cn : index
        tile.copy %B[%kk, %col] [64, 256] to %bs[%c0, %c0] [64, 256] {tile.tma_load = {box = array<i64: 64, 64>, boxes = 4 : i64, swizzle = 128 : i64}} : memref<1024x1024xf16> to memref<64x256xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %s = arith.mulf %x, %half : f32
        %top = arith.muli %by, %c128 : index
        %r = arith.addi %top, %i : index
        %left = arith.muli %bx, %cn : index
        %c = arith.addi %left, %j : index
        %v = memref.load %R[%r, %c] : memref<1024x1024xf16>
      %w = arith.extf %v : f16 to f32
        %y = arith.addf %s, %w : f32
        memref.store %y, %acc[%i, %j] : memref<128x256xf32, "fragment">
      }
      %top = arith.muli %by, %c128 : index
      %left = arith.muli %bx, %cn : index
      tile.copy %acc[%c0, %c0] [128, 256] to %C[%top, %left] [128, 256] : memref<128x256xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

