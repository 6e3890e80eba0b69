// RUN: tilec-opt --spirv-narrow-index-conversions %s | FileCheck %s

// An index converted to a float through i64 (signed and unsigned) is converted from i32; the
// i64 cast goes where nothing else reads it. Left alone: an i64 the conversion reads from a
// tensor, and an index cast to i64 that an integer op reads too (its cast stays for that op).
// CHECK-LABEL: gpu.func @conversions
// CHECK: %[[SIGNED:.*]] = arith.index_cast %[[I:.*]] : index to i32
// CHECK: arith.sitofp %[[SIGNED]] : i32 to f32
// CHECK: %[[UNSIGNED:.*]] = arith.index_castui %[[I]] : index to i32
// CHECK: arith.uitofp %[[UNSIGNED]] : i32 to f16
// CHECK: %[[LOADED:.*]] = memref.load
// CHECK: arith.sitofp %[[LOADED]] : i64 to f32
// CHECK: %[[KEPT:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[NARROW:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK: arith.sitofp %[[NARROW]] : i32 to f32
// CHECK: arith.addi %[[KEPT]], %[[KEPT]] : i64
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @conversions(%big: memref<4xi64>, %out: memref<4xf32>, %half: memref<4xf16>,
                          %sums: memref<4xi64>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %i = gpu.thread_id x
      %wide = arith.index_cast %i : index to i64
      %f = arith.sitofp %wide : i64 to f32
      memref.store %f, %out[%c0] : memref<4xf32>
      %uwide = arith.index_castui %i : index to i64
      %h = arith.uitofp %uwide : i64 to f16
      memref.store %h, %half[%c0] : memref<4xf16>
      %v = memref.load %big[%c0] : memref<4xi64>
      %g = arith.sitofp %v : i64 to f32
      memref.store %g, %out[%c1] : memref<4xf32>
      %shared = arith.index_cast %i : index to i64
      %k = arith.sitofp %shared : i64 to f32
      memref.store %k, %out[%c2] : memref<4xf32>
      %twice = arith.addi %shared, %shared : i64
      memref.store %twice, %sums[%c0] : memref<4xi64>
      gpu.return
    }
  }
}
