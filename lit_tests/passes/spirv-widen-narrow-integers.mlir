// RUN: tilec-opt --spirv-widen-narrow-integers --split-input-file --verify-diagnostics %s | FileCheck %s

// An i8 tensor is i32 words of four: a load through a 2-d view reads the word of the linear
// element (row * 16 + column) and shifts its byte down; the value is an i32 zero above bit 7,
// sign-extended by xor / subtract for sitofp; a store clears and sets its byte atomically.
// CHECK-LABEL: gpu.func @tensor
// CHECK-SAME: (%[[T:[^:]*]]: memref<64xi32, #spirv.storage_class<StorageBuffer>>, %[[I:[^:]*]]: index, %[[J:[^:]*]]: index, %[[OUT:[^:]*]]: memref<256xf32
// CHECK-NOT: memref.reinterpret_cast
// CHECK: arith.muli %[[I]], %{{.*}} : index
// CHECK: arith.muli %[[J]], %{{.*}} : index
// CHECK: %[[WORD:.*]] = arith.shrui %{{.*}}, %{{.*}} : index
// CHECK: %[[BITS:.*]] = memref.load %[[T]][%[[WORD]]] : memref<64xi32
// CHECK: %[[FIELD:.*]] = arith.shrui %[[BITS]], %{{.*}} : i32
// CHECK: %[[BYTE:.*]] = arith.andi %[[FIELD]], %{{.*}} : i32
// CHECK: %[[FLIPPED:.*]] = arith.xori %[[BYTE]], %{{.*}} : i32
// CHECK: %[[SIGNED:.*]] = arith.subi %[[FLIPPED]], %{{.*}} : i32
// CHECK: arith.sitofp %[[SIGNED]] : i32 to f32
// CHECK: %[[SUM:.*]] = arith.addi %[[BYTE]], %[[BYTE]] : i32
// CHECK: %[[WRAPPED:.*]] = arith.andi %[[SUM]], %{{.*}} : i32
// CHECK: memref.atomic_rmw andi %{{.*}}, %[[T]]
// CHECK: %[[PLACED:.*]] = arith.shli %[[WRAPPED]], %{{.*}} : i32
// CHECK: memref.atomic_rmw ori %[[PLACED]], %[[T]]
// CHECK-NOT: i8
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @tensor(%t: memref<256xi8, #spirv.storage_class<StorageBuffer>>, %i: index, %j: index, %out: memref<256xf32, #spirv.storage_class<StorageBuffer>>) kernel {
      %view = memref.reinterpret_cast %t to offset: [0], sizes: [16, 16], strides: [16, 1] : memref<256xi8, #spirv.storage_class<StorageBuffer>> to memref<16x16xi8, #spirv.storage_class<StorageBuffer>>
      %x = memref.load %view[%i, %j] : memref<16x16xi8, #spirv.storage_class<StorageBuffer>>
      %f = arith.sitofp %x : i8 to f32
      memref.store %f, %out[%j] : memref<256xf32, #spirv.storage_class<StorageBuffer>>
      %y = arith.addi %x, %x : i8
      memref.store %y, %view[%i, %j] : memref<16x16xi8, #spirv.storage_class<StorageBuffer>>
      gpu.return
    }
  }
}

// -----

// Workgroup memory is words too (65 bytes: 17 words); a per-thread i8 array is one i32 an
// element; an atomic ori of a byte (lower-sub-byte-types' nibble stores) ors the shifted byte
// into its word, an atomic andi keeps the other bytes with ones.
// CHECK-LABEL: gpu.func @shared
// CHECK: %[[S:.*]] = memref.alloc() : memref<17xi32, #spirv.storage_class<Workgroup>>
// CHECK: %[[R:.*]] = memref.alloca() : memref<4xi32, #spirv.storage_class<Function>>
// CHECK: memref.store %{{.*}}, %[[R]][%{{.*}}] : memref<4xi32
// CHECK: memref.atomic_rmw ori %{{.*}}, %[[S]][%{{.*}}] : (i32, memref<17xi32
// CHECK: %[[OTHERS:.*]] = arith.xori %{{.*}}, %{{.*}} : i32
// CHECK: %[[KEEP:.*]] = arith.ori %{{.*}}, %[[OTHERS]] : i32
// CHECK: memref.atomic_rmw andi %[[KEEP]], %[[S]]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @shared(%i: index, %w: i32) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.trunci %w : i32 to i8
      %s = memref.alloc() : memref<65xi8, #spirv.storage_class<Workgroup>>
      %r = memref.alloca() : memref<4xi8, #spirv.storage_class<Function>>
      memref.store %v, %r[%c0] : memref<4xi8, #spirv.storage_class<Function>>
      %old = memref.atomic_rmw ori %v, %s[%i] : (i8, memref<65xi8, #spirv.storage_class<Workgroup>>) -> i8
      %kept = memref.atomic_rmw andi %v, %s[%i] : (i8, memref<65xi8, #spirv.storage_class<Workgroup>>) -> i8
      gpu.return
    }
  }
}

