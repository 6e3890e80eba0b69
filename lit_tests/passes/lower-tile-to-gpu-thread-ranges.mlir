// RUN: tilec-opt --lower-tile-to-gpu %s | FileCheck %s
// An `elif` chain of two-sided thread ranges in a block of 256 (compiler/passes/_thread_range.py):
// `if tx < 64 ... else { if tx >= 64 and tx < 160 ... else ... }`, each region a T.Parallel
// laid out over 64 threads (infer-fragment-layout's layout for its range) and a block barrier.
// Each region runs with its threads' index counted from its own first thread: the nested
// ones from the outer else's thread 64 (tid - 64, then that - 96: thread 160 is the last
// region's first); the 96-thread regions store from their first 64 threads only (the others
// hold copies); each region's barrier is a named barrier over exactly its threads.

// CHECK-LABEL: gpu.func @range_chain
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: scf.if
// CHECK: arith.divui %[[TID]], %c1
// CHECK: nvvm.barrier id = %c9_i32 number_of_threads = %c64_i32
// CHECK: } else {
// CHECK: %[[FROM64:.*]] = arith.subi %[[TID]], %c64{{.*}} : index
// CHECK: scf.if
// CHECK: arith.divui %[[FROM64]], %c1
// CHECK: arith.cmpi ult, %[[FROM64]], %c64{{.*}} : index
// CHECK: nvvm.barrier id = %c10_i32 number_of_threads = %c96_i32
// CHECK: } else {
// CHECK: %[[FROM160:.*]] = arith.subi %[[FROM64]], %c96 : index
// CHECK: arith.divui %[[FROM160]], %c1
// CHECK: arith.cmpi ult, %[[FROM160]], %c64{{.*}} : index
// CHECK: nvvm.barrier id = %c11_i32 number_of_threads = %c96_i32
// CHECK-NOT: gpu.barrier
func.func @range_chain(%n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [256] {
  ^bb0(%bx: index):
    %c64 = arith.constant 64 : index
    %c160 = arith.constant 160 : index
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %three = arith.constant 3.0 : f32
    %s = tile.alloc : memref<128xf32, "shared">
    %tx = gpu.thread_id x
    %first = arith.cmpi slt, %tx, %c64 : index
    scf.if %first {
      tile.parallel [128] attributes {tile.layout = #tile.linear<[128], register = [[64]], lane = [[1], [2], [4], [8], [16]], warp = [[32]]>} {
      ^bb0(%i: index):
        memref.store %one, %s[%i] : memref<128xf32, "shared">
        tile.yield
      }
      gpu.barrier
    } else {
      %from = arith.cmpi sge, %tx, %c64 : index
      %below = arith.cmpi slt, %tx, %c160 : index
      %second = arith.andi %from, %below : i1
      scf.if %second {
        tile.parallel [128] attributes {tile.layout = #tile.linear<[128], register = [[64]], lane = [[1], [2], [4], [8], [16]], warp = [[32]]>} {
        ^bb0(%i: index):
          memref.store %two, %s[%i] : memref<128xf32, "shared">
          tile.yield
        }
        gpu.barrier
      } else {
        tile.parallel [128] attributes {tile.layout = #tile.linear<[128], register = [[64]], lane = [[1], [2], [4], [8], [16]], warp = [[32]]>} {
        ^bb0(%i: index):
          memref.store %three, %s[%i] : memref<128xf32, "shared">
          tile.yield
        }
        gpu.barrier
      }
    }
  }
  return
}
