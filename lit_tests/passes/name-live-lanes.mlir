// RUN: tilec-opt --name-live-lanes --split-input-file %s | FileCheck %s

// A reduction's xor shuffles in a block of 48 threads: warp 1 has 16 lanes, so its shuffles
// name the low 16 (gpu.shuffle's width states the mask: the low `width` lanes), warp 0 all 32.
// CHECK-LABEL: gpu.func @partial_last_warp
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %{{.*}} : index
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[WARP]], %{{.*}} : index
// CHECK: %[[WIDTH:.*]] = arith.select %[[LAST]], %c16_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK: gpu.shuffle xor %{{.*}}, %{{.*}}, %[[WIDTH]] : f32
// CHECK: gpu.shuffle xor %{{.*}}, %{{.*}}, %{{.*}} : f32
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @partial_last_warp(%x: f32, %out: memref<48xf32>) kernel attributes {known_block_size = array<i32: 48, 1, 1>} {
      %one = arith.constant 1 : i32
      %two = arith.constant 2 : i32
      %width = arith.constant 32 : i32
      %a, %va = gpu.shuffle xor %x, %one, %width : f32
      %s = arith.addf %x, %a : f32
      %b, %vb = gpu.shuffle xor %s, %two, %width : f32
      %t = arith.addf %s, %b : f32
      %tid = gpu.thread_id x
      memref.store %t, %out[%tid] : memref<48xf32>
      gpu.return
    }
  }
}

// -----

// A block of 20 threads is one partial warp: its mask is a constant, 0xfffff.
// CHECK-LABEL: gpu.func @one_partial_warp
// CHECK: nvvm.shfl.sync bfly %c1048575_i32,
// CHECK: nvvm.vote.sync any %c1048575_i32{{.*}},
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @one_partial_warp(%x: f32, %out: memref<20xf32>, %flags: memref<20xi1>) kernel attributes {known_block_size = array<i32: 20, 1, 1>} {
      %full = arith.constant -1 : i32
      %one = arith.constant 1 : i32
      %clamp = arith.constant 31 : i32
      %y = nvvm.shfl.sync bfly %full, %x, %one, %clamp : f32 -> f32
      %tid = gpu.thread_id x
      memref.store %y, %out[%tid] : memref<20xf32>
      %p = arith.cmpf ogt, %y, %x : f32
      %any = nvvm.vote.sync any %full, %p -> i1
      memref.store %any, %flags[%tid] : memref<20xi1>
      gpu.return
    }
  }
}

// -----

// Under `tid < 16` in a block of two whole warps: warp 0's low 16 lanes run the shuffle
// (warp 1 none); its xor partners are among them. Outside the branch: every lane, unchanged.
// CHECK-LABEL: gpu.func @thread_condition
// CHECK: scf.if
// CHECK-NEXT: arith.constant 65535 : i32
// CHECK-NEXT: nvvm.shfl.sync bfly %c65535_i32,
// CHECK: nvvm.shfl.sync bfly %c-1_i32,
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @thread_condition(%x: f32, %out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %full = arith.constant -1 : i32
      %one = arith.constant 1 : i32
      %clamp = arith.constant 31 : i32
      %c16 = arith.constant 16 : index
      %tid = gpu.thread_id x
      %low = arith.cmpi ult, %tid, %c16 : index
      scf.if %low {
        %y = nvvm.shfl.sync bfly %full, %x, %one, %clamp : f32 -> f32
        memref.store %y, %out[%tid] : memref<64xf32>
      }
      %z = nvvm.shfl.sync bfly %full, %x, %one, %clamp : f32 -> f32
      memref.store %z, %out[%tid] : memref<64xf32>
      gpu.return
    }
  }
}

// -----

// Under a condition on a value each thread loads: the lanes are known at run time only, so a
// ballot of the condition over the lanes reaching the branch, made before it, is the mask
// (its complement within them in the else branch).
// CHECK-LABEL: gpu.func @loaded_condition
// CHECK: %[[P:.*]] = arith.cmpf ogt
// CHECK: %[[B:.*]] = nvvm.vote.sync ballot %c-1_i32{{.*}}, %[[P]] -> i32
// CHECK: %[[NOT:.*]] = arith.xori %[[B]], %c-1_i32{{.*}} : i32
// CHECK: %[[ELSE:.*]] = arith.andi %{{.*}}, %[[NOT]] : i32
// CHECK: scf.if %[[P]] {
// CHECK: nvvm.shfl.sync bfly %[[B]],
// CHECK: } else {
// CHECK: nvvm.shfl.sync bfly %[[ELSE]],
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @loaded_condition(%in: memref<64xf32>, %out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %full = arith.constant -1 : i32
      %one = arith.constant 1 : i32
      %clamp = arith.constant 31 : i32
      %zero = arith.constant 0.0 : f32
      %tid = gpu.thread_id x
      %x = memref.load %in[%tid] : memref<64xf32>
      %p = arith.cmpf ogt, %x, %zero : f32
      scf.if %p {
        %y = nvvm.shfl.sync bfly %full, %x, %one, %clamp : f32 -> f32
        memref.store %y, %out[%tid] : memref<64xf32>
      } else {
        %y = nvvm.shfl.sync bfly %full, %x, %one, %clamp : f32 -> f32
        memref.store %y, %out[%tid] : memref<64xf32>
      }
      gpu.return
    }
  }
}

// -----

// A condition every thread computes alike (on the block index) narrows nothing, and a block of
// whole warps keeps its full masks: nothing changes.
// CHECK-LABEL: gpu.func @uniform_condition
// CHECK-NOT: nvvm.vote.sync
// CHECK: nvvm.shfl.sync bfly %c-1_i32,
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @uniform_condition(%x: f32, %out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %full = arith.constant -1 : i32
      %one = arith.constant 1 : i32
      %clamp = arith.constant 31 : i32
      %c2 = arith.constant 2 : index
      %bx = gpu.block_id x
      %first = arith.cmpi ult, %bx, %c2 : index
      scf.if %first {
        %y = nvvm.shfl.sync bfly %full, %x, %one, %clamp : f32 -> f32
        %tid = gpu.thread_id x
        memref.store %y, %out[%tid] : memref<64xf32>
      }
      gpu.return
    }
  }
}
