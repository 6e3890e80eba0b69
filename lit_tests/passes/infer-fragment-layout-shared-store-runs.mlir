// RUN: tilec-opt --infer-fragment-layout %s --split-input-file | FileCheck %s

// With the opt-in tile.shared_store_runs (TILEC_SHARED_STORE_RUNS=1), a T.Parallel that no
// fragment lays out and that reads no global row but stores a shared tile along its rows (a
// decode of packed weights into an f16 operand tile, a row's scale read from global memory)
// gives each thread 16 bytes of those rows: 8 f16 registers along the columns.
// CHECK-LABEL: func.func @decode_rows
// CHECK: tile.parallel [64, 64] attributes {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}0, 1], [0, 2], [0, 4], [32, 0]], lane = {{\[\[}}0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warp = {{\[\[}}4, 0], [8, 0], [16, 0]]>}
module attributes {tile.shared_store_runs} {
func.func @decode_rows(%scales: memref<1024x8xf16>, %n: index, %g: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %packed = tile.alloc : memref<64x32xi8, "shared">
    %tile = tile.alloc : memref<64x64xf16, "shared">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %c1 = arith.constant 1 : index
      %byte = arith.shrui %j, %c1 : index
      %q = memref.load %packed[%i, %byte] : memref<64x32xi8, "shared">
      %w = arith.uitofp %q : i8 to f16
      %row = arith.addi %n, %i : index
      %s = memref.load %scales[%row, %g] : memref<1024x8xf16>
      %x = arith.mulf %w, %s : f16
      memref.store %x, %tile[%i, %j] : memref<64x64xf16, "shared">
    }
  }
  return
}
}

// -----

// Without the opt-in the same loop keeps one point per thread per step, the threads side by
// side along the columns.
// CHECK-LABEL: func.func @decode_points
// CHECK: tile.parallel [64, 64] attributes {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}4, 0], [8, 0], [16, 0], [32, 0]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], warp = {{\[\[}}0, 32], [1, 0], [2, 0]]>}
func.func @decode_points(%scales: memref<1024x8xf16>, %n: index, %g: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %packed = tile.alloc : memref<64x32xi8, "shared">
    %tile = tile.alloc : memref<64x64xf16, "shared">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %c1 = arith.constant 1 : index
      %byte = arith.shrui %j, %c1 : index
      %q = memref.load %packed[%i, %byte] : memref<64x32xi8, "shared">
      %w = arith.uitofp %q : i8 to f16
      %row = arith.addi %n, %i : index
      %s = memref.load %scales[%row, %g] : memref<1024x8xf16>
      %x = arith.mulf %w, %s : f16
      memref.store %x, %tile[%i, %j] : memref<64x64xf16, "shared">
    }
  }
  return
}

// -----

// A store down the tile's columns (tile[j, i]) makes no row run: one point per thread per
// step, with the opt-in too.
// CHECK-LABEL: func.func @column_store
// CHECK: tile.parallel [64, 64] attributes {tile.layout = #tile.linear<[64, 64], register = {{\[\[}}4, 0], [8, 0], [16, 0], [32, 0]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], warp = {{\[\[}}0, 32], [1, 0], [2, 0]]>}
module attributes {tile.shared_store_runs} {
func.func @column_store(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %packed = tile.alloc : memref<64x64xf16, "shared">
    %tile = tile.alloc : memref<64x64xf16, "shared">
    tile.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %packed[%i, %j] : memref<64x64xf16, "shared">
      memref.store %x, %tile[%j, %i] : memref<64x64xf16, "shared">
    }
  }
  return
}
}