// -----

// Values: constants masked, i4 from trunci / fptosi masked, extsi by xor / subtract, signed
// comparisons on sign-extended operands, unsigned ones as they stand, index casts.
// CHECK-LABEL: gpu.func @values
// CHECK: arith.constant 15 : i32
// CHECK: %[[T:.*]] = arith.andi %arg0, %{{.*}} : i32
// CHECK: %[[F:.*]] = arith.fptosi %arg1 : f32 to i32
// CHECK: arith.andi %[[F]], %{{.*}} : i32
// CHECK: arith.xori %[[T]], %{{.*}} : i32
// CHECK: arith.subi
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi ult, %[[T]], %{{.*}} : i32
// CHECK: arith.index_castui %[[T]] : i32 to index
// CHECK-NOT: i4
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @values(%w: i32, %x: f32, %out: memref<4xi32, #spirv.storage_class<StorageBuffer>>) kernel {
      %c0 = arith.constant 0 : index
      %m1 = arith.constant -1 : i4
      %t = arith.trunci %w : i32 to i4
      %f = arith.fptosi %x : f32 to i4
      %e = arith.extsi %t : i4 to i32
      %lt = arith.cmpi slt, %t, %f : i4
      %ult = arith.cmpi ult, %t, %m1 : i4
      %i = arith.index_castui %t : i4 to index
      %s = arith.select %lt, %e, %w : i32
      memref.store %s, %out[%i] : memref<4xi32, #spirv.storage_class<StorageBuffer>>
      gpu.return
    }
  }
}

// -----

// A bitcast between i16 and f16 is integer code on the f16's f32; float8 codes are their
// bits, and an E4M3FN extf builds the f32 from the code's fields.
// CHECK-LABEL: gpu.func @floats
// CHECK: arith.extf %arg0 : f16 to f32
// CHECK: arith.fptoui
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: memref.load %{{.*}} : memref<1xi32
// CHECK: arith.uitofp
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK-NOT: f8E4M3FN
// CHECK-NOT: i16
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @floats(%h: f16, %codes: memref<4xf8E4M3FN, #spirv.storage_class<StorageBuffer>>, %out: memref<4xf32, #spirv.storage_class<StorageBuffer>>, %halves: memref<4xf16, #spirv.storage_class<StorageBuffer>>) kernel {
      %c0 = arith.constant 0 : index
      %bits = arith.bitcast %h : f16 to i16
      %back = arith.bitcast %bits : i16 to f16
      memref.store %back, %halves[%c0] : memref<4xf16, #spirv.storage_class<StorageBuffer>>
      %code = memref.load %codes[%c0] : memref<4xf8E4M3FN, #spirv.storage_class<StorageBuffer>>
      %value = arith.extf %code : f8E4M3FN to f32
      memref.store %value, %out[%c0] : memref<4xf32, #spirv.storage_class<StorageBuffer>>
      gpu.return
    }
  }
}

// -----

// What cannot be widened is an error at its line.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @vector(%v: vector<4xi8>, %out: memref<4xi32>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @below {{vector.extract has a vector<4xi8> value: the SPIR-V targets hold integers narrower than 32 bits as i32 scalars only}}
      %x = vector.extract %v[0] : i8 from vector<4xi8>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @atomic_add(%i: index, %w: i32) kernel {
      %v = arith.trunci %w : i32 to i8
      %s = memref.alloc() : memref<64xi8, #spirv.storage_class<Workgroup>>
      // expected-error @below {{an atomic addi on an i8 buffer, which SPIR-V holds as i32 words: only andi and ori can}}
      %old = memref.atomic_rmw addi %v, %s[%i] : (i8, memref<64xi8, #spirv.storage_class<Workgroup>>) -> i8
      gpu.return
    }
  }
}
