// RUN: tilec-opt --pack-half-pairs --split-input-file %s | FileCheck %s

// Elements j and j + 4 of a private f16 buffer (a T.float16x2 of two activations): each is
// read as the 32-bit word holding it, and one prmt takes the low half of the first word and
// the low half of the second (0x5410); odd elements take the high halves (0x7632), and
// elements 2k, 2k + 1 in order are their word as it is.
// CHECK-LABEL: gpu.func @pairs
// CHECK: %[[W0:.*]] = vector.load %[[BUF:.*]][%{{.*}}] : memref<8xf16>, vector<2xf16>
// CHECK: %[[B0:.*]] = vector.bitcast %[[W0]] : vector<2xf16> to vector<1xi32>
// CHECK: %[[L:.*]] = vector.extract %[[B0]][0] : i32 from vector<1xi32>
// CHECK: %[[H:.*]] = vector.extract %{{.*}}[0] : i32 from vector<1xi32>
// CHECK: %[[S:.*]] = arith.constant 21520 : i32
// CHECK: %[[P:.*]] = nvvm.prmt <default> %[[S]], %[[L]], %[[H]] : i32
// CHECK: %[[V:.*]] = vector.from_elements %[[P]] : vector<1xi32>
// CHECK: vector.bitcast %[[V]] : vector<1xi32> to vector<2xf16>
// CHECK: arith.constant 30258 : i32
// CHECK: nvvm.prmt
// CHECK-NOT: nvvm.prmt
// CHECK: %[[SAME:.*]] = vector.load %[[BUF]][%{{.*}}] : memref<8xf16>, vector<2xf16>
// CHECK: %[[SB:.*]] = vector.bitcast %[[SAME]] : vector<2xf16> to vector<1xi32>
// CHECK: %[[SW:.*]] = vector.extract %[[SB]][0]
// CHECK: vector.from_elements %[[SW]] : vector<1xi32>
// CHECK-NOT: vector.from_elements %{{.*}}, %{{.*}} : vector<2xf16>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @pairs(%v: vector<8xf16>, %out: memref<3xvector<2xf16>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c5 = arith.constant 5 : index
      %buf = memref.alloca() {alignment = 16 : i64} : memref<8xf16>
      vector.store %v, %buf[%c0] : memref<8xf16>, vector<8xf16>
      %a = memref.load %buf[%c0] : memref<8xf16>
      %b = memref.load %buf[%c4] : memref<8xf16>
      %p = vector.from_elements %a, %b : vector<2xf16>
      memref.store %p, %out[%c0] : memref<3xvector<2xf16>>
      %c = memref.load %buf[%c1] : memref<8xf16>
      %d = memref.load %buf[%c5] : memref<8xf16>
      %q = vector.from_elements %c, %d : vector<2xf16>
      memref.store %q, %out[%c1] : memref<3xvector<2xf16>>
      %e = memref.load %buf[%c2] : memref<8xf16>
      %f = memref.load %buf[%c3] : memref<8xf16>
      %r = vector.from_elements %e, %f : vector<2xf16>
      memref.store %r, %out[%c2] : memref<3xvector<2xf16>>
      gpu.return
    }
  }
}

// -----

// Left alone: a store into the buffer between the loads and the pair (the word would read
// the new value), a buffer that is a kernel argument (not private), a dynamic index, a
// private buffer without 4-byte alignment (a word could straddle it), and four elements.
// CHECK-LABEL: gpu.func @kept
// CHECK-NOT: nvvm.prmt
// CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK: vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf16>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kept(%x: f16, %i: index, %arg: memref<8xf16>, %out: memref<4xvector<2xf16>>, %out4: memref<1xvector<4xf16>>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %buf = memref.alloca() {alignment = 16 : i64} : memref<8xf16>
      %a = memref.load %buf[%c0] : memref<8xf16>
      memref.store %x, %buf[%c4] : memref<8xf16>
      %b = memref.load %buf[%c4] : memref<8xf16>
      %p = vector.from_elements %a, %b : vector<2xf16>
      memref.store %p, %out[%c0] : memref<4xvector<2xf16>>
      %c = memref.load %arg[%c0] : memref<8xf16>
      %d = memref.load %arg[%c4] : memref<8xf16>
      %q = vector.from_elements %c, %d : vector<2xf16>
      memref.store %q, %out[%c0] : memref<4xvector<2xf16>>
      %e = memref.load %buf[%i] : memref<8xf16>
      %r = vector.from_elements %e, %a : vector<2xf16>
      memref.store %r, %out[%c0] : memref<4xvector<2xf16>>
      %loose = memref.alloca() : memref<8xf16>
      %g = memref.load %loose[%c0] : memref<8xf16>
      %h = memref.load %loose[%c4] : memref<8xf16>
      %s = vector.from_elements %g, %h : vector<2xf16>
      memref.store %s, %out[%c0] : memref<4xvector<2xf16>>
      %w = vector.from_elements %a, %b, %c, %d : vector<4xf16>
      memref.store %w, %out4[%c0] : memref<1xvector<4xf16>>
      gpu.return
    }
  }
}
