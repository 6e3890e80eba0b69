// RUN: tilec-opt --pipeline-async-copies --infer-fragment-layout --insert-shared-barriers --plan-shared-memory --lower-tile-to-gpu %s --split-input-file | FileCheck %s
// Opted in (tile.async_gathers), a T.Pipelined loop's gather, a T.Parallel storing one global
// element, or zero where a condition free of its column fails, into a shared tile, becomes part
// of the loop's cp.async pipeline (compiler/passes/_async_pipeline.py, gather_of): each thread's
// run of 8 f16 columns is one cp.async of iteration i+2 into its ring slot, its src-size 0 where
// the row's condition fails (the slot zero-filled, as the T.Parallel stores 0); where the
// tensor's alignment does not allow cp.async the T.Parallel runs synchronously into the slot.

// 64 x 32 f16 over 128 threads: two 16-byte runs a thread, in the two prologue issues and in
// the loop, each one cp.async counted by the row's condition.
// CHECK-LABEL: gpu.func @gather_ahead
// CHECK: [[INSIDE:%[0-9]+]] = arith.cmpi ult, {{%[0-9]+}}, %c1000
// CHECK: [[COUNT:%[0-9]+]] = arith.select [[INSIDE]], {{%[0-9]+}}, %c0{{.*}} : index
// CHECK: nvgpu.device_async_copy {{.*}}, 8, [[COUNT]] {bypassL1}
// CHECK: nvgpu.device_async_copy {{.*}}, 8, {{%[0-9]+}} {bypassL1}
// CHECK: } else {
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
module attributes {tile.arch = "sm_80", tile.async_gathers} {
  func.func @gather_ahead(%X: memref<1024x128xf16>, %Y: memref<1024x128xf16>) attributes {tile.entry} {
    %g = arith.constant 16 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %c1000 = arith.constant 1000 : index
      %zero = arith.constant 0.0 : f16
      %ps = tile.alloc : memref<64x32xf16, "shared">
      %row0 = arith.muli %bx, %c64 : index
      tile.pipelined %c0 to %c4 step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %row = arith.addi %row0, %i : index
          %inside = arith.cmpi ult, %row, %c1000 : index
          %col = arith.addi %k0, %j : index
          %v = memref.load %X[%row, %col] : memref<1024x128xf16>
          %s = arith.select %inside, %v, %zero : f16
          memref.store %s, %ps[%i, %j] : memref<64x32xf16, "shared">
        }
        tile.copy %ps[%c0, %c0] [64, 32] to %Y[%row0, %k0] [64, 32] : memref<64x32xf16, "shared"> to memref<1024x128xf16>
      }
    }
    return
  }
}

// -----

// A condition that depends on the column (here the column itself) may differ within a run:
// not a gather, so the loop has nothing to pipeline and stays a plain loop.
// CHECK-LABEL: gpu.func @gather_column_condition
// CHECK-NOT: nvgpu.device_async_copy
// CHECK-NOT: nvvm.cp.async
// CHECK: gpu.return
module attributes {tile.arch = "sm_80", tile.async_gathers} {
  func.func @gather_column_condition(%X: memref<1024x128xf16>, %Y: memref<1024x128xf16>) attributes {tile.entry} {
    %g = arith.constant 16 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %c100 = arith.constant 100 : index
      %zero = arith.constant 0.0 : f16
      %ps = tile.alloc : memref<64x32xf16, "shared">
      %row0 = arith.muli %bx, %c64 : index
      tile.pipelined %c0 to %c4 step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %row = arith.addi %row0, %i : index
          %col = arith.addi %k0, %j : index
          %inside = arith.cmpi ult, %col, %c100 : index
          %v = memref.load %X[%row, %col] : memref<1024x128xf16>
          %s = arith.select %inside, %v, %zero : f16
          memref.store %s, %ps[%i, %j] : memref<64x32xf16, "shared">
        }
        tile.copy %ps[%c0, %c0] [64, 32] to %Y[%row0, %k0] [64, 32] : memref<64x32xf16, "shared"> to memref<1024x128xf16>
      }
    }
    return
  }
}
