// RUN: tilec-opt --split-input-file --lower-device-prints %s | FileCheck %s

// On the CPU (no gpu.func) the line gets thread (0, 0, 0) and becomes a printf call, its
// format a global string, followed by fflush(NULL).
// CHECK-LABEL: llvm.mlir.global internal constant @tilec_print_format_0("msg='x' BlockIdx=(%d, %d, %d), ThreadIdx=(%d, %d, %d): dtype=float value=%f\0A\00")
// CHECK: llvm.func @printf(!llvm.ptr, ...) -> i32
// CHECK: llvm.func @fflush(!llvm.ptr) -> i32
// CHECK: func.func @host(%[[B:.*]]: i32, %[[V:.*]]: f64)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[TEXT:.*]] = llvm.mlir.addressof @tilec_print_format_0 : !llvm.ptr
// CHECK: llvm.call @printf(%[[TEXT]], %[[B]], %[[B]], %[[B]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[V]]) vararg(!llvm.func<i32 (ptr, ...)>)
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call @fflush(%[[NULL]])
// CHECK-NOT: gpu.printf
func.func @host(%b: i32, %v: f64) {
  gpu.printf "msg='x' BlockIdx=(%d, %d, %d), ThreadIdx=(%d, %d, %d): dtype=float value=%f\n" {tile.print_threads = -1 : i64}, %b, %b, %b, %v : i32, i32, i32, f64
  return
}

// -----

// In a gpu.func the thread's indices follow the block's; a line of one thread (x = 32) runs
// under scf.if on thread (32, 0, 0), a line of every thread unguarded. An unmarked gpu.printf
// is left as it is.
// CHECK-LABEL: gpu.func @device
// CHECK: %[[X:.*]] = gpu.thread_id x
// CHECK: %[[Y:.*]] = gpu.thread_id y
// CHECK: %[[Z:.*]] = gpu.thread_id z
// CHECK: %[[X32:.*]] = arith.index_cast %[[X]] : index to i32
// CHECK: %[[Y32:.*]] = arith.index_cast %[[Y]] : index to i32
// CHECK: %[[Z32:.*]] = arith.index_cast %[[Z]] : index to i32
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[IS_X:.*]] = arith.cmpi eq, %[[X]], %[[C32]] : index
// CHECK: scf.if
// CHECK-NEXT: gpu.printf "msg='one'{{.*}}", %arg0, %arg0, %arg0, %[[X32]], %[[Y32]], %[[Z32]], %arg1 : i32, i32, i32, i32, i32, i32, i32
// CHECK: gpu.printf "msg='all'{{.*}}", %arg0, %arg0, %arg0, %{{.*}}, %{{.*}}, %{{.*}} : i32, i32, i32, i32, i32, i32
// CHECK: gpu.printf "plain %d\0A", %arg1 : i32
// CHECK-NOT: tile.print_threads
gpu.module @kernels {
  gpu.func @device(%b: i32, %v: i32) kernel {
    gpu.printf "msg='one' BlockIdx=(%d, %d, %d), ThreadIdx=(%d, %d, %d): dtype=int value=%d\n" {tile.print_threads = 32 : i64}, %b, %b, %b, %v : i32, i32, i32, i32
    gpu.printf "msg='all' BlockIdx=(%d, %d, %d), ThreadIdx=(%d, %d, %d)\n" {tile.print_threads = -1 : i64}, %b, %b, %b : i32, i32, i32
    gpu.printf "plain %d\n", %v : i32
    gpu.return
  }
}
