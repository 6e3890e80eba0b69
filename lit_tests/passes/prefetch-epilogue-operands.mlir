// RUN: tilec-opt --prefetch-epilogue-operands --split-input-file %s | FileCheck %s
// prefetch-epilogue-operands (opt-in: the module's tile.epilogue_prefetch_distance d): the
// boxes of the global tensors a T.Parallel after a T.Pipelined loop reads, at a corner plus
// the T.Parallel's variables, are prefetched (memref.prefetch: prefetch.global.L2 on CUDA)
// in the loop's iteration max(lower, upper - 1 - d), one point per row and 128-byte line,
// clamped to the tensor's last element. With tile.epilogue_preload = n, a read of the
// T.Parallel's whole extent (a residual tile) also comes from a fragment one tile.copy fills
// in the loop's iteration max(lower, upper - n). Gathers, scaled variables and modules
// without the distance are left alone.

// CHECK-LABEL: func.func @residual
// A whole residual tile R[by * 128 + i, bx * 256 + j] (f16: 64 elements a line), d = 4:
// CHECK: tile.pipelined
// CHECK: tile.gemm
// CHECK: %[[LAST:.*]] = arith.subi %c16, %c5
// CHECK: %[[AT:.*]] = arith.maxsi %c0, %[[LAST]]
// CHECK: %[[NOW:.*]] = arith.cmpi eq, %{{.*}}, %[[AT]]
// CHECK: scf.if %[[NOW]]
// CHECK: tile.parallel [128, 4] attributes {tile.epilogue_prefetch}
// CHECK: ^bb0(%[[ROW:.*]]: index, %[[LINE:.*]]: index):
// CHECK: %[[TOP:.*]] = arith.muli %{{.*}}, %c128
// CHECK: %[[LEFT:.*]] = arith.muli %{{.*}}, %c256
// CHECK: %[[R:.*]] = arith.addi %[[TOP]], %[[ROW]]
// CHECK: %[[ROWS:.*]] = memref.dim %arg2, %{{.*}}
// CHECK: %[[RLAST:.*]] = arith.subi %[[ROWS]]
// CHECK: %[[RC:.*]] = arith.minsi %[[R]], %[[RLAST]]
// CHECK: %[[STEP:.*]] = arith.muli %[[LINE]], %c64
// CHECK: %[[C:.*]] = arith.addi %[[LEFT]], %[[STEP]]
// CHECK: %[[CC:.*]] = arith.minsi %[[C]]
// CHECK: memref.prefetch %arg2[%[[RC]], %[[CC]]], read, locality<3>, data : memref<1024x1024xf16>
// CHECK: tile.parallel [128, 256] {
module attributes {tile.arch = "sm_90a", tile.epilogue_prefetch_distance = 4 : i64} {
  func.func @residual(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %R: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
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
        %col = arith.muli %bx, %c256 : index
        tile.copy %B[%kk, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<1024x1024xf16> to memref<64x256xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %s = arith.mulf %x, %half : f32
        %top = arith.muli %by, %c128 : index
        %r = arith.addi %top, %i : index
        %left = arith.muli %bx, %c256 : index
        %c = arith.addi %left, %j : index
        %v = memref.load %R[%r, %c] : memref<1024x1024xf16>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %s, %w : f32
        memref.store %y, %acc[%i, %j] : memref<128x256xf32, "fragment">
      }
      %top = arith.muli %by, %c128 : index
      %left = arith.muli %bx, %c256 : index
      tile.copy %acc[%c0, %c0] [128, 256] to %C[%top, %left] [128, 256] : memref<128x256xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @preloaded
// With tile.epilogue_preload = 1 (and no distance: the prefetch in the last iteration), the whole
// residual tile is loaded into a fragment of the T.Parallel's shape by one tile.copy in the
// loop's last iteration, after the gemm (or after a loop of no iteration); the epilogue
// reads the fragment.
// CHECK: %[[F:.*]] = tile.alloc : memref<128x256xf16, "fragment">
// CHECK: tile.pipelined
// CHECK: tile.gemm
// CHECK: arith.subi %c16, %c1
// CHECK: scf.if
// CHECK: tile.parallel [128, 4] attributes {tile.epilogue_prefetch}
// CHECK: %[[LAST:.*]] = arith.subi %c16, %c1
// CHECK: %[[AT:.*]] = arith.maxsi %c0, %[[LAST]]
// CHECK: %[[NOW:.*]] = arith.cmpi eq, %{{.*}}, %[[AT]]
// CHECK: scf.if %[[NOW]]
// CHECK: tile.copy %arg2[%{{.*}}, %{{.*}}] [128, 256] to %[[F]][%{{.*}}, %{{.*}}] [128, 256]
// After a loop of no iteration (K = 0) the tile is loaded there:
// CHECK: %[[NONE:.*]] = arith.cmpi sle, %c16, %c0
// CHECK: scf.if %[[NONE]]
// CHECK: tile.copy %arg2[%{{.*}}, %{{.*}}] [128, 256] to %[[F]][%{{.*}}, %{{.*}}] [128, 256]
// CHECK: tile.parallel [128, 256] {
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: memref.load %[[F]][%[[I]], %[[J]]] : memref<128x256xf16, "fragment">
// CHECK-NOT: memref.load %arg2
module attributes {tile.arch = "sm_90a", tile.epilogue_preload = 1} {
  func.func @preloaded(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %R: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
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
        %col = arith.muli %bx, %c256 : index
        tile.copy %B[%kk, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<1024x1024xf16> to memref<64x256xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %s = arith.mulf %x, %half : f32
        %top = arith.muli %by, %c128 : index
        %r = arith.addi %top, %i : index
        %left = arith.muli %bx, %c256 : index
        %c = arith.addi %left, %j : index
        %v = memref.load %R[%r, %c] : memref<1024x1024xf16>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %s, %w : f32
        memref.store %y, %acc[%i, %j] : memref<128x256xf32, "fragment">
      }
      %top = arith.muli %by, %c128 : index
      %left = arith.muli %bx, %c256 : index
      tile.copy %acc[%c0, %c0] [128, 256] to %C[%top, %left] [128, 256] : memref<128x256xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @preloaded_early
// tile.epilogue_preload = 4: the residual tile's copy is issued in iteration
// max(lower, upper - 4), its loads in flight under the last four K tiles' gemms; the L2
// prefetch (no distance given) in that same iteration, before the copy.
// CHECK: %[[F:.*]] = tile.alloc : memref<128x256xf16, "fragment">
// CHECK: tile.pipelined
// CHECK: tile.gemm
// CHECK: arith.subi %c16, %{{.*}}
// CHECK: scf.if
// CHECK: tile.parallel [128, 4] attributes {tile.epilogue_prefetch}
// CHECK: %[[EARLY:.*]] = arith.subi %c16, %[[FOUR:c4.*]]
// CHECK: %[[AT:.*]] = arith.maxsi %c0, %[[EARLY]]
// CHECK: %[[NOW:.*]] = arith.cmpi eq, %{{.*}}, %[[AT]]
// CHECK: scf.if %[[NOW]]
// CHECK: tile.copy %arg2[%{{.*}}, %{{.*}}] [128, 256] to %[[F]][%{{.*}}, %{{.*}}] [128, 256]
// CHECK: %[[NONE:.*]] = arith.cmpi sle, %c16, %c0
// CHECK: scf.if %[[NONE]]
// CHECK: tile.copy %arg2
// CHECK: tile.parallel [128, 256] {
// CHECK: memref.load %[[F]]
// CHECK-NOT: memref.load %arg2
module attributes {tile.arch = "sm_90a", tile.epilogue_preload = 4} {
  func.func @preloaded_early(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %R: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
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
        %col = arith.muli %bx, %c256 : index
        tile.copy %B[%kk, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<1024x1024xf16> to memref<64x256xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %s = arith.mulf %x, %half : f32
        %top = arith.muli %by, %c128 : index
        %r = arith.addi %top, %i : index
        %left = arith.muli %bx, %c256 : index
        %c = arith.addi %left, %j : index
        %v = memref.load %R[%r, %c] : memref<1024x1024xf16>
        %w = arith.extf %v : f16 to f32
        %y = arith.addf %s, %w : f32
        memref.store %y, %acc[%i, %j] : memref<128x256xf32, "fragment">
      }
      %top = arith.muli %by, %c128 : index
      %left = arith.muli %bx, %c256 : index
      tile.copy %acc[%c0, %c0] [128, 256] to %C[%top, %left] [128, 256] : memref<128x256xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @in_place
// C = acc / 2 + C / 2 (the residual is the output): the function writes the tensor, so its
// tile is not preloaded, and preloading alone (no prefetch distance) prefetches only in loops
// where it preloads a tile: the kernel is left as it was.
// CHECK: tile.pipelined
// CHECK-NOT: tile.epilogue_prefetch
// CHECK-NOT: tile.copy %arg2
// CHECK: tile.parallel [128, 256] {
// CHECK: memref.load %arg2
module attributes {tile.arch = "sm_90a", tile.epilogue_preload = 1} {
  func.func @in_place(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %R: memref<1024x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
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
        %col = arith.muli %bx, %c256 : index
        tile.copy %B[%kk, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<1024x1024xf16> to memref<64x256xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xf16, "shared">, memref<64x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %s = arith.mulf %x, %half : f32
        %top = arith.muli %by, %c128 : index
        %r = arith.addi %top, %i : index
        %left = arith.muli %bx, %c256 : index
        %c = arith.addi %left, %j : index
        %v = memref.load %R[%r, %c] : memref<1024x1024xf32>
        %w = arith.mulf %v, %half : f32
        %y = arith.addf %s, %w : f32
        memref.store %y, %acc[%i, %j] : memref<128x256xf32, "fragment">
      }
      %top = arith.muli %by, %c128 : index
      %left = arith.muli %bx, %c256 : index
      tile.copy %acc[%c0, %c0] [128, 256] to %R[%top, %left] [128, 256] : memref<128x256xf32, "fragment"> to memref<1024x1024xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @bias_and_row_scale
// A bias per column (256 f16: 4 lines) and a scale per row (64 f32: 2 lines), d = 2: one
// branch in the loop's iteration max(lower, upper - 3), a T.Parallel per box.
// CHECK: tile.pipelined
// CHECK: arith.subi %{{.*}}, %c3
// CHECK: scf.if
// CHECK: tile.parallel [4] attributes {tile.epilogue_prefetch}
// CHECK: memref.prefetch %arg2[{{.*}}], read, locality<3>, data : memref<1024xf16>
// CHECK: tile.parallel [2] attributes {tile.epilogue_prefetch}
// CHECK: arith.muli %arg6, %c64
// CHECK: arith.muli %{{.*}}, %c32
// CHECK: memref.prefetch %arg3[{{.*}}], read, locality<3>, data : memref<512xf32>
// CHECK-NOT: memref.prefetch
module attributes {tile.arch = "sm_90a", tile.epilogue_prefetch_distance = 2 : i64} {
  func.func @bias_and_row_scale(%A: memref<512x256xf16>, %B: memref<256x1024xf16>, %bias: memref<1024xf16>, %scale: memref<512xf32>, %C: memref<512x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    %zero = arith.constant 0.000000e+00 : f32
    tile.kernel grid(%c4, %c8) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<64x64xf16, "shared">
      %bs = tile.alloc : memref<64x256xf16, "shared">
      %acc = tile.alloc : memref<64x256xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 2 {
      ^bb0(%k: index):
        %row = arith.muli %by, %c64 : index
        %kk = arith.muli %k, %c64 : index
        tile.copy %A[%row, %kk] [64, 64] to %as[%c0, %c0] [64, 64] : memref<512x256xf16> to memref<64x64xf16, "shared">
        %col = arith.muli %bx, %c256 : index
        tile.copy %B[%kk, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<256x1024xf16> to memref<64x256xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<64x64xf16, "shared">, memref<64x256xf16, "shared">, memref<64x256xf32, "fragment">
      }
      tile.parallel [64, 256] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<64x256xf32, "fragment">
        %left = arith.muli %bx, %c256 : index
        %c = arith.addi %left, %j : index
        %b = memref.load %bias[%c] : memref<1024xf16>
        %bf = arith.extf %b : f16 to f32
        %top = arith.muli %by, %c64 : index
        %r = arith.addi %i, %top : index
        %s = memref.load %scale[%r] : memref<512xf32>
        %y = arith.addf %x, %bf : f32
        %z = arith.mulf %y, %s : f32
        %relu = arith.maximumf %z, %zero : f32
        memref.store %relu, %acc[%i, %j] : memref<64x256xf32, "fragment">
      }
      %top = arith.muli %by, %c64 : index
      %left = arith.muli %bx, %c256 : index
      tile.copy %acc[%c0, %c0] [64, 256] to %C[%top, %left] [64, 256] : memref<64x256xf32, "fragment"> to memref<512x1024xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @preload_without_a_tile
// A bias per column and a scale per row under the preload alone (the CUDA target's default):
// no whole tile to preload, so no prefetch either (a bias's prefetch did not pay on the H100).
// CHECK: tile.pipelined
// CHECK-NOT: memref.prefetch
// CHECK-NOT: tile.epilogue_prefetch
// CHECK: return
module attributes {tile.arch = "sm_90a", tile.epilogue_preload = 1} {
  func.func @preload_without_a_tile(%A: memref<512x256xf16>, %B: memref<256x1024xf16>, %bias: memref<1024xf16>, %scale: memref<512xf32>, %C: memref<512x1024xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    %zero = arith.constant 0.000000e+00 : f32
    tile.kernel grid(%c4, %c8) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<64x64xf16, "shared">
      %bs = tile.alloc : memref<64x256xf16, "shared">
      %acc = tile.alloc : memref<64x256xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 2 {
      ^bb0(%k: index):
        %row = arith.muli %by, %c64 : index
        %kk = arith.muli %k, %c64 : index
        tile.copy %A[%row, %kk] [64, 64] to %as[%c0, %c0] [64, 64] : memref<512x256xf16> to memref<64x64xf16, "shared">
        %col = arith.muli %bx, %c256 : index
        tile.copy %B[%kk, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<256x1024xf16> to memref<64x256xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<64x64xf16, "shared">, memref<64x256xf16, "shared">, memref<64x256xf32, "fragment">
      }
      tile.parallel [64, 256] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<64x256xf32, "fragment">
        %left = arith.muli %bx, %c256 : index
        %c = arith.addi %left, %j : index
        %b = memref.load %bias[%c] : memref<1024xf16>
        %bf = arith.extf %b : f16 to f32
        %top = arith.muli %by, %c64 : index
        %r = arith.addi %i, %top : index
        %s = memref.load %scale[%r] : memref<512xf32>
        %y = arith.addf %x, %bf : f32
        %z = arith.mulf %y, %s : f32
        %relu = arith.maximumf %z, %zero : f32
        memref.store %relu, %acc[%i, %j] : memref<64x256xf32, "fragment">
      }
      %top = arith.muli %by, %c64 : index
      %left = arith.muli %bx, %c256 : index
      tile.copy %acc[%c0, %c0] [64, 256] to %C[%top, %left] [64, 256] : memref<64x256xf32, "fragment"> to memref<512x1024xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @left_alone
// A gather through an index tensor (R[idx[i], j]) and a scaled variable (R[2 * i, j]) are
// no boxes: only the index tensor's own read, idx[i] (64 i32: 2 lines), is prefetched.
// CHECK: tile.parallel [2] attributes {tile.epilogue_prefetch}
// CHECK: memref.prefetch %arg2[{{.*}}], read, locality<3>, data : memref<256xi32>
// CHECK-NOT: memref.prefetch
module attributes {tile.arch = "sm_90a", tile.epilogue_prefetch_distance = 2 : i64} {
  func.func @left_alone(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %idx: memref<256xi32>, %R: memref<512x256xf16>, %C: memref<256x256xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    tile.kernel grid(%c4, %c4) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<64x64xf16, "shared">
      %bs = tile.alloc : memref<64x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 2 {
      ^bb0(%k: index):
        %row = arith.muli %by, %c64 : index
        %kk = arith.muli %k, %c64 : index
        tile.copy %A[%row, %kk] [64, 64] to %as[%c0, %c0] [64, 64] : memref<256x256xf16> to memref<64x64xf16, "shared">
        %col = arith.muli %bx, %c64 : index
        tile.copy %B[%kk, %col] [64, 64] to %bs[%c0, %c0] [64, 64] : memref<256x256xf16> to memref<64x64xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.parallel [64, 64] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<64x64xf32, "fragment">
        %n = memref.load %idx[%i] : memref<256xi32>
        %g = arith.index_cast %n : i32 to index
        %left = arith.muli %bx, %c64 : index
        %c = arith.addi %left, %j : index
        %v = memref.load %R[%g, %c] : memref<512x256xf16>
        %twice = arith.muli %i, %c2 : index
        %u = memref.load %R[%twice, %c] : memref<512x256xf16>
        %vf = arith.extf %v : f16 to f32
        %uf = arith.extf %u : f16 to f32
        %y = arith.addf %x, %vf : f32
        %z = arith.addf %y, %uf : f32
        memref.store %z, %acc[%i, %j] : memref<64x64xf32, "fragment">
      }
      %top = arith.muli %by, %c64 : index
      %left = arith.muli %bx, %c64 : index
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%top, %left] [64, 64] : memref<64x64xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @not_opted_in
// Without the module's distance the pass does nothing.
// CHECK-NOT: memref.prefetch
module attributes {tile.arch = "sm_90a"} {
  func.func @not_opted_in(%A: memref<256x64xf16>, %B: memref<64x256xf16>, %bias: memref<256xf16>, %C: memref<256x256xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    tile.kernel grid(%c4, %c4) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc : memref<64x64xf16, "shared">
      %bs = tile.alloc : memref<64x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.pipelined %c0 to %c1 step %c1 stages 2 {
      ^bb0(%k: index):
        %row = arith.muli %by, %c64 : index
        tile.copy %A[%row, %c0] [64, 64] to %as[%c0, %c0] [64, 64] : memref<256x64xf16> to memref<64x64xf16, "shared">
        %col = arith.muli %bx, %c64 : index
        tile.copy %B[%c0, %col] [64, 64] to %bs[%c0, %c0] [64, 64] : memref<64x256xf16> to memref<64x64xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.parallel [64, 64] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %acc[%i, %j] : memref<64x64xf32, "fragment">
        %left = arith.muli %bx, %c64 : index
        %c = arith.addi %left, %j : index
        %b = memref.load %bias[%c] : memref<256xf16>
        %bf = arith.extf %b : f16 to f32
        %y = arith.addf %x, %bf : f32
        memref.store %y, %acc[%i, %j] : memref<64x64xf32, "fragment">
      }
      %top = arith.muli %by, %c64 : index
      %left = arith.muli %bx, %c64 : index
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%top, %left] [64, 64] : memref<64x64xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}
