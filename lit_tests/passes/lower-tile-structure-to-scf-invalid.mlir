// RUN: not tilec-opt --lower-tile-structure-to-scf %s --split-input-file 2>&1 | FileCheck %s
// Block-level ops must be lowered first. One thread runs each block, so what names one thread
// of many (a thread index, a warp shuffle) and a grid-wide barrier (T.sync_grid) are rejected.

// CHECK: error: lower-tile-structure-to-scf: run lower-tile-ops-to-loops first ('tile.fill'
func.func @fill_left(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<4xf32, "fragment">
    %z = arith.constant 0.0 : f32
    tile.fill %f, %z : memref<4xf32, "fragment">, f32
  }
  return
}

// -----

// CHECK: lower-tile-structure-to-scf-invalid.mlir:23: error: a thread index (T.get_thread_binding, T.thread_binding) has no meaning on the CPU target
func.func @thread_index(%out: memref<32xindex>) {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %tx = gpu.thread_id x
    memref.store %tx, %out[%tx] : memref<32xindex>
  }
  return
}

// -----

// CHECK: lower-tile-structure-to-scf-invalid.mlir:39: error: a warp shuffle (T.shfl_*, T.warp_reduce_*) has no meaning on the CPU target
func.func @shuffle(%out: memref<1xf32>, %x: f32) {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %all = arith.constant -1 : i32
    %one = arith.constant 1 : i32
    %clamp = arith.constant 31 : i32
    %y = nvvm.shfl.sync bfly %all, %x, %one, %clamp : f32 -> f32
    %c0 = arith.constant 0 : index
    memref.store %y, %out[%c0] : memref<1xf32>
  }
  return
}

// -----

// CHECK: lower-tile-structure-to-scf-invalid.mlir:[[@LINE+6]]: error: a call of CUDA C code (T.call_extern of T.import_source) has no meaning on the CPU target
llvm.func @tilec_extern_0_f(f32) -> f32 attributes {tile.extern = {args = ["float32"], name = "f", result = "float32"}}
func.func @extern_call(%out: memref<1xf32>, %x: f32) {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %y = llvm.call @tilec_extern_0_f(%x) : (f32) -> f32
    %c0 = arith.constant 0 : index
    memref.store %y, %out[%c0] : memref<1xf32>
  }
  return
}

// -----

// CHECK: lower-tile-structure-to-scf-invalid.mlir:[[@LINE+4]]: error: T.sync_grid waits for every block of the grid, but the CPU target runs the blocks one after another on one thread
func.func @sync_grid(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    "nvvm.barrier"() {tile.sync_grid, operandSegmentSizes = array<i32: 0, 0, 0>} : () -> ()
  }
  return
}

// -----

// An IKET event (iket.mark) is named as such.
// CHECK: lower-tile-structure-to-scf-invalid.mlir:[[@LINE+6]]: error: an IKET event (iket.mark, iket.range) is CUDA instrumentation; compile this kernel for CUDA
llvm.func @tilec_extern_0_tilec_iket_event_1() attributes {tile.extern = {args = [], name = "tilec_iket_event_1", result = "void"}}
func.func @iket_event() {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    llvm.call @tilec_extern_0_tilec_iket_event_1() {tile.iket_event = "block_enter"} : () -> ()
  }
  return
}
