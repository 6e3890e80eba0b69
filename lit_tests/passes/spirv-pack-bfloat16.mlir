// RUN: tilec-opt --spirv-pack-bfloat16 --split-input-file --verify-diagnostics %s | FileCheck %s

// A bf16 tensor is i32 words, two elements each: a load takes its half to the top 16 bits
// (the f32 of the bf16), a store clears and sets its half with atomics; a per-thread bf16
// array is f32; extf from bf16 is the value, truncf to bf16 rounds in integer code, a bf16
// constant and an scf.if's bf16 result are f32. No bf16 is left.
// CHECK-LABEL: gpu.func @storage
// CHECK-SAME: (%[[T:[^:]*]]: memref<?xi32, #spirv.storage_class<StorageBuffer>>, %[[I:[^:]*]]: index, %[[C:[^:]*]]: i1)
// CHECK: %[[REGS:.*]] = memref.alloca() : memref<4xf32, #spirv.storage_class<Function>>
// CHECK: %[[VIEW:.*]] = memref.reinterpret_cast %[[T]] to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<?xi32, #spirv.storage_class<StorageBuffer>> to memref<?xi32, #spirv.storage_class<StorageBuffer>>
// CHECK: %[[WORD:.*]] = arith.shrui %[[I]], %{{.*}} : index
// CHECK: %[[BITS:.*]] = memref.load %[[VIEW]][%[[WORD]]]
// CHECK: %[[UP:.*]] = arith.shli %[[BITS]]
// CHECK: %[[HALF:.*]] = arith.andi %[[UP]], %{{.*}} : i32
// CHECK: %[[X:.*]] = arith.bitcast %[[HALF]] : i32 to f32
// CHECK: scf.if %[[C]] -> (f32)
// CHECK: memref.store %{{.*}}, %[[REGS]]{{.*}} : memref<4xf32
// CHECK: arith.cmpf uno
// CHECK: %[[ROUNDED:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.bitcast %[[ROUNDED]] : f32 to i32
// CHECK: memref.atomic_rmw andi %{{.*}}, %[[VIEW]]
// CHECK: memref.atomic_rmw ori %{{.*}}, %[[VIEW]]
// CHECK-NOT: bf16
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @storage(%t: memref<?xbf16, #spirv.storage_class<StorageBuffer>>, %i: index, %c: i1) kernel {
      %c0 = arith.constant 0 : index
      %n = arith.constant 64 : index
      %regs = memref.alloca() : memref<4xbf16, #spirv.storage_class<Function>>
      %view = memref.reinterpret_cast %t to offset: [0], sizes: [%n], strides: [1] : memref<?xbf16, #spirv.storage_class<StorageBuffer>> to memref<?xbf16, #spirv.storage_class<StorageBuffer>>
      %x = memref.load %view[%i] : memref<?xbf16, #spirv.storage_class<StorageBuffer>>
      %zero = arith.constant 0.0 : bf16
      %y = scf.if %c -> (bf16) {
        scf.yield %x : bf16
      } else {
        scf.yield %zero : bf16
      }
      memref.store %y, %regs[%c0] : memref<4xbf16, #spirv.storage_class<Function>>
      %w = arith.extf %y : bf16 to f32
      %d = arith.addf %w, %w : f32
      %r = arith.truncf %d : f32 to bf16
      memref.store %r, %view[%i] : memref<?xbf16, #spirv.storage_class<StorageBuffer>>
      gpu.return
    }
  }
}

// -----

// Shared memory is words too, its static size halved (rounded up).
// CHECK-LABEL: gpu.func @shared
// CHECK: memref.alloc() : memref<33xi32, #spirv.storage_class<Workgroup>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @shared(%x: f32, %i: index) kernel {
      %s = memref.alloc() : memref<65xbf16, #spirv.storage_class<Workgroup>>
      %b = arith.truncf %x : f32 to bf16
      memref.store %b, %s[%i] : memref<65xbf16, #spirv.storage_class<Workgroup>>
      gpu.return
    }
  }
}

// -----

// A view at another offset is not a view of the words.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @offset(%t: memref<?xbf16, #spirv.storage_class<StorageBuffer>>, %i: index) kernel {
      %n = arith.constant 64 : index
      // expected-error @below {{memref.reinterpret_cast views a bf16 buffer other than as the same 1-D array: SPIR-V holds bf16 as i32 words}}
      %view = memref.reinterpret_cast %t to offset: [1], sizes: [%n], strides: [1] : memref<?xbf16, #spirv.storage_class<StorageBuffer>> to memref<?xbf16, strided<[1], offset: 1>, #spirv.storage_class<StorageBuffer>>
      gpu.return
    }
  }
}

// -----

// Other uses of a bf16 buffer are errors.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @copy(%t: memref<8xbf16, #spirv.storage_class<StorageBuffer>>, %u: memref<8xbf16, #spirv.storage_class<StorageBuffer>>) kernel {
      // expected-error @below {{memref.copy uses a bf16 buffer, which SPIR-V holds as i32 words: only loads, stores and views at offset 0 can}}
      memref.copy %t, %u : memref<8xbf16, #spirv.storage_class<StorageBuffer>> to memref<8xbf16, #spirv.storage_class<StorageBuffer>>
      gpu.return
    }
  }
}

// -----

// A bf16 scalar argument has no SPIR-V binding.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{a bfloat16 scalar argument: SPIR-V kernels take it as float32}}
    gpu.func @scalar(%x: bf16) kernel {
      gpu.return
    }
  }
}

// -----

// A bitcast between i16 and bf16 (a decoded value's bits): the bits are the f32's top half.
// CHECK-LABEL: gpu.func @bits
// CHECK: %[[WIDE:.*]] = arith.extui %arg0 : i16 to i32
// CHECK: %[[SIXTEEN:.*]] = arith.constant 16 : i32
// CHECK: %[[TOP:.*]] = arith.shli %[[WIDE]], %[[SIXTEEN]] : i32
// CHECK: %[[VALUE:.*]] = arith.bitcast %[[TOP]] : i32 to f32
// CHECK: %[[SUM:.*]] = arith.addf %[[VALUE]], %[[VALUE]] : f32
// CHECK: %[[BITS:.*]] = arith.bitcast %[[SUM]] : f32 to i32
// CHECK: %[[HIGH:.*]] = arith.shrui %[[BITS]], %{{.*}} : i32
// CHECK: %[[HALF:.*]] = arith.trunci %[[HIGH]] : i32 to i16
// CHECK: memref.store %[[HALF]], %arg1[%{{.*}}] : memref<4xi16, #spirv.storage_class<StorageBuffer>>
// CHECK-NOT: bf16
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bits(%x: i16, %out: memref<4xi16, #spirv.storage_class<StorageBuffer>>) kernel {
      %c0 = arith.constant 0 : index
      %value = arith.bitcast %x : i16 to bf16
      %sum = arith.addf %value, %value : bf16
      %bits = arith.bitcast %sum : bf16 to i16
      memref.store %bits, %out[%c0] : memref<4xi16, #spirv.storage_class<StorageBuffer>>
      gpu.return
    }
  }
}
