// RUN: tilec-opt --spirv-prepare-float-atomics --split-input-file --verify-diagnostics --mlir-print-debuginfo %s | FileCheck %s

// Without AtomicFloat32AddEXT in the target environment the buffer a float32 atomic add
// targets is held as i32 bits: the kernel's signature, its views, its loads and stores
// (bitcast), and the atomic a store of the value's bits at a location named
// tilec.float_atomic_add. Other buffers stay float.
// CHECK-LABEL: gpu.func @bits
// CHECK-SAME: (%[[SUMS:[^:]*]]: memref<?xi32, #spirv.storage_class<StorageBuffer>> {{.*}}, %{{[^:]*}}: memref<?xf32, #spirv.storage_class<StorageBuffer>>
// CHECK: %[[VIEW:.*]] = memref.reinterpret_cast %[[SUMS]] {{.*}} to memref<?x4xi32, #spirv.storage_class<StorageBuffer>>
// CHECK: %[[BITS:.*]] = memref.load %[[VIEW]]
// CHECK: %[[OLD:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK: memref.store %[[OLD]], %{{.*}} : memref<?xf32, #spirv.storage_class<StorageBuffer>>
// CHECK: %[[NEW:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: memref.store %[[NEW]], %[[VIEW]]
// CHECK: %[[ADD:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: memref.store %[[ADD]], %[[VIEW]]{{.*}} loc(#[[MARK:loc[0-9]*]])
// CHECK-NOT: memref.atomic_rmw
// CHECK: #[[MARK]] = loc("tilec.float_atomic_add"
module attributes {gpu.container_module} {
  gpu.module @kernels attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader], [SPV_KHR_storage_buffer_storage_class]>, #spirv.resource_limits<>>} {
    gpu.func @bits(%sums: memref<?xf32, #spirv.storage_class<StorageBuffer>>, %copy: memref<?xf32, #spirv.storage_class<StorageBuffer>>, %x: f32) kernel {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %view = memref.reinterpret_cast %sums to offset: [0], sizes: [%c2, 4], strides: [4, 1] : memref<?xf32, #spirv.storage_class<StorageBuffer>> to memref<?x4xf32, #spirv.storage_class<StorageBuffer>>
      %old = memref.load %view[%c0, %c0] : memref<?x4xf32, #spirv.storage_class<StorageBuffer>>
      memref.store %old, %copy[%c0] : memref<?xf32, #spirv.storage_class<StorageBuffer>>
      memref.store %x, %view[%c0, %c0] : memref<?x4xf32, #spirv.storage_class<StorageBuffer>>
      %r = memref.atomic_rmw addf %x, %view[%c0, %c2] : (f32, memref<?x4xf32, #spirv.storage_class<StorageBuffer>>) -> f32
      gpu.return
    }
  }
}

// -----

// With AtomicFloat32AddEXT a storage buffer stays float (spirv-lower-float-atomics makes the
// marked store spirv.EXT.AtomicFAdd); shared memory is held as bits all the same (wgpu has
// float atomics on storage buffers only).
// CHECK-LABEL: gpu.func @native
// CHECK-SAME: (%[[OUT:[^:]*]]: memref<8xf32, #spirv.storage_class<StorageBuffer>> {{.*}}, %[[X:[^:]*]]: f32
// CHECK: %[[SHARED:.*]] = memref.alloc() : memref<8xi32, #spirv.storage_class<Workgroup>>
// CHECK: memref.store %[[X]], %[[OUT]][%{{.*}}] : memref<8xf32, {{.*}} loc(#[[NATIVE:loc[0-9]*]])
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: memref.store %[[BITS]], %[[SHARED]][%{{.*}}] : memref<8xi32, {{.*}} loc(#[[CAS:loc[0-9]*]])
// CHECK-DAG: #[[NATIVE]] = loc("tilec.float_atomic_add"
// CHECK-DAG: #[[CAS]] = loc("tilec.float_atomic_add"
module attributes {gpu.container_module} {
  gpu.module @kernels attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader, AtomicFloat32AddEXT], [SPV_KHR_storage_buffer_storage_class, SPV_EXT_shader_atomic_float_add]>, #spirv.resource_limits<>>} {
    gpu.func @native(%out: memref<8xf32, #spirv.storage_class<StorageBuffer>>, %x: f32) kernel {
      %c1 = arith.constant 1 : index
      %shared = memref.alloc() : memref<8xf32, #spirv.storage_class<Workgroup>>
      %a = memref.atomic_rmw addf %x, %out[%c1] : (f32, memref<8xf32, #spirv.storage_class<StorageBuffer>>) -> f32
      %b = memref.atomic_rmw addf %x, %shared[%c1] : (f32, memref<8xf32, #spirv.storage_class<Workgroup>>) -> f32
      gpu.return
    }
  }
}

// -----

// Integer atomics are upstream's: unchanged.
// CHECK-LABEL: gpu.func @integer
// CHECK: memref.atomic_rmw addi
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @integer(%out: memref<8xi32, #spirv.storage_class<StorageBuffer>>, %x: i32) kernel {
      %c1 = arith.constant 1 : index
      %a = memref.atomic_rmw addi %x, %out[%c1] : (i32, memref<8xi32, #spirv.storage_class<StorageBuffer>>) -> i32
      gpu.return
    }
  }
}

// -----

// A float16 atomic has no SPIR-V lowering.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @half(%out: memref<8xf16, #spirv.storage_class<StorageBuffer>>, %x: f16) kernel {
      %c1 = arith.constant 1 : index
      // expected-error @below {{a f16 atomic (0 : i64) has no SPIR-V lowering: float32 atomic adds do}}
      %a = memref.atomic_rmw addf %x, %out[%c1] : (f16, memref<8xf16, #spirv.storage_class<StorageBuffer>>) -> f16
      gpu.return
    }
  }
}

// -----

// The old value a float atomic add returns is not kept.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @old_value(%out: memref<8xf32, #spirv.storage_class<StorageBuffer>>, %x: f32) kernel {
      %c1 = arith.constant 1 : index
      // expected-error @below {{the value a float atomic add returns is not kept on SPIR-V}}
      %a = memref.atomic_rmw addf %x, %out[%c1] : (f32, memref<8xf32, #spirv.storage_class<StorageBuffer>>) -> f32
      memref.store %a, %out[%c1] : memref<8xf32, #spirv.storage_class<StorageBuffer>>
      gpu.return
    }
  }
}

// -----

// A buffer held as bits may only be loaded, stored and viewed.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @other_use(%out: memref<8xf32, #spirv.storage_class<StorageBuffer>>, %x: f32) kernel {
      %c1 = arith.constant 1 : index
      %a = memref.atomic_rmw addf %x, %out[%c1] : (f32, memref<8xf32, #spirv.storage_class<StorageBuffer>>) -> f32
      // expected-error @below {{memref.copy uses a buffer held as i32 bits (for float32 atomic adds); only loads, stores and views can}}
      memref.copy %out, %out : memref<8xf32, #spirv.storage_class<StorageBuffer>> to memref<8xf32, #spirv.storage_class<StorageBuffer>>
      gpu.return
    }
  }
}
