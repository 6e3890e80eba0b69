// RUN: tilec-opt --place-private-allocas --split-input-file --verify-diagnostics %s | FileCheck %s

// A fragment's register array and a view of it move to the private address space (what the
// AMDGPU backend needs of an alloca); LDS buffers and allocas outside gpu.modules keep theirs.
// CHECK-LABEL: gpu.func @registers
// CHECK: %[[REGS:.*]] = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
// CHECK: memref.subview %[[REGS]][4] [4] [1] : memref<8xf32, #gpu.address_space<private>> to memref<4xf32, strided<[1], offset: 4>, #gpu.address_space<private>>
// CHECK: memref.load %{{.*}} : memref<4xf32, strided<[1], offset: 4>, #gpu.address_space<private>>
// CHECK: memref.alloca() : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK-LABEL: func.func @host
// CHECK: memref.alloca() : memref<2xf32>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @registers(%out: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      %regs = memref.alloca() : memref<8xf32>
      %high = memref.subview %regs[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
      %x = memref.load %high[%c0] : memref<4xf32, strided<[1], offset: 4>>
      %lds = memref.alloca() : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %x, %lds[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%c0] : memref<1xf32>
      gpu.return
    }
  }
  func.func @host() {
    %a = memref.alloca() : memref<2xf32>
    return
  }
}

// -----

// A memref made from the array by anything but a view cannot follow it into private memory.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @escapes(%other: memref<8xf32>, %pick: i1) kernel {
      %regs = memref.alloca() : memref<8xf32>
      // expected-error @below {{arith.select makes a memref from a per-thread array}}
      %either = arith.select %pick, %regs, %other : memref<8xf32>
      gpu.return
    }
  }
}
