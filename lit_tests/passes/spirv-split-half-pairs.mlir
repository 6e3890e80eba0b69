// RUN: tilec-opt --spirv-split-half-pairs --split-input-file %s | FileCheck %s

// A word read as an f16 pair: the low half is the first f16, the high half the second, each
// its own i16 -> f16 bitcast; the pair back to a word the same way round.
// CHECK-LABEL: gpu.func @pairs
// CHECK: %[[WORD:.*]] = vector.extract %arg0[0] : i32 from vector<1xi32>
// CHECK: %[[LOW:.*]] = arith.trunci %[[WORD]] : i32 to i16
// CHECK: %[[UP:.*]] = arith.shrui %[[WORD]], %{{.*}} : i32
// CHECK: %[[HIGH:.*]] = arith.trunci %[[UP]] : i32 to i16
// CHECK: %[[FIRST:.*]] = arith.bitcast %[[LOW]] : i16 to f16
// CHECK: %[[SECOND:.*]] = arith.bitcast %[[HIGH]] : i16 to f16
// CHECK: %[[PAIR:.*]] = vector.from_elements %[[FIRST]], %[[SECOND]] : vector<2xf16>
// CHECK: %[[SUM:.*]] = arith.addf %[[PAIR]], %[[PAIR]] : vector<2xf16>
// CHECK: vector.extract %[[SUM]][0] : f16 from vector<2xf16>
// CHECK: arith.bitcast %{{.*}} : f16 to i16
// CHECK: vector.extract %[[SUM]][1] : f16 from vector<2xf16>
// CHECK: arith.shli
// CHECK: arith.ori
// CHECK: vector.from_elements %{{.*}} : vector<1xi32>
// CHECK-NOT: vector.bitcast
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @pairs(%w: vector<1xi32>, %out: memref<4xi32>) kernel {
      %c0 = arith.constant 0 : index
      %p = vector.bitcast %w : vector<1xi32> to vector<2xf16>
      %s = arith.addf %p, %p : vector<2xf16>
      %b = vector.bitcast %s : vector<2xf16> to vector<1xi32>
      %x = vector.extract %b[0] : i32 from vector<1xi32>
      memref.store %x, %out[%c0] : memref<4xi32>
      gpu.return
    }
  }
}

// -----

// Other vector bitcasts are left alone.
// CHECK-LABEL: gpu.func @others
// CHECK: vector.bitcast %arg0 : vector<2xi32> to vector<4xf16>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @others(%w: vector<2xi32>, %out: memref<4xf16>) kernel {
      %c0 = arith.constant 0 : index
      %p = vector.bitcast %w : vector<2xi32> to vector<4xf16>
      %x = vector.extract %p[0] : f16 from vector<4xf16>
      memref.store %x, %out[%c0] : memref<4xf16>
      gpu.return
    }
  }
}
