// RUN: tilec-opt --assign-spirv-storage-classes --split-input-file --verify-diagnostics %s | FileCheck %s

// Global tensors (space 1) become storage buffers, shared memory workgroup memory, per-thread
// arrays (private or default space) function memory: in the signature, op results and views.
// CHECK-LABEL: gpu.func @spaces
// CHECK-SAME: (%{{.*}}: memref<?xf32, #spirv.storage_class<StorageBuffer>>, %{{.*}}: i32)
// CHECK: memref.reinterpret_cast %{{.*}} : memref<?xf32, #spirv.storage_class<StorageBuffer>> to memref<?x4xf32, #spirv.storage_class<StorageBuffer>>
// CHECK: memref.alloc() : memref<64xf32, #spirv.storage_class<Workgroup>>
// CHECK: memref.alloca() : memref<4xf32, #spirv.storage_class<Function>>
// CHECK: memref.alloca() : memref<2xf32, #spirv.storage_class<Function>>
// CHECK-LABEL: func.func @host
// CHECK: memref.alloca() : memref<2xf32>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @spaces(%flat: memref<?xf32, 1>, %rows: i32) kernel {
      %c0 = arith.constant 0 : index
      %m = arith.index_cast %rows : i32 to index
      %view = memref.reinterpret_cast %flat to offset: [0], sizes: [%m, 4], strides: [4, 1] : memref<?xf32, 1> to memref<?x4xf32, 1>
      %shared = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
      %regs = memref.alloca() : memref<4xf32, #gpu.address_space<private>>
      %more = memref.alloca() : memref<2xf32>
      %x = memref.load %view[%c0, %c0] : memref<?x4xf32, 1>
      memref.store %x, %shared[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %x, %regs[%c0] : memref<4xf32, #gpu.address_space<private>>
      memref.store %x, %more[%c0] : memref<2xf32>
      gpu.return
    }
  }
  func.func @host() {
    %a = memref.alloca() : memref<2xf32>
    return
  }
}

// -----

// A memory space without a SPIR-V storage class is an error at the op that has it.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @constant_space() kernel {
      // expected-error @below {{memref.alloca has a memref in memory space 4 : i64, which has no SPIR-V storage class}}
      %a = memref.alloca() : memref<2xf32, 4>
      gpu.return
    }
  }
}
